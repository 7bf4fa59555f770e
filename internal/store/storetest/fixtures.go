package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// Fixtures: rows written straight through the store, the same for the
// store's tests and for app's, which test the workflows over them.

// T0 is the fixtures' time, with microsecond precision, as stored.
var T0 = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Seed stores a user who owns a workspace, named by slug.
func Seed(t testing.TB, db *store.DB, slug string) (account.User, account.Workspace) {
	t.Helper()
	ctx := context.Background()
	u := account.User{ID: ids.New(ids.User, T0), Email: slug + "@example.com", PasswordHash: "$argon2id$v=19$x", CreatedAt: T0}
	w := account.Workspace{ID: ids.New(ids.Workspace, T0), Name: "WS " + slug, Slug: slug, CreatedAt: T0}
	must(t, db.CreateUser(ctx, u))
	must(t, db.CreateWorkspace(ctx, w))
	must(t, db.PutMembership(ctx, account.Membership{WorkspaceID: w.ID, UserID: u.ID, Role: account.RoleOwner, CreatedAt: T0}))
	return u, w
}

// AddMonitor stores a tcp monitor of the workspace (to db.internal:5432
// unless cfg names a host; it is never checked).
func AddMonitor(t testing.TB, db *store.DB, wsID string, cfg monitor.Config) monitor.Monitor {
	t.Helper()
	if cfg.Host == "" {
		cfg.Host, cfg.Port = "db.internal", 5432
	}
	m := monitor.Monitor{ID: ids.New(ids.Monitor, T0), WorkspaceID: wsID, Type: monitor.TypeTCP, Name: "m", Config: cfg,
		IntervalSeconds: 30, State: monitor.StatePending, StateSince: T0, CreatedAt: T0, UpdatedAt: T0}
	must(t, db.CreateMonitor(context.Background(), m, store.Sealed{}, 1000))
	return m
}

// NewHeartbeat stores a heartbeat with a period schedule, created at, and
// returns it with its token.
func NewHeartbeat(t testing.TB, db *store.DB, wsID string, at time.Time, period, grace, maxRuntime int) heartbeat.Heartbeat {
	t.Helper()
	h := heartbeat.Heartbeat{ID: ids.New(ids.Heartbeat, at), WorkspaceID: wsID, Name: "job",
		Schedule:          heartbeat.Schedule{PeriodSeconds: period, GraceSeconds: grace},
		MaxRuntimeSeconds: maxRuntime, Token: heartbeat.NewToken(), Runtime: heartbeat.New(at, false),
		CreatedAt: at, UpdatedAt: at}
	must(t, db.CreateHeartbeat(context.Background(), h, heartbeat.HashToken(h.Token), []byte("sealed"), 10_000))
	return h
}

// Ping is a ping of the heartbeat with this token, as a handler hands it on.
func Ping(token string, sig heartbeat.Signal, at time.Time, key, rid string) heartbeat.Arrival {
	return heartbeat.Arrival{TokenHash: heartbeat.HashToken(token), Ping: heartbeat.Ping{Signal: sig, ExitCode: -1, RunID: rid, At: at},
		Method: "GET", Client: "127.0.0.1", Key: key}
}

// SetNextDue moves the next check of the monitor monitorID to due, as
// any writer of its runtime row would (the store's Tx primitives), so
// that a test can make checks fall due when it needs them to.
func SetNextDue(t testing.TB, db *store.DB, monitorID string, due time.Time) {
	t.Helper()
	must(t, db.InTx(context.Background(), func(tx *store.Tx) error {
		rt, err := tx.LockRuntime(context.Background(), monitorID)
		if err != nil {
			return err
		}
		rt.NextDue = due
		return tx.SaveRuntime(context.Background(), rt)
	}))
}
