package main

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tocsin/tocsin/internal/config"
)

// self is this program as the operator ran it, for the commands serve
// suggests: the path they typed (./tocsin, /usr/local/bin/tocsin, or a
// name found on PATH), or, for a binary `go run` built in a temporary
// directory that is gone once it exits, the `go run` that made it.
var self = invokedAs(os.Args[0])

func invokedAs(arg0 string) string {
	if strings.Contains(filepath.ToSlash(arg0), "/go-build") {
		return "go run ./cmd/tocsin"
	}
	return shellQuote(arg0)
}

// databaseFlags are the flags that point an operator command at the
// database serve uses, when it is not the default one: the database URL,
// or else the data dir. A URL with a password that came from the
// environment is not printed: the command reads the same variable.
func databaseFlags(c config.Config, getenv func(string) string) string {
	if c.DatabaseURL != "sqlite:"+filepath.Join(c.DataDir, "tocsin.db") {
		if u, err := url.Parse(c.DatabaseURL); err == nil && u.User != nil && getenv("TOCSIN_DATABASE_URL") == c.DatabaseURL {
			if _, ok := u.User.Password(); ok {
				return ` --database-url "$TOCSIN_DATABASE_URL"`
			}
		}
		return " --database-url " + shellQuote(c.DatabaseURL)
	}
	if filepath.Clean(c.DataDir) != filepath.Clean(defaultDataDir) {
		return " --data-dir " + shellQuote(c.DataDir)
	}
	return ""
}

const defaultDataDir = "./tocsin-data"

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote makes s one word for a POSIX shell.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
