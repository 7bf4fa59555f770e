// Package filelock coordinates the processes that open one SQLite
// database, with OS advisory locks on files beside it. It knows the
// database's path and nothing of SQL.
//
// One server per SQLite file: the server's pending pings live in its
// memory (store's ping journal), so a second server on the same file would
// write over them. The server holds a lock on <db>.lock for its whole life
// (Claim), and the file names the holder for the refusal a second one gets.
// The OS lock decides, never the file's text, so a crash leaves nothing
// stale behind.
//
// Operator commands (user, key, migrate) write beside the server without
// that lock. SQLite lets one writer in at a time and the others poll for
// their turn; a busy server runs one write transaction after another on
// its single writer connection, so a poll seldom lands in the gap between
// two, and a command could wait past its busy timeout and fail with
// SQLITE_BUSY. So a command queues on <db>-admin.lock (exclusive) around
// its writes (Turn), and the server, before each write transaction, holds
// back while one is queued (Yield).
package filelock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// claimWait covers another process's look at the server lock (see
	// Holder), which holds it shared for an instant.
	claimWait = 300 * time.Millisecond
	// maxYield bounds how long the server waits for a queued command: one
	// that stopped while queued must not stop the server's writes.
	maxYield = 2 * time.Second
)

// Locks holds the lock files beside one database.
type Locks struct {
	path    string     // the database's
	admin   *os.File   // <db>-admin.lock, open from Open on
	adminMu sync.Mutex // guards turns
	turns   int        // this process's holds of its turn on admin
	mu      sync.Mutex // guards server
	server  *os.File   // <db>.lock, once claimed
	serving atomic.Bool
}

// Open opens the queue's lock file beside the database at path; it takes
// no lock.
func Open(path string) (*Locks, error) {
	f, err := os.OpenFile(path+"-admin.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &Locks{path: path, admin: f}, nil
}

// Path is the database's path, as given to Open.
func (l *Locks) Path() string { return l.path }

// InUseError is Claim's refusal: another process serves the database.
type InUseError struct {
	Path   string // the database file
	Holder string // as the holder wrote it; empty if it wrote nothing yet
}

func (e *InUseError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "another process"
	}
	return fmt.Sprintf("the SQLite database %s is in use by %s; one server per SQLite database: use PostgreSQL for several nodes", e.Path, holder)
}

// Claim makes this process the one server of the database, until Close or
// the process's end: a second claim, from any process, fails at once with
// an *InUseError naming this one. holder says what claims it ("tocsin
// serve"). Claiming again what this process holds succeeds.
func (l *Locks) Claim(holder string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.server != nil {
		return nil
	}
	f, err := os.OpenFile(l.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	give := time.Now().Add(claimWait)
	for {
		ok, err := tryLock(f, true)
		if err != nil {
			f.Close()
			return fmt.Errorf("locking %s: %w", f.Name(), err)
		}
		if ok {
			break
		}
		if time.Now().After(give) {
			held, _ := io.ReadAll(io.LimitReader(f, 512))
			f.Close()
			return &InUseError{Path: l.path, Holder: strings.TrimSpace(string(held))}
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The text is for the message of the next one refused, not a lock.
	host, _ := os.Hostname()
	line := fmt.Sprintf("%s, pid %d on host %s, since %s\n", holder, os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(line), 0)
	}
	l.server = f
	l.serving.Store(true)
	return nil
}

// Serving reports whether this process holds the server lock.
func (l *Locks) Serving() bool { return l.serving.Load() }

// Holder reports who serves the database, "" if no one does or this
// process does. It takes the server lock shared for an instant and never
// keeps it.
func (l *Locks) Holder() (string, error) {
	if l.serving.Load() {
		return "", nil // this process
	}
	f, err := os.Open(l.path + ".lock")
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	ok, err := tryLock(f, false)
	if err != nil || ok {
		return "", err // closing f drops the lock
	}
	held, _ := io.ReadAll(io.LimitReader(f, 512))
	if h := strings.TrimSpace(string(held)); h != "" {
		return h, nil
	}
	return "another process", nil
}

// Turn waits for this process's turn to write beside a server, and holds
// it until release: a server that yields begins no write transaction
// meanwhile (up to maxYield each). Turns nest within a process: the first
// takes <db>-admin.lock, exclusive, and then runs ready (which runs one
// at a time, and again on the next turn if it failed); the others share
// it.
func (l *Locks) Turn(ctx context.Context, ready func() error) (release func(), err error) {
	l.adminMu.Lock()
	defer l.adminMu.Unlock()
	if l.turns == 0 {
		if err := l.takeTurn(ctx); err != nil {
			return nil, err
		}
		if err := ready(); err != nil {
			_ = unlockFile(l.admin)
			return nil, err
		}
	}
	l.turns++
	return func() {
		l.adminMu.Lock()
		defer l.adminMu.Unlock()
		if l.turns--; l.turns == 0 {
			_ = unlockFile(l.admin)
		}
	}, nil
}

// takeTurn waits for the lock: other commands hold it for a write or two.
func (l *Locks) takeTurn(ctx context.Context) error {
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		ok, err := tryLock(l.admin, true)
		if err != nil {
			return fmt.Errorf("locking %s: %w", l.admin.Name(), err)
		}
		if ok {
			return nil
		}
		if err := sleepCtx(ctx, pause); err != nil {
			return err
		}
	}
}

// Yield waits, up to maxYield, while an operator command is queued. Only
// ctx's end makes it fail.
func (l *Locks) Yield(ctx context.Context) error {
	give := time.Now().Add(maxYield)
	for {
		ok, err := tryLock(l.admin, false)
		if ok {
			_ = unlockFile(l.admin)
		}
		// Fairness is best effort: a write never fails for it.
		if ok || err != nil || time.Now().After(give) {
			return nil
		}
		if err := sleepCtx(ctx, time.Millisecond); err != nil {
			return err
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close gives the database up. The holder's text goes first, while the
// lock still keeps others from writing theirs. A nil *Locks has nothing
// to close.
func (l *Locks) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.server != nil {
		_ = l.server.Truncate(0)
		err = l.server.Close()
		l.server = nil
		l.serving.Store(false)
	}
	return errors.Join(err, l.admin.Close())
}

// Abandon drops the locks as the kernel does for a killed process: the
// holder's text stays. For tests of what a crash leaves.
func (l *Locks) Abandon() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.server != nil {
		l.server.Close()
	}
	l.admin.Close()
}
