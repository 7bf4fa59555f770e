package app

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/maintenance"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// The effect of maintenance windows on monitor and heartbeat states. The
// maintenance runner reads every window (they are few) and hands them to
// ApplyMaintenance, which works out which monitors and heartbeats an
// active occurrence covers and moves them into and out of MAINTENANCE.

// maintenancePlan is what the maintenance sweep found at now.
type maintenancePlan struct {
	Now time.Time
	// Active maps each subject — monitor or heartbeat — inside an active
	// occurrence to the windows that cover it (at least one id).
	Active map[string][]string
	// EndCause says why a subject held by windowID leaves maintenance; nil
	// means "maintenance window <id> ended".
	EndCause func(subjectID, windowID string) string
}

func (p maintenancePlan) endCause(subjectID, windowID string) string {
	if p.EndCause != nil {
		return p.EndCause(subjectID, windowID)
	}
	return "maintenance window " + windowID + " ended"
}

// ApplyMaintenance applies the maintenance windows at now: monitors and
// heartbeats inside an active occurrence go to MAINTENANCE, those whose
// windows all ended (or were deleted, or no longer name them) leave it.
// It returns the state changes made, and the earliest instant after now
// when what the windows cover changes by the clock alone (zero for none).
// A window that cannot be evaluated is logged and ignored.
func (a *App) ApplyMaintenance(ctx context.Context, windows []maintenance.Window, now time.Time) ([]StateChange, time.Time, error) {
	plan, boundary := planMaintenance(windows, now, a.log)
	changes, err := a.applyMaintenance(ctx, plan)
	return changes, boundary, err
}

// planMaintenance works out which monitors and heartbeats the windows
// cover at now, and the earliest instant after now when that changes by
// the clock alone.
func planMaintenance(windows []maintenance.Window, now time.Time, log *slog.Logger) (maintenancePlan, time.Time) {
	plan := maintenancePlan{Now: now, Active: map[string][]string{}}
	var boundary time.Time
	earlier := func(t time.Time) {
		if boundary.IsZero() || t.Before(boundary) {
			boundary = t
		}
	}
	// What became of each window, for the cause of leaving maintenance.
	const active, inactive, invalid = "active", "inactive", "invalid"
	status := map[string]string{}
	for _, w := range windows {
		timing, err := w.Timing()
		if err != nil {
			status[w.ID] = invalid
			log.Warn("maintenance window cannot be evaluated; it is ignored", "window", w.ID, "err", err)
			continue
		}
		on, end := timing.Active(now)
		status[w.ID] = inactive
		if on {
			status[w.ID] = active
			earlier(end)
			for _, id := range w.MonitorIDs {
				plan.Active[id] = append(plan.Active[id], w.ID)
			}
			for _, id := range w.HeartbeatIDs {
				plan.Active[id] = append(plan.Active[id], w.ID)
			}
		}
		if next, ok := timing.NextStart(now); ok {
			earlier(next)
		}
	}
	plan.EndCause = func(subjectID, windowID string) string {
		switch status[windowID] {
		case "":
			return "maintenance window " + windowID + " was deleted"
		case active:
			return subjectKind(subjectID) + " was removed from maintenance window " + windowID
		case invalid:
			return "maintenance window " + windowID + " can no longer be evaluated"
		}
		return "maintenance window " + windowID + " ended"
	}
	return plan, boundary
}

// subjectKind names what a maintenance subject is, by its id's prefix: the
// subject may no longer be in any window to tell.
func subjectKind(id string) string {
	if strings.HasPrefix(id, ids.Heartbeat+"_") {
		return "heartbeat"
	}
	return "monitor"
}

