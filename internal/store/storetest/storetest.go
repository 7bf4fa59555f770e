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
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
func URL(t testing.TB, e Engine) string {
	t.Helper()
	u := EmptyURL(t, e)
	ctx := context.Background()
	db, err := store.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return u
}

// EmptyURL is URL without the migrations, for tests of migrating itself.
func EmptyURL(t testing.TB, e Engine) string {
	t.Helper()
	switch e.Name {
	case store.EngineSQLite:
		return "sqlite:" + filepath.Join(t.TempDir(), "tocsin.db")
	case store.EnginePostgres:
		return createPostgres(t, e.URL)
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

// createPostgres creates tocsin_t_<random> on the server and drops it, with
// any connections left open, when the test ends.
func createPostgres(t testing.TB, serverURL string) string {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("storetest: %s: %v", PostgresURLEnv, err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := "tocsin_t_" + hex.EncodeToString(b)
	if err := adminExec(serverURL, "CREATE DATABASE "+name); err != nil {
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
	_, err = admin.ExecContext(ctx, stmt)
	return err
}

// Refuse makes the database at url refuse, with a data error of its own
// (a constraint violation, as store.IsDataError tells), every row inserted
// into table for which when holds (an SQL condition on NEW, the same on
// both engines): a row the database refuses for its content, for tests of
// writers that must set such a row aside and write the others, without
// bypassing the cleaning that keeps real rows from being refused.
func Refuse(t testing.TB, url, table, when string) {
	t.Helper()
	driver, dsn := "pgx", url
	name := "tocsin_test_refuse_" + hex.EncodeToString([]byte(table))
	stmts := []string{
		`CREATE OR REPLACE FUNCTION tocsin_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'refused by the test' USING ERRCODE = 'check_violation'; END $$`,
		`CREATE TRIGGER ` + name + ` BEFORE INSERT ON ` + table + ` FOR EACH ROW WHEN (` + when + `) EXECUTE FUNCTION tocsin_test_refuse()`,
	}
	if path, ok := strings.CutPrefix(url, "sqlite:"); ok {
		// The server's writer may hold the file: wait for it.
		driver, dsn = "sqlite", strings.TrimPrefix(path, "//")+"?_pragma=busy_timeout(10000)"
		stmts = []string{`CREATE TRIGGER ` + name + ` BEFORE INSERT ON ` + table + ` FOR EACH ROW WHEN (` + when + `)
			BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`}
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("storetest.Refuse: %v", err)
		}
	}
}
