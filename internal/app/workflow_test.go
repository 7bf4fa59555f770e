package app

// Fixtures of the workflow tests (incidents, events, deliveries, the
// sweeps): rows written straight through the store, and checks and pings
// recorded through app, as a scheduler or a ping writer would, whose
// workflow decides what each change writes beyond its rows.

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
	t0 = storetest.T0
)

// openWithWorkflow opens a fresh database with an app over it.
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
	return observeLate(t, db, m, r, at, at)
}

// observeLate is observe of a check due at due that started at started.
func observeLate(t *testing.T, db *store.DB, m monitor.Monitor, r monitor.Result, due, started time.Time) []StateChange {
	t.Helper()
	storetest.SetNextDue(t, db, m.ID, due)
	claimed, err := db.ClaimDue(ctx, "node", started, started, time.Microsecond, 1000)
	check(t, err)
	i := slices.IndexFunc(claimed, func(d monitor.DueCheck) bool { return d.Monitor.ID == m.ID })
	if i < 0 {
		t.Fatalf("%s not claimed at %v", m.ID, started)
	}
	changes, err := newApp(db).RecordChecks(ctx, "node", []monitor.Completed{{Seq: claimed[i].Seq,
		Observation: monitor.Observation{MonitorID: m.ID, StartedAt: started, Due: due, Result: r, Probe: "p", Region: "r"},
		Thresholds:  monitor.Thresholds{Confirmations: m.Config.Confirmations, Recoveries: m.Config.Recoveries}}})
	check(t, err)
	return changes
}

// The fixtures shared with app's tests (storetest).
var (
	seed         = storetest.Seed
	addMonitor   = storetest.AddMonitor
	newHeartbeat = storetest.NewHeartbeat
	ping         = storetest.Ping
)

// record stores pings through app, as its ping writers do, and fails the
// test if they are not.
func record(t testing.TB, db *store.DB, pings ...heartbeat.Arrival) []heartbeat.Outcome {
	t.Helper()
	outs, _, err := newApp(db).RecordPings(ctx, pings)
	check(t, err)
	return outs
}
