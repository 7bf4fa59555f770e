// Package storetest gives tests fresh, migrated databases on every engine
// available: SQLite always, PostgreSQL when TOCSIN_TEST_POSTGRES_URL names a
// server (required when TOCSIN_TEST_POSTGRES_REQUIRED=1, as in CI).
//
//	for _, e := range storetest.Engines(t) {
//		t.Run(e.Name, func(t *testing.T) {
//			db := storetest.OpenDB(t, e)
//			…
//		})
//	}
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx" for CREATE/DROP DATABASE

	"github.com/tocsin/tocsin/internal/store"
)

// Environment variables read by Engines.
const (
	PostgresURLEnv      = "TOCSIN_TEST_POSTGRES_URL"
	PostgresRequiredEnv = "TOCSIN_TEST_POSTGRES_REQUIRED"
)

// Engine is a database engine to run tests on. URL is where fresh databases
// are made: for SQLite just the scheme (each database is a file in the
// test's temporary directory), for PostgreSQL a server URL whose user may
// CREATE DATABASE.
type Engine struct {
	Name string
	URL  string
}

// Engines lists the engines to test on. Without PostgreSQL it logs once
// why those tests are skipped, or fails the test when they are required.
func Engines(t *testing.T) []Engine {
	t.Helper()
	engines := []Engine{{Name: store.EngineSQLite, URL: "sqlite:"}}
	pg := os.Getenv(PostgresURLEnv)
	switch {
	case pg != "":
		engines = append(engines, Engine{Name: store.EnginePostgres, URL: pg})
	case os.Getenv(PostgresRequiredEnv) == "1":
		t.Fatalf("PostgreSQL tests are required (%s=1) but %s is not set; e.g. %s=postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
			PostgresRequiredEnv, PostgresURLEnv, PostgresURLEnv)
	default:
		// A skipped subtest, so `go test -v` and `go test -json` show it.
		t.Run(store.EnginePostgres, func(t *testing.T) {
			t.Skipf("PostgreSQL tests skipped: set %s=postgres://postgres@127.0.0.1:5432/test?sslmode=disable (any server where the user may CREATE DATABASE) to run them", PostgresURLEnv)
		})
	}
	return engines
}

// URL creates a fresh, migrated database and returns its URL, for tests
// that hand a URL to something else (a server started through run()). The
// database is removed when the test ends; whoever opens it must close it
// before then (t.Cleanup runs in reverse order, so registering the close
// after calling URL is enough).
//
// Migrating is most of a fresh database's cost (seconds on SQLite under the
// race detector), so each test process migrates once per engine, into a
// template, and copies it: on SQLite the template is the migrated file's
// bytes, held in memory; on PostgreSQL a template database (see
// postgresTemplate).
func URL(t testing.TB, e Engine) string {
	t.Helper()
	switch e.Name {
	case store.EngineSQLite:
		b, err := sqliteTemplate()
		if err != nil {
			t.Fatalf("storetest: migrating the SQLite template: %v", err)
		}
		path := filepath.Join(t.TempDir(), "tocsin.db")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return "sqlite:" + path
	case store.EnginePostgres:
		tpl, err := postgresTemplate(e.URL)
		if err != nil {
			t.Fatalf("storetest: the PostgreSQL template: %v", err)
		}
		return createPostgres(t, e.URL, tpl)
	}
	t.Fatalf("storetest: unknown engine %q", e.Name)
	return ""
}

// migrate opens the database at u, migrates it and closes it.
func migrate(u string) error {
	ctx := context.Background()
	db, err := store.Open(ctx, u)
	if err != nil {
		return err
	}
	_, err = db.Migrate(ctx)
	return errors.Join(err, db.Close())
}

// sqliteTemplate is a migrated SQLite database file's bytes, made once per
// process: the file is migrated in a directory removed at once, its log
// folded into it, and read whole.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "tocsin-storetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tocsin.db")
	if err := migrate("sqlite:" + path); err != nil {
		return nil, err
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, err
	}
	_, err = raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	if err = errors.Join(err, raw.Close()); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// EmptyURL is URL without the migrations, for tests of migrating itself.
func EmptyURL(t testing.TB, e Engine) string {
	t.Helper()
	switch e.Name {
	case store.EngineSQLite:
		return "sqlite:" + filepath.Join(t.TempDir(), "tocsin.db")
	case store.EnginePostgres:
		return createPostgres(t, e.URL, "")
	}
	t.Fatalf("storetest: unknown engine %q", e.Name)
	return ""
}

// OpenDB opens a fresh, migrated database, closed when the test ends.
func OpenDB(t testing.TB, e Engine) *store.DB {
	t.Helper()
	return Open(t, URL(t, e))
}

