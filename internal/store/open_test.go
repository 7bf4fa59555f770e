package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenURLs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, u := range []string{
		"sqlite:" + filepath.Join(dir, "a", "one.db"),
		"sqlite://" + filepath.Join(dir, "b", "two.db"),
		"file:" + filepath.Join(dir, "c", "three.db"),
	} {
		db, err := Open(ctx, u)
		if err != nil {
			t.Fatalf("Open(%s): %v", u, err)
		}
		if db.Engine() != EngineSQLite {
			t.Errorf("Open(%s).Engine() = %q", u, db.Engine())
		}
		db.Close()
	}
	fi, err := os.Stat(filepath.Join(dir, "a"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory: %v, %v; want mode 0700", fi.Mode(), err)
	}

	for u, want := range map[string]string{
		"mysql://localhost/x":          `unsupported database URL scheme "mysql"`,
		"/var/lib/tocsin.db":           "unsupported database URL scheme",
		"sqlite::memory:":              "in-memory SQLite is not supported",
		"sqlite:" + dir + "/x.db?mode": "must not contain",
	} {
		if _, err := Open(ctx, u); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s) = %v, want an error containing %q", u, err, want)
		}
	}
}

func TestOpenRedactsPassword(t *testing.T) {
	// Nothing listens on port 1: the connection fails, and the error must
	// name the database without its password.
	_, err := Open(context.Background(), "postgres://tocsin:hunter2@127.0.0.1:1/tocsin?connect_timeout=2")
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("Open error = %v; want a connection error without the password", err)
	}
}

// The SQLite pools get the settings the design relies on.
func TestSQLitePragmas(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pragma := func(name string) string {
		var v string
		if err := db.w.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for name, want := range map[string]string{"journal_mode": "wal", "busy_timeout": "5000", "foreign_keys": "1", "synchronous": "1"} {
		if got := pragma(name); got != want {
			t.Errorf("writer PRAGMA %s = %s, want %s", name, got, want)
		}
	}
	if _, err := db.r.ExecContext(ctx, "CREATE TABLE t (x INTEGER)"); err == nil {
		t.Error("a write through the read pool succeeded; want query_only to refuse it")
	}
	if n := db.w.Stats().MaxOpenConnections; n != 1 {
		t.Errorf("writer pool allows %d connections, want 1", n)
	}
}
