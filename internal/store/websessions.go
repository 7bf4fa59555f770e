package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
)

// The web app's sessions and two-factor sign-in. Only hashes of the
// cookie's token and of the recovery codes are stored.

const sessionColumns = `id, user_id, token_hash, COALESCE(workspace_id, ''), second_factor_pending,
	user_agent, client_addr, created_at, last_seen_at`

func scanSession(row rowScanner) (account.Session, error) {
	var s account.Session
	var created, seen int64
	if err := row.Scan(&s.ID, &s.UserID, &s.TokenHash, &s.WorkspaceID, &s.SecondFactorPending,
		&s.UserAgent, &s.ClientAddr, &created, &seen); err != nil {
		return account.Session{}, err
	}
	s.CreatedAt, s.LastSeenAt = fromMicros(created), fromMicros(seen)
	return s, nil
}

func (db *DB) CreateSession(ctx context.Context, s account.Session) (err error) {
	defer errs.Wrap(&err, "store.CreateSession(%s)", s.ID)
	return insertSession(ctx, db.w, s)
}

func insertSession(ctx context.Context, ex execer, s account.Session) error {
	_, err := ex.ExecContext(ctx, `INSERT INTO web_sessions (`+
		`id, user_id, token_hash, workspace_id, second_factor_pending, user_agent, client_addr, created_at, last_seen_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		s.ID, s.UserID, s.TokenHash, nullString(s.WorkspaceID), s.SecondFactorPending, s.UserAgent, s.ClientAddr,
		micros(s.CreatedAt), micros(s.LastSeenAt))
	return classify(err)
}

// SessionByTokenHash finds the session whose cookie token has this hash,
// whatever its age: judging that is app's.
func (db *DB) SessionByTokenHash(ctx context.Context, hash []byte) (s account.Session, err error) {
	defer errs.Wrap(&err, "store.SessionByTokenHash")
	s, err = scanSession(db.queryRow(ctx, db.r, `SELECT `+sessionColumns+` FROM web_sessions WHERE token_hash = $1`, hash))
	return s, classify(err)
}

// TouchSession records that the session was used at at. It never moves
// last_seen_at backwards, so requests finishing out of order keep the
// latest time.
func (db *DB) TouchSession(ctx context.Context, id string, at time.Time) (err error) {
	defer errs.Wrap(&err, "store.TouchSession(%s)", id)
	return oneRow(db.w.ExecContext(ctx, `UPDATE web_sessions SET last_seen_at = `+db.d.greatest+`(last_seen_at, $2)
		WHERE id = $1`, id, micros(at)))
}

// SetSessionWorkspace records the workspace the session's person works in.
func (db *DB) SetSessionWorkspace(ctx context.Context, id, workspaceID string) (err error) {
	defer errs.Wrap(&err, "store.SetSessionWorkspace(%s, %s)", id, workspaceID)
	return oneRow(db.w.ExecContext(ctx, `UPDATE web_sessions SET workspace_id = $2 WHERE id = $1`, id, nullString(workspaceID)))
}

// FinishSecondFactor marks the session as signed in with both factors.
func (db *DB) FinishSecondFactor(ctx context.Context, id string) (err error) {
	defer errs.Wrap(&err, "store.FinishSecondFactor(%s)", id)
	return oneRow(db.w.ExecContext(ctx, `UPDATE web_sessions SET second_factor_pending = $2 WHERE id = $1`, id, false))
}

// DeleteSession ends a session; ending one already gone is no error.
func (db *DB) DeleteSession(ctx context.Context, id string) (err error) {
	defer errs.Wrap(&err, "store.DeleteSession(%s)", id)
	_, err = db.w.ExecContext(ctx, `DELETE FROM web_sessions WHERE id = $1`, id)
	return err
}

// DeleteUserSessions ends every session of the user but exceptID ("" for
// none) and reports how many it ended.
func (db *DB) DeleteUserSessions(ctx context.Context, userID, exceptID string) (n int, err error) {
	defer errs.Wrap(&err, "store.DeleteUserSessions(%s)", userID)
	return affected(db.w.ExecContext(ctx, `DELETE FROM web_sessions WHERE user_id = $1 AND id <> $2`, userID, exceptID))
}

// UserSessions lists a person's sessions, newest first.
func (db *DB) UserSessions(ctx context.Context, userID string) (ss []account.Session, err error) {
	defer errs.Wrap(&err, "store.UserSessions(%s)", userID)
	rows, err := db.r.QueryContext(ctx, `SELECT `+sessionColumns+` FROM web_sessions
		WHERE user_id = $1 ORDER BY created_at DESC, id DESC`, userID)
	return collect(rows, err, scanSession)
}

// DeleteExpiredSessions ends the sessions idle since before lastSeenBefore
// or begun before createdBefore, and reports how many.
func (db *DB) DeleteExpiredSessions(ctx context.Context, lastSeenBefore, createdBefore time.Time) (n int, err error) {
	defer errs.Wrap(&err, "store.DeleteExpiredSessions")
	return affected(db.w.ExecContext(ctx, `DELETE FROM web_sessions WHERE last_seen_at < $1 OR created_at < $2`,
		micros(lastSeenBefore), micros(createdBefore)))
}

// ChangePassword sets a user's password hash, clears must_change_password
// and ends every session of the user, then (when keep.ID is set) opens
// keep, the browser's fresh session: all or nothing, so no session signed
// in under the old password survives the change.
func (db *DB) ChangePassword(ctx context.Context, userID, hash string, keep account.Session) (err error) {
	defer errs.Wrap(&err, "store.ChangePassword(%s)", userID)
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := oneRow(tx.ExecContext(ctx, `UPDATE users SET password_hash = $2, must_change_password = $3 WHERE id = $1`,
			userID, hash, false)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE user_id = $1`, userID); err != nil {
			return err
		}
		if keep.ID == "" {
			return nil
		}
		return insertSession(ctx, tx, keep)
	})
}

