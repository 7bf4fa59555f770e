package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/store/pingjournal"
)

// MigrateUpTo applies the migrations up to version v, for tests of a
// migration's conversion of existing data.
func (db *DB) MigrateUpTo(ctx context.Context, v int) (int, error) { return db.migrate(ctx, v) }

// Abandon closes the database as a killed process would leave it: pings
// still in the journal are not applied.
func (db *DB) Abandon() {
	if j := db.journal; j != nil {
		j.Abandon()
	}
	if l := db.locks; l != nil {
		// As the kernel does for a killed process: the locks go, the
		// holder's text stays.
		l.Abandon()
	}
	db.stmts.close()
	db.w.Close()
	db.r.Close()
}

// PendingPings is how many acknowledged pings wait in the journal.
func (db *DB) PendingPings() int {
	if db.journal == nil {
		return 0
	}
	return db.journal.Pending()
}

// JournalSegments lists the SQLite ping journal's files, oldest first.
func (db *DB) JournalSegments() []string { return db.journal.Segments() }

// WriteLegacyJournal writes a batch of pings for the heartbeat with this
// id as the version before journaled them, as a row of ping_journal
// (never applied: a killed process left it).
func (db *DB) WriteLegacyJournal(ctx context.Context, batch int64, heartbeatID string, pings ...heartbeat.Arrival) error {
	var seq int64
	if err := db.w.QueryRowContext(ctx, `SELECT seq FROM heartbeat_runtime WHERE heartbeat_id = $1`, heartbeatID).Scan(&seq); err != nil {
		return err
	}
	_, err := db.w.ExecContext(ctx, `INSERT INTO ping_journal (id, batch) VALUES ($1, $2)`, batch,
		pingjournal.LegacyBatch(batch, seq, pings...))
	return err
}

// InSQLTx runs fn in a write transaction, for tests of the transaction itself.
func (db *DB) InSQLTx(ctx context.Context, fn func(*sql.Tx) error) error { return db.inTx(ctx, fn) }

// BusyWrite is a write transaction of the server's kind that holds
// SQLite's write lock for d: back to back, they stand in for a server
// busy writing.
func (db *DB) BusyWrite(ctx context.Context, d time.Duration) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE ping_journal_applied SET batch = batch`); err != nil {
			return err
		}
		time.Sleep(d)
		return nil
	})
}

// AuthChannel is the channel key and membership changes are announced on.
const AuthChannel = authChan

// HeardGrantNotice reports whether the last change notification the grant
// cache took carried payload: then it took every one sent before it.
func (db *DB) HeardGrantNotice(payload string) bool {
	p := db.grants.heard.Load()
	return p != nil && *p == payload
}

// CreateWorkspaceBeforeQuotas inserts a workspace into the schema before
// quota overrides (workspaces.max_monitors and min_interval_seconds), for
// tests that migrate only that far.
func (db *DB) CreateWorkspaceBeforeQuotas(ctx context.Context, id, slug string, maxMonitors, minInterval int, created time.Time) error {
	_, err := db.w.ExecContext(ctx, `INSERT INTO workspaces (id, name, slug, max_monitors, min_interval_seconds, created_at)
		VALUES ($1, $2, $2, $3, $4, $5)`, id, slug, maxMonitors, minInterval, micros(created))
	return err
}

// CreateHeartbeatBeforeQuotas is CreateHeartbeat on the schema before
// quota overrides, which it does not count against (nor objectives, which
// came later and it does not write).
func (db *DB) CreateHeartbeatBeforeQuotas(ctx context.Context, h heartbeat.Heartbeat, tokenHash, tokenSealed []byte) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		s := h.Schedule
		tz := s.Timezone
		if tz == "" {
			tz = "UTC"
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO heartbeats (id, workspace_id, name, period_s, cron, timezone, grace_s,
			max_runtime_s, paused, token_hash, token_sealed, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			h.ID, h.WorkspaceID, h.Name, s.PeriodSeconds, s.Cron, tz, s.GraceSeconds, h.MaxRuntimeSeconds,
			h.Paused, tokenHash, tokenSealed, micros(h.CreatedAt), micros(h.UpdatedAt))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO heartbeat_runtime (heartbeat_id, state, state_since, window_start)
			VALUES ($1, $2, $3, $4)`, h.ID, string(h.Runtime.State), micros(h.Runtime.Since), micros(h.CreatedAt))
		return err
	})
}
