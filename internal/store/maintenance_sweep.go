package store

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The effect of maintenance windows on monitor and heartbeat states. The
// engine's sweep reads every window (they are few), works out which
// monitors and heartbeats an active occurrence covers, and hands that to
// ApplyMaintenance.

// MaintenancePlan is what the maintenance sweep found at Now.
type MaintenancePlan struct {
	Now time.Time
	// Active maps each subject — monitor or heartbeat — inside an active
	// occurrence to the windows that cover it (at least one id).
	Active map[string][]string
	// EndCause says why a subject held by windowID leaves maintenance; nil
	// means "maintenance window <id> ended".
	EndCause func(subjectID, windowID string) string
}

func (p MaintenancePlan) endCause(subjectID, windowID string) string {
	if p.EndCause != nil {
		return p.EndCause(subjectID, windowID)
	}
	return "maintenance window " + windowID + " ended"
}

// ApplyMaintenance moves, in one transaction, every monitor and heartbeat
// that p.Active covers into MAINTENANCE (paused ones stay PAUSED) and every
// one in MAINTENANCE that it no longer covers back to the state its
// results support — a monitor's with its thresholds, a heartbeat's from
// its job's last report; each transition goes into the state history with
// its cause. Runtime rows are locked in seq order, monitors' before
// heartbeats', like the observation and ping writers', so they (and other
// nodes' sweeps) serialize per subject without deadlocks, and a sweep that
// finds the work done changes nothing.
func (db *DB) ApplyMaintenance(ctx context.Context, p MaintenancePlan) (changes []StateChange, err error) {
	defer errs.Wrap(&err, "store.ApplyMaintenance")
	// Usually nothing is to change: find that out with a read, so a sweep
	// costs no write transaction (SQLite's single writer is the engine's).
	monitorSeqs, err := db.maintenanceCandidates(ctx, db.r, p, monitorSubjects)
	if err != nil {
		return nil, err
	}
	heartbeatSeqs, err := db.maintenanceCandidates(ctx, db.r, p, heartbeatSubjects)
	if err != nil || len(monitorSeqs)+len(heartbeatSeqs) == 0 {
		return nil, err
	}
	apply := func() error {
		return db.inTx(ctx, func(tx *sql.Tx) error {
			changes = changes[:0]
			var err error
			if changes, err = db.monitorMaintenance(ctx, tx, p, monitorSeqs, changes); err != nil {
				return err
			}
			changes, err = db.heartbeatMaintenance(ctx, tx, p, heartbeatSeqs, changes)
			return err
		})
	}
	if len(heartbeatSeqs) > 0 {
		err = db.heartbeatWrite(ctx, apply) // pings' pending effects first
	} else {
		err = apply()
	}
	return changes, err
}

