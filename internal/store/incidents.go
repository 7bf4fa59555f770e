package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/incident"
)

// Incidents and the event outbox. What a state change writes beyond its
// own row (events, its subject's incident, deliveries), and what a
// person's change to an incident writes, is decided above the store (app)
// and written with Tx's primitives in the transaction that makes the
// change.

// subjectOf reads the monitor or heartbeat with this id: what events
// call it, and its workspace.
func subjectOf(ctx context.Context, tx txConn, id string) (s incident.Subject, wsID string, err error) {
	s = incident.Subject{Type: incident.SubjectType(id), ID: id}
	table := "monitors"
	if s.Type == "heartbeat" {
		table = "heartbeats"
	}
	err = tx.QueryRowContext(ctx, `SELECT workspace_id, name FROM `+table+` WHERE id = $1`, id).Scan(&wsID, &s.Name)
	return s, wsID, err
}

func insertIncident(ctx context.Context, tx txConn, inc *incident.Incident) error {
	var subjectID, subjectName string
	if inc.Subject != nil {
		subjectID, subjectName = inc.Subject.ID, inc.Subject.Name
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO incidents (id, workspace_id, title, status, origin, subject_id, subject_name,
		cause, started_at, created_at, updated_at, public, public_title) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		inc.ID, inc.WorkspaceID, inc.Title, string(inc.Status), string(inc.Origin), subjectID, subjectName, inc.Cause,
		micros(inc.StartedAt), micros(inc.CreatedAt), micros(inc.UpdatedAt), inc.Public, inc.PublicTitle); err != nil {
		return err
	}
	for _, m := range inc.AffectedMonitors {
		if _, err := tx.ExecContext(ctx, `INSERT INTO incident_monitors (incident_id, subject_id) VALUES ($1, $2)`, inc.ID, m); err != nil {
			return err
		}
	}
	for _, u := range inc.Updates {
		if err := insertUpdate(ctx, tx, inc.ID, u); err != nil {
			return err
		}
	}
	return nil
}

