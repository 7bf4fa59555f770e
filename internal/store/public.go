package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/maintenance"
)

// What status pages read: a workspace's public incidents and maintenance
// windows that touch a page's monitors and heartbeats. Each read is a
// fixed number of statements whatever the number of subjects (the ids go
// in as one list), over the partial indexes of public rows. They read
// what is applied: pings waiting in SQLite's journal are not flushed
// here, as a public page must not write (a ping that changes a state gets
// its journal applied within moments anyway).

// MaxPublicSubjects bounds the subjects one public read names.
const MaxPublicSubjects = 1000

var errTooManySubjects = errors.New("too many subjects for one read")

// touching is the condition that an incident row touches one of ids (its
// subject, or an affected monitor or heartbeat), appending ids to args.
func touching(args *[]any, ids []string) string {
	in := placeholders(len(*args)+1, len(ids))
	for _, id := range ids {
		*args = append(*args, id)
	}
	return `(subject_id IN (` + in + `) OR EXISTS (SELECT 1 FROM incident_monitors m
		WHERE m.incident_id = incidents.id AND m.subject_id IN (` + in + `)))`
}

// PublicIncidents returns the workspace's public incidents touching any of
// subjectIDs that are open or were resolved at or after since, newest
// first by start, at most limit, with their updates.
func (db *DB) PublicIncidents(ctx context.Context, wsID string, subjectIDs []string, since time.Time, limit int) (out []*incident.Incident, err error) {
	defer errs.Wrap(&err, "store.PublicIncidents(%s)", wsID)
	if len(subjectIDs) == 0 || limit <= 0 {
		return nil, nil
	}
	if len(subjectIDs) > MaxPublicSubjects {
		return nil, errTooManySubjects
	}
	args := []any{wsID, micros(since)}
	where := `workspace_id = $1 AND public AND (resolved_at = 0 OR resolved_at >= $2) AND ` + touching(&args, subjectIDs)
	args = append(args, limit)
	err = db.inSnapshot(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE `+where+
			` ORDER BY started_at DESC, id DESC LIMIT `+placeholders(len(args), 1), args...)
		if out, err = collect(rows, err, scanIncident); err != nil {
			return err
		}
		return fillIncidents(ctx, tx, out)
	})
	return out, err
}

// PublicIncidentsStarted returns the workspace's public incidents touching
// any of subjectIDs that started in [from, to), newest first, with their
// updates; and the start of the latest such incident before from and of
// the earliest at or after to (zero when there is none), so a history
// can page to them.
func (db *DB) PublicIncidentsStarted(ctx context.Context, wsID string, subjectIDs []string, from, to time.Time) (
	out []*incident.Incident, older, newer time.Time, err error) {
	defer errs.Wrap(&err, "store.PublicIncidentsStarted(%s)", wsID)
	if len(subjectIDs) == 0 {
		return nil, time.Time{}, time.Time{}, nil
	}
	if len(subjectIDs) > MaxPublicSubjects {
		return nil, time.Time{}, time.Time{}, errTooManySubjects
	}
	// Each statement: the workspace, its bound, then the subjects.
	query := func(bounds string, at ...time.Time) (string, []any) {
		args := []any{wsID}
		for _, t := range at {
			args = append(args, micros(t))
		}
		return `FROM incidents WHERE workspace_id = $1 AND public AND ` + bounds + ` AND ` + touching(&args, subjectIDs), args
	}
	err = db.inSnapshot(ctx, func(tx *sql.Tx) error {
		q, args := query(`started_at >= $2 AND started_at < $3`, from, to)
		rows, err := tx.QueryContext(ctx, `SELECT `+incidentColumns+` `+q+` ORDER BY started_at DESC, id DESC`, args...)
		if out, err = collect(rows, err, scanIncident); err != nil {
			return err
		}
		if err := fillIncidents(ctx, tx, out); err != nil {
			return err
		}
		// The neighbours, each walking the index from the month's edge.
		q, args = query(`started_at < $2`, from)
		if older, err = firstStart(ctx, tx, `SELECT started_at `+q+` ORDER BY started_at DESC LIMIT 1`, args); err != nil {
			return err
		}
		q, args = query(`started_at >= $2`, to)
		newer, err = firstStart(ctx, tx, `SELECT started_at `+q+` ORDER BY started_at LIMIT 1`, args)
		return err
	})
	return out, older, newer, err
}

// firstStart runs a query of one started_at, zero when it finds no row.
func firstStart(ctx context.Context, tx *sql.Tx, query string, args []any) (time.Time, error) {
	var at int64
	err := tx.QueryRowContext(ctx, query, args...).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	return fromMicros(at), nil
}

// PublicMaintenanceWindows returns the workspace's public windows that
// hold any of subjectIDs, with all their subjects, by id; one-off windows
// that ended at or before now are left out (whether a recurring one has
// an occurrence left is for the caller to compute).
func (db *DB) PublicMaintenanceWindows(ctx context.Context, wsID string, subjectIDs []string, now time.Time) (ws []maintenance.Window, err error) {
	defer errs.Wrap(&err, "store.PublicMaintenanceWindows(%s)", wsID)
	if len(subjectIDs) == 0 {
		return nil, nil
	}
	if len(subjectIDs) > MaxPublicSubjects {
		return nil, errTooManySubjects
	}
	args := []any{wsID, micros(now)}
	for _, id := range subjectIDs {
		args = append(args, id)
	}
	return db.queryWindows(ctx, false, `WHERE workspace_id = $1 AND public AND (ends_at IS NULL OR ends_at > $2)
		AND EXISTS (SELECT 1 FROM maintenance_subjects s WHERE s.window_id = maintenance_windows.id
			AND s.subject_id IN (`+placeholders(3, len(subjectIDs))+`)) ORDER BY id`, args...)
}
