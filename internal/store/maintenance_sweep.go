package store

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// The effect of maintenance windows on monitor states. The engine's sweep
// reads every window (they are few), works out which monitors an active
// occurrence covers, and hands that to ApplyMaintenance.

// MaintenancePlan is what the maintenance sweep found at Now.
type MaintenancePlan struct {
	Now time.Time
	// Active maps each monitor inside an active occurrence to the windows
	// that cover it (at least one id).
	Active map[string][]string
	// EndCause says why a monitor held by windowID leaves maintenance; nil
	// means "maintenance window <id> ended".
	EndCause func(monitorID, windowID string) string
}

func (p MaintenancePlan) endCause(monitorID, windowID string) string {
	if p.EndCause != nil {
		return p.EndCause(monitorID, windowID)
	}
	return "maintenance window " + windowID + " ended"
}

// ApplyMaintenance moves, in one transaction, every monitor that p.Active
// covers into MAINTENANCE (paused ones stay PAUSED) and every monitor in
// MAINTENANCE that it no longer covers back to the state its results
// support, with its thresholds; each transition goes into the state
// history with its cause. Rows are locked in seq order like the
// observation writer's, so the two (and other nodes' sweeps) serialize per
// monitor without deadlocks, and a sweep that finds the work done changes
// nothing.
func (db *DB) ApplyMaintenance(ctx context.Context, p MaintenancePlan) (changes []StateChange, err error) {
	defer monitor.Wrap(&err, "store.ApplyMaintenance")
	// Usually nothing is to change: find that out with a read, so a sweep
	// costs no write transaction (SQLite's single writer is the engine's).
	seqs, err := db.maintenanceCandidates(ctx, db.r, p)
	if err != nil || len(seqs) == 0 {
		return nil, err
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		changes = changes[:0]
		type row struct {
			runtimeRow
			hold string
		}
		var locked []row
		for start := 0; start < len(seqs); start += 500 {
			part := seqs[start:min(start+500, len(seqs))]
			rows, err := tx.QueryContext(ctx, `SELECT `+runtimeColumns+`, maintenance_window FROM monitor_runtime
				WHERE seq IN (`+placeholders(1, len(part))+`) ORDER BY seq`+db.d.forUpdate, part...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var hold string
				rt, err := scanRuntime(scanExtra{rows, &hold})
				if err != nil {
					rows.Close()
					return err
				}
				locked = append(locked, row{rt, hold})
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		var leaving []string
		for _, r := range locked {
			if _, in := p.Active[r.MonitorID]; !in && r.Tracker.State == monitor.StateMaintenance {
				leaving = append(leaving, r.MonitorID)
			}
		}
		th, err := db.thresholds(ctx, tx, leaving)
		if err != nil {
			return err
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
				return err
			}
			if tr != nil {
				if err := db.recordTransition(ctx, tx, r.MonitorID, tr); err != nil {
					return err
				}
				changes = append(changes, StateChange{SubjectID: r.MonitorID, Transition: *tr})
			}
		}
		return nil
	})
	return changes, err
}

// maintenanceCandidates returns, in ascending order, the seqs of monitors
// whose maintenance may change: those in MAINTENANCE that p does not keep
// there under the same window, and those p covers that are not in it yet.
// They are read without locks, before the transaction; ApplyMaintenance
// locks them and looks again, and a monitor that became a candidate since
// is taken at the next sweep.
func (db *DB) maintenanceCandidates(ctx context.Context, q queryer, p MaintenancePlan) ([]any, error) {
	var seqs []int64
	rows, err := q.QueryContext(ctx, `SELECT seq, monitor_id, maintenance_window FROM monitor_runtime WHERE state = 'MAINTENANCE'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var (
			seq       int64
			mid, hold string
		)
		if err := rows.Scan(&seq, &mid, &hold); err != nil {
			rows.Close()
			return nil, err
		}
		if windows, in := p.Active[mid]; !in || !slices.Contains(windows, hold) {
			seqs = append(seqs, seq)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
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
		rows, err := q.QueryContext(ctx, `SELECT seq FROM monitor_runtime
			WHERE state NOT IN ('PAUSED', 'MAINTENANCE') AND monitor_id IN (`+placeholders(1, len(part))+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var seq int64
			if err := rows.Scan(&seq); err != nil {
				rows.Close()
				return nil, err
			}
			seqs = append(seqs, seq)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
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
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id, text string
			if err := rows.Scan(&id, &text); err != nil {
				rows.Close()
				return nil, err
			}
			cfg, err := db.configs.decode(id, text)
			if err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = monitor.Thresholds{Confirmations: cfg.Confirmations, Recoveries: cfg.Recoveries}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanExtra lets scanRuntime read a row that carries one more column.
type scanExtra struct {
	rows  *sql.Rows
	extra *string
}

func (s scanExtra) Scan(dest ...any) error { return s.rows.Scan(append(dest, s.extra)...) }