func insertUpdate(ctx context.Context, tx txConn, incidentID string, u incident.Update) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO incident_updates (incident_id, status, message, at, automatic) VALUES ($1, $2, $3, $4, $5)`,
		incidentID, string(u.Status), u.Message, micros(u.At), u.Automatic)
	return err
}

const incidentColumns = `id, workspace_id, title, status, origin, subject_id, subject_name, cause,
	started_at, acknowledged_at, resolved_at, created_at, updated_at, public, public_title`

func scanIncident(r rowScanner) (*incident.Incident, error) {
	var (
		inc                                incident.Incident
		status, origin, subjectID, subName string
		started, acked, resolved, cr, up   int64
	)
	if err := r.Scan(&inc.ID, &inc.WorkspaceID, &inc.Title, &status, &origin, &subjectID, &subName, &inc.Cause,
		&started, &acked, &resolved, &cr, &up, &inc.Public, &inc.PublicTitle); err != nil {
		return nil, err
	}
	inc.Status, inc.Origin = incident.Status(status), incident.Origin(origin)
	if subjectID != "" {
		inc.Subject = &incident.Subject{Type: incident.SubjectType(subjectID), ID: subjectID, Name: subName}
	}
	inc.StartedAt, inc.CreatedAt, inc.UpdatedAt = fromMicros(started), fromMicros(cr), fromMicros(up)
	if acked != 0 {
		t := fromMicros(acked)
		inc.AcknowledgedAt = &t
	}
	if resolved != 0 {
		t := fromMicros(resolved)
		inc.ResolvedAt = &t
	}
	inc.AffectedMonitors, inc.Updates = []string{}, []incident.Update{}
	return &inc, nil
}

// loadIncident reads one incident whole: its updates and affected
// monitors. wsID "" means any workspace (within a transaction that knows).
func loadIncident(ctx context.Context, q rowQueryer, wsID, id string) (*incident.Incident, error) {
	query := `SELECT ` + incidentColumns + ` FROM incidents WHERE id = $1`
	args := []any{id}
	if wsID != "" {
		query += ` AND workspace_id = $2`
		args = append(args, wsID)
	}
	inc, err := scanIncident(q.QueryRowContext(ctx, query, args...))
	if err != nil {
		return nil, classify(err)
	}
	if err := fillIncidents(ctx, q, []*incident.Incident{inc}); err != nil {
		return nil, err
	}
	return inc, nil
}

// fillIncidents reads the updates and affected monitors of incs.
func fillIncidents(ctx context.Context, q queryer, incs []*incident.Incident) error {
	if len(incs) == 0 {
		return nil
	}
	byID := make(map[string]*incident.Incident, len(incs))
	args := make([]any, len(incs))
	for i, inc := range incs {
		byID[inc.ID], args[i] = inc, inc.ID
	}
	in := placeholders(1, len(incs))
	rows, err := q.QueryContext(ctx, `SELECT incident_id, status, message, at, automatic FROM incident_updates
		WHERE incident_id IN (`+in+`) ORDER BY id`, args...)
	err = each(rows, err, func(r rowScanner) error {
		var (
			id, status string
			u          incident.Update
			at         int64
		)
		if err := r.Scan(&id, &status, &u.Message, &at, &u.Automatic); err != nil {
			return err
		}
		u.Status, u.At = incident.Status(status), fromMicros(at)
		byID[id].Updates = append(byID[id].Updates, u)
		return nil
	})
	if err != nil {
		return err
	}
	rows, err = q.QueryContext(ctx, `SELECT incident_id, subject_id FROM incident_monitors
		WHERE incident_id IN (`+in+`) ORDER BY incident_id, subject_id`, args...)
	return each(rows, err, func(r rowScanner) error {
		var id, subject string
		if err := r.Scan(&id, &subject); err != nil {
			return err
		}
		byID[id].AffectedMonitors = append(byID[id].AffectedMonitors, subject)
		return nil
	})
}

// GetIncident returns the incident with this id in the workspace.
func (db *DB) GetIncident(ctx context.Context, wsID, id string) (inc *incident.Incident, err error) {
	defer errs.Wrap(&err, "store.GetIncident(%s)", id)
	if err := db.flushPings(ctx); err != nil { // a ping's incident is in the journal until applied
		return nil, err
	}
	err = db.inSnapshot(ctx, func(tx *sql.Tx) error {
		inc, err = loadIncident(ctx, tx, wsID, id)
		return err
	})
	return inc, err
}

// IncidentQuery filters and pages ListIncidents.
type IncidentQuery struct {
	Status    string // "open", "acknowledged", "unacknowledged", "resolved" or one of incident.Status; "" for all
	SubjectID string
	From, To  time.Time // started in [From, To)
	BeforeID  string    // the page after this id, newest first
	Limit     int
}

// ListIncidents returns the workspace's incidents, newest first.
func (db *DB) ListIncidents(ctx context.Context, wsID string, q IncidentQuery) (out []*incident.Incident, err error) {
	defer errs.Wrap(&err, "store.ListIncidents")
	if err := db.flushPings(ctx); err != nil {
		return nil, err
	}
	where := []string{"workspace_id = $1"}
	args := []any{wsID}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	switch q.Status {
	case "":
	case "open":
		where = append(where, "resolved_at = 0")
	case "resolved":
		where = append(where, "resolved_at <> 0")
	case "acknowledged":
		where = append(where, "resolved_at = 0", "acknowledged_at <> 0")
	case "unacknowledged":
		where = append(where, "resolved_at = 0", "acknowledged_at = 0")
	default:
		where = append(where, "status = "+arg(q.Status))
	}
	if q.SubjectID != "" {
		where = append(where, "(subject_id = "+arg(q.SubjectID)+
			" OR id IN (SELECT incident_id FROM incident_monitors WHERE subject_id = "+arg(q.SubjectID)+"))")
	}
	if !q.From.IsZero() {
		where = append(where, "started_at >= "+arg(micros(q.From)))
	}
	if !q.To.IsZero() {
		where = append(where, "started_at < "+arg(micros(q.To)))
	}
	if q.BeforeID != "" {
		where = append(where, "id < "+arg(q.BeforeID))
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	err = db.inSnapshot(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE `+strings.Join(where, " AND ")+
			` ORDER BY id DESC LIMIT `+arg(limit), args...)
		if out, err = collect(rows, err, scanIncident); err != nil {
			return err
		}
		return fillIncidents(ctx, tx, out)
	})
	return out, err
}

