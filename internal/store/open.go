// Package store keeps Tocsin's records in SQLite or PostgreSQL through one
// database/sql code path: the same $n-placeholder SQL on both engines, with a
// few dialect hooks where the engines differ (dialect.go). It decides
// nothing: the workflows are app's, run over a Tx's primitives (tx.go);
// where it stages pings itself (the ping writers, SQLite's journal) it
// runs the PingSteps app hands each call.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers driver "pgx"
	_ "modernc.org/sqlite"             // registers driver "sqlite"

	"github.com/tocsin/tocsin/internal/store/filelock"
	"github.com/tocsin/tocsin/internal/store/pingjournal"
)

// Engine names, as returned by DB.Engine.
const (
	EngineSQLite   = "sqlite"
	EnginePostgres = "postgres"
)

// DB is the store. Writes go through w and reads through r; on PostgreSQL
// they are the same pool, on SQLite w is the single writer connection.
type DB struct {
	w, r  *sql.DB
	d     dialect
	stmts stmtCache
	// grants caches key grants on PostgreSQL; nil on SQLite.
	grants *grantCache
	// configs spares repeated reads of a monitor the JSON decoding.
	configs configCache
	// probes numbers probe names (see probeID).
	probes sync.Map
	// journal holds SQLite's pings until they are applied; nil on
	// PostgreSQL.
	journal *pingjournal.Journal
	// locks are the lock files beside a SQLite database (see Claim and
	// WriteTurn); nil on PostgreSQL.
	locks *filelock.Locks
	// patient: the writer's busy timeout is adminBusyWait (WriteTurn).
	patient atomic.Bool
}

// Open connects to databaseURL and checks that it answers. It does not
// migrate; call Migrate.
//
//	postgres://… or postgresql://…       PostgreSQL
//	sqlite:PATH, sqlite://PATH, file:PATH  a SQLite file (created with its directory)
func Open(ctx context.Context, databaseURL string) (_ *DB, err error) {
	switch {
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		defer wrapURL(&err, databaseURL)
		return openPostgres(ctx, databaseURL)
	case strings.HasPrefix(databaseURL, "sqlite:"), strings.HasPrefix(databaseURL, "file:"):
		defer wrapURL(&err, databaseURL)
		return openSQLite(ctx, sqlitePath(databaseURL))
	}
	scheme, _, _ := strings.Cut(databaseURL, ":")
	return nil, fmt.Errorf("store.Open: unsupported database URL scheme %q: use postgres://…, sqlite:PATH or file:PATH", scheme)
}

// wrapURL names the database in an error without leaking its password.
func wrapURL(errp *error, databaseURL string) {
	if *errp == nil {
		return
	}
	shown := databaseURL
	if u, err := url.Parse(databaseURL); err == nil {
		shown = u.Redacted()
	} else {
		shown, _, _ = strings.Cut(databaseURL, ":")
		shown += ":…"
	}
	*errp = fmt.Errorf("store.Open(%s): %w", shown, *errp)
}

// SQLitePath is the file a sqlite: or file: database URL names.
func SQLitePath(databaseURL string) string { return sqlitePath(databaseURL) }

func sqlitePath(databaseURL string) string {
	for _, p := range []string{"sqlite://", "file://", "sqlite:", "file:"} {
		if rest, ok := strings.CutPrefix(databaseURL, p); ok {
			return rest
		}
	}
	return databaseURL
}

func openPostgres(ctx context.Context, databaseURL string) (*DB, error) {
	pool, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return nil, err
	}
	n := 4*runtime.GOMAXPROCS(0) + 4
	pool.SetMaxOpenConns(n)
	pool.SetMaxIdleConns(n)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return &DB{w: pool, r: pool, d: postgresDialect, grants: startGrantCache(databaseURL)}, nil
}

// openSQLite opens one writer connection and a pool of readers. SQLite
// allows one writer at a time; funnelling writes through one connection
// whose transactions begin IMMEDIATE (taking the write lock up front) means
// a transaction never fails halfway with SQLITE_BUSY when it upgrades from
// reading to writing, and WAL lets the readers run alongside it.
func openSQLite(ctx context.Context, path string) (*DB, error) {
	switch {
	case path == "":
		return nil, errors.New("empty SQLite path")
	case path == ":memory:" || strings.HasPrefix(path, ":memory:"):
		return nil, errors.New("in-memory SQLite is not supported (the reader and writer pools would see different databases); use a file")
	case strings.ContainsAny(path, "?#"):
		return nil, errors.New("SQLite path must not contain '?' or '#'; options are fixed by Tocsin")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := privateFiles(path); err != nil {
		return nil, err
	}
	const common = "_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)"
	w, err := sql.Open("sqlite", path+"?"+common+"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"+
		// The ping journal's applies write many pages in one transaction:
		// a 64 MiB page cache keeps them from spilling mid-transaction.
		"&_pragma=cache_size(-65536)")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	// Connect the writer first so the file exists and is in WAL mode before
	// any reader opens it.
	if err := connectSQLite(ctx, w); err != nil {
		w.Close()
		return nil, err
	}
	// query_only makes an accidental write through a reader fail loudly
	// instead of contending for the write lock.
	r, err := sql.Open("sqlite", path+"?"+common+"&_query_only=1")
	if err != nil {
		w.Close()
		return nil, err
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	if err := r.PingContext(ctx); err != nil {
		w.Close()
		r.Close()
		return nil, err
	}
	locks, err := filelock.Open(path)
	if err != nil {
		w.Close()
		r.Close()
		return nil, err
	}
	db := &DB{w: w, r: r, d: sqliteDialect, locks: locks}
	db.journal = pingjournal.New(path, journalStore{db})
	return db, nil
}

// privateFiles makes the database file, and the WAL and shared-memory
// files beside it, readable by this user alone: they hold every monitor,
// key hash and sealed secret. A new file is created 0600 before SQLite opens
// it (SQLite gives its WAL and -shm files the database file's mode); files
// left more open by an earlier version or by hand are tightened.
func privateFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil {
				return fmt.Errorf("making %s private: %w", p, err)
			}
		}
	}
	return nil
}

