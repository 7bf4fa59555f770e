package app

import (
	"context"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/store"
)

// Rollups: observations and pings are rolled into hourly aggregates once
// an hour is settled, and hours into UTC days once a day's hours are all
// written. Each of the four rollups goes bucket by bucket from where it
// stopped (the store keeps how far: every bucket before is written), so it
// catches up after downtime; a node takes a rollup's turn with a lease, so
// several nodes share the work and a dead node's turn passes on. Writing a
// bucket again replaces it, so a bucket done twice (a lease lapsed
// mid-way) is still right. Raw rows are deleted only once rolled up
// (Housekeeping).

// RollupSettle is how long after an hour ends it is rolled up: a check
// that started in it is written within its timeout and the writer's
// batching, a ping before it is acknowledged.
const RollupSettle = 5 * time.Minute

// rollupLease is how long a node holds a rollup's turn without renewing;
// rollupBuckets bounds the buckets one turn writes, so a node catching up
// on a long outage yields now and then.
const (
	rollupLease   = 2 * time.Minute
	rollupBuckets = 24
	rollupPage    = 1000 // subjects read at once
)

// rollup is one of the four: which rows, which tier.
type rollup struct {
	name      string
	tier      int
	pings     bool   // heartbeats' pings, else monitors' observations
	hoursFrom string // a daily rollup: the hourly rollup it reads
}

var rollups = []rollup{
	{name: rollupObservationsHour, tier: store.TierHour},
	{name: rollupObservationsDay, tier: store.TierDay, hoursFrom: rollupObservationsHour},
	{name: rollupPingsHour, tier: store.TierHour, pings: true},
	{name: rollupPingsDay, tier: store.TierDay, pings: true, hoursFrom: rollupPingsHour},
}

// Rollup runs one round of every rollup as owner: each writes the buckets
// that are due, up to rollupBuckets of them. It returns how many buckets
// it wrote.
func (a *App) Rollup(ctx context.Context, owner string) (written int, err error) {
	defer errs.Wrap(&err, "app.Rollup")
	for _, r := range rollups {
		n, err := a.rollupTurn(ctx, owner, r)
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// rollupStart is where a rollup never run begins: the oldest raw rows
// still kept.
func (a *App) rollupStart(now time.Time) time.Time {
	return now.AddDate(0, 0, -a.cfg.RetentionDays).Truncate(24 * time.Hour)
}

func (a *App) rollupTurn(ctx context.Context, owner string, r rollup) (int, error) {
	now := a.now()
	done, ok, err := a.store.TakeRollupTurn(ctx, r.name, owner, now, rollupLease, a.rollupStart(now))
	if err != nil || !ok {
		return 0, err
	}
	defer func() { _ = a.store.EndRollupTurn(context.WithoutCancel(ctx), r.name, owner) }()
	size := time.Hour
	limit := now.Add(-RollupSettle)
	if r.tier == store.TierDay {
		size = 24 * time.Hour
		progress, err := a.store.RollupProgress(ctx)
		if err != nil {
			return 0, err
		}
		limit = progress[r.hoursFrom]
	}
	n := 0
	for bucket := done; !bucket.Add(size).After(limit) && n < rollupBuckets; bucket = bucket.Add(size) {
		if err := a.rollBucket(ctx, r, bucket, bucket.Add(size)); err != nil {
			return n, err
		}
		if ok, err := a.store.AdvanceRollup(ctx, r.name, owner, bucket.Add(size)); err != nil || !ok {
			return n, err // lost the turn: the next owner goes on from where it is recorded
		}
		n++
	}
	return n, nil
}

// rollBucket writes the rollup rows of [start, end) for every subject
// that has rows in it, a page of subjects at a time.
func (a *App) rollBucket(ctx context.Context, r rollup, start, end time.Time) error {
	var after int64
	for {
		seqs, err := a.store.SubjectSeqs(ctx, r.pings, after, rollupPage)
		if err != nil || len(seqs) == 0 {
			return err
		}
		after = seqs[len(seqs)-1]
		if r.pings {
			err = a.rollPings(ctx, r.tier, seqs, start, end)
		} else {
			err = a.rollObservations(ctx, r.tier, seqs, start, end)
		}
		if err == nil && r.tier == store.TierDay {
			// The day's hourly rows, now merged, are packed into one row each.
			err = a.store.PackHours(ctx, r.pings, seqs, start)
		}
		if err != nil {
			return err
		}
	}
}

// rollObservations writes the rollup rows of tier for [start, end) of the
// monitors seqs that have checks in it: hours from raw rows, days from
// hours.
func (a *App) rollObservations(ctx context.Context, tier int, seqs []int64, start, end time.Time) error {
	aggs := map[int64]*checkAgg{}
	err := a.readChecks(ctx, seqs, start, end, rollupSource(tier), func(seq int64, _ time.Time) *checkAgg {
		if aggs[seq] == nil {
			aggs[seq] = &checkAgg{}
		}
		return aggs[seq]
	})
	if err != nil || len(aggs) == 0 {
		return err
	}
	rows := make([]store.ObservationRollup, 0, len(aggs))
	for _, seq := range seqs {
		if g := aggs[seq]; g != nil {
			rows = append(rows, g.row(seq, start))
		}
	}
	return a.store.PutObservationRollups(ctx, tier, rows)
}

// rollPings writes the rollup rows of tier for [start, end) of the
// heartbeats seqs that have pings in it.
func (a *App) rollPings(ctx context.Context, tier int, seqs []int64, start, end time.Time) error {
	aggs := map[int64]*pingAgg{}
	err := a.readPings(ctx, seqs, start, end, rollupSource(tier), func(seq int64, _ time.Time) *pingAgg {
		if aggs[seq] == nil {
			aggs[seq] = &pingAgg{}
		}
		return aggs[seq]
	})
	if err != nil || len(aggs) == 0 {
		return err
	}
	rows := make([]store.PingRollup, 0, len(aggs))
	for _, seq := range seqs {
		if g := aggs[seq]; g != nil {
			rows = append(rows, g.row(seq, start))
		}
	}
	return a.store.PutPingRollups(ctx, tier, rows)
}

// rollupSource is what a tier is rolled from: hours from raw rows, days
// from hours.
func rollupSource(tier int) source {
	if tier == store.TierDay {
		return fromHours
	}
	return fromRaw
}
