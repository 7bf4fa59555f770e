package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
)

// Heartbeats as users keep them, and their runtime rows: what pings
// (heartbeat_pings.go) and the deadline sweeper move.

const (
	heartbeatColumns = `h.id, h.workspace_id, h.name, h.period_s, h.cron, h.timezone, h.grace_s, h.max_runtime_s,
		h.paused, h.created_at, h.updated_at, ` + hbRuntimeColumns
	hbRuntimeColumns = `r.seq, r.state, r.state_since, r.last_ping_at, r.last_start_at, r.last_completion,
		r.last_exit_code, r.last_duration_us, r.open_runs, r.expected_at, r.deadline_at, r.window_start, r.version`
	heartbeatFrom = ` FROM heartbeats h JOIN heartbeat_runtime r ON r.heartbeat_id = h.id`
)

// hbRow is a heartbeat as read with its runtime row.
type hbRow struct {
	heartbeat.Heartbeat
	Seq     int64
	Version int64
}

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
	)
	dest := append([]any{&h.ID, &h.WorkspaceID, &h.Name, &h.Schedule.PeriodSeconds, &h.Schedule.Cron, &h.Schedule.Timezone,
		&h.Schedule.GraceSeconds, &h.MaxRuntimeSeconds, &h.Paused, &created, &updated}, rc.dest(&h)...)
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return hbRow{}, classify(err)
	}
	h.CreatedAt, h.UpdatedAt = fromMicros(created), fromMicros(updated)
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
		&c.open, &c.expected, &c.deadline, &c.window, &h.Version}
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
		micros(rt.Wake(s))}, nil
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
	expected_at = $10, deadline_at = $11, window_start = $12, wake_at = $13, version = version + 1,
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

// plans caches compiled schedules: pings and sweeps compile one per
// heartbeat they touch, and a cron expression is not free to parse.
type planCache struct {
	mu sync.Mutex
	m  map[heartbeat.Schedule]heartbeat.Plan
}

func (c *planCache) settings(h heartbeat.Heartbeat) (heartbeat.Settings, error) {
	c.mu.Lock()
	plan, ok := c.m[h.Schedule]
	c.mu.Unlock()
	if !ok {
		var err error
		if plan, err = h.Schedule.Compile(); err != nil {
			return heartbeat.Settings{}, fmt.Errorf("schedule of %s: %w", h.ID, err)
		}
		c.mu.Lock()
		if c.m == nil || len(c.m) >= 10_000 {
			c.m = map[heartbeat.Schedule]heartbeat.Plan{}
		}
		c.m[h.Schedule] = plan
		c.mu.Unlock()
	}
	return heartbeat.Settings{Plan: plan, MaxRuntime: time.Duration(h.MaxRuntimeSeconds) * time.Second}, nil
}