// sqliteConnectWait bounds connectSQLite's retries.
const sqliteConnectWait = 10 * time.Second

// connectSQLite connects the writer pool w, retrying while the file is
// busy. Its first connection switches a new database to WAL mode; when
// several processes open one new file at once (a supervisor starting
// several, TestStore's MigrateConcurrent), that connection can fail at once
// with SQLITE_BUSY, busy_timeout or not: about 2 runs of that test in 100
// did before this retry.
func connectSQLite(ctx context.Context, w *sql.DB) error {
	give := time.Now().Add(sqliteConnectWait)
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 200*time.Millisecond) {
		err := w.PingContext(ctx)
		if err == nil || !sqliteBusy(err) || time.Now().After(give) {
			return err
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return err
		}
	}
}

// Engine reports "sqlite" or "postgres".
func (db *DB) Engine() string { return db.d.name }

// MultiNode reports whether several nodes may serve from this database at
// once (PostgreSQL), so that what they share, such as rate limits, must
// live in it; a SQLite file has one server.
func (db *DB) MultiNode() bool { return db.d.multiNode }

// Close closes both pools.
func (db *DB) Close() error {
	// Pings in the journal are safe without this; applying them spares
	// the next start the replay.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	var flushErr error
	if db.journal != nil {
		flushErr = db.journal.Close(ctx)
	}
	cancel()
	db.grants.close()
	db.stmts.close()
	if db.r == db.w {
		return errors.Join(flushErr, db.w.Close())
	}
	// The server lock goes last: the database is this process's until
	// every write is done.
	return errors.Join(flushErr, db.w.Close(), db.r.Close(), db.locks.Close())
}

// InUseError is Claim's refusal: another process serves the database.
type InUseError = filelock.InUseError

// Claim makes this process the one server of its SQLite database, until
// Close or the process's end: a second claim, from any process, fails at
// once with an *InUseError naming this one. holder says what claims it
// ("tocsin serve"). PostgreSQL is shared by several nodes: nothing to
// claim.
func (db *DB) Claim(holder string) error {
	if db.locks == nil {
		return nil
	}
	err := db.locks.Claim(holder)
	if refused := (*InUseError)(nil); err != nil && !errors.As(err, &refused) {
		return fmt.Errorf("store.Claim: %w", err)
	}
	return err // a refusal says all it needs to
}

// journalHolder is what a process that receives pings without having
// claimed the database (a test of the store) writes in the lock file.
func journalHolder() string {
	return filepath.Base(os.Args[0]) + " (receiving pings)"
}

// adminBusyWait is a command's busy timeout in its turn: the server's
// longest transactions, the ping journal's applies, run for seconds.
const adminBusyWait = 60 * time.Second

// WriteTurn waits for this process's turn to write to a SQLite database
// that a server keeps busy, and holds it until release: the server begins
// no write transaction meanwhile (see filelock.Locks.Turn), and this
// process's writes wait up to adminBusyWait for the one under way to end.
// An operator command brackets its writes with it; write transactions take
// it by themselves. It holds nothing on PostgreSQL or in the server itself.
func (db *DB) WriteTurn(ctx context.Context) (release func(), err error) {
	if db.locks == nil || db.locks.Serving() {
		return func() {}, nil
	}
	return db.locks.Turn(ctx, func() error {
		if db.patient.Load() {
			return nil
		}
		// The writer pool's one connection keeps it from now on.
		_, err := db.w.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", adminBusyWait.Milliseconds()))
		db.patient.Store(err == nil)
		return err
	})
}

// txTurn comes before a write transaction on SQLite: the server lets an
// operator command queued on the database go first, and anyone else takes
// its turn as WriteTurn does. (Single-statement writes do not wait.)
func (db *DB) txTurn(ctx context.Context) (release func(), err error) {
	if db.locks != nil && db.locks.Serving() {
		return func() {}, db.locks.Yield(ctx)
	}
	return db.WriteTurn(ctx)
}

// Ping checks that the database answers (for /readyz).
func (db *DB) Ping(ctx context.Context) error {
	if err := db.w.PingContext(ctx); err != nil {
		return fmt.Errorf("store.Ping: %w", err)
	}
	return nil
}

// inTx runs fn in a write transaction and commits it when fn returns nil.
// inSnapshot runs fn's reads in one read-only transaction that sees one
// snapshot of the database (REPEATABLE READ on PostgreSQL, where READ
// COMMITTED would give each statement its own): for reads made of several
// queries that must agree with each other.
func (db *DB) inSnapshot(ctx context.Context, fn func(*sql.Tx) error) error {
	opts := &sql.TxOptions{ReadOnly: true, Isolation: db.d.snapshot}
	tx, err := db.r.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	return fn(tx)
}

func (db *DB) inTx(ctx context.Context, fn func(*sql.Tx) error) (err error) {
	release, err := db.txTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	// A panic in fn must not leave the transaction open: on SQLite's one
	// writer connection it would hold the write lock for the life of the
	// process. Roll back, then let the panic go on.
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// txConn runs statements in a transaction: a *sql.Tx, or the *sql.Conn of
// a transaction begun on it in a pipeline (ping_pg.go).
type txConn interface {
	rowQueryer
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}
