package store

import (
	"context"
	"database/sql"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
)

// counted is a quota on how many rows of a table a workspace holds: its
// override column on workspaces, and how the refusal names it (flag ""
// when `tocsin workspace set-quota` cannot change it yet).
type counted struct {
	table, column string
	noun, flag    string
}

var (
	quotaMonitors   = counted{"monitors", "quota_monitors", "monitors", "--monitors"}
	quotaHeartbeats = counted{"heartbeats", "quota_heartbeats", "heartbeats", "--heartbeats"}
	quotaWindows    = counted{"maintenance_windows", "quota_maintenance_windows", "maintenance windows", "--maintenance-windows"}
	quotaChannels   = counted{"notification_channels", "quota_channels", "notification channels", "--channels"}
)

// withinQuota holds the workspace row (PostgreSQL) or the write lock
// (SQLite) for the rest of tx and refuses (ErrQuota) when the workspace
// already has as many rows as its quota allows: its override, read here so
// a change applies to the next create on every node, else def. Concurrent
// creates therefore never exceed the quota together. ErrNotFound when the
// workspace does not exist.
func (db *DB) withinQuota(ctx context.Context, tx *sql.Tx, wsID string, q counted, def int) error {
	var override sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT `+q.column+` FROM workspaces WHERE id = $1`+db.d.forUpdate, wsID).Scan(&override)
	if err != nil {
		return classify(err)
	}
	limit := def
	if override.Valid {
		limit = int(override.Int64)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+q.table+` WHERE workspace_id = $1`, wsID).Scan(&n); err != nil {
		return err
	}
	if n >= limit && q.flag == "" {
		return refine(ErrQuota, "%s quota reached: this workspace allows at most %d %s", q.noun, limit, q.noun)
	}
	if n >= limit {
		return refine(ErrQuota, "%s quota reached: this workspace allows at most %d %s; the server's operator can raise it with `tocsin workspace set-quota %s N`",
			q.noun, limit, q.noun, q.flag)
	}
	return nil
}

// SetWorkspaceQuotas replaces a workspace's quota overrides; a zero field
// clears its override, so the server's default applies.
func (db *DB) SetWorkspaceQuotas(ctx context.Context, wsID string, q account.Quotas) (err error) {
	defer errs.Wrap(&err, "store.SetWorkspaceQuotas(%s)", wsID)
	return oneRow(db.w.ExecContext(ctx, `UPDATE workspaces SET quota_monitors = $2, quota_heartbeats = $3,
		quota_min_interval_seconds = $4, quota_maintenance_windows = $5, quota_channels = $6 WHERE id = $1`,
		wsID, nullInt(q.Monitors), nullInt(q.Heartbeats), nullInt(q.MinIntervalSeconds), nullInt(q.MaintenanceWindows), nullInt(q.Channels)))
}

// SetWorkspaceQuota overrides the monitor quota and minimum interval alone
// (zero clears), leaving the others as they are.
func (db *DB) SetWorkspaceQuota(ctx context.Context, wsID string, maxMonitors, minIntervalSeconds int) (err error) {
	defer errs.Wrap(&err, "store.SetWorkspaceQuota(%s)", wsID)
	return oneRow(db.w.ExecContext(ctx, `UPDATE workspaces SET quota_monitors = $2, quota_min_interval_seconds = $3 WHERE id = $1`,
		wsID, nullInt(maxMonitors), nullInt(minIntervalSeconds)))
}

// WorkspaceUsage counts what a workspace holds of each counted quota;
// MinIntervalSeconds is its monitors' shortest interval (0 without any).
func (db *DB) WorkspaceUsage(ctx context.Context, wsID string) (u account.Quotas, err error) {
	defer errs.Wrap(&err, "store.WorkspaceUsage(%s)", wsID)
	err = db.r.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM monitors WHERE workspace_id = $1),
		(SELECT COUNT(*) FROM heartbeats WHERE workspace_id = $1),
		(SELECT COALESCE(MIN(interval_seconds), 0) FROM monitors WHERE workspace_id = $1),
		(SELECT COUNT(*) FROM maintenance_windows WHERE workspace_id = $1),
		(SELECT COUNT(*) FROM notification_channels WHERE workspace_id = $1)`, wsID).
		Scan(&u.Monitors, &u.Heartbeats, &u.MinIntervalSeconds, &u.MaintenanceWindows, &u.Channels)
	return u, err
}

// nullInt stores zero as NULL.
func nullInt(v int) any {
	if v == 0 {
		return nil
	}
	return v
}
