package deliveries

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"

	"github.com/tocsin/tocsin/bench/internal/pgfresh"
	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
)

// autoChannels is the fewest webhook channels that take n deliveries
// without holding one back: a channel takes notify.RateBound events a
// minute, and holds the rest for a summary (DESIGN §6, "no storms").
func autoChannels(n int) int {
	bound := notify.RateBound(notify.Webhook)
	return max(1, (n+bound-1)/bound)
}

// freshDatabase makes an empty database for one phase and returns its
// URL and how to remove it.
func (b *bench) freshDatabase(ctx context.Context, engine string) (dbURL string, drop func(), err error) {
	b.seq++
	if engine == "sqlite" {
		dir := filepath.Join(b.Dir, fmt.Sprintf("sqlite-%d", b.seq))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, err
		}
		return "sqlite:" + filepath.Join(dir, "tocsin.db"), func() {
			if !b.c.keep {
				os.RemoveAll(dir)
			}
		}, nil
	}
	return pgfresh.Create(ctx, b.c.pgURL, pgfresh.Name("tocsin_notifybench", b.seq), b.c.keep, b.Logf)
}

// openApp migrates the database and composes the app over it with the
// keyring keys, to write what a phase starts from; `tocsin serve` then
// runs on it with the same keys.
func openApp(ctx context.Context, dbURL, keys string, cfg app.Config) (*store.DB, *app.App, error) {
	kr, err := secrets.ParseKeyring(keys)
	if err != nil {
		return nil, nil, err
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, app.New(db, kr, time.Now, slog.New(slog.DiscardHandler), cfg), nil
}

// tenant is an owner acting in a workspace of its own, with one webhook
// channel to the receiver.
type tenant struct {
	actor  app.Actor
	secret string // the channel's signing secret
}

// createTenants makes n owners and workspaces, each with a webhook
// channel to hook(i) that hears the given event types (none: all).
func createTenants(ctx context.Context, a *app.App, n int, hook func(int) string, events []string) ([]tenant, error) {
	ts := make([]tenant, n)
	err := parallel(ctx, n, 4, func(i int) error {
		u, err := a.CreateUser(ctx, app.UserRequest{Email: fmt.Sprintf("owner%d@notifybench.test", i),
			Workspace: fmt.Sprintf("notifybench-%d", i), Role: account.RoleOwner})
		if err != nil {
			return err
		}
		actor := app.Actor{UserID: u.User.ID, WorkspaceID: u.Workspace.ID, Role: account.RoleOwner}
		_, secret, err := a.CreateChannel(ctx, actor, app.ChannelDraft{Name: "receiver", Kind: notify.Webhook, Enabled: true,
			Config: notify.Config{URL: hook(i)}, Events: events})
		ts[i] = tenant{actor: actor, secret: secret}
		return err
	})
	return ts, err
}

func secretsOf(ts []tenant) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.secret
	}
	return out
}

// incidentMessage is every bench incident's first update.
const incidentMessage = "We are looking into elevated error rates on the public API."

// createIncidents writes n manual incidents through the app, spread over
// the tenants in turn: one incident.opened event and one delivery each.
func createIncidents(ctx context.Context, a *app.App, ts []tenant, n int) error {
	return parallel(ctx, n, 8, func(i int) error {
		_, err := a.CreateIncident(ctx, ts[i%len(ts)].actor, app.IncidentDraft{
			Title: fmt.Sprintf("Bench incident %06d", i), Message: incidentMessage})
		return err
	})
}

// parallel runs f(0…n-1) on workers goroutines and returns the errors.
func parallel(ctx context.Context, n, workers int, f func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next atomic.Int64
	)
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if len(errs) < 5 {
						errs = append(errs, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(append(errs, ctx.Err())...)
}

// rawDB reads the database beside the app: the deliveries' statuses and
// attempts, and which PostgreSQL processes serve it.
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

// statuses counts the deliveries by status.
func (r *rawDB) statuses(ctx context.Context) (map[notify.Status]int, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT status, COUNT(*) FROM deliveries GROUP BY status`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[notify.Status]int{}
	for rows.Next() {
		var (
			s string
			n int
		)
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[notify.Status(s)] = n
	}
	return out, rows.Err()
}

// firstAttempts are the start times of the deliveries' first attempts,
// by delivery id.
func (r *rawDB) firstAttempts(ctx context.Context) (map[string]time.Time, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT delivery_id, started_at FROM delivery_attempts WHERE n = 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var (
			id string
			us int64
		)
		if err := rows.Scan(&id, &us); err != nil {
			return nil, err
		}
		out[id] = time.UnixMicro(us)
	}
	return out, rows.Err()
}

// pgProcesses lists the backends of the benchmark's database (but ours)
// and the cluster's background writers, which work for it too; nil on
// SQLite.
func (r *rawDB) pgProcesses(ctx context.Context) (map[int]bool, error) {
	if r.engine != "postgres" {
		return nil, nil
	}
	return pgfresh.Processes(ctx, r.db)
}
