package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/maintenance"
)

// Maintenance windows (package maintenance) as rows; maintenance_sweep.go applies them
// to monitor and heartbeat states.

// UnknownMonitorsError lists ids that name no monitor of the window's
// workspace — whether they exist elsewhere is not said.
type UnknownMonitorsError struct{ IDs []string }

func (e *UnknownMonitorsError) Error() string {
	return "no such monitor in this workspace: " + strings.Join(e.IDs, ", ")
}

// Unwrap makes it a validation error wherever it is not mapped to fields.
func (e *UnknownMonitorsError) Unwrap() error {
	return &errs.Error{Kind: errs.KindInvalid, Message: e.Error()}
}

// UnknownHeartbeatsError lists ids that name no heartbeat of the window's
// workspace — whether they exist elsewhere is not said.
type UnknownHeartbeatsError struct{ IDs []string }

func (e *UnknownHeartbeatsError) Error() string {
	return "no such heartbeat in this workspace: " + strings.Join(e.IDs, ", ")
}

// Unwrap makes it a validation error wherever it is not mapped to fields.
func (e *UnknownHeartbeatsError) Unwrap() error {
	return &errs.Error{Kind: errs.KindInvalid, Message: e.Error()}
}

const windowColumns = `id, workspace_id, name, description, starts_at, ends_at, cron, rrule, timezone,
	duration_us, until_at, created_at, updated_at, public`

func scanWindow(row rowScanner) (maintenance.Window, error) {
	var (
		w                         maintenance.Window
		starts, dur, created, upd int64
		ends, until               sql.NullInt64
	)
	err := row.Scan(&w.ID, &w.WorkspaceID, &w.Name, &w.Description, &starts, &ends, &w.Cron, &w.RRule, &w.Timezone,
		&dur, &until, &created, &upd, &w.Public)
	if err != nil {
		return maintenance.Window{}, classify(err)
	}
	w.StartsAt, w.EndsAt, w.Until = fromMicros(starts), fromNullMicros(ends), fromNullMicros(until)
	w.Duration = time.Duration(dur) * time.Microsecond
	w.CreatedAt, w.UpdatedAt = fromMicros(created), fromMicros(upd)
	return w, nil
}

// queryWindows reads windows with their subjects, in one snapshot: read
// apart, a window deleted between the two reads would seem to have lost
// its subjects (and they would leave maintenance with the wrong cause).
// With all, it reads every subject in one go instead of naming the windows
// (there may be more of them than a statement takes parameters).
func (db *DB) queryWindows(ctx context.Context, all bool, where string, args ...any) (ws []maintenance.Window, err error) {
	err = db.inSnapshot(ctx, func(tx *sql.Tx) error {
		ws, err = readWindows(ctx, tx, all, where, args...)
		return err
	})
	return ws, err
}

