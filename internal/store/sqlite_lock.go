package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// One server per SQLite file, and operator commands beside it.
//
// The server's pending pings live in its memory (package pingjournal),
// so a second server on the same file would write over them: the server
// holds an advisory lock on <db>.lock for its whole life (Claim), and the
// file names the holder for the refusal a second one gets. The OS lock decides,
// never the file's text, so a crash leaves nothing stale behind.
//
// Operator commands (user, key, migrate) write beside the server without
// that lock. SQLite lets one writer in at a time and the others poll for
// their turn; a busy server runs one write transaction after another on
// its single writer connection, so a poll seldom lands in the gap between
// two, and a command could wait past its busy timeout and fail with
// SQLITE_BUSY. So a command queues on <db>-admin.lock (exclusive) around
// its writes (WriteTurn), and the server, before each write transaction
// (inTx; its single-statement writes do not wait), holds back while one
// is queued (yield).

const (
	// claimWait covers another process's look at the server lock (see
	// serverHolder), which holds it shared for an instant.
	claimWait = 300 * time.Millisecond
	// maxYield bounds how long the server waits for a queued command: one
	// that stopped while queued must not stop the server's writes.
	maxYield = 2 * time.Second
	// adminBusyWait is a command's busy timeout in its turn: the server's
	// longest transactions, the ping journal's applies, run for seconds.
	adminBusyWait = 60 * time.Second
)

// sqliteLocks holds the lock files beside one SQLite database.
type sqliteLocks struct {
	path    string     // the database's
	admin   *os.File   // <db>-admin.lock, open from Open on
	adminMu sync.Mutex // guards turns and patient
	turns   int        // this process's holds of its turn on admin
	patient bool       // the writer's busy timeout is adminBusyWait
	mu      sync.Mutex // guards server
	server  *os.File   // <db>.lock, once claimed
	serving atomic.Bool
}

func openSQLiteLocks(path string) (*sqliteLocks, error) {
	f, err := os.OpenFile(path+"-admin.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &sqliteLocks{path: path, admin: f}, nil
}

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

// Claim makes this process the one server of its SQLite database, until
// Close or the process's end: a second claim, from any process, fails at
// once with an *InUseError naming this one. holder says what claims it
// ("tocsin serve"). PostgreSQL is shared by several nodes: nothing to
// claim.
func (db *DB) Claim(holder string) error {
	if db.locks == nil {
		return nil
	}
	err := db.locks.claim(holder)
	if refused := (*InUseError)(nil); err != nil && !errors.As(err, &refused) {
		return fmt.Errorf("store.Claim: %w", err)
	}
	return err // a refusal says all it needs to
}

func (l *sqliteLocks) claim(holder string) error {
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

// serverHolder reports who serves the database, "" if no one does. It
// takes the server lock shared for an instant and never keeps it.
func (l *sqliteLocks) serverHolder() (string, error) {
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

// WriteTurn waits for this process's turn to write to a SQLite database
// that a server keeps busy, and holds it until release: the server begins
// no write transaction meanwhile (up to maxYield each), and this process's
// writes wait up to adminBusyWait for the one under way to end. An
// operator command brackets its writes with it; write transactions take it
// by themselves. It holds nothing on PostgreSQL or in the server itself.
func (db *DB) WriteTurn(ctx context.Context) (release func(), err error) {
	if db.locks == nil || db.locks.serving.Load() {
		return func() {}, nil
	}
	return db.locks.queue(ctx, func() error {
		if db.locks.patient {
			return nil
		}
		// The writer pool's one connection keeps it from now on.
		_, err := db.w.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", adminBusyWait.Milliseconds()))
		db.locks.patient = err == nil
		return err
	})
}

// txTurn comes before a write transaction on SQLite: the server lets an
// operator command queued on the database go first, and anyone else takes
// its turn as WriteTurn does.
func (db *DB) txTurn(ctx context.Context) (release func(), err error) {
	if db.locks != nil && db.locks.serving.Load() {
		return func() {}, db.locks.yield(ctx)
	}
	return db.WriteTurn(ctx)
}

// queue takes the turn on <db>-admin.lock, exclusive, or shares the one
// this process holds already; then runs ready.
func (l *sqliteLocks) queue(ctx context.Context, ready func() error) (release func(), err error) {
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
func (l *sqliteLocks) takeTurn(ctx context.Context) error {
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

// yield waits, up to maxYield, while an operator command is queued.
func (l *sqliteLocks) yield(ctx context.Context) error {
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

// close gives the database up. The holder's text goes first, while the
// lock still keeps others from writing theirs.
func (l *sqliteLocks) close() error {
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

// journalHolder is what a process that receives pings without having
// claimed the database (a test of the store) writes in the lock file.
func journalHolder() string {
	return filepath.Base(os.Args[0]) + " (receiving pings)"
}
