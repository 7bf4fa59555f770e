package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
)

// A workspace's members, as the web app manages them.

// ErrLastOwner refuses a change that would leave a workspace without an
// owner.
var ErrLastOwner = refined{specific: &errs.Error{Kind: errs.KindConflict, Message: "a workspace keeps at least one owner"},
	sentinel: ErrConflict}

// CreateWorkspaceWithOwner creates w and makes m (its creator) a member,
// all or nothing; a slug already taken is a conflict.
func (db *DB) CreateWorkspaceWithOwner(ctx context.Context, w account.Workspace, m account.Membership) (err error) {
	defer errs.Wrap(&err, "store.CreateWorkspaceWithOwner(%s)", w.ID)
	defer db.grants.invalidate()
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := insertWorkspace(ctx, tx, w); err != nil {
			if errors.Is(err, ErrConflict) {
				return refine(ErrConflict, "the slug %q is taken", w.Slug)
			}
			return err
		}
		m.WorkspaceID = w.ID
		return insertMembership(ctx, tx, m)
	})
}

func insertMembership(ctx context.Context, ex execer, m account.Membership) error {
	_, err := ex.ExecContext(ctx, `INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)`,
		m.WorkspaceID, m.UserID, string(m.Role), micros(m.CreatedAt))
	return classify(err)
}

// WorkspacesOf lists the workspaces a person belongs to with their role
// in each, by name then id.
func (db *DB) WorkspacesOf(ctx context.Context, userID string) (out []account.MemberOf, err error) {
	defer errs.Wrap(&err, "store.WorkspacesOf(%s)", userID)
	rows, err := db.r.QueryContext(ctx, `SELECT `+qualified("w.", splitColumns(workspaceColumns))+`, m.role, m.created_at
		FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
		WHERE m.user_id = $1 ORDER BY w.name, w.id`, userID)
	return collect(rows, err, func(r rowScanner) (mo account.MemberOf, err error) {
		var joined int64
		mo.Workspace, err = scanWorkspace(r, &mo.Role, &joined)
		mo.JoinedAt = fromMicros(joined)
		return mo, err
	})
}

// MembersOf lists a workspace's members by e-mail.
func (db *DB) MembersOf(ctx context.Context, workspaceID string) (out []account.Member, err error) {
	defer errs.Wrap(&err, "store.MembersOf(%s)", workspaceID)
	rows, err := db.r.QueryContext(ctx, `SELECT m.user_id, u.email, m.role, m.created_at
		FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.workspace_id = $1 ORDER BY u.email, m.user_id`, workspaceID)
	return collect(rows, err, func(r rowScanner) (m account.Member, err error) {
		var joined int64
		err = r.Scan(&m.UserID, &m.Email, &m.Role, &joined)
		m.JoinedAt = fromMicros(joined)
		return m, err
	})
}

// ChangeRole gives a member another role, unless that would leave the
// workspace without an owner.
func (db *DB) ChangeRole(ctx context.Context, workspaceID, userID string, role account.Role) (err error) {
	defer errs.Wrap(&err, "store.ChangeRole(%s, %s)", workspaceID, userID)
	defer db.grants.invalidate()
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if role != account.RoleOwner {
			if err := db.keepsAnOwner(ctx, tx, workspaceID, userID); err != nil {
				return err
			}
		}
		return oneRow(tx.ExecContext(ctx, `UPDATE memberships SET role = $3 WHERE workspace_id = $1 AND user_id = $2`,
			workspaceID, userID, string(role)))
	})
}

// RemoveMember takes a member out of a workspace, unless they are its
// last owner.
func (db *DB) RemoveMember(ctx context.Context, workspaceID, userID string) (err error) {
	defer errs.Wrap(&err, "store.RemoveMember(%s, %s)", workspaceID, userID)
	defer db.grants.invalidate()
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.keepsAnOwner(ctx, tx, workspaceID, userID); err != nil {
			return err
		}
		return oneRow(tx.ExecContext(ctx, `DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2`,
			workspaceID, userID))
	})
}

// keepsAnOwner refuses, with ErrLastOwner, when userID is an owner of the
// workspace and no other is; ErrNotFound when userID is no member. It
// locks the workspace's owner rows first (in one order, against
// deadlocks), so that two owners demoting or removing each other at once
// on PostgreSQL are serialized: the second, once the first commits, no
// longer counts the first's target among the owners. SQLite's transaction
// already excludes every other writer.
func (db *DB) keepsAnOwner(ctx context.Context, tx *sql.Tx, workspaceID, userID string) error {
	if db.d.locksRows() {
		rows, err := tx.QueryContext(ctx, `SELECT user_id FROM memberships
			WHERE workspace_id = $1 AND role = $2 ORDER BY user_id`+db.d.forUpdate, workspaceID, string(account.RoleOwner))
		if _, err := collect(rows, err, scanValue[string]); err != nil {
			return err
		}
	}
	// Counted after the lock: on PostgreSQL's READ COMMITTED this
	// statement sees what committed while it waited.
	var role string
	var others int
	err := tx.QueryRowContext(ctx, `SELECT role,
			(SELECT COUNT(*) FROM memberships o WHERE o.workspace_id = $1 AND o.role = $3 AND o.user_id <> $2)
		FROM memberships WHERE workspace_id = $1 AND user_id = $2`, workspaceID, userID, string(account.RoleOwner)).
		Scan(&role, &others)
	if err != nil {
		return classify(err)
	}
	if account.Role(role) == account.RoleOwner && others == 0 {
		return ErrLastOwner
	}
	return nil
}

// splitColumns splits a list of columns such as workspaceColumns.
func splitColumns(list string) []string {
	cols := strings.Split(list, ",")
	for i, c := range cols {
		cols[i] = strings.TrimSpace(c)
	}
	return cols
}
