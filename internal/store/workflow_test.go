package store_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// The rules a recorded change follows beyond its rows (incidents, events,
// deliveries) and a heartbeat's state machine are app's: tests of what the
// store records with them open it with app's workflow installed.

// openWithWorkflow opens a fresh database with app's workflow on it.
func openWithWorkflow(t testing.TB, e storetest.Engine) *store.DB {
	t.Helper()
	return withWorkflow(storetest.OpenDB(t, e))
}

// openStore is store.Open with app's workflow on the database.
func openStore(ctx context.Context, url string) (*store.DB, error) {
	db, err := store.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	return withWorkflow(db), nil
}

func withWorkflow(db *store.DB) *store.DB {
	app.New(db, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	return db
}

// Recording checks and pausing a monitor are app's workflows
// (app/record_checks.go) over the store's primitives; the store's tests
// that need them go through app, over the test's database.

// recordChecks records batch as the scheduler's writer does, as owner.
func recordChecks(db *store.DB, owner string, batch []monitor.Completed) ([]monitor.StateChange, error) {
	a := app.New(db, nil, nil, slog.New(slog.DiscardHandler), app.Config{})
	return a.RecordChecks(ctx, owner, batch)
}

// setPaused pauses or resumes the monitor id of workspace wsID at at, as
// its owner does through the API.
func setPaused(db *store.DB, wsID, id string, paused bool, at time.Time) error {
	a := app.New(db, nil, func() time.Time { return at }, slog.New(slog.DiscardHandler), app.Config{})
	_, err := a.SetPaused(ctx, app.Actor{WorkspaceID: wsID, Role: account.RoleOwner}, id, paused)
	return err
}

// The fixtures shared with app's tests (storetest).
var (
	seed         = storetest.Seed
	addMonitor   = storetest.AddMonitor
	newHeartbeat = storetest.NewHeartbeat
	ping         = storetest.Ping
	record       = storetest.Record
)