// CreateHeartbeat inserts h, whose ping token has the given hash and sealed
// copy, unless its workspace already has max heartbeats (ErrQuota).
func (db *DB) CreateHeartbeat(ctx context.Context, h heartbeat.Heartbeat, tokenHash, tokenSealed []byte, max int) (err error) {
	defer errs.Wrap(&err, "store.CreateHeartbeat(%s)", h.ID)
	s := h.Schedule
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var ws string
		err := tx.QueryRowContext(ctx, `SELECT id FROM workspaces WHERE id = $1`+db.d.forUpdate, h.WorkspaceID).Scan(&ws)
		if err != nil {
			return classify(err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM heartbeats WHERE workspace_id = $1`, h.WorkspaceID).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return refine(ErrQuota, "heartbeat quota reached: this workspace allows at most %d heartbeats", max)
		}
		tz := s.Timezone
		if tz == "" {
			tz = "UTC"
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO heartbeats (id, workspace_id, name, period_s, cron, timezone, grace_s,
			max_runtime_s, paused, token_hash, token_sealed, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			h.ID, h.WorkspaceID, h.Name, s.PeriodSeconds, s.Cron, tz, s.GraceSeconds, h.MaxRuntimeSeconds,
			h.Paused, tokenHash, tokenSealed, micros(h.CreatedAt), micros(h.UpdatedAt))
		if err != nil {
			return classify(err)
		}
		rt := h.Runtime
		_, err = tx.ExecContext(ctx, `INSERT INTO heartbeat_runtime (heartbeat_id, state, state_since, window_start)
			VALUES ($1, $2, $3, $4)`, h.ID, string(rt.State), micros(rt.Since), micros(h.CreatedAt))
		return classify(err)
	})
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

// ListHeartbeats returns up to limit heartbeats with ids after afterID, by id.
func (db *DB) ListHeartbeats(ctx context.Context, wsID, afterID string, limit int) (out []HeartbeatWithToken, err error) {
	defer errs.Wrap(&err, "store.ListHeartbeats(%s)", wsID)
	if limit <= 0 {
		return nil, errors.New("limit must be positive")
	}
	if err := db.flushPings(ctx); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+heartbeatColumns+`, h.token_sealed`+heartbeatFrom+`
		WHERE h.workspace_id = $1 AND h.id > $2 ORDER BY h.id LIMIT $3`, wsID, afterID, limit)
	return collect(rows, err, func(r rowScanner) (HeartbeatWithToken, error) {
		var sealed []byte
		h, err := scanHeartbeat(r, &sealed)
		return HeartbeatWithToken{h.Heartbeat, sealed}, err
	})
}

func (db *DB) CountHeartbeats(ctx context.Context, wsID string) (n int, err error) {
	defer errs.Wrap(&err, "store.CountHeartbeats(%s)", wsID)
	err = db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM heartbeats WHERE workspace_id = $1`, wsID).Scan(&n)
	return n, err
}

// lockHeartbeat reads a heartbeat of the workspace with its runtime row
// locked (PostgreSQL; SQLite's transaction holds the one writer).
func (db *DB) lockHeartbeat(ctx context.Context, tx *sql.Tx, wsID, id string) (hbRow, error) {
	lock := ""
	if db.d.name == EnginePostgres {
		lock = " FOR UPDATE OF r"
	}
	return scanHeartbeat(tx.QueryRowContext(ctx, `SELECT `+heartbeatColumns+heartbeatFrom+`
		WHERE h.workspace_id = $1 AND h.id = $2`+lock, wsID, id))
}

// UpdateHeartbeat stores what a user edits — name, schedule, maximum
// runtime — if the row is still as the caller read it (else ErrStale). A
// new schedule moves a pending deadline to what the new schedule expects
// after the last report.
func (db *DB) UpdateHeartbeat(ctx context.Context, h heartbeat.Heartbeat, prevUpdatedAt time.Time) (err error) {
	defer errs.Wrap(&err, "store.UpdateHeartbeat(%s)", h.ID)
	return db.heartbeatWrite(ctx, func() error { return db.updateHeartbeat(ctx, h, prevUpdatedAt) })
}

func (db *DB) updateHeartbeat(ctx context.Context, h heartbeat.Heartbeat, prevUpdatedAt time.Time) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := db.lockHeartbeat(ctx, tx, h.WorkspaceID, h.ID)
		if err != nil {
			return err
		}
		if !cur.UpdatedAt.Equal(prevUpdatedAt) {
			return ErrStale
		}
		s := h.Schedule
		tz := s.Timezone
		if tz == "" {
			tz = "UTC"
		}
		if _, err := tx.ExecContext(ctx, `UPDATE heartbeats SET name = $3, period_s = $4, cron = $5, timezone = $6,
			grace_s = $7, max_runtime_s = $8, updated_at = $9 WHERE workspace_id = $1 AND id = $2`,
			h.WorkspaceID, h.ID, h.Name, s.PeriodSeconds, s.Cron, tz, s.GraceSeconds, h.MaxRuntimeSeconds,
			micros(h.UpdatedAt)); err != nil {
			return err
		}
		settings, err := db.plans.settings(h)
		if err != nil {
			return err
		}
		rt := cur.Runtime
		if !rt.Deadline.IsZero() && cur.Schedule != h.Schedule {
			if e, ok := settings.Plan.Next(rt.WindowStart); ok {
				rt.Expected, rt.Deadline = e.Expected, e.Deadline
			}
		}
		return db.saveHBRuntime(ctx, tx, cur.Seq, rt, settings)
	})
}

