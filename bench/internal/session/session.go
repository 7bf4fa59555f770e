// Package session is what every area of the bench command shares for one
// run: its flags, work directory, log and report; the tocsin binary it
// measures and the processes it starts (servers under test, this binary
// re-executed as a baseline or receiver); fresh databases; Linux's CPU
// and memory counters, split between the server, PostgreSQL and the
// rest; and the HTTP load that drives a server.
package session

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// Session is one run's log, work directory and binaries.
type Session struct {
	Env         // the shared flags and the streams
	Dir  string // the work directory: logs, SQLite files
	Self string // this binary
	Bin  Binary // the tocsin measured; zero when the run needs none
	Area string // the area measured: this binary's first argument, for its children
	log  io.Writer
	keep bool
	undo []func()
	seq  int    // databases made
	keys string // the run's keyring
}

// Options say what a run needs.
type Options struct {
	Name   string    // the command's, for the work directory's name
	Log    io.Writer // progress lines
	Tocsin string    // -tocsin: a binary; "": build ./cmd/tocsin
	// NoTocsin: the run measures no tocsin server (only a baseline).
	NoTocsin bool
	Keep     bool // -keep: leave the work directory and databases
}

// open makes the work directory and finds or builds the tocsin binary.
// Close undoes it, also when Open fails.
func open(ctx context.Context, o Options) (*Session, error) {
	s := &Session{log: o.Log, keep: o.Keep, Area: o.Name}
	var err error
	if s.Dir, err = os.MkdirTemp("", "bench-"+o.Name+"-"); err != nil {
		return s, err
	}
	if s.Self, err = os.Executable(); err != nil {
		return s, err
	}
	if o.NoTocsin {
		return s, nil
	}
	if o.Tocsin == "" {
		s.Logf("building ./cmd/tocsin")
	}
	s.Bin, err = openBinary(ctx, o.Tocsin, s.Dir)
	return s, err
}

// Logf writes a progress line, with the time.
func (s *Session) Logf(format string, args ...any) {
	fmt.Fprintf(s.log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// Undo adds f to what Close does (dropping a database), newest first.
func (s *Session) Undo(f func()) { s.undo = append(s.undo, f) }

// Close undoes what the run made and removes the work directory, unless
// -keep asked to keep it.
func (s *Session) Close() {
	for _, f := range slices.Backward(s.undo) {
		f()
	}
	if s.Dir == "" {
		return
	}
	if s.keep {
		s.Logf("kept work directory %s", s.Dir)
		return
	}
	os.RemoveAll(s.Dir)
}

// Sleep waits d, or less when ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Report prints a command's report and, with -out, writes it to that
// file too.
func Report(report string, stdout io.Writer, out string) error {
	if _, err := io.WriteString(stdout, report); err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	return os.WriteFile(out, []byte(report), 0o644)
}
