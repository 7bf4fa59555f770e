package store_test

import (
	"log/slog"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

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
	_, err := a.SetPaused(ctx, app.Actor{WorkspaceID: wsID, Role: monitor.RoleOwner}, id, paused)
	return err
}