// applyMaintenance moves, in one transaction, every monitor and heartbeat
// that p.Active covers into MAINTENANCE (paused ones stay PAUSED) and every
// one in MAINTENANCE that it no longer covers back to the state its
// results support — a monitor's with its thresholds, a heartbeat's from
// its job's last report; each transition goes into the state history with
// its cause. Runtime rows are locked in seq order, monitors' before
// heartbeats', like the observation and ping writers', so they (and other
// nodes' sweeps) serialize per subject without deadlocks, and a sweep that
// finds the work done changes nothing.
func (a *App) applyMaintenance(ctx context.Context, p maintenancePlan) (changes []StateChange, err error) {
	defer errs.Wrap(&err, "app.ApplyMaintenance")
	// Usually nothing is to change: find that out with a read, so a sweep
	// costs no write transaction.
	monitorSeqs, heartbeatSeqs, err := a.store.MaintenanceCandidates(ctx, p.Active)
	if err != nil || len(monitorSeqs)+len(heartbeatSeqs) == 0 {
		return nil, err
	}
	apply := func(tx *store.Tx) error {
		changes = changes[:0]
		var err error
		if changes, err = maintainMonitors(ctx, tx, p, monitorSeqs, changes); err != nil {
			return err
		}
		changes, err = a.flow.maintainHeartbeats(ctx, tx, p, heartbeatSeqs, changes)
		return err
	}
	if len(heartbeatSeqs) > 0 {
		err = a.store.HeartbeatTx(ctx, a.steps, apply) // pings' pending effects first
	} else {
		err = a.store.InTx(ctx, apply)
	}
	return changes, err
}

// maintainMonitors applies p to the monitors with the given seqs
// (ascending) and appends their transitions to changes.
func maintainMonitors(ctx context.Context, tx *store.Tx, p maintenancePlan, seqs []int64, changes []StateChange) ([]StateChange, error) {
	locked, err := tx.LockMaintenanceMonitors(ctx, seqs)
	if err != nil {
		return nil, err
	}
	var leaving []string
	for _, r := range locked {
		if leavesMaintenance(p, r.ID, r.Tracker.State) {
			leaving = append(leaving, r.ID)
		}
	}
	th, err := tx.MonitorThresholds(ctx, leaving)
	if err != nil {
		return nil, err
	}
	for _, r := range locked {
		t, hold, tr, changed := monitorMaintenance(p, r.ID, r.Tracker, r.Hold, th[r.ID])
		if !changed {
			continue
		}
		if err := tx.SetMonitorMaintenance(ctx, r.Seq, t, hold); err != nil {
			return nil, err
		}
		if tr != nil {
			if err := recordTransition(ctx, tx, r.ID, *tr); err != nil {
				return nil, err
			}
			changes = append(changes, StateChange{SubjectID: r.ID, Transition: *tr})
		}
	}
	return changes, nil
}

// maintainHeartbeats applies p to the heartbeats with the given seqs
// (ascending) and appends their transitions to changes. Each runtime write
// bumps the row's version, so a deadline verdict the heartbeat sweeper
// worked out before it is discarded by its compare-and-set.
func (w workflow) maintainHeartbeats(ctx context.Context, tx *store.Tx, p maintenancePlan, seqs []int64, changes []StateChange) ([]StateChange, error) {
	locked, err := tx.LockMaintenanceHeartbeats(ctx, seqs)
	if err != nil {
		return nil, err
	}
	for _, h := range locked {
		settings, err := w.settings(h.Heartbeat)
		if err != nil {
			return nil, err
		}
		rt, hold, tr, changed := heartbeatMaintenance(p, h.ID, h.Runtime, settings, h.Hold)
		if !changed {
			continue
		}
		if tr != nil {
			if err := tx.SaveHeartbeatRuntime(ctx, h.Seq, rt, settings); err != nil {
				return nil, err
			}
		}
		if err := tx.SetHeartbeatHold(ctx, h.Seq, hold); err != nil {
			return nil, err
		}
		if tr != nil {
			if err := recordTransition(ctx, tx, h.ID, *tr); err != nil {
				return nil, err
			}
			changes = append(changes, StateChange{SubjectID: h.ID, Transition: *tr})
		}
	}
	return changes, nil
}

