package app

// Fixtures of the workflow tests (incidents, events, deliveries, the
// sweeps): rows
// written straight through the store, as a scheduler or a ping writer
// would, on a database with app's workflow installed, which decides what
// each change writes beyond its rows.

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

var (
	ctx = context.Background()
	// t0 has microsecond precision, as stored.
	t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)
)

// openWithWorkflow opens a fresh database with an app over it, whose
// workflow it installs.
func openWithWorkflow(t *testing.T, e storetest.Engine) (*store.DB, *App) {
	t.Helper()
	db := storetest.OpenDB(t, e)
	return db, newApp(db)
}

func wantEqual[T any](t *testing.T, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

// newApp is an app over db, as serve builds it; the sweeps' writes follow
// its workflow.
func newApp(db *store.DB) *App {
	return New(db, nil, nil, slog.New(slog.DiscardHandler), Config{})
}

// addWorkspace stores a workspace.
func addWorkspace(t *testing.T, db *store.DB, slug string) account.Workspace {
	t.Helper()
	w := account.Workspace{ID: ids.New(ids.Workspace, t0), Name: "WS " + slug, Slug: slug, MaxMonitors: 50, MinIntervalSeconds: 30, CreatedAt: t0}
	check(t, db.CreateWorkspace(ctx, w))
	return w
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// seed stores a user who owns a workspace.
func seed(t testing.TB, db *store.DB, slug string) (account.User, account.Workspace) {
	t.Helper()
	u := account.User{ID: ids.New(ids.User, t0), Email: slug + "@example.com", PasswordHash: "$argon2id$v=19$x", CreatedAt: t0}
	w := account.Workspace{ID: ids.New(ids.Workspace, t0), Name: "WS " + slug, Slug: slug, MaxMonitors: 50, MinIntervalSeconds: 30, CreatedAt: t0}
	check(t, db.CreateUser(ctx, u))
	check(t, db.CreateWorkspace(ctx, w))
	check(t, db.PutMembership(ctx, account.Membership{WorkspaceID: w.ID, UserID: u.ID, Role: monitor.RoleOwner, CreatedAt: t0}))
	return u, w
}

// addMonitor stores a tcp monitor of the workspace.
func addMonitor(t *testing.T, db *store.DB, wsID string, cfg monitor.Config) monitor.Monitor {
	t.Helper()
	if cfg.Host == "" {
		cfg.Host, cfg.Port = "db.internal", 5432
	}
	m := monitor.Monitor{ID: ids.New(ids.Monitor, t0), WorkspaceID: wsID, Type: monitor.TypeTCP, Name: "m", Config: cfg,
		IntervalSeconds: 30, State: monitor.StatePending, StateSince: t0, CreatedAt: t0, UpdatedAt: t0}
	check(t, db.CreateMonitor(ctx, m, store.Sealed{}, 1000))
	return m
}

func addChannel(t *testing.T, db *store.DB, wsID string, events, subjects []string) string {
	t.Helper()
	c := notify.Channel{ID: ids.New(ids.Channel, t0), WorkspaceID: wsID, Name: "c", Kind: notify.Webhook, Enabled: true,
		Config: notify.Config{URL: "https://hooks.example.com/x"}, Events: events, Subjects: subjects, CreatedAt: t0, UpdatedAt: t0}
	check(t, db.CreateChannel(ctx, c, []byte("sealed"), 100))
	return c.ID
}

// observe runs one check result of m through the engine's path: claim,
// then apply.
func observe(t *testing.T, db *store.DB, m monitor.Monitor, r monitor.Result, at time.Time) []StateChange {
	t.Helper()
	check(t, db.SetNextDueForTest(ctx, m.ID, at))
	due, err := db.ClaimDue(ctx, "node", at, at, time.Microsecond, 1000)
	check(t, err)
	i := slices.IndexFunc(due, func(d monitor.DueCheck) bool { return d.Monitor.ID == m.ID })
	if i < 0 {
		t.Fatalf("%s not claimed at %v", m.ID, at)
	}
	changes, err := newApp(db).RecordChecks(ctx, "node", []monitor.Completed{{Seq: due[i].Seq,
		Observation: monitor.Observation{MonitorID: m.ID, StartedAt: at, Due: at, Result: r, Probe: "p", Region: "r"},
		Thresholds:  monitor.Thresholds{Confirmations: m.Config.Confirmations, Recoveries: m.Config.Recoveries}}})
	check(t, err)
	return changes
}

// newHeartbeat stores a heartbeat with a period schedule and returns it
// with its token.
func newHeartbeat(t testing.TB, db *store.DB, wsID string, at time.Time, period, grace, maxRuntime int) heartbeat.Heartbeat {
	t.Helper()
	h := heartbeat.Heartbeat{ID: ids.New(ids.Heartbeat, at), WorkspaceID: wsID, Name: "job",
		Schedule:          heartbeat.Schedule{PeriodSeconds: period, GraceSeconds: grace},
		MaxRuntimeSeconds: maxRuntime, Token: heartbeat.NewToken(), Runtime: heartbeat.New(at, false),
		CreatedAt: at, UpdatedAt: at}
	check(t, db.CreateHeartbeat(ctx, h, heartbeat.HashToken(h.Token), []byte("sealed"), 10_000))
	return h
}

func ping(token string, sig heartbeat.Signal, at time.Time, key, rid string) heartbeat.Arrival {
	return heartbeat.Arrival{TokenHash: heartbeat.HashToken(token), Ping: heartbeat.Ping{Signal: sig, ExitCode: -1, RunID: rid, At: at},
		Method: "GET", Client: "127.0.0.1", Key: key}
}

// record stores pings through the store's writer, as app's ping writers
// do.
func record(t *testing.T, db *store.DB, pings ...heartbeat.Arrival) []heartbeat.Outcome {
	t.Helper()
	outs, _, err := db.RecordPings(ctx, pings)
	check(t, err)
	return outs
}