// StoredEvent is an event as the outbox holds it.
type StoredEvent struct {
	Seq        int64
	ID         string
	Type       string
	SubjectID  string
	IncidentID string
	CreatedAt  time.Time
	Payload    []byte // the event as receivers get it
}

// ListEvents returns the workspace's events after seq, oldest first.
func (db *DB) ListEvents(ctx context.Context, wsID string, afterSeq int64, limit int) (out []StoredEvent, err error) {
	defer errs.Wrap(&err, "store.ListEvents")
	if err := db.flushPings(ctx); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT seq, id, type, subject_id, incident_id, created_at, payload FROM events
		WHERE workspace_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, wsID, afterSeq, limit)
	return collect(rows, err, scanStoredEvent)
}

func scanStoredEvent(r rowScanner) (StoredEvent, error) {
	var (
		e       StoredEvent
		at      int64
		payload string
	)
	if err := r.Scan(&e.Seq, &e.ID, &e.Type, &e.SubjectID, &e.IncidentID, &at, &payload); err != nil {
		return StoredEvent{}, err
	}
	e.CreatedAt, e.Payload = fromMicros(at), []byte(payload)
	return e, nil
}

// CheckAffected fails with UnknownMonitorsError naming the affected ids
// (monitors and heartbeats) that are not the workspace's.
func (tx *Tx) CheckAffected(ctx context.Context, wsID string, affected []string) error {
	return tx.db.checkAffected(ctx, tx.c, wsID, affected)
}

// checkAffected is CheckAffected on a transaction of the store's own.
func (db *DB) checkAffected(ctx context.Context, tx queryer, wsID string, affected []string) error {
	var mons, hbs []string
	for _, id := range affected {
		if incident.SubjectType(id) == "heartbeat" {
			hbs = append(hbs, id)
		} else {
			mons = append(mons, id)
		}
	}
	missing, err := db.unknownSubjects(ctx, tx, monitorSubjects, wsID, mons, false)
	if err != nil {
		return err
	}
	more, err := db.unknownSubjects(ctx, tx, heartbeatSubjects, wsID, hbs, false)
	if err != nil {
		return err
	}
	if missing = append(missing, more...); len(missing) > 0 {
		return &UnknownMonitorsError{IDs: missing}
	}
	return nil
}

// LockIncident reads the workspace's incident id whole, and locks its row
// until the transaction ends.
func (tx *Tx) LockIncident(ctx context.Context, wsID, id string) (*incident.Incident, error) {
	inc, err := scanIncident(tx.c.QueryRowContext(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE id = $1 AND workspace_id = $2`+
		tx.db.d.forUpdate, id, wsID))
	if err != nil {
		return nil, classify(err)
	}
	if err := fillIncidents(ctx, tx.c, []*incident.Incident{inc}); err != nil {
		return nil, err
	}
	return inc, nil
}

// SetIncidentMonitors replaces the monitors and heartbeats the incident
// id affects.
func (tx *Tx) SetIncidentMonitors(ctx context.Context, id string, affected []string) error {
	if _, err := tx.c.ExecContext(ctx, `DELETE FROM incident_monitors WHERE incident_id = $1`, id); err != nil {
		return err
	}
	for _, m := range affected {
		if _, err := tx.c.ExecContext(ctx, `INSERT INTO incident_monitors (incident_id, subject_id) VALUES ($1, $2)`, id, m); err != nil {
			return err
		}
	}
	return nil
}

// UpdateIncident writes inc's title, status, acknowledgement, resolution,
// publication and update time.
func (tx *Tx) UpdateIncident(ctx context.Context, inc *incident.Incident) error {
	_, err := tx.c.ExecContext(ctx, `UPDATE incidents SET title = $2, status = $3, acknowledged_at = $4, resolved_at = $5,
		updated_at = $6, public = $7, public_title = $8 WHERE id = $1`, inc.ID, inc.Title, string(inc.Status), optMicros(inc.AcknowledgedAt),
		optMicros(inc.ResolvedAt), micros(inc.UpdatedAt), inc.Public, inc.PublicTitle)
	return err
}

// InsertIncidentUpdate adds u to the timeline of the incident id.
func (tx *Tx) InsertIncidentUpdate(ctx context.Context, id string, u incident.Update) error {
	return insertUpdate(ctx, tx.c, id, u)
}

func optMicros(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return micros(*t)
}
