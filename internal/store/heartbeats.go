package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store/pingjournal"
)

// Heartbeats as users keep them, and their runtime rows: what pings
// (heartbeat_pings.go) and the deadline sweeper move.

const (
	heartbeatColumns = `h.id, h.workspace_id, h.name, h.period_s, h.cron, h.timezone, h.grace_s, h.max_runtime_s,
		h.paused, h.created_at, h.updated_at, h.slo_target, h.slo_period_days, ` + hbRuntimeColumns
	hbRuntimeColumns = `r.seq, r.state, r.state_since, r.last_ping_at, r.last_start_at, r.last_completion,
		r.last_exit_code, r.last_duration_us, r.open_runs, r.expected_at, r.deadline_at, r.window_start, r.interrupted, r.version`
	heartbeatFrom = ` FROM heartbeats h JOIN heartbeat_runtime r ON r.heartbeat_id = h.id`
)

// hbRow is a heartbeat as read with its runtime row; the ping journal
// caches it.
type hbRow = pingjournal.Row

func fromZeroMicros(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return fromMicros(v)
}

// scanHeartbeat reads heartbeatColumns, then extra.
func scanHeartbeat(row rowScanner, extra ...any) (hbRow, error) {
	var (
		h                hbRow
		created, updated int64
		rc               runtimeCols
		slo              sloCols
	)
	dest := append([]any{&h.ID, &h.WorkspaceID, &h.Name, &h.Schedule.PeriodSeconds, &h.Schedule.Cron, &h.Schedule.Timezone,
		&h.Schedule.GraceSeconds, &h.MaxRuntimeSeconds, &h.Paused, &created, &updated, &slo.target, &slo.days}, rc.dest(&h)...)
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return hbRow{}, classify(err)
	}
	h.CreatedAt, h.UpdatedAt = fromMicros(created), fromMicros(updated)
	h.SLO = slo.value()
	return h, rc.fill(&h)
}

// runtimeCols receives hbRuntimeColumns, which fill then decodes into
// the row.
type runtimeCols struct {
	since, lastPing, lastStart, expected, deadline, window, duration int64
	completion, open                                                 string
}

// dest are the scan destinations of hbRuntimeColumns, in their order.
func (c *runtimeCols) dest(h *hbRow) []any {
	rt := &h.Runtime
	return []any{&h.Seq, &rt.State, &c.since, &c.lastPing, &c.lastStart, &c.completion, &rt.LastExitCode, &c.duration,
		&c.open, &c.expected, &c.deadline, &c.window, &rt.Interrupted, &h.Version}
}

func (c *runtimeCols) fill(h *hbRow) error {
	if h.Schedule.Cron == "" {
		h.Schedule.Timezone = ""
	}
	rt := &h.Runtime
	rt.Since, rt.LastPing, rt.LastStart = fromMicros(c.since), fromZeroMicros(c.lastPing), fromZeroMicros(c.lastStart)
	rt.Expected, rt.Deadline, rt.WindowStart = fromZeroMicros(c.expected), fromZeroMicros(c.deadline), fromZeroMicros(c.window)
	if c.completion != "" {
		rt.LastCompletion, _ = heartbeat.ParseSignal(c.completion)
	}
	rt.LastDuration = time.Duration(c.duration) * time.Microsecond
	if c.duration < 0 {
		rt.LastDuration = -1
	}
	if c.open == "[]" || c.open == "" {
		rt.Open = nil
		return nil
	}
	if err := json.Unmarshal([]byte(c.open), &rt.Open); err != nil {
		return fmt.Errorf("open runs of %s: %w", h.ID, err)
	}
	if len(rt.Open) == 0 {
		rt.Open = nil
	}
	return nil
}

