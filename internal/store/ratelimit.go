package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
)

// Rate limiting with GCRA (package ratelimit explains it). Where buckets
// live differs by engine, on purpose:
//   - PostgreSQL: in rate_limits, updated by one atomic statement, because
//     several nodes serve the same keys and must share one limit. The table
//     is UNLOGGED: a crash empties it, which only refills buckets (as a
//     restart does on SQLite), and in exchange a request's token costs no
//     WAL flush — measured as the largest cost of a read on PostgreSQL.
//     Tokens are leased in small batches (below), so most requests need no
//     write at all.
//   - SQLite: in memory. SQLite is one node by design, so memory is the
//     single source of truth, and a disk write per request would funnel
//     every API call through the one writer connection. Buckets restart
//     full when the process restarts, which problems towards allowing.

// TakeToken takes one token from bucket at now. When allowed, the new TAT
// is stored and returned; when refused nothing changes and the current TAT
// is returned (the caller derives Retry-After from it).
func (db *DB) TakeToken(ctx context.Context, bucket string, now time.Time, emission, tolerance time.Duration) (d RateDecision, err error) {
	defer errs.Wrap(&err, "store.TakeToken")
	if emission <= 0 {
		return RateDecision{}, errors.New("emission interval must be positive")
	}
	nowUS, em, tol := micros(now), emission.Microseconds(), tolerance.Microseconds()
	if db.limiter != nil {
		ok, tat := db.limiter.TakeMicros(bucket, nowUS, em, tol)
		return RateDecision{Allowed: ok, TAT: fromMicros(tat)}, nil
	}
	if d, ok := db.leases.take(bucket, nowUS, em); ok {
		return d, nil
	}
	// Lease k tokens at once, k = remaining/32 clamped to 1…maxLease: a key
	// far from its limit costs one write per k requests, and a key close to
	// it one write per request, which keeps the shared limit exact where it
	// matters. The SELECT … WHERE guards the insert of a new bucket, the
	// DO UPDATE … WHERE an existing one; no row comes back when not even
	// one token fits. SET expressions see the row's old values.
	var tat, k int64
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
		RETURNING r.tat, r.lease`, bucket, nowUS, em, tol, maxLease).Scan(&tat, &k)
	if err == nil {
		// One token serves this request; the rest wait for the next ones.
		db.leases.put(bucket, nowUS, tat, k-1, nowUS+max(k*em, leaseMinLife.Microseconds()))
		return RateDecision{Allowed: true, TAT: fromMicros(tat - (k-1)*em)}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return RateDecision{}, err
	}
	err = db.r.QueryRowContext(ctx, `SELECT tat FROM rate_limits WHERE bucket = $1`, bucket).Scan(&tat)
	switch {
	case errors.Is(err, sql.ErrNoRows): // refused without a bucket: emission > tolerance
		tat = nowUS
	case err != nil:
		return RateDecision{}, err
	}
	return RateDecision{Allowed: false, TAT: fromMicros(tat)}, nil
}

// Leases (PostgreSQL): a node takes up to maxLease tokens from a shared
// bucket in one write and hands them out locally. Each token is charged to
// the shared bucket exactly once, so all nodes together never admit more
// than the bucket allows; a token is only ever used later than it was
// charged, within its lease's life, which can let a key exceed its burst by
// at most the tokens refilled meanwhile (a few, for 600/min). A node
// holding tokens while another is refused admits less, never more.
const (
	maxLease     = 16
	leaseMinLife = time.Second
)

type leaseBook struct {
	mu sync.Mutex
	m  map[string]lease
}

type lease struct {
	tat     int64 // the shared TAT after the lease, unix µs
	left    int64 // tokens not yet handed out
	expires int64 // unix µs
}

func (b *leaseBook) take(bucket string, now, em int64) (RateDecision, bool) {
	if b == nil {
		return RateDecision{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.m[bucket]
	if !ok || l.left <= 0 || now >= l.expires {
		return RateDecision{}, false
	}
	l.left--
	b.m[bucket] = l
	// Report the bucket as if the unused tokens were still in it, so
	// X-RateLimit-Remaining counts down one by one.
	return RateDecision{Allowed: true, TAT: fromMicros(l.tat - l.left*em)}, true
}

func (b *leaseBook) put(bucket string, now, tat, left, expires int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m) >= 100_000 {
		clear(b.m) // forgetting leases only wastes tokens; never admits more
	}
	if left <= 0 {
		return
	}
	// Requests that found no tokens at the same moment each took a lease;
	// pool them so none is lost.
	if l, ok := b.m[bucket]; ok && l.left > 0 && now < l.expires {
		tat, left, expires = max(tat, l.tat), left+l.left, max(expires, l.expires)
	}
	b.m[bucket] = lease{tat: tat, left: left, expires: expires}
}

// PurgeRateLimits forgets buckets that are full again (TAT before now),
// which changes no decision. On SQLite this happens in memory as it goes.
func (db *DB) PurgeRateLimits(ctx context.Context, now time.Time) (n int64, err error) {
	defer errs.Wrap(&err, "store.PurgeRateLimits")
	if db.limiter != nil {
		return db.limiter.Purge(micros(now)), nil
	}
	res, err := db.w.ExecContext(ctx, `DELETE FROM rate_limits WHERE tat < $1`, micros(now))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
