package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
)

// Invitations to a workspace. Only the SHA-256 of an invite's token is
// stored. An invite is pending while it is neither accepted, revoked nor
// expired.

var (
	// ErrInviteGone: the invite was used, revoked or has expired.
	ErrInviteGone = refined{specific: &errs.Error{Kind: errs.KindNotFound, Message: "this invitation has expired or was already used"},
		sentinel: errs.ErrNotFound}
	// ErrEmailTaken: signing up with an invite under an e-mail that has
	// an account.
	ErrEmailTaken = refined{specific: &errs.Error{Kind: errs.KindConflict, Message: "an account with this e-mail exists; sign in to accept"},
		sentinel: ErrConflict}
	// ErrAlreadyMember: accepting an invite to a workspace one is in.
	ErrAlreadyMember = refined{specific: &errs.Error{Kind: errs.KindConflict, Message: "you are already a member of this workspace"},
		sentinel: ErrConflict}
)

const inviteColumns = `id, workspace_id, token_hash, role, created_by, created_at, expires_at,
	accepted_at, COALESCE(accepted_by, ''), revoked_at`

// pendingAt is the condition that an invite is pending at the time $at.
func pendingAt(at string) string {
	return `accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ` + at
}

func scanInvite(row rowScanner) (account.Invite, error) {
	var (
		inv                 account.Invite
		created, expires    int64
		accepted, revokedAt sql.NullInt64
	)
	if err := row.Scan(&inv.ID, &inv.WorkspaceID, &inv.TokenHash, &inv.Role, &inv.CreatedBy, &created, &expires,
		&accepted, &inv.AcceptedBy, &revokedAt); err != nil {
		return account.Invite{}, err
	}
	inv.CreatedAt, inv.ExpiresAt = fromMicros(created), fromMicros(expires)
	inv.AcceptedAt, inv.RevokedAt = fromNullMicros(accepted), fromNullMicros(revokedAt)
	return inv, nil
}

func (db *DB) CreateInvite(ctx context.Context, inv account.Invite) (err error) {
	defer errs.Wrap(&err, "store.CreateInvite(%s)", inv.ID)
	_, err = db.w.ExecContext(ctx, `INSERT INTO invites (id, workspace_id, token_hash, role, created_by, created_at, expires_at,
		accepted_at, accepted_by, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		inv.ID, inv.WorkspaceID, inv.TokenHash, string(inv.Role), inv.CreatedBy, micros(inv.CreatedAt), micros(inv.ExpiresAt),
		nullMicros(inv.AcceptedAt), nullString(inv.AcceptedBy), nullMicros(inv.RevokedAt))
	return classify(err)
}

// InviteByTokenHash finds the invite whose token has this hash, pending
// or not: judging that is app's.
func (db *DB) InviteByTokenHash(ctx context.Context, hash []byte) (inv account.Invite, err error) {
	defer errs.Wrap(&err, "store.InviteByTokenHash")
	inv, err = scanInvite(db.r.QueryRowContext(ctx, `SELECT `+inviteColumns+` FROM invites WHERE token_hash = $1`, hash))
	return inv, classify(err)
}

// PendingInvites lists a workspace's invites pending at now, newest first.
func (db *DB) PendingInvites(ctx context.Context, workspaceID string, now time.Time) (out []account.Invite, err error) {
	defer errs.Wrap(&err, "store.PendingInvites(%s)", workspaceID)
	rows, err := db.r.QueryContext(ctx, `SELECT `+inviteColumns+` FROM invites
		WHERE workspace_id = $1 AND `+pendingAt("$2")+` ORDER BY created_at DESC, id DESC`, workspaceID, micros(now))
	return collect(rows, err, scanInvite)
}

// RevokeInvite withdraws a pending invite of the workspace at at.
func (db *DB) RevokeInvite(ctx context.Context, workspaceID, inviteID string, at time.Time) (err error) {
	defer errs.Wrap(&err, "store.RevokeInvite(%s, %s)", workspaceID, inviteID)
	return oneRow(db.w.ExecContext(ctx, `UPDATE invites SET revoked_at = $3
		WHERE id = $2 AND workspace_id = $1 AND `+pendingAt("$3"), workspaceID, inviteID, micros(at)))
}

// AcceptInvite makes userID a member of the invite's workspace with its
// role, and uses the invite up, all or nothing. With newUser, the person
// signs up with the invite: newUser is created first and userID is its
// id. The invite is taken by a conditional update, so of two accepting it
// at once one wins; the other gets ErrInviteGone, as does an invite no
// longer pending at at.
func (db *DB) AcceptInvite(ctx context.Context, inviteID string, newUser *account.User, userID string, at time.Time) (m account.Membership, err error) {
	defer errs.Wrap(&err, "store.AcceptInvite(%s)", inviteID)
	defer db.grants.invalidate()
	if newUser != nil {
		userID = newUser.ID
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		if newUser != nil {
			if err := insertUser(ctx, tx, *newUser); err != nil {
				if errors.Is(err, ErrConflict) {
					return ErrEmailTaken
				}
				return err
			}
		}
		var role string
		err := tx.QueryRowContext(ctx, `UPDATE invites SET accepted_at = $2, accepted_by = $3
			WHERE id = $1 AND `+pendingAt("$2")+` RETURNING workspace_id, role`, inviteID, micros(at), userID).
			Scan(&m.WorkspaceID, &role)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrInviteGone
		}
		if err != nil {
			return classify(err)
		}
		m.UserID, m.Role, m.CreatedAt = userID, account.Role(role), at
		if err := insertMembership(ctx, tx, m); err != nil {
			if errors.Is(err, ErrConflict) {
				return ErrAlreadyMember
			}
			return err
		}
		return nil
	})
	if err != nil {
		return account.Membership{}, err
	}
	return m, nil
}
