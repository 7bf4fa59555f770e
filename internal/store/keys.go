package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
)

// API keys. Only the SHA-256 of a key's secret is stored.

func (db *DB) CreateAPIKey(ctx context.Context, k account.APIKey) (err error) {
	defer errs.Wrap(&err, "store.CreateAPIKey(%s)", k.ID)
	_, err = db.w.ExecContext(ctx, `INSERT INTO api_keys
		(id, user_id, workspace_id, name, hash, prefix, scopes, created_at, last_used_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		k.ID, k.UserID, nullString(k.WorkspaceID), k.Name, k.Hash, k.Prefix, joinScopes(k.Scopes),
		micros(k.CreatedAt), nullMicros(k.LastUsedAt), nullMicros(k.RevokedAt))
	return classify(err)
}

// RevokeAPIKey revokes a key. Revoking twice keeps the first time.
func (db *DB) RevokeAPIKey(ctx context.Context, keyID string, at time.Time) (err error) {
	defer errs.Wrap(&err, "store.RevokeAPIKey(%s)", keyID)
	defer db.grants.invalidate()
	return oneRow(db.w.ExecContext(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`,
		keyID, micros(at)))
}

// KeyGrantByHash reads, in one indexed query on every authenticated
// request, the key with this hash and its creator's role in the workspace
// the request acts in: workspaceID when given, else the key's own workspace.
// Revoked keys are returned too (RevokedAt set) so the caller can tell
// "revoked" from "unknown"; checking that a bound key is used in its own
// workspace is also the caller's job.
func (db *DB) KeyGrantByHash(ctx context.Context, hash []byte, workspaceID string) (g KeyGrant, err error) {
	ck := grantKey(hash, workspaceID)
	if g, ok := db.grants.get(ck); ok {
		return g, nil
	}
	epoch := db.grants.stamp() // before reading: a change after this makes the entry stale
	g, err = db.keyGrant(ctx, hash, workspaceID)
	if err == nil && g.Key.RevokedAt.IsZero() {
		db.grants.put(ck, g, epoch)
	}
	return g, err
}

func (db *DB) keyGrant(ctx context.Context, hash []byte, workspaceID string) (g KeyGrant, err error) {
	defer errs.Wrap(&err, "store.KeyGrantByHash")
	var (
		k                   = &g.Key
		keyWS, scopes       string
		created             int64
		lastUsed, revokedAt sql.NullInt64
	)
	err = db.queryRow(ctx, db.r, `SELECT k.id, k.user_id, COALESCE(k.workspace_id, ''), k.name, k.hash, k.prefix, k.scopes,
			k.created_at, k.last_used_at, k.revoked_at,
			COALESCE(NULLIF($2, ''), k.workspace_id, ''), COALESCE(m.role, '')
		FROM api_keys k
		LEFT JOIN memberships m
			ON m.user_id = k.user_id AND m.workspace_id = COALESCE(NULLIF($2, ''), k.workspace_id)
		WHERE k.hash = $1`, hash, workspaceID).
		Scan(&k.ID, &k.UserID, &keyWS, &k.Name, &k.Hash, &k.Prefix, &scopes,
			&created, &lastUsed, &revokedAt, &g.WorkspaceID, &g.Role)
	if err != nil {
		return KeyGrant{}, classify(err)
	}
	k.WorkspaceID = keyWS
	k.Scopes = splitScopes(scopes)
	k.CreatedAt = fromMicros(created)
	k.LastUsedAt = fromNullMicros(lastUsed)
	k.RevokedAt = fromNullMicros(revokedAt)
	return g, nil
}

// TouchAPIKey records that a key was used at a. It never moves
// last_used_at backwards, so concurrent requests finishing out of order
// keep the latest time.
func (db *DB) TouchAPIKey(ctx context.Context, keyID string, at time.Time) (err error) {
	defer errs.Wrap(&err, "store.TouchAPIKey(%s)", keyID)
	res, err := db.w.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`, keyID, micros(at))
	if err := oneRow(res, err); !errors.Is(err, errs.ErrNotFound) {
		return err
	}
	// Nothing updated: a newer time was already stored, or no such key.
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM api_keys WHERE id = $1`, keyID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return errs.ErrNotFound
	}
	return nil
}

