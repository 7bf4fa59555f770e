package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
)

// Rate-limit buckets shared by several nodes (app/ratelimit.go says why
// and when) live in rate_limits, one GCRA TAT per bucket (package
// ratelimit explains GCRA). The table is UNLOGGED: a crash empties it,
// which only refills buckets, and in exchange a token costs no WAL flush —
// measured as the largest cost of a read on PostgreSQL.

// TokenLease is what TakeTokens took from a bucket: when Allowed, N tokens,
// TAT being the bucket's TAT after all N; when refused, none, TAT being
// the bucket's TAT as it stands.
type TokenLease struct {
	Allowed bool
	TAT     time.Time
	N       int64
}

// TakeTokens takes tokens from bucket at now in one atomic statement: k =
// remaining/32 clamped to 1…most, so a bucket far from its limit is
// written once per k tokens and one close to it once per token. When not
// even one token fits, nothing changes. It runs on a database several
// nodes share (MultiNode).
func (db *DB) TakeTokens(ctx context.Context, bucket string, now time.Time, emission, tolerance time.Duration, most int64) (l TokenLease, err error) {
	defer errs.Wrap(&err, "store.TakeTokens")
	nowUS, em, tol := micros(now), emission.Microseconds(), tolerance.Microseconds()
	// The SELECT … WHERE guards the insert of a new bucket, the DO UPDATE
	// … WHERE an existing one; no row comes back when not even one token
	// fits. SET expressions see the row's old values.
	var tat int64
	err = db.queryRow(ctx, db.w, `INSERT INTO rate_limits AS r (bucket, tat, lease)
		SELECT $1, $2::bigint + $3::bigint * l.k, l.k
		FROM (SELECT LEAST($5::bigint, GREATEST(1, $4::bigint / $3::bigint / 32)) AS k) l
		WHERE $3::bigint <= $4::bigint
		ON CONFLICT (bucket) DO UPDATE SET
			tat = GREATEST(r.tat, $2::bigint) + $3::bigint * LEAST($5::bigint, GREATEST(1,
				($4::bigint - (GREATEST(r.tat, $2::bigint) - $2::bigint)) / $3::bigint / 32)),
			lease = LEAST($5::bigint, GREATEST(1,
				($4::bigint - (GREATEST(r.tat, $2::bigint) - $2::bigint)) / $3::bigint / 32))
		WHERE GREATEST(r.tat, $2::bigint) + $3::bigint - $2::bigint <= $4::bigint
		RETURNING r.tat, r.lease`, bucket, nowUS, em, tol, most).Scan(&tat, &l.N)
	if err == nil {
		return TokenLease{Allowed: true, TAT: fromMicros(tat), N: l.N}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return TokenLease{}, err
	}
	err = db.r.QueryRowContext(ctx, `SELECT tat FROM rate_limits WHERE bucket = $1`, bucket).Scan(&tat)
	switch {
	case errors.Is(err, sql.ErrNoRows): // refused without a bucket: emission > tolerance
		tat = nowUS
	case err != nil:
		return TokenLease{}, err
	}
	return TokenLease{TAT: fromMicros(tat)}, nil
}

// GiveToken gives back to bucket one token of this emission, as if it had
// never been taken. A bucket purged meanwhile was full, and stays so.
func (db *DB) GiveToken(ctx context.Context, bucket string, emission time.Duration) (err error) {
	defer errs.Wrap(&err, "store.GiveToken")
	_, err = db.w.ExecContext(ctx, `UPDATE rate_limits SET tat = tat - $2 WHERE bucket = $1`, bucket, emission.Microseconds())
	return err
}

// PurgeRateLimits forgets buckets that are full again (TAT before now),
// which changes no decision.
func (db *DB) PurgeRateLimits(ctx context.Context, now time.Time) (n int64, err error) {
	defer errs.Wrap(&err, "store.PurgeRateLimits")
	res, err := db.w.ExecContext(ctx, `DELETE FROM rate_limits WHERE tat < $1`, micros(now))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
