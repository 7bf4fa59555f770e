package store

import (
	"context"
	"database/sql"
	"strings"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
)

// Users, workspaces and memberships.

const userColumns = `id, email, password_hash, must_change_password, created_at, totp_secret, totp_enabled_at`

func scanUser(row rowScanner) (account.User, error) {
	var u account.User
	var created int64
	var totpAt sql.NullInt64
	if err := row.Scan(&u.ID, &u.Email, &u.PasswordHash, &u.MustChangePassword, &created, &u.TOTPSecret, &totpAt); err != nil {
		return account.User{}, classify(err)
	}
	u.CreatedAt = fromMicros(created)
	u.TOTPEnabledAt = fromNullMicros(totpAt)
	return u, nil
}

// CreateUser inserts u with its email lower-cased; ErrConflict when the
// email or id is taken.
func (db *DB) CreateUser(ctx context.Context, u account.User) (err error) {
	defer errs.Wrap(&err, "store.CreateUser(%s)", u.ID)
	return insertUser(ctx, db.w, u)
}

// insertUser names the two-factor columns only when u has a secret, so a
// user without one is written alike on every schema since the first (the
// tests of older migrations seed users through it).
func insertUser(ctx context.Context, ex execer, u account.User) error {
	q := `INSERT INTO users (id, email, password_hash, must_change_password, created_at) VALUES ($1, $2, $3, $4, $5)`
	args := []any{u.ID, strings.ToLower(u.Email), u.PasswordHash, u.MustChangePassword, micros(u.CreatedAt)}
	if u.TOTPSecret != nil {
		q = `INSERT INTO users (` + userColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7)`
		args = append(args, u.TOTPSecret, nullMicros(u.TOTPEnabledAt))
	}
	_, err := ex.ExecContext(ctx, q, args...)
	return classify(err)
}

// UserByEmail finds a user by email, ignoring case.
func (db *DB) UserByEmail(ctx context.Context, email string) (u account.User, err error) {
	defer errs.Wrap(&err, "store.UserByEmail")
	return scanUser(db.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE email = $1`, strings.ToLower(email)))
}

func (db *DB) UserByID(ctx context.Context, id string) (u account.User, err error) {
	defer errs.Wrap(&err, "store.UserByID(%s)", id)
	return scanUser(db.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
}

// SetPassword replaces a user's password hash and whether it must be
// changed at the next sign-in.
func (db *DB) SetPassword(ctx context.Context, userID, hash string, mustChange bool) (err error) {
	defer errs.Wrap(&err, "store.SetPassword(%s)", userID)
	return oneRow(db.w.ExecContext(ctx, `UPDATE users SET password_hash = $2, must_change_password = $3 WHERE id = $1`,
		userID, hash, mustChange))
}

func (db *DB) CountUsers(ctx context.Context) (n int, err error) {
	defer errs.Wrap(&err, "store.CountUsers")
	err = db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n)
	return n, err
}

const workspaceColumns = `id, name, slug, quota_monitors, quota_heartbeats, quota_min_interval_seconds,
	quota_maintenance_windows, quota_channels, created_at`

func (db *DB) CreateWorkspace(ctx context.Context, w account.Workspace) (err error) {
	defer errs.Wrap(&err, "store.CreateWorkspace(%s)", w.ID)
	return insertWorkspace(ctx, db.w, w)
}

func insertWorkspace(ctx context.Context, ex execer, w account.Workspace) error {
	_, err := ex.ExecContext(ctx, `INSERT INTO workspaces (`+workspaceColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		w.ID, w.Name, w.Slug, nullInt(w.MaxMonitors), nullInt(w.MaxHeartbeats), nullInt(w.MinIntervalSeconds),
		nullInt(w.MaxMaintenanceWindows), nullInt(w.MaxChannels), micros(w.CreatedAt))
	return classify(err)
}

