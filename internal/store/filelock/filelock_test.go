//go:build unix

// The locks are the OS's: elsewhere there are none to test.

package filelock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/store/filelock"
)

func open(t *testing.T, path string) *filelock.Locks {
	t.Helper()
	l, err := filelock.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Two opens of one path stand for two processes: flock locks belong to
// the open file. A second claim is refused at once with the first one's
// text; Holder reads it without taking the lock; once the first closes,
// the file names no one and the second claim succeeds.
func TestClaim(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tocsin.db")
	first, second := open(t, path), open(t, path)
	if h, err := second.Holder(); h != "" || err != nil {
		t.Fatalf("the holder before any claim: %q, %v", h, err)
	}
	check(t, first.Claim("tocsin serve"))
	check(t, first.Claim("tocsin serve")) // again: it is this one's
	if !first.Serving() || second.Serving() {
		t.Fatalf("serving: first %v, second %v", first.Serving(), second.Serving())
	}
	held := "tocsin serve, pid " + strconv.Itoa(os.Getpid()) + " on host "
	if h, err := second.Holder(); !strings.HasPrefix(h, held) || err != nil {
		t.Fatalf("the holder seen beside the server: %q, %v", h, err)
	}
	if h, err := first.Holder(); h != "" || err != nil {
		t.Fatalf("the holder seen by the server itself: %q, %v", h, err)
	}

	start := time.Now()
	err := second.Claim("tocsin serve")
	var inUse *filelock.InUseError
	if !errors.As(err, &inUse) || inUse.Path != path || !strings.HasPrefix(inUse.Holder, held) {
		t.Fatalf("second claim: %#v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the refusal took %s", d)
	}

	check(t, first.Close())
	if b, err := os.ReadFile(path + ".lock"); len(b) != 0 || err != nil {
		t.Errorf("the lock file after Close: %q, %v", b, err)
	}
	if h, err := second.Holder(); h != "" || err != nil {
		t.Fatalf("the holder after Close: %q, %v", h, err)
	}
	check(t, second.Claim("other"))
	if h, err := open(t, path).Holder(); !strings.HasPrefix(h, "other, pid ") || err != nil {
		t.Fatalf("the new holder: %q, %v", h, err)
	}
}

// A claim that wrote no text yet is refused as "another process".
func TestInUseErrorWithoutHolder(t *testing.T) {
	err := &filelock.InUseError{Path: "/d/tocsin.db"}
	want := "the SQLite database /d/tocsin.db is in use by another process; one server per SQLite database: use PostgreSQL for several nodes"
	if err.Error() != want {
		t.Fatalf("%q", err.Error())
	}
}

// A killed process leaves its text behind, not its lock.
func TestAbandonLeavesTheText(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tocsin.db")
	dead := open(t, path)
	check(t, dead.Claim("tocsin serve"))
	dead.Abandon()
	if b, _ := os.ReadFile(path + ".lock"); !strings.HasPrefix(string(b), "tocsin serve, pid ") {
		t.Errorf("the lock file after a crash: %q", b)
	}
	next := open(t, path)
	if h, err := next.Holder(); h != "" || err != nil {
		t.Fatalf("the holder after a crash: %q, %v", h, err)
	}
	check(t, next.Claim("next"))
}

// Turns nest within a process and run ready once; another process's turn
// waits for the last release; a failed ready gives the turn back and runs
// again on the next.
func TestTurn(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tocsin.db")
	a, b := open(t, path), open(t, path)
	readies := 0
	ready := func() error { readies++; return nil }
	r1, err := a.Turn(context.Background(), ready)
	check(t, err)
	r2, err := a.Turn(context.Background(), ready)
	check(t, err)
	if readies != 1 {
		t.Fatalf("ready ran %d times for nested turns", readies)
	}
	got := make(chan time.Time)
	go func() {
		rb, err := b.Turn(context.Background(), func() error { return nil })
		if err == nil {
			rb()
		}
		got <- time.Now()
	}()
	r1()
	time.Sleep(50 * time.Millisecond)
	released := time.Now()
	r2()
	if at := <-got; at.Before(released) {
		t.Fatal("another process's turn came before the last release")
	}

	fail := errors.New("no")
	if _, err := a.Turn(context.Background(), func() error { return fail }); !errors.Is(err, fail) {
		t.Fatalf("a failed ready: %v", err)
	}
	rb, err := b.Turn(context.Background(), func() error { return nil })
	check(t, err) // the failed turn was given back
	rb()
	r3, err := a.Turn(context.Background(), ready)
	check(t, err)
	r3()
	if readies != 2 {
		t.Fatalf("ready ran %d times; want again after the failure", readies)
	}

	held, err := b.Turn(context.Background(), func() error { return nil })
	check(t, err)
	defer held()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := a.Turn(ctx, ready); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a turn past its context: %v", err)
	}
}

// The server yields to a queued command until the command's release, at
// most maxYield (2 s) to one that stopped while queued, and never fails
// for it; only its context's end stops the wait.
func TestYield(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tocsin.db")
	server, command := open(t, path), open(t, path)
	check(t, server.Claim("tocsin serve"))
	ctx := context.Background()

	start := time.Now()
	check(t, server.Yield(ctx))
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("the yield with no command queued took %s", d)
	}

	release, err := command.Turn(ctx, func() error { return nil })
	check(t, err)
	time.AfterFunc(200*time.Millisecond, release)
	start = time.Now()
	check(t, server.Yield(ctx))
	if d := time.Since(start); d < 150*time.Millisecond || d > 1500*time.Millisecond {
		t.Errorf("the yield to a command that held its turn 200ms took %s", d)
	}

	release, err = command.Turn(ctx, func() error { return nil })
	check(t, err)
	defer release()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := server.Yield(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a yield past its context: %v", err)
	}
	start = time.Now()
	check(t, server.Yield(ctx))
	if d := time.Since(start); d < 1500*time.Millisecond || d > 4*time.Second {
		t.Errorf("the yield to a command that never releases took %s; want about 2s", d)
	}
}
