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
	"github.com/tocsin/tocsin/internal/monitor"
)

// Monitors. Config is stored as the JSON of monitor.Config; its Auth and
// its header values are never in that JSON but sealed by the caller and
// kept in auth_sealed and headers_sealed, so reading a monitor never
// touches a credential.

// A monitor is read with its runtime row: the state and the latest check,
// which the check engine writes (checks.go).
const (
	monitorColumns = `m.id, m.workspace_id, m.type, m.name, m.config, m.interval_seconds, m.paused, m.created_at, m.updated_at,
		r.state, r.state_since, r.last_check_at, r.last_result, r.last_reason, r.last_latency_us, r.last_status,
		r.last_cert_expiry, m.slo_target, m.slo_period_days`
	monitorFrom = ` FROM monitors m JOIN monitor_runtime r ON r.monitor_id = m.id`
)

func (db *DB) scanMonitor(row rowScanner) (monitor.Monitor, error) {
	var (
		m                               monitor.Monitor
		config                          string
		since, created, updated, lastAt int64
		lastLatency, certExpiry         int64
		slo                             sloCols
	)
	err := row.Scan(&m.ID, &m.WorkspaceID, &m.Type, &m.Name, &config, &m.IntervalSeconds, &m.Paused, &created, &updated,
		&m.State, &since, &lastAt, &m.Last.Result, &m.Last.Reason, &lastLatency, &m.Last.StatusCode, &certExpiry,
		&slo.target, &slo.days)
	if err != nil {
		return monitor.Monitor{}, classify(err)
	}
	if m.Config, err = db.configs.decode(m.ID, config); err != nil {
		return monitor.Monitor{}, err
	}
	m.StateSince, m.CreatedAt, m.UpdatedAt = fromMicros(since), fromMicros(created), fromMicros(updated)
	if lastAt != 0 {
		m.Last.At = fromMicros(lastAt)
	}
	m.Last.Latency = time.Duration(lastLatency) * time.Microsecond
	if certExpiry != 0 {
		m.Last.CertExpiry = fromMicros(certExpiry)
	}
	m.SLO = slo.value()
	return m, nil
}

// configCache remembers the last decoded config of each monitor, keyed by
// id and checked against the stored text: decoding the JSON was a fifth of
// the server's CPU per read (docs/benchmarks.md). Callers get a clone, so
// nobody can change the cached value.
type configCache struct {
	mu sync.Mutex
	m  map[string]decodedConfig
}

type decodedConfig struct {
	text string
	cfg  monitor.Config
}

const maxDecodedConfigs = 20_000

func (c *configCache) decode(id, text string) (monitor.Config, error) {
	c.mu.Lock()
	d, ok := c.m[id]
	c.mu.Unlock()
	if ok && d.text == text {
		return d.cfg.Clone(), nil
	}
	var cfg monitor.Config
	if err := json.Unmarshal([]byte(text), &cfg); err != nil {
		return monitor.Config{}, fmt.Errorf("decoding config of %s: %w", id, err)
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxDecodedConfigs {
		c.m = map[string]decodedConfig{}
	}
	c.m[id] = decodedConfig{text: text, cfg: cfg.Clone()}
	c.mu.Unlock()
	return cfg, nil
}

func configJSON(c monitor.Config) (string, error) {
	b, err := json.Marshal(c)
	return string(b), err
}

// Sealed holds a monitor's secrets as the caller sealed them; nil: none.
type Sealed struct {
	Auth    []byte // monitor.Auth
	Headers []byte // the request headers' values
}

// Keep names the sealed secrets an update leaves as they are.
type Keep struct{ Auth, Headers bool }

// CreateMonitor inserts m unless its workspace already has as many
// monitors as its quota allows: its override, else maxMonitors (ErrQuota).
// The count and the insert are one transaction (withinQuota).
func (db *DB) CreateMonitor(ctx context.Context, m monitor.Monitor, sealed Sealed, maxMonitors int) (err error) {
	defer errs.Wrap(&err, "store.CreateMonitor(%s)", m.ID)
	config, err := configJSON(m.Config)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.withinQuota(ctx, tx, m.WorkspaceID, quotaMonitors, maxMonitors); err != nil {
			return err
		}
		target, days := sloValues(m.SLO)
		_, err := tx.ExecContext(ctx, `INSERT INTO monitors (id, workspace_id, type, name, config, interval_seconds,
			paused, created_at, updated_at, auth_sealed, headers_sealed, slo_target, slo_period_days)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			m.ID, m.WorkspaceID, string(m.Type), m.Name, config, m.IntervalSeconds,
			m.Paused, micros(m.CreatedAt), micros(m.UpdatedAt), nullBytes(sealed.Auth), nullBytes(sealed.Headers), target, days)
		if err != nil {
			return classify(err)
		}
		interval := m.Interval()
		next := pausedDue
		if !m.Paused {
			next = micros(monitor.NextSlot(m.ID, interval, m.CreatedAt))
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO monitor_runtime (monitor_id, interval_us, next_due_at, state, state_since)
			VALUES ($1, $2, $3, $4, $5)`, m.ID, interval.Microseconds(), next, string(m.State), micros(m.StateSince))
		return classify(err)
	})
}

