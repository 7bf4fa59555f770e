// The tocsin binary a run measures: built from this checkout, or one the
// user names.

package session

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binary is a tocsin binary and what it was built from.
type Binary struct {
	Path string
	Rev  string // the commit, for the report
}

// openBinary is the binary at path, or, when path is empty, ./cmd/tocsin of the
// module holding the current directory built into dir.
func openBinary(ctx context.Context, path, dir string) (Binary, error) {
	if path != "" {
		return Binary{Path: path, Rev: describe(path)}, nil
	}
	return build(ctx, dir)
}

// build builds ./cmd/tocsin into dir, and says which commit it built
// (GOFLAGS may keep go build from recording it in the binary).
func build(ctx context.Context, dir string) (Binary, error) {
	gomod, err := run(ctx, "", "go", "env", "GOMOD")
	if err != nil {
		return Binary{}, err
	}
	if gomod == "" || gomod == os.DevNull {
		return Binary{}, errors.New("not inside a Go module; run from the tocsin module root or pass -tocsin")
	}
	root := filepath.Dir(gomod)
	b := Binary{Path: filepath.Join(dir, "tocsin"), Rev: "unknown commit"}
	if rev, err := run(ctx, "", "git", "-C", root, "describe", "--always", "--dirty"); err == nil {
		b.Rev = rev + " (git describe --dirty, built by the benchmark)"
	}
	if _, err := run(ctx, root, "go", "build", "-o", b.Path, "./cmd/tocsin"); err != nil {
		return Binary{}, err
	}
	return b, nil
}

// describe names the commit a Go binary was built from, as go build
// recorded it.
func describe(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return path
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return path + " (" + info.GoVersion + ", no VCS information)"
	}
	rev = rev[:min(len(rev), 12)]
	if modified == "true" {
		rev += " with uncommitted changes"
	}
	return path + " at commit " + rev
}

// run runs name with args in dir ("" for this one) and returns its trimmed
// standard output; an error carries its standard error.
func run(ctx context.Context, dir, name string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args[:min(len(args), 2)], " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}
