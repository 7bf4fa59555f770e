package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/ratelimit"
	"github.com/tocsin/tocsin/internal/store"
)

// RateStatus is what the rate-limit headers report for one request.
type RateStatus struct {
	Allowed    bool
	Limit      int
	Remaining  int
	Reset      time.Duration // until the bucket is full again
	RetryAfter time.Duration // when refused: until one request fits
}

// TakeRate counts one request against a bucket of RatePerMinute requests per
// rolling minute (GCRA: one token every minute/limit, bursts up to limit).
func (a *App) TakeRate(ctx context.Context, bucket string) (RateStatus, error) {
	limit := a.cfg.RatePerMinute
	emission := time.Minute / time.Duration(limit)
	tolerance := emission * time.Duration(limit)
	now := a.now()
	d, err := a.rates.take(ctx, bucket, now, emission, tolerance)
	if err != nil {
		return RateStatus{}, err
	}
	ahead := d.TAT.Sub(now) // how far the bucket is from full
	if ahead < 0 {
		ahead = 0
	}
	st := RateStatus{Allowed: d.Allowed, Limit: limit, Reset: ahead}
	if d.Allowed {
		st.Remaining = int((tolerance - ahead) / emission)
	} else {
		st.RetryAfter = ahead + emission - tolerance
		if st.RetryAfter <= 0 {
			st.RetryAfter = emission
		}
	}
	return st, nil
}

// Rate limiting with GCRA (package ratelimit explains it). Where buckets
// live depends on the database, on purpose:
//   - shared by several nodes (PostgreSQL): in the database, because the
//     nodes serve the same keys and must share one limit. Tokens are leased
//     in small batches (leaseBook), so most requests need no write at all.
//   - one node (SQLite): in memory. Memory is then the single source of
//     truth, and a disk write per request would funnel every API call
//     through the one writer connection. Buckets restart full when the
//     process restarts, which errs towards allowing.
type rateBuckets interface {
	// take takes one token from bucket at now. When allowed, the new TAT
	// is returned; when refused nothing changes and the current TAT is
	// returned (the caller derives Retry-After from it).
	take(ctx context.Context, bucket string, now time.Time, emission, tolerance time.Duration) (rateDecision, error)
	// give gives back one token taken with this emission, as if it had
	// never been taken.
	give(ctx context.Context, bucket string, emission time.Duration) error
	// spend is take of one token that costs cost, never leased: for
	// budgets whose requests cost unequal amounts (metrics points).
	spend(ctx context.Context, bucket string, now time.Time, cost, tolerance time.Duration) (rateDecision, error)
	// purge forgets buckets that are full again (TAT before now), which
	// changes no decision.
	purge(ctx context.Context, now time.Time) (int64, error)
}

// rateDecision is the outcome of taking one token from a GCRA bucket.
type rateDecision struct {
	Allowed bool
	// TAT is the bucket's theoretical arrival time after this request (when
	// allowed) or as it stands (when refused).
	TAT time.Time
}

func newRateBuckets(db *store.DB) rateBuckets {
	if db.MultiNode() {
		return &sharedBuckets{db: db, leases: leaseBook{m: map[string]lease{}}}
	}
	return localBuckets{ratelimit.New()}
}

var errEmission = errors.New("rate limit: emission interval must be positive")

// localBuckets keeps a single node's buckets in memory.
type localBuckets struct{ m *ratelimit.Memory }

func (b localBuckets) take(_ context.Context, bucket string, now time.Time, emission, tolerance time.Duration) (rateDecision, error) {
	if emission <= 0 {
		return rateDecision{}, errEmission
	}
	ok, tat := b.m.TakeMicros(bucket, now.UnixMicro(), emission.Microseconds(), tolerance.Microseconds())
	return rateDecision{Allowed: ok, TAT: fromMicros(tat)}, nil
}

func (b localBuckets) give(_ context.Context, bucket string, emission time.Duration) error {
	b.m.GiveMicros(bucket, emission.Microseconds())
	return nil
}

func (b localBuckets) spend(ctx context.Context, bucket string, now time.Time, cost, tolerance time.Duration) (rateDecision, error) {
	return b.take(ctx, bucket, now, cost, tolerance)
}

func (b localBuckets) purge(_ context.Context, now time.Time) (int64, error) {
	return b.m.Purge(now.UnixMicro()), nil
}

// sharedBuckets keeps the buckets in the database several nodes share,
// taking tokens from it in leases.
type sharedBuckets struct {
	db     *store.DB
	leases leaseBook
}

func (b *sharedBuckets) take(ctx context.Context, bucket string, now time.Time, emission, tolerance time.Duration) (rateDecision, error) {
	if emission <= 0 {
		return rateDecision{}, errEmission
	}
	nowUS, em := now.UnixMicro(), emission.Microseconds()
	if d, ok := b.leases.take(bucket, nowUS, em); ok {
		return d, nil
	}
	l, err := b.db.TakeTokens(ctx, bucket, now, emission, tolerance, maxLease)
	if err != nil || !l.Allowed {
		return rateDecision{TAT: l.TAT}, err
	}
	// One token serves this request; the rest wait for the next ones.
	tat, k := l.TAT.UnixMicro(), l.N
	b.leases.put(bucket, nowUS, tat, k-1, nowUS+max(k*em, leaseMinLife.Microseconds()))
	return rateDecision{Allowed: true, TAT: fromMicros(tat - (k-1)*em)}, nil
}

// give returns the token to the shared bucket, whether it was charged
// there by this request or earlier in a lease: either way it was charged
// once, so the shared count stays right.
func (b *sharedBuckets) give(ctx context.Context, bucket string, emission time.Duration) error {
	return b.db.GiveToken(ctx, bucket, emission)
}

func (b *sharedBuckets) spend(ctx context.Context, bucket string, now time.Time, cost, tolerance time.Duration) (rateDecision, error) {
	if cost <= 0 {
		return rateDecision{}, errEmission
	}
	l, err := b.db.TakeTokens(ctx, bucket, now, cost, tolerance, 1)
	return rateDecision{Allowed: l.Allowed, TAT: l.TAT}, err
}

func (b *sharedBuckets) purge(ctx context.Context, now time.Time) (int64, error) {
	return b.db.PurgeRateLimits(ctx, now)
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// Leases: a node takes up to maxLease tokens from a shared bucket in one
// write and hands them out locally. Each token is charged to the shared
// bucket exactly once, so all nodes together never admit more than the
// bucket allows; a token is only ever used later than it was charged,
// within its lease's life, which can let a key exceed its burst by at most
// the tokens refilled meanwhile (a few, for 600/min). A node holding
// tokens while another is refused admits less, never more.
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

func (b *leaseBook) take(bucket string, now, em int64) (rateDecision, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.m[bucket]
	if !ok || l.left <= 0 || now >= l.expires {
		return rateDecision{}, false
	}
	l.left--
	b.m[bucket] = l
	// Report the bucket as if the unused tokens were still in it, so
	// X-RateLimit-Remaining counts down one by one.
	return rateDecision{Allowed: true, TAT: fromMicros(l.tat - l.left*em)}, true
}

func (b *leaseBook) put(bucket string, now, tat, left, expires int64) {
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
