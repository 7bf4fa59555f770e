package store_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/heartbeat"
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

// setHeartbeatPaused pauses or resumes a heartbeat at `at` in the steps
// app takes (app/heartbeats.go), for the store's tests of what a pause
// sees (the journal's pings) and what it writes.
func setHeartbeatPaused(db *store.DB, wsID, id string, paused bool, at time.Time) error {
	return db.HeartbeatTx(ctx, func(tx *store.Tx) error {
		cur, seq, err := tx.LockHeartbeat(ctx, wsID, id)
		if err != nil || cur.Paused == paused {
			return err
		}
		if err := tx.SetHeartbeatPaused(ctx, wsID, id, paused, at); err != nil {
			return err
		}
		plan, err := cur.Schedule.Compile()
		if err != nil {
			return err
		}
		settings := heartbeat.Settings{Plan: plan, MaxRuntime: time.Duration(cur.MaxRuntimeSeconds) * time.Second}
		rt, tr := cur.Runtime, (*monitor.Transition)(nil)
		if paused {
			rt, tr = rt.Pause(at)
		} else {
			rt, tr = rt.Resume(at, settings)
		}
		if err := tx.SaveHeartbeatRuntime(ctx, seq, rt, settings); err != nil || tr == nil {
			return err
		}
		return tx.RecordTransition(ctx, id, *tr)
	})
}

// updateHeartbeat stores an edit of h in the steps app takes, if the row
// is still as read at prev.
func updateHeartbeat(db *store.DB, h heartbeat.Heartbeat, prev time.Time) error {
	return db.HeartbeatTx(ctx, func(tx *store.Tx) error {
		cur, seq, err := tx.LockHeartbeat(ctx, h.WorkspaceID, h.ID)
		if err != nil {
			return err
		}
		if !cur.UpdatedAt.Equal(prev) {
			return store.ErrStale
		}
		if err := tx.UpdateHeartbeat(ctx, h); err != nil {
			return err
		}
		plan, err := h.Schedule.Compile()
		if err != nil {
			return err
		}
		settings := heartbeat.Settings{Plan: plan, MaxRuntime: time.Duration(h.MaxRuntimeSeconds) * time.Second}
		rt := cur.Runtime
		if !rt.Deadline.IsZero() && cur.Schedule != h.Schedule {
			if e, ok := plan.Next(rt.WindowStart); ok {
				rt.Expected, rt.Deadline = e.Expected, e.Deadline
			}
		}
		return tx.SaveHeartbeatRuntime(ctx, seq, rt, settings)
	})
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
	_, err := a.SetPaused(ctx, app.Actor{WorkspaceID: wsID, Role: monitor.RoleOwner}, id, paused)
	return err
}