// Open opens the database at u (another handle on one a test made, as a
// second node or process has), closed when the test ends.
func Open(t testing.TB, u string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// createPostgres creates tocsin_t_<random> on the server, a copy of the
// database named template when it is not empty, and drops it, with any
// connections left open, when the test ends.
func createPostgres(t testing.TB, serverURL, template string) string {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("storetest: %s: %v", PostgresURLEnv, err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := "tocsin_t_" + hex.EncodeToString(b)
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if err := adminExec(serverURL, create); err != nil {
		t.Fatalf("storetest: creating %s on %s: %v", name, u.Redacted(), err)
	}
	t.Cleanup(func() {
		if err := adminExec(serverURL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("storetest: dropping %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// adminExec runs one statement on a short-lived connection to the server,
// so tests hold no connection to it between creating and dropping.
func adminExec(serverURL, stmt string) error {
	admin, err := sql.Open("pgx", serverURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return inUseRetry(ctx, func() error {
		_, err := admin.ExecContext(ctx, stmt)
		return err
	})
}

// Refuse makes the database at url refuse, with a data error of its own
// (a constraint violation, as store.IsDataError tells), every row inserted
// into table for which when holds (an SQL condition on NEW, the same on
// both engines): a row the database refuses for its content, for tests of
// writers that must set such a row aside and write the others, without
// bypassing the cleaning that keeps real rows from being refused.
func Refuse(t testing.TB, url, table, when string) {
	t.Helper()
	name := "tocsin_test_refuse_" + hex.EncodeToString([]byte(table))
	if strings.HasPrefix(url, "sqlite:") {
		Exec(t, url, `CREATE TRIGGER `+name+` BEFORE INSERT ON `+table+` FOR EACH ROW WHEN (`+when+`)
			BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
		return
	}
	Exec(t, url,
		`CREATE OR REPLACE FUNCTION tocsin_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'refused by the test' USING ERRCODE = 'check_violation'; END $$`,
		`CREATE TRIGGER `+name+` BEFORE INSERT ON `+table+` FOR EACH ROW WHEN (`+when+`) EXECUTE FUNCTION tocsin_test_refuse()`)
}

// Exec runs stmts, in turn, on the database at url directly, beside any
// store open on it: on SQLite it waits for a server's writer to let go of
// the file.
func Exec(t testing.TB, url string, stmts ...string) {
	t.Helper()
	driver, dsn := "pgx", url
	if path, ok := strings.CutPrefix(url, "sqlite:"); ok {
		driver, dsn = "sqlite", strings.TrimPrefix(path, "//")+"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// postgresTemplate returns the name of a migrated database on the server
// at serverURL to copy fresh databases from, made once per process. Its
// name carries a digest of the PostgreSQL migration files, so a tree with
// other migrations uses another, and it stays on the server between
// runs: one template per schema (tocsin_tpl_<digest>), free to drop. It
// returns "" where the files cannot be found (a test binary built with
// -trimpath): each test then migrates its own database.
func postgresTemplate(serverURL string) (string, error) {
	pgTemplate.once.Do(func() { pgTemplate.name, pgTemplate.err = makePostgresTemplate(serverURL) })
	return pgTemplate.name, pgTemplate.err
}

// pgTemplate is the process's template: its tests have one server
// (PostgresURLEnv).
var pgTemplate struct {
	once sync.Once
	name string
	err  error
}

func makePostgresTemplate(serverURL string) (string, error) {
	digest, ok := migrationsDigest(store.EnginePostgres)
	if !ok {
		return "", nil
	}
	name := "tocsin_tpl_" + digest
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	admin, err := sql.Open("pgx", serverURL)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	// One session holds an advisory lock while it looks and builds: test
	// processes of several packages start at once.
	c, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	h := sha256.Sum256([]byte(name))
	key := int64(binary.BigEndian.Uint64(h[:8]))
	if _, err := c.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return "", err
	}
	defer func() { _, _ = c.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, key) }()
	var exists bool
	if err := c.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil || exists {
		return name, err
	}
	// Built under another name and renamed when whole: a process killed
	// while migrating leaves no template half made.
	building := name + "_building"
	for _, stmt := range []string{"DROP DATABASE IF EXISTS " + building + " WITH (FORCE)", "CREATE DATABASE " + building} {
		if _, err := c.ExecContext(ctx, stmt); err != nil {
			return "", err
		}
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + building
	if err := migrate(u.String()); err != nil {
		return "", err
	}
	return name, inUseRetry(ctx, func() error {
		_, err := c.ExecContext(ctx, "ALTER DATABASE "+building+" RENAME TO "+name)
		return err
	})
}

// inUseRetry runs f again while PostgreSQL answers that a database is in
// use (SQLSTATE 55006): a closed connection's server process may not have
// left yet.
func inUseRetry(ctx context.Context, f func() error) error {
	for {
		err := f()
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// migrationsDigest is a digest of the engine's migration files, read from
// the source tree beside this file.
func migrationsDigest(engine string) (string, bool) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", false
	}
	dir := filepath.Join(filepath.Dir(file), "..", "migrations", engine)
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return "", false
	}
	h := sha256.New()
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", false
		}
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], true
}