// EnableTOTP stores a user's sealed TOTP secret, enabled at at, makes
// recoveryHashes their only recovery codes, and records step, the time
// step of the code that confirmed it, as the last one used.
func (db *DB) EnableTOTP(ctx context.Context, userID string, sealed []byte, at time.Time, step int64, recoveryHashes [][]byte) (err error) {
	defer errs.Wrap(&err, "store.EnableTOTP(%s)", userID)
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := oneRow(tx.ExecContext(ctx, `UPDATE users SET totp_secret = $2, totp_enabled_at = $3, totp_last_step = $4
			WHERE id = $1`, userID, nullBytes(sealed), micros(at), step)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM recovery_codes WHERE user_id = $1`, userID); err != nil {
			return err
		}
		for _, h := range recoveryHashes {
			if _, err := tx.ExecContext(ctx, `INSERT INTO recovery_codes (user_id, code_hash) VALUES ($1, $2)`,
				userID, h); err != nil {
				return classify(err)
			}
		}
		return nil
	})
}

// DisableTOTP turns a user's two-factor sign-in off and drops their
// recovery codes.
func (db *DB) DisableTOTP(ctx context.Context, userID string) (err error) {
	defer errs.Wrap(&err, "store.DisableTOTP(%s)", userID)
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := oneRow(tx.ExecContext(ctx, `UPDATE users SET totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL
			WHERE id = $1`, userID)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM recovery_codes WHERE user_id = $1`, userID)
		return err
	})
}

// UseRecoveryCode marks the user's unused code with this hash used at at.
// used is true only for the call that did so: of two at once, one.
func (db *DB) UseRecoveryCode(ctx context.Context, userID string, hash []byte, at time.Time) (used bool, err error) {
	defer errs.Wrap(&err, "store.UseRecoveryCode(%s)", userID)
	return useRecoveryCode(ctx, db.w, userID, hash, at)
}

func useRecoveryCode(ctx context.Context, ex execer, userID string, hash []byte, at time.Time) (bool, error) {
	n, err := affected(ex.ExecContext(ctx, `UPDATE recovery_codes SET used_at = $3
		WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL`, userID, hash, micros(at)))
	return n == 1, err
}

// Finishing a sign-in with the second factor is one transaction of the
// primitives below (app decides the order): the half-finished session
// ends, the code is used up, the full session begins; each use is a
// compare-and-set, so of two sign-ins racing with one code, one commits.

// UseRecoveryCode is (*DB).UseRecoveryCode in the transaction.
func (tx *Tx) UseRecoveryCode(ctx context.Context, userID string, hash []byte, at time.Time) (used bool, err error) {
	defer errs.Wrap(&err, "store.Tx.UseRecoveryCode(%s)", userID)
	return useRecoveryCode(ctx, tx.c, userID, hash, at)
}

// UseTOTPStep records step as the user's last used TOTP time step, if it
// is later than the one recorded and two-factor sign-in is on. used is
// true only for the call that did so: of two at once with one step, one.
func (tx *Tx) UseTOTPStep(ctx context.Context, userID string, step int64) (used bool, err error) {
	defer errs.Wrap(&err, "store.Tx.UseTOTPStep(%s, %d)", userID, step)
	n, err := affected(tx.c.ExecContext(ctx, `UPDATE users SET totp_last_step = $2
		WHERE id = $1 AND totp_secret IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < $2)`, userID, step))
	return n == 1, err
}

// EndPendingSession ends the session id while it still waits for its
// second factor. ended is true only for the call that ended it.
func (tx *Tx) EndPendingSession(ctx context.Context, id string) (ended bool, err error) {
	defer errs.Wrap(&err, "store.Tx.EndPendingSession(%s)", id)
	n, err := affected(tx.c.ExecContext(ctx, `DELETE FROM web_sessions WHERE id = $1 AND second_factor_pending = $2`, id, true))
	return n == 1, err
}

// CreateSession is (*DB).CreateSession in the transaction.
func (tx *Tx) CreateSession(ctx context.Context, s account.Session) (err error) {
	defer errs.Wrap(&err, "store.Tx.CreateSession(%s)", s.ID)
	return insertSession(ctx, tx.c, s)
}

// RecoveryCodesLeft counts the user's unused recovery codes.
func (db *DB) RecoveryCodesLeft(ctx context.Context, userID string) (n int, err error) {
	defer errs.Wrap(&err, "store.RecoveryCodesLeft(%s)", userID)
	err = db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL`,
		userID).Scan(&n)
	return n, err
}

// affected is how many rows an UPDATE or DELETE changed.
func affected(res sql.Result, err error) (int, error) {
	if err != nil {
		return 0, classify(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
