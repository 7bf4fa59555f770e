package pings

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"

	"github.com/tocsin/tocsin/bench/internal/pgfresh"
	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
)

// freshDatabase makes an empty database and returns its URL and how to
// remove it.
func (b *bench) freshDatabase(ctx context.Context, engine string) (dbURL string, drop func(), err error) {
	if engine == "sqlite" {
		dir := filepath.Join(b.Dir, "sqlite")
		return "sqlite:" + filepath.Join(dir, "tocsin.db"), func() {}, nil // removed with the work directory
	}
	return pgfresh.Create(ctx, b.c.pgURL, pgfresh.Name("tocsin_pingbench", 0), b.c.keep, b.Logf)
}

// createHeartbeats migrates the database, makes the owner and workspace
// `tocsin serve` makes on an empty database, and creates n heartbeats
// through the app, as the API would (hourly, default grace). It returns
// their ping tokens.
func createHeartbeats(ctx context.Context, dbURL, keys string, n int) ([]string, error) {
	kr, err := secrets.ParseKeyring(keys)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return nil, err
	}
	a := app.New(db, kr, time.Now, slog.New(slog.DiscardHandler), app.Config{DefaultMaxMonitors: max(1000, n)})
	boot, err := a.Bootstrap(ctx)
	if err != nil {
		return nil, err
	}
	if boot == nil {
		return nil, errors.New("the database was not empty")
	}
	actor := app.Actor{WorkspaceID: boot.WorkspaceID, Role: account.RoleOwner}
	tokens := make([]string, n)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = make(chan int)
	)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				h, err := a.CreateHeartbeat(ctx, actor, heartbeat.Draft{Name: fmt.Sprintf("pingbench %d", i),
					Schedule: heartbeat.Schedule{PeriodSeconds: 3600}})
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					continue
				}
				tokens[i] = h.Token
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return tokens, errors.Join(errs...)
}

// rawDB reads the database around the server: what it stored, and which
// PostgreSQL processes serve it.
type rawDB struct {
	engine string
	db     *sql.DB
}

func openRaw(engine, dbURL string) (*rawDB, error) {
	if engine == "sqlite" {
		path := strings.TrimPrefix(dbURL, "sqlite:")
		db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_query_only=1")
		if err != nil {
			return nil, err
		}
		return &rawDB{engine: engine, db: db}, nil
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one backend of ours, left out of PostgreSQL's CPU
	return &rawDB{engine: engine, db: db}, nil
}

func (r *rawDB) Close() error { return r.db.Close() }

// countPings counts the pings stored in the database at dbURL, as a new
// server process would find them: on SQLite, with the journal a killed
// process left replayed by app's rules, as serve replays it.
func countPings(ctx context.Context, dbURL string) (int64, error) {
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	app.New(db, nil, nil, slog.New(slog.DiscardHandler), app.Config{})
	return db.CountPings(ctx)
}

// pgProcesses lists the backends of the benchmark's database (but ours)
// and the cluster's background writers, which work for it too; nil on
// SQLite.
func (r *rawDB) pgProcesses(ctx context.Context) (map[int]bool, error) {
	if r == nil || r.engine != "postgres" {
		return nil, nil
	}
	return pgfresh.Processes(ctx, r.db)
}

// statsSettle is how long PostgreSQL's backends may hold their activity
// counts before they report them (PGSTAT_MIN_INTERVAL): commits reads
// them that long after the load stopped.
const statsSettle = 1500 * time.Millisecond

// commits is how many transactions the benchmark's database has
// committed, as PostgreSQL's statistics tell once its backends have
// reported them; -1 on SQLite.
func (r *rawDB) commits(ctx context.Context) (int64, error) {
	if r == nil || r.engine != "postgres" {
		return -1, nil
	}
	select {
	case <-time.After(statsSettle):
	case <-ctx.Done():
		return -1, ctx.Err()
	}
	var n int64
	err := r.db.QueryRowContext(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
	return n, err
}
