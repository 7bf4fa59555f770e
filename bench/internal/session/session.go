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
	"os"
	"slices"
	"time"
)

// Session is one run of an area: its flags, log, work directory and
// binaries, and what to undo at the end.
type Session struct {
	Env         // the shared flags and the streams
	Area string // the area measured: this binary's first argument, for its children
	Dir  string // the work directory: logs, SQLite files
	Self string // this binary
	Bin  Binary // the tocsin measured; zero when the run needs none
	undo []func()
	seq  int    // databases made
	keys string // the run's keyring
}

// Start opens an area's run: its work directory, this binary for its
// children and, unless noTocsin, the tocsin binary it measures. Close
// undoes it, also when Start fails.
func Start(ctx context.Context, area string, e Env, noTocsin bool) (s *Session, err error) {
	s = &Session{Env: e, Area: area}
	if s.Dir, err = os.MkdirTemp("", "bench-"+area+"-"); err != nil {
		return s, err
	}
	if s.Self, err = os.Executable(); err != nil || noTocsin {
		return s, err
	}
	if e.Tocsin == "" {
		s.Logf("building ./cmd/tocsin")
	}
	s.Bin, err = openBinary(ctx, e.Tocsin, s.Dir)
	return s, err
}

// Logf writes a progress line, with the time.
func (s *Session) Logf(format string, args ...any) {
	fmt.Fprintf(s.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
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
	if s.Keep {
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
