package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store/pingjournal"
)

// Tx is a write transaction handed to the workflows above the store
// (app's): the small primitives a recorded change is made of, SQL and
// nothing else. It runs on a *sql.Tx, or on the connection of a
// transaction begun in a pipeline (PostgreSQL's pings, ping_pg.go).
type Tx struct {
	db *DB
	c  txConn
}

// InTx runs fn in a write transaction: committed when fn returns nil,
// rolled back when it fails or panics.
func (db *DB) InTx(ctx context.Context, fn func(*Tx) error) error {
	return db.inTx(ctx, func(tx *sql.Tx) error { return fn(&Tx{db: db, c: tx}) })
}

// PingSteps are app's decisions on pings, handed to each call that
// stages, replays or applies them (the ping writers, the deadline sweep,
// the writers of heartbeat rows): what a heartbeat's state machine runs
// on, how a ping moves it, how long a key makes a retry a no-op, and how
// a state change is recorded. The store keeps none of them beyond the
// call, but for Record, which goes with each state change a ping made
// until it is written: on SQLite, by the journal's apply.
type PingSteps struct {
	// Settings is what h's state machine runs on: its compiled schedule
	// and bounds.
	Settings func(h heartbeat.Heartbeat) (heartbeat.Settings, error)
	// Ping moves rt by the ping rec and notes in rec what it did (the
	// run's duration, or that it was ignored), returning the transition
	// it made.
	Ping func(rt heartbeat.Runtime, rec *heartbeat.PingRecord, s heartbeat.Settings) (heartbeat.Runtime, *monitor.Transition)
	// KeyTTL is how long a ping's key makes a retry a no-op.
	KeyTTL time.Duration
	// Record writes the state change tr of subjectID in tx: its row in
	// the state history and what follows from it (events, incident).
	Record RecordFunc
}

// RecordFunc writes the state change tr of subjectID in tx (PingSteps).
type RecordFunc func(ctx context.Context, tx *Tx, subjectID string, tr monitor.Transition) error

// journal is s as the ping journal takes it; nil for none.
func (s *PingSteps) journal() *pingjournal.Steps {
	if s == nil {
		return nil
	}
	return &pingjournal.Steps{Settings: s.Settings, Ping: s.Ping, KeyTTL: s.KeyTTL, Follow: s.Record}
}

// recordChange writes the state change c a ping made, in the transaction
// on c, by the RecordFunc that was handed on with it.
func (db *DB) recordChange(ctx context.Context, conn txConn, c *pingjournal.Change) error {
	record, ok := c.Follow.(RecordFunc)
	if !ok || record == nil {
		return fmt.Errorf("a state change of %s staged without a way to record it", c.SubjectID)
	}
	return record(ctx, &Tx{db: db, c: conn}, c.SubjectID, c.Transition)
}

// AppendStateChange adds tr to subjectID's state history, with when it
// was confirmed if that was after it began.
func (tx *Tx) AppendStateChange(ctx context.Context, subjectID string, tr monitor.Transition) error {
	confirmed := int64(0)
	if tr.ConfirmedAt.After(tr.At) {
		confirmed = micros(tr.ConfirmedAt)
	}
	_, err := tx.c.ExecContext(ctx, `INSERT INTO state_changes (subject_id, at, confirmed_at, from_state, to_state, cause)
		VALUES ($1, $2, $3, $4, $5, $6)`, subjectID, micros(tr.At), confirmed, string(tr.From), string(tr.To), tr.Cause)
	return err
}

// LastStateChange reads subjectID's latest state change; ok is false
// when it has none.
func (tx *Tx) LastStateChange(ctx context.Context, subjectID string) (tr monitor.Transition, ok bool, err error) {
	var (
		at       int64
		from, to string
	)
	err = tx.c.QueryRowContext(ctx, `SELECT at, from_state, to_state, cause FROM state_changes
		WHERE subject_id = $1 ORDER BY at DESC, id DESC LIMIT 1`, subjectID).Scan(&at, &from, &to, &tr.Cause)
	if errors.Is(err, sql.ErrNoRows) {
		return tr, false, nil
	}
	tr.At, tr.From, tr.To = fromMicros(at), monitor.State(from), monitor.State(to)
	return tr, err == nil, err
}

