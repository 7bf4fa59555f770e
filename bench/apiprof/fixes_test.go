package apiprof

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
	_ "modernc.org/sqlite"             // driver "sqlite"

	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// The benchmarks in this file try remedies for the costs the profiles show,
// on copies of the store's SQL, without changing the store. They open their
// own pools on a database seeded by newServer.

// keyGrantSQL and getMonitorSQL are copies of the queries of
// store.KeyGrantByHash and store.GetMonitor.
const (
	keyGrantSQL = `SELECT k.id, k.user_id, COALESCE(k.workspace_id, ''), k.name, k.hash, k.prefix, k.scopes,
			k.created_at, k.last_used_at, k.revoked_at,
			COALESCE(NULLIF($2, ''), k.workspace_id, ''), COALESCE(m.role, '')
		FROM api_keys k
		LEFT JOIN memberships m
			ON m.user_id = k.user_id AND m.workspace_id = COALESCE(NULLIF($2, ''), k.workspace_id)
		WHERE k.hash = $1`
	getMonitorSQL = `SELECT id, workspace_id, type, name, config, interval_seconds, state, state_since, paused, created_at, updated_at FROM monitors
		WHERE workspace_id = $1 AND id = $2`
	// takeTokenSQL is store.TakeTokens' statement before leases.
	takeTokenSQL = `INSERT INTO rate_limits AS r (bucket, tat)
		SELECT $1, $2::bigint + $3::bigint WHERE $3::bigint <= $4::bigint
		ON CONFLICT (bucket) DO UPDATE SET tat = GREATEST(r.tat, $2::bigint) + $3::bigint
		WHERE GREATEST(r.tat, $2::bigint) + $3::bigint - $2::bigint <= $4::bigint
		RETURNING r.tat`
)

// scanGrant reads a key-grant row into throwaway variables.
func scanGrant(row *sql.Row) error {
	var id, user, ws, name, prefix, scopes, gws, role string
	var hash []byte
	var created int64
	var lastUsed, revoked sql.NullInt64
	return row.Scan(&id, &user, &ws, &name, &hash, &prefix, &scopes, &created, &lastUsed, &revoked, &gws, &role)
}

func scanMonitorRow(row *sql.Row) error {
	var id, ws, typ, name, config, state string
	var interval int
	var since, created, updated int64
	var paused bool
	return row.Scan(&id, &ws, &typ, &name, &config, &interval, &state, &since, &paused, &created, &updated)
}

// BenchmarkSQLitePrepared compares the two reads of an authenticated GET
// as the store runs them (SQL text, so SQLite parses and plans them on
// every call) with the same statements prepared once.
func BenchmarkSQLitePrepared(b *testing.B) {
	e := storetest.Engine{Name: store.EngineSQLite, URL: "sqlite:"}
	u := storetest.URL(b, e)
	path := strings.TrimPrefix(u, "sqlite:")
	seed, err := store.Open(context.Background(), u)
	if err != nil {
		b.Fatal(err)
	}
	s := seedDB(b, seed)
	// A reader pool like the store's (see store.openSQLite).
	r, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_query_only=1")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	runReads(b, r, s)
}

// BenchmarkPostgresPrepared is the same on PostgreSQL, where pgx's stdlib
// driver already caches prepared statements per connection.
func BenchmarkPostgresPrepared(b *testing.B) {
	pg := os.Getenv(storetest.PostgresURLEnv)
	if pg == "" {
		b.Skip("set " + storetest.PostgresURLEnv)
	}
	u := storetest.URL(b, storetest.Engine{Name: store.EnginePostgres, URL: pg})
	seed, err := store.Open(context.Background(), u)
	if err != nil {
		b.Fatal(err)
	}
	s := seedDB(b, seed)
	r, err := sql.Open("pgx", u)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	r.SetMaxOpenConns(4*runtime.GOMAXPROCS(0) + 4)
	r.SetMaxIdleConns(4*runtime.GOMAXPROCS(0) + 4)
	runReads(b, r, s)
}

// seeded is what the read benchmarks look up.
type seeded struct {
	hash          []byte
	wsID, monitor string
}

