package store

import (
	"context"
	"errors"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
)

// Idempotency records (DESIGN §2): one row per (workspace, API key,
// Idempotency-Key) holding the request's fingerprint and, once done, the
// response to replay.

// BeginIdempotent claims the scope for a request, atomically: it inserts an
// in-progress row when there is none, or takes over a row that has expired
// or whose request has been in progress for lockTTL or more (it crashed).
// acquired reports whether this caller now owns the scope; when it does
// not, rec is the row that stands in its way (in progress, or done with a
// response to replay). Of many concurrent callers exactly one acquires: the
// claim is a single conditional upsert.
func (db *DB) BeginIdempotent(ctx context.Context, s IdempotencyScope, fingerprint []byte, now time.Time, ttl, lockTTL time.Duration) (rec IdempotencyRecord, acquired bool, err error) {
	defer errs.Wrap(&err, "store.BeginIdempotent(%s, %s)", s.WorkspaceID, s.KeyID)
	rec = IdempotencyRecord{Fingerprint: fingerprint, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	// A row deleted (abandoned) between a failed claim and the read-back is
	// free again: claim once more rather than report a row that is gone.
	for range 3 {
		res, err := db.w.ExecContext(ctx, `INSERT INTO idempotency_keys AS i
			(workspace_id, key_id, idem_key, fingerprint, done, status, header, body, created_at, expires_at)
			VALUES ($1, $2, $3, $4, FALSE, 0, NULL, NULL, $5, $6)
			ON CONFLICT (workspace_id, key_id, idem_key) DO UPDATE SET
				fingerprint = excluded.fingerprint, done = FALSE, status = 0, header = NULL, body = NULL,
				created_at = excluded.created_at, expires_at = excluded.expires_at
			WHERE i.expires_at <= $5 OR (NOT i.done AND i.created_at <= $7)`,
			s.WorkspaceID, s.KeyID, s.Key, fingerprint, micros(now), micros(now.Add(ttl)), micros(now.Add(-lockTTL)))
		if err != nil {
			return IdempotencyRecord{}, false, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return IdempotencyRecord{}, false, err
		}
		if n == 1 {
			return rec, true, nil
		}
		cur, err := db.idempotencyRecord(ctx, s)
		if err == nil {
			return cur, false, nil
		}
		if !errors.Is(err, errs.ErrNotFound) {
			return IdempotencyRecord{}, false, err
		}
	}
	return IdempotencyRecord{}, false, errs.Errorf(errs.KindConflict, "idempotency key keeps changing hands")
}

func (db *DB) idempotencyRecord(ctx context.Context, s IdempotencyScope) (IdempotencyRecord, error) {
	var (
		r                IdempotencyRecord
		created, expires int64
	)
	err := db.r.QueryRowContext(ctx, `SELECT fingerprint, done, status, header, body, created_at, expires_at
		FROM idempotency_keys WHERE workspace_id = $1 AND key_id = $2 AND idem_key = $3`,
		s.WorkspaceID, s.KeyID, s.Key).
		Scan(&r.Fingerprint, &r.Done, &r.Status, &r.Header, &r.Body, &created, &expires)
	if err != nil {
		return IdempotencyRecord{}, classify(err)
	}
	r.CreatedAt, r.ExpiresAt = fromMicros(created), fromMicros(expires)
	return r, nil
}

// FinishIdempotent stores the response of the request that holds the
// scope. The first response stored wins, so every replay is the same.
func (db *DB) FinishIdempotent(ctx context.Context, s IdempotencyScope, status int, header, body []byte) (err error) {
	defer errs.Wrap(&err, "store.FinishIdempotent(%s, %s)", s.WorkspaceID, s.KeyID)
	return oneRow(db.w.ExecContext(ctx, `UPDATE idempotency_keys SET done = TRUE, status = $4, header = $5, body = $6
		WHERE workspace_id = $1 AND key_id = $2 AND idem_key = $3 AND NOT done`,
		s.WorkspaceID, s.KeyID, s.Key, status, nullBytes(header), nullBytes(body)))
}

// AbandonIdempotent releases an in-progress scope without storing a
// response (5xx responses are not replayed), so a retry runs again.
func (db *DB) AbandonIdempotent(ctx context.Context, s IdempotencyScope) (err error) {
	defer errs.Wrap(&err, "store.AbandonIdempotent(%s, %s)", s.WorkspaceID, s.KeyID)
	return oneRow(db.w.ExecContext(ctx, `DELETE FROM idempotency_keys
		WHERE workspace_id = $1 AND key_id = $2 AND idem_key = $3 AND NOT done`,
		s.WorkspaceID, s.KeyID, s.Key))
}

// PurgeIdempotency deletes expired records and reports how many.
func (db *DB) PurgeIdempotency(ctx context.Context, now time.Time) (n int64, err error) {
	defer errs.Wrap(&err, "store.PurgeIdempotency")
	res, err := db.w.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= $1`, micros(now))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
