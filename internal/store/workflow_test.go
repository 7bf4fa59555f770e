package store_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// The rules a recorded change follows beyond its rows (incidents, events,
// deliveries) and a heartbeat's state machine are app's: app's workflows
// (recording checks and pings, the deadline sweep, pausing, deleting) run
// over the store's primitives, and the store's tests that need them go
// through app, over the test's database. The store itself holds none of
// app's rules: a database opened alone works.

// openWithWorkflow opens a fresh database, for a test that records
// through app's workflows (appOf).
func openWithWorkflow(t testing.TB, e storetest.Engine) *store.DB {
	t.Helper()
	return storetest.OpenDB(t, e)
}

// openStore is store.Open.
func openStore(ctx context.Context, url string) (*store.DB, error) {
	return store.Open(ctx, url)
}

// apps holds an App over each test database: what it keeps (compiled
// schedules) is its own, so one per database serves every test call.
var apps sync.Map // *store.DB → *app.App

// appOf is app over db, as serve builds it.
func appOf(db *store.DB) *app.App {
	if a, ok := apps.Load(db); ok {
		return a.(*app.App)
	}
	a, _ := apps.LoadOrStore(db, app.New(db, nil, nil, slog.New(slog.DiscardHandler), app.Config{}))
	return a.(*app.App)
}

// recordPings stores a batch of pings as app's ping writers do.
func recordPings(db *store.DB, batch []heartbeat.Arrival) ([]heartbeat.Outcome, []store.StateChange, error) {
	return appOf(db).RecordPings(ctx, batch)
}

// record stores pings as app's ping writers do, and fails the test if
// they are not.
func record(t testing.TB, db *store.DB, pings ...heartbeat.Arrival) []heartbeat.Outcome {
	t.Helper()
	outs, _, err := recordPings(db, pings)
	check(t, err)
	return outs
}

// applyPings is what the ping writer does between batches (SQLite's
// journal applied beside it, if due).
func applyPings(db *store.DB) (time.Time, error) { return appOf(db).ApplyPings(ctx) }

// sweepDeadlines is app's deadline sweep at now, as owner: the tests here
// are of the store's part (claims, leases, coverage, the compare-and-set).
func sweepDeadlines(db *store.DB, owner string, now time.Time, limit int) ([]store.StateChange, int, error) {
	return appOf(db).SweepHeartbeats(ctx, owner, now, limit)
}

// recordChecks records batch as the scheduler's writer does, as owner.
func recordChecks(db *store.DB, owner string, batch []monitor.Completed) ([]monitor.StateChange, error) {
	a := app.New(db, nil, nil, slog.New(slog.DiscardHandler), app.Config{})
	return a.RecordChecks(ctx, owner, batch)
}

// owner is the owner of workspace wsID, as the API sees them.
func owner(wsID string) app.Actor {
	return app.Actor{WorkspaceID: wsID, Role: account.RoleOwner}
}

// setPaused pauses or resumes the monitor id of workspace wsID at at, as
// its owner does through the API.
func setPaused(db *store.DB, wsID, id string, paused bool, at time.Time) error {
	a := app.New(db, nil, func() time.Time { return at }, slog.New(slog.DiscardHandler), app.Config{})
	_, err := a.SetPaused(ctx, owner(wsID), id, paused)
	return err
}

// deleteMonitor deletes the monitor id of workspace wsID as its owner
// does through the API.
func deleteMonitor(db *store.DB, wsID, id string) error {
	return appOf(db).DeleteMonitor(ctx, owner(wsID), id)
}

// deleteHeartbeat deletes the heartbeat id of workspace wsID as its owner
// does through the API.
func deleteHeartbeat(db *store.DB, wsID, id string) error {
	return appOf(db).DeleteHeartbeat(ctx, owner(wsID), id)
}

// The fixtures shared with app's tests (storetest).
var (
	seed         = storetest.Seed
	addMonitor   = storetest.AddMonitor
	newHeartbeat = storetest.NewHeartbeat
	ping         = storetest.Ping
)