// Workspace finds a workspace by id or by slug. Should a slug ever equal
// another workspace's id, the id wins.
func (db *DB) Workspace(ctx context.Context, idOrSlug string) (w account.Workspace, err error) {
	defer errs.Wrap(&err, "store.Workspace(%s)", idOrSlug)
	w, err = scanWorkspace(db.r.QueryRowContext(ctx, `SELECT `+workspaceColumns+` FROM workspaces
		WHERE id = $1 OR slug = $1
		ORDER BY CASE WHEN id = $1 THEN 0 ELSE 1 END LIMIT 1`, idOrSlug))
	return w, classify(err)
}

// scanWorkspace reads the columns of workspaceColumns, and then dest.
func scanWorkspace(row rowScanner, dest ...any) (account.Workspace, error) {
	var w account.Workspace
	var created int64
	var q [5]sql.NullInt64
	err := row.Scan(append([]any{&w.ID, &w.Name, &w.Slug, &q[0], &q[1], &q[2], &q[3], &q[4], &created}, dest...)...)
	if err != nil {
		return account.Workspace{}, err
	}
	w.MaxMonitors, w.MaxHeartbeats, w.MinIntervalSeconds = int(q[0].Int64), int(q[1].Int64), int(q[2].Int64)
	w.MaxMaintenanceWindows, w.MaxChannels = int(q[3].Int64), int(q[4].Int64)
	w.CreatedAt = fromMicros(created)
	return w, nil
}

// PutMembership adds a user to a workspace, or changes their role (keeping
// the original CreatedAt).
func (db *DB) PutMembership(ctx context.Context, m account.Membership) (err error) {
	defer errs.Wrap(&err, "store.PutMembership(%s, %s)", m.WorkspaceID, m.UserID)
	defer db.grants.invalidate()
	return putMembership(ctx, db.w, m)
}

func putMembership(ctx context.Context, ex execer, m account.Membership) error {
	_, err := ex.ExecContext(ctx, `INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role`,
		m.WorkspaceID, m.UserID, string(m.Role), micros(m.CreatedAt))
	return classify(err)
}

func (db *DB) DeleteMembership(ctx context.Context, wsID, userID string) (err error) {
	defer errs.Wrap(&err, "store.DeleteMembership(%s, %s)", wsID, userID)
	defer db.grants.invalidate()
	return oneRow(db.w.ExecContext(ctx, `DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2`, wsID, userID))
}

func (db *DB) Membership(ctx context.Context, wsID, userID string) (m account.Membership, err error) {
	defer errs.Wrap(&err, "store.Membership(%s, %s)", wsID, userID)
	var created int64
	err = db.r.QueryRowContext(ctx, `SELECT workspace_id, user_id, role, created_at FROM memberships
		WHERE workspace_id = $1 AND user_id = $2`, wsID, userID).
		Scan(&m.WorkspaceID, &m.UserID, &m.Role, &created)
	if err != nil {
		return account.Membership{}, classify(err)
	}
	m.CreatedAt = fromMicros(created)
	return m, nil
}

// Bootstrap creates the first account, its workspace and its membership,
// all or nothing, and only while there are no users at all. created reports
// whether it did. On PostgreSQL the users table is locked against inserts
// for the transaction, so concurrent first starts (or a concurrent
// `tocsin user create`) cannot both see an empty table.
func (db *DB) Bootstrap(ctx context.Context, u account.User, w account.Workspace, m account.Membership) (created bool, err error) {
	defer errs.Wrap(&err, "store.Bootstrap(%s)", u.ID)
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		if db.d.bootstrapLock != "" {
			if _, err := tx.ExecContext(ctx, db.d.bootstrapLock); err != nil {
				return err
			}
		}
		var n int
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM users LIMIT 1) AS u`).Scan(&n)
		if err != nil || n > 0 {
			return err
		}
		if err := insertUser(ctx, tx, u); err != nil {
			return err
		}
		if err := insertWorkspace(ctx, tx, w); err != nil {
			return err
		}
		if err := putMembership(ctx, tx, m); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return created, nil
}