// Subject reads the monitor or heartbeat id: what events call it, and its
// workspace. ok is false when it is gone.
func (tx *Tx) Subject(ctx context.Context, id string) (s incident.Subject, wsID string, ok bool, err error) {
	s, wsID, err = subjectOf(ctx, tx.c, id)
	if errors.Is(err, sql.ErrNoRows) {
		return s, "", false, nil
	}
	return s, wsID, err == nil, err
}

// OpenIncident returns the id and subject name of subjectID's open
// incident, or "" for none.
func (tx *Tx) OpenIncident(ctx context.Context, subjectID string) (id, subjectName string, err error) {
	err = tx.c.QueryRowContext(ctx, `SELECT id, subject_name FROM incidents WHERE subject_id = $1 AND resolved_at = 0`,
		subjectID).Scan(&id, &subjectName)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	}
	return id, subjectName, err
}

// InsertIncident stores inc with its updates and affected subjects.
func (tx *Tx) InsertIncident(ctx context.Context, inc *incident.Incident) error {
	return insertIncident(ctx, tx.c, inc)
}

// ResolveIncident resolves the incident id as of resolvedAt (when its
// subject recovered) with last as its last update, written at last.At,
// and returns it as written.
func (tx *Tx) ResolveIncident(ctx context.Context, id string, resolvedAt time.Time, last incident.Update) (*incident.Incident, error) {
	if _, err := tx.c.ExecContext(ctx, `UPDATE incidents SET status = $2, resolved_at = $3, updated_at = $4 WHERE id = $1`,
		id, string(incident.Resolved), micros(resolvedAt), micros(last.At)); err != nil {
		return nil, err
	}
	if err := insertUpdate(ctx, tx.c, id, last); err != nil {
		return nil, err
	}
	return loadIncident(ctx, tx.c, "", id)
}

// InsertEvent adds ev to the outbox, without deliveries.
func (tx *Tx) InsertEvent(ctx context.Context, ev incident.Event, subjectID, incidentID string) error {
	payload, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	_, err = tx.c.ExecContext(ctx, `INSERT INTO events (id, workspace_id, type, subject_id, incident_id, created_at, payload)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, ev.ID, ev.WorkspaceID, ev.Type, subjectID, incidentID, micros(ev.CreatedAt), string(payload))
	return err
}

// EnabledChannels lists the workspace's enabled channels with what they
// hear (ID, Events, Subjects), in id order.
func (tx *Tx) EnabledChannels(ctx context.Context, wsID string) ([]notify.Channel, error) {
	rows, err := tx.c.QueryContext(ctx, `SELECT id, events, subjects FROM notification_channels
		WHERE workspace_id = $1 AND enabled ORDER BY id`, wsID)
	return collect(rows, err, func(r rowScanner) (c notify.Channel, err error) {
		var events, subjects string
		if err := r.Scan(&c.ID, &events, &subjects); err != nil {
			return c, err
		}
		c.Enabled = true
		return c, errors.Join(json.Unmarshal([]byte(events), &c.Events), json.Unmarshal([]byte(subjects), &c.Subjects))
	})
}

// InsertDelivery adds a pending delivery of ev to channelID, due at once
// and given up at giveUpAt; deliveries of a channel with the same
// orderKey go out in order. It returns the delivery's id.
func (tx *Tx) InsertDelivery(ctx context.Context, ev incident.Event, channelID, orderKey string, giveUpAt time.Time) (id string, err error) {
	id = ids.New(ids.Delivery, ev.CreatedAt)
	_, err = tx.c.ExecContext(ctx, `INSERT INTO deliveries (id, workspace_id, channel_id, event_id, event_type, order_key,
		status, next_attempt_at, give_up_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $7, $7)`,
		id, ev.WorkspaceID, channelID, ev.ID, ev.Type, orderKey, micros(ev.CreatedAt), micros(giveUpAt))
	return id, err
}
