package store

import (
	"context"
	"slices"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The rows the maintenance sweep (app) moves into and out of MAINTENANCE:
// those whose maintenance may change, read without locks, then, in the
// sweep's transaction, each locked with the window that holds it, and
// written back. Which state and which hold they get is the sweep's.

// MaintenanceCandidates returns, each in ascending order, the seqs of the
// monitors and of the heartbeats whose maintenance may change under
// active, which maps each subject inside an active occurrence to the
// windows that cover it: those in MAINTENANCE that it does not keep there
// under the same window, and those it covers that are neither in it nor
// PAUSED. They are read without locks, so a sweep that finds nothing to
// do costs no write transaction (SQLite's single writer is the engine's);
// the sweep locks them and looks again, and a subject that became a
// candidate since is taken at the next sweep.
func (db *DB) MaintenanceCandidates(ctx context.Context, active map[string][]string) (monitors, heartbeats []int64, err error) {
	defer errs.Wrap(&err, "store.MaintenanceCandidates")
	if monitors, err = db.maintenanceCandidates(ctx, db.r, active, monitorSubjects); err != nil {
		return nil, nil, err
	}
	heartbeats, err = db.maintenanceCandidates(ctx, db.r, active, heartbeatSubjects)
	return monitors, heartbeats, err
}

// MaintenanceMonitor is a monitor's runtime row as the maintenance sweep
// locks it.
type MaintenanceMonitor struct {
	Seq     int64
	ID      string
	Tracker monitor.Tracker
	Hold    string // the window that holds it in MAINTENANCE; "" for none
}

// LockMaintenanceMonitors locks and reads the runtime rows of the monitors
// with these seqs (ascending), in seq order, as the observation writer
// does, so that the two (and other nodes' sweeps) serialize per monitor
// without deadlocks.
func (tx *Tx) LockMaintenanceMonitors(ctx context.Context, seqs []int64) ([]MaintenanceMonitor, error) {
	var locked []MaintenanceMonitor
	for start := 0; start < len(seqs); start += 500 {
		part := anySeqs(seqs[start:min(start+500, len(seqs))])
		rows, err := tx.c.QueryContext(ctx, `SELECT `+runtimeColumns+`, maintenance_window FROM monitor_runtime
			WHERE seq IN (`+placeholders(1, len(part))+`) ORDER BY seq`+tx.db.d.forUpdate, part...)
		rs, err := collect(rows, err, func(r rowScanner) (MaintenanceMonitor, error) {
			var hold string
			rt, err := scanRuntime(scanExtra{r, &hold})
			return MaintenanceMonitor{Seq: rt.Seq, ID: rt.MonitorID, Tracker: rt.Tracker, Hold: hold}, err
		})
		if err != nil {
			return nil, err
		}
		locked = append(locked, rs...)
	}
	return locked, nil
}

// SetMonitorMaintenance writes the state of the monitor with this seq and
// the window that holds it in MAINTENANCE ("" for none).
func (tx *Tx) SetMonitorMaintenance(ctx context.Context, seq int64, t monitor.Tracker, hold string) error {
	_, err := tx.c.ExecContext(ctx, `UPDATE monitor_runtime SET state = $2, state_since = $3, maintenance_window = $4
		WHERE seq = $1`, seq, string(t.State), micros(t.Since), hold)
	return err
}

// MonitorThresholds reads the state-machine thresholds of monitors from
// their configs.
func (tx *Tx) MonitorThresholds(ctx context.Context, ids []string) (map[string]monitor.Thresholds, error) {
	out := map[string]monitor.Thresholds{}
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := tx.c.QueryContext(ctx, `SELECT id, config FROM monitors WHERE id IN (`+placeholders(1, len(part))+`)`, args...)
		err = each(rows, err, func(r rowScanner) error {
			var id, text string
			if err := r.Scan(&id, &text); err != nil {
				return err
			}
			cfg, err := tx.db.configs.decode(id, text)
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

// MaintenanceHeartbeat is a heartbeat with its runtime row as the
// maintenance sweep locks it, and its compiled schedule.
type MaintenanceHeartbeat struct {
	Seq int64
	heartbeat.Heartbeat
	Hold string // the window that holds it in MAINTENANCE; "" for none
}

// LockMaintenanceHeartbeats locks and reads the heartbeats with these
// runtime seqs (ascending), in seq order, as the ping writers do. Run it
// after any monitors' rows, and in HeartbeatTx.
func (tx *Tx) LockMaintenanceHeartbeats(ctx context.Context, seqs []int64) ([]MaintenanceHeartbeat, error) {
	lock := tx.db.d.forUpdateOf("r")
	var locked []MaintenanceHeartbeat
	for start := 0; start < len(seqs); start += 500 {
		part := anySeqs(seqs[start:min(start+500, len(seqs))])
		rows, err := tx.c.QueryContext(ctx, `SELECT `+heartbeatColumns+`, r.maintenance_window`+heartbeatFrom+`
			WHERE r.seq IN (`+placeholders(1, len(part))+`) ORDER BY r.seq`+lock, part...)
		rs, err := collect(rows, err, func(r rowScanner) (MaintenanceHeartbeat, error) {
			var hold string
			h, err := scanHeartbeat(r, &hold)
			return MaintenanceHeartbeat{Seq: h.Seq, Heartbeat: h.Heartbeat, Hold: hold}, err
		})
		if err != nil {
			return nil, err
		}
		locked = append(locked, rs...)
	}
	return locked, nil
}

// SetHeartbeatHold writes the window that holds the heartbeat with this
// runtime seq in MAINTENANCE ("" for none).
func (tx *Tx) SetHeartbeatHold(ctx context.Context, seq int64, hold string) error {
	_, err := tx.c.ExecContext(ctx, `UPDATE heartbeat_runtime SET maintenance_window = $2 WHERE seq = $1`, seq, hold)
	return err
}

// maintenanceCandidates is MaintenanceCandidates for one kind of subject
// (monitorSubjects, heartbeatSubjects).
func (db *DB) maintenanceCandidates(ctx context.Context, q queryer, active map[string][]string, kind string) ([]int64, error) {
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
		if windows, in := active[id]; !in || !slices.Contains(windows, hold) {
			seqs = append(seqs, seq)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(active))
	for id := range active {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
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
	return slices.Compact(seqs), nil
}

// anySeqs is seqs as query arguments.
func anySeqs(seqs []int64) []any {
	out := make([]any, len(seqs))
	for i, s := range seqs {
		out[i] = s
	}
	return out
}

// scanExtra lets scanRuntime read a row that carries one more column.
type scanExtra struct {
	rows  rowScanner
	extra *string
}

func (s scanExtra) Scan(dest ...any) error { return s.rows.Scan(append(dest, s.extra)...) }
