package app

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
)

// The price of a metrics answer, counted in points before any figure is
// read, from the window, the resolution and the page size alone, so the
// bound protects the database as well as the encoder: a subject's figures
// over the window are one point, and each bucket of its series one more.
// Three limits follow from it:
//
//   - a response holds at most MetricsPointsPerResponse points: a listing
//     answers as many subjects as fit (with nextCursor), and a request
//     whose one subject is over alone is refused, naming resolution;
//   - an API key spends at most MetricsPointsPerMinute points a minute,
//     in a GCRA bucket beside its request budget, where that budget lives
//     (in the database several nodes share), so it holds across nodes;
//     past it a request is refused with the time until it fits;
//   - a heavy query (HeavyMetricsPoints or more) runs only in one of this
//     node's HeavyMetricsQueries slots, waiting for one at most
//     HeavyMetricsWait, so one key cannot take the machine, whatever its
//     budget.
//
// Web sessions pay no points (the pages ask for what they draw), but
// their heavy queries take slots too.

// Defaults of the price (Config).
const (
	// MetricsPointsPerResponse: a listing of 100 subjects by day over 90
	// days fits (9,100), as do 4 subjects by hour over 90 days (8,644).
	MetricsPointsPerResponse = 10_000
	// MetricsPointsPerMinute: six full responses a minute, or 600
	// listings of 100 subjects without a series, the request limit.
	MetricsPointsPerMinute = 60_000
	// HeavyMetricsPoints is the price from which a query waits for a slot:
	// a page of 100 subjects, or one subject's series of 99 buckets. Eight
	// clients of one key asking for pages of 100 subjects over 30 days at
	// once took a quiet p95 of 8 ms elsewhere to 1 s without slots, to 24
	// ms with them.
	HeavyMetricsPoints = 100
	// HeavyMetricsWait bounds the wait for a slot.
	HeavyMetricsWait = 10 * time.Second
	// heavyRetry is the Retry-After of a query that found no slot.
	heavyRetry = 5 * time.Second
)

func (c *Config) metricsDefaults() {
	if c.MetricsPointsPerResponse == 0 {
		c.MetricsPointsPerResponse = MetricsPointsPerResponse
	}
	if c.MetricsPointsPerMinute == 0 {
		c.MetricsPointsPerMinute = MetricsPointsPerMinute
	}
	// A response must fit the minute's budget, and so must a scrape of
	// the most subjects, or such a request could never be answered.
	c.MetricsPointsPerMinute = max(c.MetricsPointsPerMinute, c.MetricsPointsPerResponse, scrapePoints(maxScrapeSubjects))
	if c.HeavyMetricsQueries == 0 {
		c.HeavyMetricsQueries = DefaultHeavyMetricsQueries()
	}
	if c.HeavyMetricsWait == 0 {
		c.HeavyMetricsWait = HeavyMetricsWait
	}
}

// DefaultHeavyMetricsQueries is half this machine's CPUs, at least 1: the
// other half stays for everything else.
func DefaultHeavyMetricsQueries() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// seriesPoints is the price of one subject with a series of n buckets
// (none: n = 0).
func seriesPoints(n int) int { return 1 + n }

// scrapePoints is the price of a scrape of n subjects.
func scrapePoints(n int) int { return n * len(ScrapeWindows) }

// overBudget refuses a request whose one subject is over the budget of a
// response, naming resolution, the parameter that would bring it under.
func (a *App) overBudget(points int) error {
	msg := fmt.Sprintf("a series of %d buckets costs %d points, over the budget of %d points a response; ask for resolution=day or a shorter span",
		points-1, points, a.cfg.MetricsPointsPerResponse)
	return invalidQuery("query.resolution", msg)
}

// priced runs query, the work of a metrics answer of points: it spends
// them from the actor's key's budget, then, for a heavy query, runs it in
// one of the node's slots, at a lower CPU priority (heavyThread), so the
// requests it runs beside keep the CPU they would have had.
func (a *App) priced(ctx context.Context, actor Actor, points int, query func() error) error {
	if err := a.spendPoints(ctx, actor, points); err != nil {
		return err
	}
	if points < HeavyMetricsPoints {
		return query()
	}
	release, err := a.heavySlot(ctx)
	if err != nil {
		return err
	}
	defer release()
	return heavyThread(query)
}

// heavyThread runs f on an OS thread of its own whose CPU priority is
// lowered where the system allows it (lowerPriority): the scheduler then
// gives the process's other threads, those serving other requests, the
// CPU first. A thread's priority cannot be raised back without
// privileges, so the thread is not reused: it ends with the goroutine,
// which never unlocks it.
func heavyThread(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("heavy metrics query: panic: %v", p)
			}
		}()
		lowerPriority()
		done <- f()
	}()
	return <-done
}

// spendPoints spends points from the budget of the actor's API key.
func (a *App) spendPoints(ctx context.Context, actor Actor, points int) error {
	if actor.KeyID == "" || points <= 0 {
		return nil
	}
	// The bucket holds a minute; a request costs its share of it, in whole
	// µs (the buckets' unit), rounded up so a large budget's point is
	// never free.
	perMinute := a.cfg.MetricsPointsPerMinute
	tolerance := time.Minute
	us := (int64(points)*tolerance.Microseconds() + int64(perMinute) - 1) / int64(perMinute)
	cost := time.Duration(us) * time.Microsecond
	now := a.now()
	d, err := a.rates.spend(ctx, "pts:"+actor.KeyID, now, cost, tolerance)
	if err != nil || d.Allowed {
		return err
	}
	// It fits once the bucket has drained to tolerance - cost.
	wait := max(d.TAT.Sub(now)+cost-tolerance, time.Second)
	return &errs.Error{Kind: errs.KindRateLimited, RetryAfter: wait,
		Message: "metrics budget of " + strconv.Itoa(perMinute) + " points a minute spent; this request costs " + strconv.Itoa(points) + " points"}
}

// heavySlot waits for one of the node's slots for heavy queries, at most
// HeavyMetricsWait.
func (a *App) heavySlot(ctx context.Context) (release func(), err error) {
	release = func() { <-a.heavy }
	select {
	case a.heavy <- struct{}{}:
		return release, nil
	default:
	}
	t := time.NewTimer(a.cfg.HeavyMetricsWait)
	defer t.Stop()
	select {
	case a.heavy <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, &errs.Error{Kind: errs.KindUnavailable, RetryAfter: heavyRetry,
			Message: "this server is busy answering other large metrics queries; retry shortly, or ask for fewer points"}
	}
}
