package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/maintenance"
	"github.com/tocsin/tocsin/internal/monitor"
)

// MaintenanceApp is what Maintenance needs of app.
type MaintenanceApp interface {
	AllMaintenanceWindows(ctx context.Context) ([]maintenance.Window, error)
	ApplyMaintenance(ctx context.Context, windows []maintenance.Window, now time.Time) ([]monitor.StateChange, time.Time, error)
}

// Maintenance applies the maintenance windows to monitor and heartbeat
// states: at start, at each occurrence's start and end that it knows of,
// and every Every (5s) at the latest, so an edited or deleted window
// takes effect soon.
type Maintenance struct {
	App   MaintenanceApp
	Every time.Duration
	Now   func() time.Time
	Log   *slog.Logger
}

// Run applies the windows until ctx ends. A failed round is logged and
// tried again after Every, so it returns nil.
func (m *Maintenance) Run(ctx context.Context) error {
	r := *m // with the defaults
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
	r.Every = or(r.Every, 5*time.Second)
	return rounds(ctx, r.Log, 0, r.Every, "applying maintenance windows", r.apply)
}

// apply applies the maintenance windows: monitors and heartbeats inside
// an active occurrence go to MAINTENANCE, those whose windows all ended
// (or were deleted, or no longer name them) leave it. It returns when to
// run again: at the next occurrence start or end it knows of, at most
// Every from now. It writes only states, ids and causes made of them, and
// what it read from the database: nothing from outside that the database
// could refuse.
func (m *Maintenance) apply(ctx context.Context) (time.Duration, error) {
	now := m.Now()
	windows, err := m.App.AllMaintenanceWindows(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the windows: %w", err)
	}
	changes, boundary, err := m.App.ApplyMaintenance(ctx, windows, now)
	for _, c := range changes {
		kind := subjectKind(c.SubjectID)
		m.Log.Info(kind+" state changed", kind, c.SubjectID, "from", c.From, "to", c.To, "cause", c.Cause)
	}
	wait := m.Every
	if !boundary.IsZero() {
		wait = min(wait, max(boundary.Sub(now), time.Millisecond))
	}
	return wait, err
}

// subjectKind names what a maintenance subject is, by its id's prefix: the
// subject may no longer be in any window to tell.
func subjectKind(id string) string {
	if strings.HasPrefix(id, ids.Heartbeat+"_") {
		return "heartbeat"
	}
	return "monitor"
}