// RotateHeartbeatToken gives a heartbeat a new ping token: the old URL
// stops working when this commits.
func (db *DB) RotateHeartbeatToken(ctx context.Context, wsID, id string, tokenHash, tokenSealed []byte, at time.Time) (err error) {
	defer errs.Wrap(&err, "store.RotateHeartbeatToken(%s)", id)
	return db.heartbeatWrite(ctx, func() error {
		return oneRow(db.w.ExecContext(ctx, `UPDATE heartbeats SET token_hash = $3, token_sealed = $4, updated_at = $5
			WHERE workspace_id = $1 AND id = $2`, wsID, id, tokenHash, tokenSealed, micros(at)))
	})
}

// SetHeartbeatPaused pauses (pings are acknowledged and ignored, nothing
// is due) or resumes a heartbeat, keeping the transition in the state
// history. It does nothing when the heartbeat is already so.
func (db *DB) SetHeartbeatPaused(ctx context.Context, wsID, id string, paused bool, at time.Time) (err error) {
	defer errs.Wrap(&err, "store.SetHeartbeatPaused(%s)", id)
	return db.heartbeatWrite(ctx, func() error { return db.setHeartbeatPaused(ctx, wsID, id, paused, at) })
}

func (db *DB) setHeartbeatPaused(ctx context.Context, wsID, id string, paused bool, at time.Time) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := db.lockHeartbeat(ctx, tx, wsID, id)
		if err != nil || cur.Paused == paused {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE heartbeats SET paused = $3, updated_at = $4
			WHERE workspace_id = $1 AND id = $2`, wsID, id, paused, micros(at)); err != nil {
			return err
		}
		settings, err := db.plans.settings(cur.Heartbeat)
		if err != nil {
			return err
		}
		rt, tr := cur.Runtime, (*monitor.Transition)(nil)
		if paused {
			rt, tr = rt.Pause(at)
		} else {
			rt, tr = rt.Resume(at, settings)
		}
		if err := db.saveHBRuntime(ctx, tx, cur.Seq, rt, settings); err != nil {
			return err
		}
		return db.recordTransition(ctx, tx, id, tr)
	})
}

// DeleteHeartbeat removes a heartbeat with its pings and state history.
func (db *DB) DeleteHeartbeat(ctx context.Context, wsID, id string) (err error) {
	defer errs.Wrap(&err, "store.DeleteHeartbeat(%s)", id)
	return db.heartbeatWrite(ctx, func() error { return db.deleteHeartbeat(ctx, wsID, id) })
}

func (db *DB) deleteHeartbeat(ctx context.Context, wsID, id string) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var seq int64
		err := tx.QueryRowContext(ctx, `SELECT r.seq`+heartbeatFrom+` WHERE h.workspace_id = $1 AND h.id = $2`,
			wsID, id).Scan(&seq)
		if err != nil {
			return classify(err)
		}
		for _, q := range []string{`DELETE FROM ping_blocks WHERE heartbeat_seq = $1`, `DELETE FROM ping_keys WHERE heartbeat_seq = $1`} {
			if _, err := tx.ExecContext(ctx, q, seq); err != nil {
				return err
			}
		}
		if err := (&Tx{db: db, c: tx}).deleted(ctx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM state_changes WHERE subject_id = $1`, id); err != nil {
			return err
		}
		return oneRow(tx.ExecContext(ctx, `DELETE FROM heartbeats WHERE workspace_id = $1 AND id = $2`, wsID, id))
	})
}
