package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// sqliteURL is a new SQLite database's URL, and its file.
func sqliteURL(t *testing.T) (string, string) {
	t.Helper()
	for _, e := range storetest.Engines(t) {
		if e.Name == store.EngineSQLite {
			u := storetest.EmptyURL(t, e)
			_, path, _ := strings.Cut(u, ":")
			return u, strings.TrimPrefix(path, "//")
		}
	}
	t.Fatal("no SQLite engine")
	return "", ""
}

func openSQLite(t *testing.T, u string) *store.DB {
	t.Helper()
	db := storetest.Open(t, u)
	return db
}

// One server per SQLite file: a second claim is refused at once, naming
// the file and the holder; once the holder closes, it succeeds.
// PostgreSQL has nothing to claim.
func TestSQLiteClaim(t *testing.T) {
	u, path := sqliteURL(t)
	first := openSQLite(t, u)
	check(t, first.Claim("tocsin serve"))
	check(t, first.Claim("tocsin serve")) // again: it is this one's
	second := openSQLite(t, u)
	start := time.Now()
	err := second.Claim("tocsin serve")
	var inUse *store.InUseError
	if !errors.As(err, &inUse) || inUse.Path != path {
		t.Fatalf("second claim: %v", err)
	}
	pid := "pid " + strconv.Itoa(os.Getpid())
	for _, want := range []string{path, "in use by tocsin serve, " + pid + " on host ", "use PostgreSQL for several nodes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q: %v", want, err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the refusal took %s", d)
	}
	check(t, first.Close())
	check(t, second.Claim("tocsin serve"))

	for _, e := range storetest.Engines(t) {
		if e.Name == store.EnginePostgres {
			a, b := storetest.OpenDB(t, e), storetest.OpenDB(t, e)
			check(t, a.Claim("tocsin serve"))
			check(t, b.Claim("tocsin serve"))
		}
	}
}

// Migrate on a database that is up to date writes nothing: it returns at
// once while another connection holds the write lock.
func TestMigrateUpToDateIsReadOnly(t *testing.T) {
	u, path := sqliteURL(t)
	server := openSQLite(t, u)
	check(t, server.Claim("tocsin serve"))
	_, err := server.Migrate(ctx)
	check(t, err)

	raw, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	check(t, err)
	defer raw.Close()
	conn, err := raw.Conn(ctx)
	check(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	check(t, err)
	defer conn.ExecContext(ctx, "ROLLBACK") //nolint:errcheck

	admin := openSQLite(t, u)
	start := time.Now()
	n, err := admin.Migrate(ctx)
	if err != nil || n != 0 {
		t.Fatalf("Migrate beside a held write lock: %d, %v", n, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Migrate waited %s for the write lock", d)
	}
}

// A SQLite database that another process serves is not migrated under
// it: the refusal names the holder; once it is gone, Migrate runs.
func TestMigrateRefusedBesideOlderServer(t *testing.T) {
	u, path := sqliteURL(t)
	older := openSQLite(t, u)
	check(t, older.Claim("tocsin serve"))
	_, err := older.MigrateUpTo(ctx, 3)
	check(t, err)
	admin := openSQLite(t, u)
	n, err := admin.Migrate(ctx)
	if err == nil || n != 0 {
		t.Fatalf("Migrate beside a server of an older schema: %d, %v", n, err)
	}
	for _, want := range []string{path, "in use by tocsin serve, pid " + strconv.Itoa(os.Getpid()), "stop that server if it is an older version"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q: %v", want, err)
		}
	}
	check(t, older.Close())
	if n, err := admin.Migrate(ctx); err != nil || n == 0 {
		t.Fatalf("Migrate once the server stopped: %d, %v", n, err)
	}
}

// An operator command's writes get their turn beside a server whose one
// writer runs write transactions back to back (BusyWrite, 1 ms each).
// Without WriteTurn the command polls for a gap between two: here it
// waited the whole 3 seconds; beside `tocsin serve` under load such
// commands failed after busy_timeout (5 s) with SQLITE_BUSY.
func TestWriteTurnBesideBusyServer(t *testing.T) {
	u, _ := sqliteURL(t)
	server := openSQLite(t, u)
	check(t, server.Claim("tocsin serve"))
	_, err := server.Migrate(ctx)
	check(t, err)
	busy, stop := context.WithTimeout(ctx, 3*time.Second)
	defer stop()
	var writes atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for busy.Err() == nil {
				if err := server.BusyWrite(busy, time.Millisecond); err != nil && busy.Err() == nil {
					t.Errorf("the server's write: %v", err)
					return
				}
				writes.Add(1)
			}
		})
	}

	admin := openSQLite(t, u)
	var slowest time.Duration
	var done int
	for i := 0; busy.Err() == nil; i++ {
		start := time.Now()
		release, err := admin.WriteTurn(ctx)
		check(t, err)
		u := newUser(fmt.Sprintf("op%d@example.com", i))
		u.ID = ids.New(ids.User, time.Now())
		ws := newWorkspace(fmt.Sprintf("ops-%d", i))
		ws.ID = ids.New(ids.Workspace, time.Now())
		err = errors.Join(admin.CreateUser(ctx, u), admin.CreateWorkspace(ctx, ws),
			admin.PutMembership(ctx, account.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: account.RoleOwner, CreatedAt: t0}))
		release()
		if err != nil {
			t.Fatalf("the command's writes beside the busy server: %v", err)
		}
		slowest = max(slowest, time.Since(start))
		done++
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	t.Logf("%d commands beside %d server writes; the slowest took %s", done, writes.Load(), slowest)
	if writes.Load() < 500 {
		t.Errorf("%d server writes: the server was not busy", writes.Load())
	}
	if done < 5 {
		t.Errorf("only %d commands got their turn in 3 seconds", done)
	}
	if slowest > 2*time.Second {
		t.Errorf("a command waited %s for its turn", slowest)
	}
}