func readWindows(ctx context.Context, q queryer, all bool, where string, args ...any) ([]maintenance.Window, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+windowColumns+` FROM maintenance_windows `+where, args...)
	ws, err := collect(rows, err, scanWindow)
	if err != nil || len(ws) == 0 {
		return ws, err
	}
	ids := make([]any, len(ws))
	at := make(map[string]int, len(ws))
	for i, w := range ws {
		ids[i], at[w.ID] = w.ID, i
	}
	// A subject row names a monitor or a heartbeat, and equals subject_id:
	// sorted by it, each kind's ids come sorted.
	const subjects = `SELECT window_id, monitor_id, heartbeat_id FROM maintenance_subjects
		WHERE (monitor_id IS NOT NULL OR heartbeat_id IS NOT NULL)`
	if all {
		rows, err = q.QueryContext(ctx, subjects+` ORDER BY window_id, subject_id`)
	} else {
		rows, err = q.QueryContext(ctx, subjects+` AND window_id IN (`+placeholders(1, len(ids))+`)
			ORDER BY window_id, subject_id`, ids...)
	}
	err = each(rows, err, func(r rowScanner) error {
		var (
			wid      string
			mid, hid sql.NullString
		)
		if err := r.Scan(&wid, &mid, &hid); err != nil {
			return err
		}
		i, ok := at[wid]
		switch {
		case !ok: // a window created since the first query is left for the next sweep
		case mid.Valid:
			ws[i].MonitorIDs = append(ws[i].MonitorIDs, mid.String)
		case hid.Valid:
			ws[i].HeartbeatIDs = append(ws[i].HeartbeatIDs, hid.String)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ws, nil
}

func windowArgs(w maintenance.Window) []any {
	return []any{w.ID, w.WorkspaceID, w.Name, w.Description, micros(w.StartsAt), nullMicros(w.EndsAt),
		w.Cron, w.RRule, w.Timezone, w.Duration.Microseconds(), nullMicros(w.Until), micros(w.CreatedAt), micros(w.UpdatedAt), w.Public}
}

// Subject kinds: the table of their rows and the maintenance_subjects
// column that references it.
const (
	monitorSubjects   = "monitor"
	heartbeatSubjects = "heartbeat"
)

// unknownSubjects returns the ids among ids that are not subjects of the
// kind (monitorSubjects, heartbeatSubjects) in the workspace. In a
// transaction on PostgreSQL it also holds the found rows, so none is
// deleted before the subjects that name it are written.
func (db *DB) unknownSubjects(ctx context.Context, q queryer, kind, wsID string, ids []string, lock bool) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{wsID}
	for _, id := range ids {
		args = append(args, id)
	}
	suffix := ""
	if lock {
		suffix = db.d.forKeyShare
	}
	rows, err := q.QueryContext(ctx, `SELECT id FROM `+kind+`s WHERE workspace_id = $1 AND id IN (`+
		placeholders(2, len(ids))+`)`+suffix, args...)
	found := map[string]bool{}
	err = each(rows, err, func(r rowScanner) error {
		id, err := scanValue[string](r)
		found[id] = true
		return err
	})
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, id := range ids {
		if !found[id] {
			missing = append(missing, id)
		}
	}
	return missing, nil
}

// UnknownMonitors returns the ids that are not monitors of the workspace,
// so a request can name every one at once.
func (db *DB) UnknownMonitors(ctx context.Context, wsID string, ids []string) (missing []string, err error) {
	defer errs.Wrap(&err, "store.UnknownMonitors(%s)", wsID)
	return db.unknownSubjects(ctx, db.r, monitorSubjects, wsID, ids, false)
}

// UnknownHeartbeats returns the ids that are not heartbeats of the
// workspace, so a request can name every one at once.
func (db *DB) UnknownHeartbeats(ctx context.Context, wsID string, ids []string) (missing []string, err error) {
	defer errs.Wrap(&err, "store.UnknownHeartbeats(%s)", wsID)
	return db.unknownSubjects(ctx, db.r, heartbeatSubjects, wsID, ids, false)
}

// putSubjects checks that every monitor and heartbeat of w is in its
// workspace and writes the window's subjects. Unknown ones of both kinds
// are reported together (*UnknownMonitorsError, *UnknownHeartbeatsError).
func (db *DB) putSubjects(ctx context.Context, tx *sql.Tx, w maintenance.Window) error {
	missingMonitors, err := db.unknownSubjects(ctx, tx, monitorSubjects, w.WorkspaceID, w.MonitorIDs, true)
	if err != nil {
		return err
	}
	missingHeartbeats, err := db.unknownSubjects(ctx, tx, heartbeatSubjects, w.WorkspaceID, w.HeartbeatIDs, true)
	if err != nil {
		return err
	}
	switch {
	case len(missingMonitors) > 0 && len(missingHeartbeats) > 0:
		return errors.Join(&UnknownMonitorsError{IDs: missingMonitors}, &UnknownHeartbeatsError{IDs: missingHeartbeats})
	case len(missingMonitors) > 0:
		return &UnknownMonitorsError{IDs: missingMonitors}
	case len(missingHeartbeats) > 0:
		return &UnknownHeartbeatsError{IDs: missingHeartbeats}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM maintenance_subjects WHERE window_id = $1`, w.ID); err != nil {
		return err
	}
	if err := insertSubjects(ctx, tx, w.ID, monitorSubjects, w.MonitorIDs); err != nil {
		return err
	}
	return insertSubjects(ctx, tx, w.ID, heartbeatSubjects, w.HeartbeatIDs)
}

// insertSubjects writes subject rows of a window naming ids of the kind.
func insertSubjects(ctx context.Context, tx *sql.Tx, windowID, kind string, ids []string) error {
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		var q strings.Builder
		q.WriteString(`INSERT INTO maintenance_subjects (window_id, subject_id, ` + kind + `_id) VALUES `)
		args := []any{windowID}
		for i, id := range part {
			if i > 0 {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "($1, $%d, $%d)", i+2, i+2)
			args = append(args, id)
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return classify(err)
		}
	}
	return nil
}

// CreateMaintenanceWindow stores w unless its workspace already has as
// many windows as its quota allows, its override else maxWindows
// (ErrQuota), or a monitor or heartbeat it names is not
// one of the workspace's (*UnknownMonitorsError, *UnknownHeartbeatsError).
func (db *DB) CreateMaintenanceWindow(ctx context.Context, w maintenance.Window, maxWindows int) (err error) {
	defer errs.Wrap(&err, "store.CreateMaintenanceWindow(%s)", w.ID)
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.withinQuota(ctx, tx, w.WorkspaceID, quotaWindows, maxWindows); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO maintenance_windows (`+windowColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, windowArgs(w)...)
		if err != nil {
			return classify(err)
		}
		return db.putSubjects(ctx, tx, w)
	})
}