func seedDB(b *testing.B, db *store.DB) seeded {
	b.Helper()
	b.Cleanup(func() { db.Close() })
	s := newServerOn(b, db)
	sum := sha256.Sum256([]byte(s.key))
	return seeded{hash: sum[:], wsID: s.wsID, monitor: s.monitor}
}

func runReads(b *testing.B, r *sql.DB, s seeded) {
	ctx := context.Background()
	b.Run("adhoc", func(b *testing.B) {
		parallel(b, func() error {
			if err := scanGrant(r.QueryRowContext(ctx, keyGrantSQL, s.hash, "")); err != nil {
				return err
			}
			return scanMonitorRow(r.QueryRowContext(ctx, getMonitorSQL, s.wsID, s.monitor))
		})
	})
	b.Run("prepared", func(b *testing.B) {
		grant, err := r.PrepareContext(ctx, keyGrantSQL)
		if err != nil {
			b.Fatal(err)
		}
		defer grant.Close()
		get, err := r.PrepareContext(ctx, getMonitorSQL)
		if err != nil {
			b.Fatal(err)
		}
		defer get.Close()
		parallel(b, func() error {
			if err := scanGrant(grant.QueryRowContext(ctx, s.hash, "")); err != nil {
				return err
			}
			return scanMonitorRow(get.QueryRowContext(ctx, s.wsID, s.monitor))
		})
	})
}

// BenchmarkPostgresRateLimit runs the rate-limit statement before leases
// (takeTokenSQL) on one hot bucket (one API key, like apibench), then with the two
// cheap remedies: no wait for the WAL flush (synchronous_commit=off for
// these statements) and an UNLOGGED rate_limits table.
func BenchmarkPostgresRateLimit(b *testing.B) {
	pg := os.Getenv(storetest.PostgresURLEnv)
	if pg == "" {
		b.Skip("set " + storetest.PostgresURLEnv)
	}
	u := storetest.URL(b, storetest.Engine{Name: store.EnginePostgres, URL: pg})
	open := func(b *testing.B, params string) *sql.DB {
		pu, err := url.Parse(u)
		if err != nil {
			b.Fatal(err)
		}
		q := pu.Query()
		if params != "" {
			k, v, _ := strings.Cut(params, "=")
			q.Set(k, v) // pgx sends unknown URL parameters as run-time settings
		}
		pu.RawQuery = q.Encode()
		db, err := sql.Open("pgx", pu.String())
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(4*runtime.GOMAXPROCS(0) + 4)
		db.SetMaxIdleConns(4*runtime.GOMAXPROCS(0) + 4)
		b.Cleanup(func() { db.Close() })
		return db
	}
	take := func(db *sql.DB) func() error {
		em, tol := int64(1), time.Hour.Microseconds()
		return func() error {
			var tat int64
			err := db.QueryRowContext(context.Background(), takeTokenSQL, "key:bench", time.Now().UnixMicro(), em, tol).Scan(&tat)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		}
	}
	b.Run("logged", func(b *testing.B) { parallel(b, take(open(b, ""))) })
	b.Run("synchronous_commit=off", func(b *testing.B) { parallel(b, take(open(b, "synchronous_commit=off"))) })
	b.Run("unlogged", func(b *testing.B) {
		db := open(b, "")
		if _, err := db.Exec(`ALTER TABLE rate_limits SET UNLOGGED`); err != nil {
			b.Fatal(err)
		}
		parallel(b, take(db))
	})
	b.Run("unlogged-distinct-buckets", func(b *testing.B) {
		// Without row contention: every goroutine has its own key.
		db := open(b, "")
		var next atomic.Int64
		b.SetParallelism(parallelism)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			bucket := "key:" + strconv.FormatInt(next.Add(1), 10)
			for pb.Next() {
				var tat int64
				err := db.QueryRow(takeTokenSQL, bucket, time.Now().UnixMicro(), int64(1), time.Hour.Microseconds()).Scan(&tat)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					b.Error(err)
					return
				}
			}
		})
	})
}