// monitorMaintenance applies p to the monitors with the given seqs
// (ascending) and appends their transitions to changes.
func (db *DB) monitorMaintenance(ctx context.Context, tx *sql.Tx, p MaintenancePlan, seqs []any, changes []StateChange) ([]StateChange, error) {
	type row struct {
		Runtime
		hold string
	}
	var locked []row
	for start := 0; start < len(seqs); start += 500 {
		part := seqs[start:min(start+500, len(seqs))]
		rows, err := tx.QueryContext(ctx, `SELECT `+runtimeColumns+`, maintenance_window FROM monitor_runtime
			WHERE seq IN (`+placeholders(1, len(part))+`) ORDER BY seq`+db.d.forUpdate, part...)
		rs, err := collect(rows, err, func(r rowScanner) (row, error) {
			var hold string
			rt, err := scanRuntime(scanExtra{r, &hold})
			return row{rt, hold}, err
		})
		if err != nil {
			return nil, err
		}
		locked = append(locked, rs...)
	}
	var leaving []string
	for _, r := range locked {
		if _, in := p.Active[r.MonitorID]; !in && r.Tracker.State == monitor.StateMaintenance {
			leaving = append(leaving, r.MonitorID)
		}
	}
	th, err := db.thresholds(ctx, tx, leaving)
	if err != nil {
		return nil, err
	}
	for _, r := range locked {
		windows, in := p.Active[r.MonitorID]
		t, hold := r.Tracker, r.hold
		// The history stays in order even if a check result landed
		// after the sweep read the clock.
		at := p.Now
		if at.Before(t.Since) {
			at = t.Since
		}
		var tr *monitor.Transition
		switch {
		case in && t.State == monitor.StatePaused:
			continue // paused stays paused; resuming lets the next sweep act
		case in && t.State != monitor.StateMaintenance:
			hold = windows[0]
			if t, tr = t.StartMaintenance(at); tr != nil {
				tr.Cause = "maintenance window " + hold + " began"
			}
		case in && !slices.Contains(windows, hold):
			hold = windows[0] // its window ended, another still covers it
		case !in && t.State == monitor.StateMaintenance:
			if t, tr = t.EndMaintenance(at, th[r.MonitorID]); tr != nil {
				tr.Cause = p.endCause(r.MonitorID, hold)
			}
			hold = ""
		default:
			continue
		}
		_, err := tx.ExecContext(ctx, `UPDATE monitor_runtime SET state = $2, state_since = $3, maintenance_window = $4
			WHERE seq = $1`, r.Seq, string(t.State), micros(t.Since), hold)
		if err != nil {
			return nil, err
		}
		if tr != nil {
			if err := db.recordTransition(ctx, tx, r.MonitorID, tr); err != nil {
				return nil, err
			}
			changes = append(changes, StateChange{SubjectID: r.MonitorID, Transition: *tr})
		}
	}
	return changes, nil
}