// runtimeValues are the writable runtime columns of rt, in
// hbRuntimeUpdate's order after seq.
func hbRuntimeValues(rt heartbeat.Runtime, s heartbeat.Settings) ([]any, error) {
	open, err := openRunsJSON(rt.Open)
	if err != nil {
		return nil, err
	}
	return []any{string(rt.State), micros(rt.Since), zeroMicros(rt.LastPing), zeroMicros(rt.LastStart), completionText(rt.LastCompletion),
		rt.LastExitCode, durationMicros(rt.LastDuration), open, zeroMicros(rt.Expected), zeroMicros(rt.Deadline), zeroMicros(rt.WindowStart),
		micros(rt.Wake(s)), string(rt.Interrupted)}, nil
}

// openRunsJSON is the stored form of a runtime's open runs.
func openRunsJSON(open []heartbeat.Run) (string, error) {
	if len(open) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(open)
	return string(b), err
}

// completionText is the stored form of a runtime's last completion.
func completionText(s heartbeat.Signal) string {
	if s == 0 {
		return ""
	}
	return s.String()
}

// durationMicros is the stored form of a runtime's last duration: -1 for
// none.
func durationMicros(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return d.Microseconds()
}

const hbRuntimeUpdate = `UPDATE heartbeat_runtime SET state = $2, state_since = $3, last_ping_at = $4,
	last_start_at = $5, last_completion = $6, last_exit_code = $7, last_duration_us = $8, open_runs = $9,
	expected_at = $10, deadline_at = $11, window_start = $12, wake_at = $13, interrupted = $14, version = version + 1,
	sweep_owner = NULL, sweep_until = 0`

// saveHBRuntime writes a heartbeat's runtime row.
func (db *DB) saveHBRuntime(ctx context.Context, tx txConn, seq int64, rt heartbeat.Runtime, s heartbeat.Settings) error {
	vals, err := hbRuntimeValues(rt, s)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, hbRuntimeUpdate+` WHERE seq = $1`, append([]any{seq}, vals...)...)
	return err
}

// CreateHeartbeat inserts h, whose ping token has the given hash and sealed
// copy, unless its workspace already has as many heartbeats as its quota
// allows: its override, else max (ErrQuota).
func (db *DB) CreateHeartbeat(ctx context.Context, h heartbeat.Heartbeat, tokenHash, tokenSealed []byte, max int) (err error) {
	defer errs.Wrap(&err, "store.CreateHeartbeat(%s)", h.ID)
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.withinQuota(ctx, tx, h.WorkspaceID, quotaHeartbeats, max); err != nil {
			return err
		}
		return insertHeartbeat(ctx, tx, h, tokenHash, tokenSealed)
	})
}

