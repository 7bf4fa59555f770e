package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// The runners below each do one round of a use case of app at a time,
// every so often: the round is app's, the timing is theirs.

// RollupApp is what Rollups needs of app.
type RollupApp interface {
	Rollup(ctx context.Context, owner string) (int, error)
}

// Rollups rolls observations and pings up into hourly and daily figures,
// as Owner, at start and then every Every (1m); at once again while a
// round finds more to do, so a node catches up after a stop.
type Rollups struct {
	App   RollupApp
	Owner string
	Every time.Duration
	Log   *slog.Logger
}

// Run rolls up until ctx ends. A failed round is logged and tried again
// at the next, so it returns nil.
func (r *Rollups) Run(ctx context.Context) error {
	every := or(r.Every, time.Minute)
	return rounds(ctx, r.Log, 0, every, "rolling up metrics", func(ctx context.Context) (time.Duration, error) {
		n, err := r.App.Rollup(ctx, r.Owner)
		if n > 0 {
			return 0, err // more to do: at once
		}
		return every, err
	})
}

// SLOApp is what SLOAlerts needs of app.
type SLOApp interface {
	EvaluateSLOAlerts(ctx context.Context, owner string) error
}

// SLOAlerts evaluates the burn-rate rules of every objective, as Owner,
// at start and then every Every (1m).
type SLOAlerts struct {
	App   SLOApp
	Owner string
	Every time.Duration
	Log   *slog.Logger
}

// Run evaluates until ctx ends. A failed round is logged and tried again
// at the next, so it returns nil.
func (s *SLOAlerts) Run(ctx context.Context) error {
	every := or(s.Every, time.Minute)
	return rounds(ctx, s.Log, 0, every, "evaluating SLO burn rates", func(ctx context.Context) (time.Duration, error) {
		return every, s.App.EvaluateSLOAlerts(ctx, s.Owner)
	})
}

// HousekeepingApp is what Housekeeping needs of app.
type HousekeepingApp interface {
	Housekeeping(ctx context.Context) error
}

// Housekeeping forgets what no longer matters (app.Housekeeping says
// what), every Every (10m), the first time one Every after start.
// Deleting is idempotent, so every node runs it.
type Housekeeping struct {
	App   HousekeepingApp
	Every time.Duration
	Log   *slog.Logger
}

// Run keeps house until ctx ends. A failed round is logged and tried
// again at the next, so it returns nil.
func (h *Housekeeping) Run(ctx context.Context) error {
	every := or(h.Every, 10*time.Minute)
	return rounds(ctx, h.Log, every, every, "housekeeping", func(ctx context.Context) (time.Duration, error) {
		return every, h.App.Housekeeping(ctx)
	})
}

// rounds runs round first after first, then again after the wait each
// round returns, until ctx ends. A failed round is logged as what failed
// and tried again after interval, so it returns nil.
func rounds(ctx context.Context, log *slog.Logger, first, interval time.Duration, what string, round func(context.Context) (next time.Duration, err error)) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			next, err := round(ctx)
			if err != nil {
				if ctx.Err() == nil {
					log.WarnContext(ctx, what+" failed", "err", err)
				}
				next = interval
			}
			t.Reset(next)
		}
	}
}

// or is d, or def when d is not set.
func or(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