func joinScopes(s []account.Scope) string {
	parts := make([]string, len(s))
	for i, sc := range s {
		parts[i] = string(sc)
	}
	return strings.Join(parts, " ")
}

func splitScopes(s string) []account.Scope {
	f := strings.Fields(s)
	if len(f) == 0 {
		return nil
	}
	out := make([]account.Scope, len(f))
	for i, sc := range f {
		out[i] = account.Scope(sc)
	}
	return out
}

// apiKeyColumns are what scanAPIKey reads, of api_keys as k.
const apiKeyColumns = `k.id, k.user_id, COALESCE(k.workspace_id, ''), k.name, k.hash, k.prefix, k.scopes,
	k.created_at, k.last_used_at, k.revoked_at`

// ListAPIKeys returns a user's keys, oldest first, revoked ones included.
func (db *DB) ListAPIKeys(ctx context.Context, userID string) (keys []account.APIKey, err error) {
	defer errs.Wrap(&err, "store.ListAPIKeys(%s)", userID)
	rows, err := db.r.QueryContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys k WHERE k.user_id = $1 ORDER BY k.id`, userID)
	return collect(rows, err, scanAPIKey)
}

// APIKeyByID finds a key by its id, revoked or not.
func (db *DB) APIKeyByID(ctx context.Context, id string) (k account.APIKey, err error) {
	defer errs.Wrap(&err, "store.APIKeyByID(%s)", id)
	k, err = scanAPIKey(db.r.QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys k WHERE k.id = $1`, id))
	return k, classify(err)
}

// WorkspaceKeys lists the keys bound to a workspace, whoever made them,
// with their creators' e-mails, newest first, revoked ones included.
func (db *DB) WorkspaceKeys(ctx context.Context, workspaceID string) (keys []account.KeyListing, err error) {
	defer errs.Wrap(&err, "store.WorkspaceKeys(%s)", workspaceID)
	rows, err := db.r.QueryContext(ctx, `SELECT `+apiKeyColumns+`, u.email
		FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.workspace_id = $1 ORDER BY k.created_at DESC, k.id DESC`, workspaceID)
	return collect(rows, err, scanKeyListing)
}

// UserKeys lists a person's keys, account-wide and bound, with their
// e-mail, newest first, revoked ones included.
func (db *DB) UserKeys(ctx context.Context, userID string) (keys []account.KeyListing, err error) {
	defer errs.Wrap(&err, "store.UserKeys(%s)", userID)
	rows, err := db.r.QueryContext(ctx, `SELECT `+apiKeyColumns+`, u.email
		FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.user_id = $1 ORDER BY k.created_at DESC, k.id DESC`, userID)
	return collect(rows, err, scanKeyListing)
}

func scanKeyListing(r rowScanner) (l account.KeyListing, err error) {
	l.Key, err = scanAPIKeyAnd(r, &l.CreatorEmail)
	return l, err
}

// scanAPIKey reads the columns of apiKeyColumns.
func scanAPIKey(r rowScanner) (account.APIKey, error) { return scanAPIKeyAnd(r) }

// scanAPIKeyAnd reads the columns of apiKeyColumns, and then dest.
func scanAPIKeyAnd(r rowScanner, dest ...any) (account.APIKey, error) {
	var (
		k                   account.APIKey
		scopes              string
		created             int64
		lastUsed, revokedAt sql.NullInt64
	)
	if err := r.Scan(append([]any{&k.ID, &k.UserID, &k.WorkspaceID, &k.Name, &k.Hash, &k.Prefix, &scopes,
		&created, &lastUsed, &revokedAt}, dest...)...); err != nil {
		return account.APIKey{}, err
	}
	k.Scopes = splitScopes(scopes)
	k.CreatedAt = fromMicros(created)
	k.LastUsedAt = fromNullMicros(lastUsed)
	k.RevokedAt = fromNullMicros(revokedAt)
	return k, nil
}
