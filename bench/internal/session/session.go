// Package session is what every area of the bench command shares for one
// run: its flags, work directory, log and report; the tocsin binary it
// measures and the processes it starts (servers under test, this binary
// re-executed as a baseline or receiver); fresh databases; Linux's CPU
// and memory counters, split between the server, PostgreSQL and the
// rest; and the HTTP load that drives a server.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// Bench is an area's run: it measures, then reports.
type Bench interface {
	Run(ctx context.Context) error
	Report(w *Report)
}

// Measure runs an area: it opens the run (its work directory, this
// binary for its children and, unless noTocsin, the tocsin binary it
// measures), measures with the Bench open makes, prints its report under
// title, and undoes what the run made. A run that needs the tocsin binary
// needs an engine too.
func Measure(ctx context.Context, area string, e Env, noTocsin bool, title string, open func(*Session) Bench) (err error) {
	if !noTocsin && len(e.Engines) == 0 {
		return errors.New("nothing to measure: no engine")
	}
	s := &Session{Env: e, Area: area}
	defer s.Close()
	if s.Dir, err = os.MkdirTemp("", "bench-"+area+"-"); err != nil {
		return err
	}
	if s.Self, err = os.Executable(); err != nil {
		return err
	}
	if !noTocsin {
		if e.Tocsin == "" {
			s.Logf("building ./cmd/tocsin")
		}
		if s.Bin, err = openBinary(ctx, e.Tocsin, s.Dir); err != nil {
			return err
		}
	}
	b := open(s)
	if err := b.Run(ctx); err != nil {
		return err
	}
	var r Report
	r.Printf("# %s\n\n%s.\n\n", title, s.Machine(ctx))
	b.Report(&r)
	if _, err := io.WriteString(s.Stdout, r.String()); err != nil || s.Out == "" {
		return err
	}
	return os.WriteFile(s.Out, []byte(r.String()), 0o644)
}

// PerEngine measures each engine of the run in turn with f.
func PerEngine[R any](ctx context.Context, s *Session, f func(ctx context.Context, engine string) (R, error)) ([]R, error) {
	var out []R
	for _, e := range s.Engines {
		r, err := f(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Rotate runs f for each of -rounds rounds over n targets, the targets in
// a rotating order: none always first or last.
func (s *Session) Rotate(n int, f func(round, target int) error) error {
	for r := range s.Rounds {
		for i := range n {
			if err := f(r, (i+r)%n); err != nil {
				return fmt.Errorf("round %d: %w", r+1, err)
			}
		}
	}
	return nil
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

// Poll calls cond every interval until it holds or fails, or until limit
// has passed (an error) or ctx ends.
func Poll(ctx context.Context, every, limit time.Duration, cond func() (bool, error)) error {
	for deadline := time.Now().Add(limit); ; {
		if ok, err := cond(); ok || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		if err := Sleep(ctx, every); err != nil {
			return err
		}
	}
}

// AtLeast1 says which of the flags named (as "-a, -b and -c") must be at
// least 1, when one of vals is less.
func AtLeast1(names string, vals ...int) error {
	if slices.Min(vals) < 1 {
		return fmt.Errorf("%s must be at least 1", names)
	}
	return nil
}