var getMonitorSQL = `SELECT ` + monitorColumns + monitorFrom + ` WHERE m.workspace_id = $1 AND m.id = $2`

// GetMonitor returns a monitor of the workspace; ErrNotFound also when it
// belongs to another workspace.
func (db *DB) GetMonitor(ctx context.Context, wsID, id string) (m monitor.Monitor, err error) {
	defer errs.Wrap(&err, "store.GetMonitor(%s)", id)
	return db.scanMonitor(db.queryRow(ctx, db.r, getMonitorSQL, wsID, id))
}

// MonitorQuery filters and pages ListMonitors; a zero field filters
// nothing, and a list matches any of its values.
type MonitorQuery struct {
	States       []monitor.State
	Types        []monitor.Type
	NameContains string // matched against the name, both folded to lower case
	AfterID      string // the page after this id
	Limit        int
}

// ListMonitors returns up to q.Limit monitors that match q with ids after
// q.AfterID, by id. Ids grow with creation time and never repeat, so a
// page boundary stays put while others insert.
func (db *DB) ListMonitors(ctx context.Context, wsID string, q MonitorQuery) (ms []monitor.Monitor, err error) {
	defer errs.Wrap(&err, "store.ListMonitors(%s)", wsID)
	if q.Limit <= 0 {
		return nil, errors.New("limit must be positive")
	}
	w := db.monitorWhere(wsID, q)
	w.add("m.id > " + w.arg(q.AfterID))
	rows, err := db.r.QueryContext(ctx, `SELECT `+monitorColumns+monitorFrom+` WHERE `+w.sql()+
		` ORDER BY m.id LIMIT `+w.arg(q.Limit), w.args...)
	return collect(rows, err, db.scanMonitor)
}

// CountMatchingMonitors counts the workspace's monitors that match q's
// filters (its page is ignored).
func (db *DB) CountMatchingMonitors(ctx context.Context, wsID string, q MonitorQuery) (n int, err error) {
	defer errs.Wrap(&err, "store.CountMatchingMonitors(%s)", wsID)
	w := db.monitorWhere(wsID, q)
	err = db.r.QueryRowContext(ctx, `SELECT COUNT(*)`+monitorFrom+` WHERE `+w.sql(), w.args...).Scan(&n)
	return n, err
}

func (db *DB) monitorWhere(wsID string, q MonitorQuery) *where {
	w := whereOf(wsID, "m.workspace_id")
	inList(w, "r.state", q.States)
	inList(w, "m.type", q.Types)
	if q.NameContains != "" {
		w.add(db.d.contains("m.name", w.arg(q.NameContains)))
	}
	return w
}