// GetMaintenanceWindow returns a window of the workspace; ErrNotFound also
// when it belongs to another workspace.
func (db *DB) GetMaintenanceWindow(ctx context.Context, wsID, id string) (w maintenance.Window, err error) {
	defer errs.Wrap(&err, "store.GetMaintenanceWindow(%s)", id)
	ws, err := db.queryWindows(ctx, false, `WHERE workspace_id = $1 AND id = $2`, wsID, id)
	if err != nil {
		return maintenance.Window{}, err
	}
	if len(ws) == 0 {
		return maintenance.Window{}, errs.ErrNotFound
	}
	return ws[0], nil
}

// ListMaintenanceWindows returns up to limit windows of the workspace with
// ids after afterID, by id (creation order).
func (db *DB) ListMaintenanceWindows(ctx context.Context, wsID, afterID string, limit int) (ws []maintenance.Window, err error) {
	defer errs.Wrap(&err, "store.ListMaintenanceWindows(%s)", wsID)
	if limit <= 0 {
		return nil, errors.New("limit must be positive")
	}
	return db.queryWindows(ctx, false, `WHERE workspace_id = $1 AND id > $2 ORDER BY id LIMIT $3`, wsID, afterID, limit)
}

func (db *DB) CountMaintenanceWindows(ctx context.Context, wsID string) (n int, err error) {
	defer errs.Wrap(&err, "store.CountMaintenanceWindows(%s)", wsID)
	err = db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM maintenance_windows WHERE workspace_id = $1`, wsID).Scan(&n)
	return n, err
}

// AllMaintenanceWindows returns the windows of every workspace, for the
// maintenance sweep.
func (db *DB) AllMaintenanceWindows(ctx context.Context) (ws []maintenance.Window, err error) {
	defer errs.Wrap(&err, "store.AllMaintenanceWindows")
	return db.queryWindows(ctx, true, `ORDER BY id`)
}

// UpdateMaintenanceWindow replaces what a user edits — everything but the
// id, workspace and creation time — if the row is still as the caller read
// it (updated_at = prevUpdatedAt); else ErrStale.
func (db *DB) UpdateMaintenanceWindow(ctx context.Context, w maintenance.Window, prevUpdatedAt time.Time) (err error) {
	defer errs.Wrap(&err, "store.UpdateMaintenanceWindow(%s)", w.ID)
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		err := oneRow(tx.ExecContext(ctx, `UPDATE maintenance_windows SET name = $4, description = $5, starts_at = $6,
			ends_at = $7, cron = $8, rrule = $9, timezone = $10, duration_us = $11, until_at = $12, updated_at = $13,
			public = $14 WHERE workspace_id = $1 AND id = $2 AND updated_at = $3`,
			w.WorkspaceID, w.ID, micros(prevUpdatedAt), w.Name, w.Description, micros(w.StartsAt), nullMicros(w.EndsAt),
			w.Cron, w.RRule, w.Timezone, w.Duration.Microseconds(), nullMicros(w.Until), micros(w.UpdatedAt), w.Public))
		if err != nil {
			return err
		}
		return db.putSubjects(ctx, tx, w)
	})
	if errors.Is(err, errs.ErrNotFound) {
		if _, gerr := db.GetMaintenanceWindow(ctx, w.WorkspaceID, w.ID); gerr == nil {
			return ErrStale
		}
	}
	return err
}

// DeleteMaintenanceWindow removes a window; its monitors and heartbeats
// leave maintenance at the next sweep.
func (db *DB) DeleteMaintenanceWindow(ctx context.Context, wsID, id string) (err error) {
	defer errs.Wrap(&err, "store.DeleteMaintenanceWindow(%s)", id)
	return oneRow(db.w.ExecContext(ctx, `DELETE FROM maintenance_windows WHERE workspace_id = $1 AND id = $2`, wsID, id))
}
