// Command tocsin watches web services and scheduled jobs and reports their
// availability. Subcommands: serve, migrate, user create, user
// reset-password, key create, key list, key revoke, workspace, secret-key,
// healthcheck, version.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "tocsin:", err)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

const usage = `Usage: tocsin <command> [flags]

Commands:
  serve         run the API, scheduler and notifier (embedded SQLite by default)
  migrate       apply database migrations and exit
  user create   create a user and make them a member of a workspace
  user reset-password
                print a new one-time password for a user
  key create    create an API key; prints only the key
  key list      list a user's API keys
  key revoke    revoke an API key at once
  workspace     show: a workspace's quotas and usage; set-quota: change them
  secret-key    print a new entry for TOCSIN_SECRET_KEYS
  healthcheck   exit 0 when the server answers on /healthz, 1 otherwise
  version       print the version and the commit it was built from

Run "tocsin <command> -h" for the flags of a command. Every flag has a
TOCSIN_* environment variable.
`

// run is main without globals, so tests drive the whole binary in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return serve(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return migrate(ctx, rest, getenv, stdout, stderr)
	case "user", "key":
		sub := ""
		if len(rest) > 0 {
			sub = rest[0]
		}
		switch cmd + " " + sub {
		case "user create":
			return userCreate(ctx, rest[1:], getenv, stdin, stdout, stderr)
		case "user reset-password":
			return userResetPassword(ctx, rest[1:], getenv, stdout, stderr)
		case "key create":
			return keyCreate(ctx, rest[1:], getenv, stdout, stderr)
		case "key list":
			return keyList(ctx, rest[1:], getenv, stdout, stderr)
		case "key revoke":
			return keyRevoke(ctx, rest[1:], getenv, stdout, stderr)
		}
		fmt.Fprintf(stderr, "Usage: tocsin user create | user reset-password | key create | key list | key revoke [flags]\n")
		return errUsage
	case "workspace":
		return workspaceCommand(ctx, rest, getenv, stdout, stderr)
	case "secret-key":
		return secretKey(rest, stdout, stderr)
	case "healthcheck":
		return healthcheck(ctx, rest, getenv, stdout, stderr)
	case "version", "--version":
		return version(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "tocsin: unknown command %q\n\n%s", cmd, usage)
		return errUsage
	}
}