func insertHeartbeat(ctx context.Context, tx *sql.Tx, h heartbeat.Heartbeat, tokenHash, tokenSealed []byte) error {
	s := h.Schedule
	tz := s.Timezone
	if tz == "" {
		tz = "UTC"
	}
	target, days := sloValues(h.SLO)
	_, err := tx.ExecContext(ctx, `INSERT INTO heartbeats (id, workspace_id, name, period_s, cron, timezone, grace_s,
		max_runtime_s, paused, token_hash, token_sealed, created_at, updated_at, slo_target, slo_period_days)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		h.ID, h.WorkspaceID, h.Name, s.PeriodSeconds, s.Cron, tz, s.GraceSeconds, h.MaxRuntimeSeconds,
		h.Paused, tokenHash, tokenSealed, micros(h.CreatedAt), micros(h.UpdatedAt), target, days)
	if err != nil {
		return classify(err)
	}
	rt := h.Runtime
	_, err = tx.ExecContext(ctx, `INSERT INTO heartbeat_runtime (heartbeat_id, state, state_since, window_start)
		VALUES ($1, $2, $3, $4)`, h.ID, string(rt.State), micros(rt.Since), micros(h.CreatedAt))
	return classify(err)
}

// GetHeartbeat returns a heartbeat of the workspace with its sealed token;
// ErrNotFound also when it belongs to another workspace.
func (db *DB) GetHeartbeat(ctx context.Context, wsID, id string) (h heartbeat.Heartbeat, sealedToken []byte, err error) {
	defer errs.Wrap(&err, "store.GetHeartbeat(%s)", id)
	if err := db.flushPings(ctx); err != nil {
		return heartbeat.Heartbeat{}, nil, err
	}
	row, err := scanHeartbeat(db.queryRow(ctx, db.r, `SELECT `+heartbeatColumns+`, h.token_sealed`+heartbeatFrom+`
		WHERE h.workspace_id = $1 AND h.id = $2`, wsID, id), &sealedToken)
	return row.Heartbeat, sealedToken, err
}

// HeartbeatWithToken is a listed heartbeat with its sealed token.
type HeartbeatWithToken struct {
	heartbeat.Heartbeat
	SealedToken []byte
}

// HeartbeatQuery filters and pages ListHeartbeats; a zero field filters
// nothing.
type HeartbeatQuery struct {
	States       []monitor.State
	NameContains string // matched against the name, both folded to lower case
	AfterID      string // the page after this id
	Limit        int
}

// ListHeartbeats returns up to q.Limit heartbeats that match q with ids
// after q.AfterID, by id.
func (db *DB) ListHeartbeats(ctx context.Context, wsID string, q HeartbeatQuery) (out []HeartbeatWithToken, err error) {
	defer errs.Wrap(&err, "store.ListHeartbeats(%s)", wsID)
	if q.Limit <= 0 {
		return nil, errors.New("limit must be positive")
	}
	if err := db.flushPings(ctx); err != nil {
		return nil, err
	}
	w := db.heartbeatWhere(wsID, q)
	w.add("h.id > " + w.arg(q.AfterID))
	rows, err := db.r.QueryContext(ctx, `SELECT `+heartbeatColumns+`, h.token_sealed`+heartbeatFrom+`
		WHERE `+w.sql()+` ORDER BY h.id LIMIT `+w.arg(q.Limit), w.args...)
	return collect(rows, err, func(r rowScanner) (HeartbeatWithToken, error) {
		var sealed []byte
		h, err := scanHeartbeat(r, &sealed)
		return HeartbeatWithToken{h.Heartbeat, sealed}, err
	})
}

// CountMatchingHeartbeats counts the workspace's heartbeats that match
// q's filters (its page is ignored).
func (db *DB) CountMatchingHeartbeats(ctx context.Context, wsID string, q HeartbeatQuery) (n int, err error) {
	defer errs.Wrap(&err, "store.CountMatchingHeartbeats(%s)", wsID)
	w := db.heartbeatWhere(wsID, q)
	err = db.r.QueryRowContext(ctx, `SELECT COUNT(*)`+heartbeatFrom+` WHERE `+w.sql(), w.args...).Scan(&n)
	return n, err
}

func (db *DB) heartbeatWhere(wsID string, q HeartbeatQuery) *where {
	w := whereOf(wsID, "h.workspace_id")
	inList(w, "r.state", q.States)
	if q.NameContains != "" {
		w.add(db.d.contains("h.name", w.arg(q.NameContains)))
	}
	return w
}

// lockHeartbeat reads a heartbeat of the workspace with its runtime row
// locked (PostgreSQL; SQLite's transaction holds the one writer).
func (db *DB) lockHeartbeat(ctx context.Context, q rowQueryer, wsID, id string) (hbRow, error) {
	lock := db.d.forUpdateOf("r")
	return scanHeartbeat(q.QueryRowContext(ctx, `SELECT `+heartbeatColumns+heartbeatFrom+`
		WHERE h.workspace_id = $1 AND h.id = $2`+lock, wsID, id))
}

// HeartbeatTx runs fn in a write transaction over heartbeat rows. On
// SQLite the journal's pings are applied first (steps replay what a
// stopped process left, as FlushPings) and held off until it ends, so
// that fn reads the rows as the pings left them.
func (db *DB) HeartbeatTx(ctx context.Context, steps *PingSteps, fn func(*Tx) error) error {
	return db.heartbeatWrite(ctx, steps, func() error { return db.InTx(ctx, fn) })
}

// LockHeartbeat reads the workspace's heartbeat id with its runtime, the
// row locked until the transaction ends; seq names its runtime row.
func (tx *Tx) LockHeartbeat(ctx context.Context, wsID, id string) (h heartbeat.Heartbeat, seq int64, err error) {
	row, err := tx.db.lockHeartbeat(ctx, tx.c, wsID, id)
	return row.Heartbeat, row.Seq, err
}

// UpdateHeartbeat writes what a user edits of h: its name, schedule,
// maximum runtime, SLO and updated_at.
func (tx *Tx) UpdateHeartbeat(ctx context.Context, h heartbeat.Heartbeat) error {
	s := h.Schedule
	target, days := sloValues(h.SLO)
	tz := s.Timezone
	if tz == "" {
		tz = "UTC"
	}
	_, err := tx.c.ExecContext(ctx, `UPDATE heartbeats SET name = $3, period_s = $4, cron = $5, timezone = $6,
		grace_s = $7, max_runtime_s = $8, updated_at = $9, slo_target = $10, slo_period_days = $11
		WHERE workspace_id = $1 AND id = $2`,
		h.WorkspaceID, h.ID, h.Name, s.PeriodSeconds, s.Cron, tz, s.GraceSeconds, h.MaxRuntimeSeconds,
		micros(h.UpdatedAt), target, days)
	return err
}

// SetHeartbeatPaused writes whether the workspace's heartbeat id is
// paused, as of at.
func (tx *Tx) SetHeartbeatPaused(ctx context.Context, wsID, id string, paused bool, at time.Time) error {
	_, err := tx.c.ExecContext(ctx, `UPDATE heartbeats SET paused = $3, updated_at = $4
		WHERE workspace_id = $1 AND id = $2`, wsID, id, paused, micros(at))
	return err
}

// SaveHeartbeatRuntime writes the runtime row seq, with the wake time the
// settings give it.
func (tx *Tx) SaveHeartbeatRuntime(ctx context.Context, seq int64, rt heartbeat.Runtime, s heartbeat.Settings) error {
	return tx.db.saveHBRuntime(ctx, tx.c, seq, rt, s)
}

// RotateHeartbeatToken gives a heartbeat a new ping token: the old URL
// stops working when this commits.
func (db *DB) RotateHeartbeatToken(ctx context.Context, wsID, id string, tokenHash, tokenSealed []byte, at time.Time) (err error) {
	defer errs.Wrap(&err, "store.RotateHeartbeatToken(%s)", id)
	return db.heartbeatWrite(ctx, nil, func() error {
		return oneRow(db.w.ExecContext(ctx, `UPDATE heartbeats SET token_hash = $3, token_sealed = $4, updated_at = $5
			WHERE workspace_id = $1 AND id = $2`, wsID, id, tokenHash, tokenSealed, micros(at)))
	})
}

// DeleteHeartbeat removes the workspace's heartbeat id with its pings and
// state history (errs.ErrNotFound if there is none); run it in
// HeartbeatTx, which on SQLite applies the ping journal first.
func (tx *Tx) DeleteHeartbeat(ctx context.Context, wsID, id string) error {
	var seq int64
	err := tx.c.QueryRowContext(ctx, `SELECT r.seq`+heartbeatFrom+` WHERE h.workspace_id = $1 AND h.id = $2`,
		wsID, id).Scan(&seq)
	if err != nil {
		return classify(err)
	}
	for _, q := range []string{`DELETE FROM ping_blocks WHERE heartbeat_seq = $1`, `DELETE FROM ping_keys WHERE heartbeat_seq = $1`} {
		if _, err := tx.c.ExecContext(ctx, q, seq); err != nil {
			return err
		}
	}
	if _, err := tx.c.ExecContext(ctx, `DELETE FROM state_changes WHERE subject_id = $1`, id); err != nil {
		return err
	}
	return oneRow(tx.c.ExecContext(ctx, `DELETE FROM heartbeats WHERE workspace_id = $1 AND id = $2`, wsID, id))
}