// leavesMaintenance says whether p takes the subject id, in state, out of
// MAINTENANCE.
func leavesMaintenance(p maintenancePlan, id string, state monitor.State) bool {
	_, in := p.Active[id]
	return !in && state == monitor.StateMaintenance
}

// monitorMaintenance is what p does to the monitor id with tracker t, held
// in MAINTENANCE by the window hold ("" for none); th are its thresholds,
// which matter when it leaves. It returns its tracker and hold after and
// the transition made, if any; changed is false when nothing is to be
// written.
func monitorMaintenance(p maintenancePlan, id string, t monitor.Tracker, hold string, th monitor.Thresholds) (
	_ monitor.Tracker, _ string, tr *monitor.Transition, changed bool) {
	windows, in := p.Active[id]
	// The history stays in order even if a check result landed after the
	// sweep read the clock.
	at := p.Now
	if at.Before(t.Since) {
		at = t.Since
	}
	switch {
	case in && t.State == monitor.StatePaused:
		return t, hold, nil, false // paused stays paused; resuming lets the next sweep act
	case in && t.State != monitor.StateMaintenance:
		hold = windows[0]
		if t, tr = t.StartMaintenance(at); tr != nil {
			tr.Cause = "maintenance window " + hold + " began"
		}
	case in && !slices.Contains(windows, hold):
		hold = windows[0] // its window ended, another still covers it
	case !in && t.State == monitor.StateMaintenance:
		if t, tr = t.EndMaintenance(at, th); tr != nil {
			tr.Cause = p.endCause(id, hold)
		}
		hold = ""
	default:
		return t, hold, nil, false
	}
	return t, hold, tr, true
}

// heartbeatMaintenance is what p does to the heartbeat id with runtime rt
// and schedule s, held in MAINTENANCE by the window hold ("" for none). It
// returns its runtime and hold after and the transition made, if any (the
// runtime is to be written only with one); changed is false when nothing
// is to be written.
func heartbeatMaintenance(p maintenancePlan, id string, rt heartbeat.Runtime, s heartbeat.Settings, hold string) (
	_ heartbeat.Runtime, _ string, tr *monitor.Transition, changed bool) {
	windows, in := p.Active[id]
	// The history stays in order even if a ping landed after the sweep
	// read the clock.
	at := p.Now
	if at.Before(rt.Since) {
		at = rt.Since
	}
	switch {
	case in && rt.State == monitor.StatePaused:
		return rt, hold, nil, false // paused stays paused; resuming lets the next sweep act
	case in && rt.State != monitor.StateMaintenance:
		hold = windows[0]
		rt, tr = rt.EnterMaintenance(at, "maintenance window "+hold+" began")
	case in && !slices.Contains(windows, hold):
		hold = windows[0] // its window ended, another still covers it
	case !in && rt.State == monitor.StateMaintenance:
		// Deadlines that passed inside the window do not count, also those
		// the deadline sweeper has not come to yet: pass them as it would
		// have, quietly, before leaving.
		rt, _ = rt.Sweep(at, s, heldCoverage)
		rt, tr = rt.LeaveMaintenance(at, p.endCause(id, hold))
		hold = ""
	default:
		return rt, hold, nil, false
	}
	return rt, hold, tr, true
}

// heldCoverage is the coverage for sweeping a heartbeat in MAINTENANCE,
// which judges nothing and so never asks.
var heldCoverage heartbeat.Coverage = func(time.Time, time.Time) (bool, time.Time, time.Time) {
	return true, time.Time{}, time.Time{}
}

// AllMaintenanceWindows returns the windows of every workspace, for the
// maintenance sweep.
func (a *App) AllMaintenanceWindows(ctx context.Context) ([]maintenance.Window, error) {
	return a.store.AllMaintenanceWindows(ctx)
}