func (db *DB) CountMonitors(ctx context.Context, wsID string) (n int, err error) {
	defer errs.Wrap(&err, "store.CountMonitors(%s)", wsID)
	err = db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM monitors WHERE workspace_id = $1`, wsID).Scan(&n)
	return n, err
}

// ErrStale reports that a row changed since the caller read it.
var ErrStale = &errs.Error{Kind: errs.KindConflict, Message: "the resource changed while it was being updated; retry"}

// UpdateMonitor stores what a user edits — name, config, interval, SLO — if the
// row is still as the caller read it (updated_at = prevUpdatedAt); else
// ErrStale. State and pause are written by their own methods, so an edit
// never undoes a state change made meanwhile. Each sealed secret that keep
// names is left as it is; the others become sealed's (nil clears them).
// A new interval moves the next check to the first slot of the new interval.
func (db *DB) UpdateMonitor(ctx context.Context, m monitor.Monitor, sealed Sealed, keep Keep, prevUpdatedAt time.Time) (err error) {
	defer errs.Wrap(&err, "store.UpdateMonitor(%s)", m.ID)
	config, err := configJSON(m.Config)
	if err != nil {
		return err
	}
	target, days := sloValues(m.SLO)
	args := []any{m.WorkspaceID, m.ID, micros(prevUpdatedAt), m.Name, config, m.IntervalSeconds, micros(m.UpdatedAt), target, days}
	q := `UPDATE monitors SET name = $4, config = $5, interval_seconds = $6, updated_at = $7, slo_target = $8, slo_period_days = $9`
	if !keep.Auth {
		args = append(args, nullBytes(sealed.Auth))
		q += fmt.Sprintf(`, auth_sealed = $%d`, len(args))
	}
	if !keep.Headers {
		args = append(args, nullBytes(sealed.Headers))
		q += fmt.Sprintf(`, headers_sealed = $%d`, len(args))
	}
	q += ` WHERE workspace_id = $1 AND id = $2 AND updated_at = $3`
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		if err := oneRow(tx.ExecContext(ctx, q, args...)); err != nil {
			return err
		}
		interval := m.Interval()
		_, err := tx.ExecContext(ctx, `UPDATE monitor_runtime SET interval_us = $2,
			next_due_at = CASE WHEN next_due_at = $4 OR interval_us = $2 THEN next_due_at ELSE $3 END
			WHERE monitor_id = $1`, m.ID, interval.Microseconds(),
			micros(monitor.NextSlot(m.ID, interval, m.UpdatedAt)), pausedDue)
		return err
	})
	if errors.Is(err, errs.ErrNotFound) {
		if _, gerr := db.GetMonitor(ctx, m.WorkspaceID, m.ID); gerr == nil {
			return ErrStale
		}
	}
	return err
}

// SetMonitorPaused marks the monitor paused or not, as of at. It returns
// errs.ErrNotFound when nothing changed: the monitor is already so, or
// there is no such monitor. The runtime row is the caller's to move.
func (tx *Tx) SetMonitorPaused(ctx context.Context, wsID, id string, paused bool, at time.Time) error {
	return oneRow(tx.c.ExecContext(ctx, `UPDATE monitors SET paused = $3, updated_at = $4
		WHERE workspace_id = $1 AND id = $2 AND paused <> $3`, wsID, id, paused, micros(at)))
}

// DeleteMonitor removes the workspace's monitor id with its observations
// and state history (errs.ErrNotFound if there is none).
func (tx *Tx) DeleteMonitor(ctx context.Context, wsID, id string) error {
	var seq int64
	err := tx.c.QueryRowContext(ctx, `SELECT r.seq FROM monitors m JOIN monitor_runtime r ON r.monitor_id = m.id
		WHERE m.workspace_id = $1 AND m.id = $2`, wsID, id).Scan(&seq)
	if err != nil {
		return classify(err)
	}
	if _, err := tx.c.ExecContext(ctx, `DELETE FROM observations WHERE monitor_seq = $1`, seq); err != nil {
		return err
	}
	if _, err := tx.c.ExecContext(ctx, `DELETE FROM state_changes WHERE subject_id = $1`, id); err != nil {
		return err
	}
	return oneRow(tx.c.ExecContext(ctx, `DELETE FROM monitors WHERE workspace_id = $1 AND id = $2`, wsID, id))
}

// MonitorAuth returns the monitor's sealed credential, nil when it has none.
func (db *DB) MonitorAuth(ctx context.Context, wsID, id string) (sealed []byte, err error) {
	defer errs.Wrap(&err, "store.MonitorAuth(%s)", id)
	err = db.r.QueryRowContext(ctx, `SELECT auth_sealed FROM monitors WHERE workspace_id = $1 AND id = $2`, wsID, id).Scan(&sealed)
	if err != nil {
		return nil, classify(err)
	}
	return sealed, nil
}

// MonitorHeaders returns the monitor's sealed header values, nil when it
// has none.
func (db *DB) MonitorHeaders(ctx context.Context, wsID, id string) (sealed []byte, err error) {
	defer errs.Wrap(&err, "store.MonitorHeaders(%s)", id)
	err = db.r.QueryRowContext(ctx, `SELECT headers_sealed FROM monitors WHERE workspace_id = $1 AND id = $2`, wsID, id).Scan(&sealed)
	if err != nil {
		return nil, classify(err)
	}
	return sealed, nil
}