// heartbeatMaintenance applies p to the heartbeats with the given seqs
// (ascending) and appends their transitions to changes. Each write bumps
// the runtime row's version, so a deadline verdict the heartbeat sweeper
// worked out before it is discarded by its compare-and-set.
func (db *DB) heartbeatMaintenance(ctx context.Context, tx *sql.Tx, p MaintenancePlan, seqs []any, changes []StateChange) ([]StateChange, error) {
	lock := ""
	if db.d.name == EnginePostgres {
		lock = " FOR UPDATE OF r"
	}
	type row struct {
		hbRow
		hold string
	}
	var locked []row
	for start := 0; start < len(seqs); start += 500 {
		part := seqs[start:min(start+500, len(seqs))]
		rows, err := tx.QueryContext(ctx, `SELECT `+heartbeatColumns+`, r.maintenance_window`+heartbeatFrom+`
			WHERE r.seq IN (`+placeholders(1, len(part))+`) ORDER BY r.seq`+lock, part...)
		rs, err := collect(rows, err, func(r rowScanner) (row, error) {
			var hold string
			h, err := scanHeartbeat(r, &hold)
			return row{h, hold}, err
		})
		if err != nil {
			return nil, err
		}
		locked = append(locked, rs...)
	}
	for _, h := range locked {
		windows, in := p.Active[h.ID]
		rt, hold := h.Runtime, h.hold
		// The history stays in order even if a ping landed after the
		// sweep read the clock.
		at := p.Now
		if at.Before(rt.Since) {
			at = rt.Since
		}
		settings, err := db.plans.settings(h.Heartbeat)
		if err != nil {
			return nil, err
		}
		var tr *monitor.Transition
		switch {
		case in && rt.State == monitor.StatePaused:
			continue // paused stays paused; resuming lets the next sweep act
		case in && rt.State != monitor.StateMaintenance:
			hold = windows[0]
			rt, tr = rt.EnterMaintenance(at, "maintenance window "+hold+" began")
		case in && !slices.Contains(windows, hold):
			hold = windows[0] // its window ended, another still covers it
		case !in && rt.State == monitor.StateMaintenance:
			// Deadlines that passed inside the window do not count, also
			// those the deadline sweeper has not come to yet: pass them as
			// it would have, quietly, before leaving.
			rt, _ = rt.Sweep(at, settings, heldCoverage)
			rt, tr = rt.LeaveMaintenance(at, p.endCause(h.ID, hold))
			hold = ""
		default:
			continue
		}
		if tr != nil {
			if err := db.saveHBRuntime(ctx, tx, h.Seq, rt, settings); err != nil {
				return nil, err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE heartbeat_runtime SET maintenance_window = $2 WHERE seq = $1`,
			h.Seq, hold); err != nil {
			return nil, err
		}
		if tr != nil {
			if err := db.recordTransition(ctx, tx, h.ID, tr); err != nil {
				return nil, err
			}
			changes = append(changes, StateChange{SubjectID: h.ID, Transition: *tr})
		}
	}
	return changes, nil
}

// heldCoverage is the coverage for sweeping a heartbeat in MAINTENANCE,
// which judges nothing and so never asks.
var heldCoverage heartbeat.Coverage = func(time.Time, time.Time) (bool, time.Time, time.Time) {
	return true, time.Time{}, time.Time{}
}

// maintenanceCandidates returns, in ascending order, the seqs of subjects
// of the kind (monitorSubjects, heartbeatSubjects) whose maintenance may
// change: those in MAINTENANCE that p does not keep there under the same
// window, and those p covers that are not in it yet. They are read without
// locks, before the transaction; ApplyMaintenance locks them and looks
// again, and a subject that became a candidate since is taken at the next
// sweep.
func (db *DB) maintenanceCandidates(ctx context.Context, q queryer, p MaintenancePlan, kind string) ([]any, error) {
	table, idColumn := kind+"_runtime", kind+"_id"
	var seqs []int64
	rows, err := q.QueryContext(ctx, `SELECT seq, `+idColumn+`, maintenance_window FROM `+table+` WHERE state = 'MAINTENANCE'`)
	err = each(rows, err, func(r rowScanner) error {
		var (
			seq      int64
			id, hold string
		)
		if err := r.Scan(&seq, &id, &hold); err != nil {
			return err
		}
		if windows, in := p.Active[id]; !in || !slices.Contains(windows, hold) {
			seqs = append(seqs, seq)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	active := make([]string, 0, len(p.Active))
	for id := range p.Active {
		active = append(active, id)
	}
	slices.Sort(active)
	for start := 0; start < len(active); start += 500 {
		part := active[start:min(start+500, len(active))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := q.QueryContext(ctx, `SELECT seq FROM `+table+`
			WHERE state NOT IN ('PAUSED', 'MAINTENANCE') AND `+idColumn+` IN (`+placeholders(1, len(part))+`)`, args...)
		more, err := collect(rows, err, scanValue[int64])
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, more...)
	}
	slices.Sort(seqs)
	out := make([]any, 0, len(seqs))
	for i, s := range seqs {
		if i == 0 || s != seqs[i-1] {
			out = append(out, s)
		}
	}
	return out, nil
}

// thresholds reads the state-machine thresholds of monitors from their
// configs.
func (db *DB) thresholds(ctx context.Context, tx *sql.Tx, ids []string) (map[string]monitor.Thresholds, error) {
	out := map[string]monitor.Thresholds{}
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, config FROM monitors WHERE id IN (`+placeholders(1, len(part))+`)`, args...)
		err = each(rows, err, func(r rowScanner) error {
			var id, text string
			if err := r.Scan(&id, &text); err != nil {
				return err
			}
			cfg, err := db.configs.decode(id, text)
			if err != nil {
				return err
			}
			out[id] = monitor.Thresholds{Confirmations: cfg.Confirmations, Recoveries: cfg.Recoveries}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanExtra lets scanRuntime read a row that carries one more column.
type scanExtra struct {
	rows  rowScanner
	extra *string
}

func (s scanExtra) Scan(dest ...any) error { return s.rows.Scan(append(dest, s.extra)...) }
