// Package web measures the signed-in web app of Tocsin (issue 20's
// figures), on SQLite and on PostgreSQL: the server's time for the
// monitors list of a workspace of 1,000 monitors and for one monitor's
// page with 90 days of history, next to a bare net/http handler serving
// the list's bytes in the same run, and what 100 open live-update streams
// cost the server and how soon a state change reaches them.
//
//	go run ./bench web -out /tmp/web.md
//
// For each engine, a fresh database is filled through the store and the
// app as the server would have written it over the months before: an
// owner (with a one-time password, as `tocsin user create` makes one) and
// -streams/10 viewers in one workspace; -monitors HTTP monitors checked
// every -interval (aimed at a loopback target of the benchmark that
// answers 200) with 100 days of state changes each (spans of DOWN,
// DEGRADED, MAINTENANCE and UNKNOWN about every two days); their checks
// as the store holds them: raw rows where the pages read raw rows (the
// first monitor's whole 30 days, every monitor's hours at the 24-hour and
// 30-day windows' edges and its last two hours), hourly rollups (the
// first monitor's 90 days, the others' 31, as far as the list reads them)
// and daily ones of 100 days, drawn from a pool of rows, rolled up by the
// rollup job (app.Rollup) wherever raw rows are; and one more monitor,
// checked every 10 s and turned DOWN by one failed check, aimed at a
// second target the benchmark flips between 200 and 500. Then `tocsin
// serve` (built from this checkout, or the binary -tocsin names) starts
// on it and runs for -settle (its first checks of every monitor); the
// benchmark signs the owner in through the sign-in form, changes the
// one-time password through the password form, and over keep-alive
// loopback connections, with the session cookie, measures:
//
//   - the list: GET /w/{ws}/monitors, -requests sequential GETs (or as
//     many as -page-time allows) after -warmup-requests unmeasured ones
//     (or as many as a tenth of it allows); and the same of the bare handler
//     (this binary re-executed with -bare-serve, answering the list's
//     bytes and headers as Tocsin sent them);
//   - a monitor's page: GET /w/{ws}/monitors/{id} of the first monitor,
//     the same way;
//   - live streams: the server's CPU per second and resident memory over
//     -idle with no stream open, then with -streams streams of GET
//     /w/{ws}/live open (10 per viewer, a person's limit), the bare
//     handler's beside it; then -changes state changes of the flipped
//     monitor (DOWN, UP, …), each timed from the change's moment as the
//     server recorded it (the event's "since") to its arrival at each
//     stream.
//
// The server runs its checks of every monitor meanwhile, as in service.
// Results and how to read them: docs/benchmarks.md, "Web".
package web

import (
	"context"
	"errors"
	"flag"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/load"
	"github.com/tocsin/tocsin/bench/internal/session"
)

// config is what the flags ask for.
type config struct {
	engines  []string
	pgURL    string
	monitors int
	interval time.Duration
	requests int
	warmup   int
	pageTime time.Duration
	streams  int
	idle     time.Duration
	changes  int
	settle   time.Duration
	out      string
	keep     bool
	tocsin   string // the binary; "": build ./cmd/tocsin
	// staleViews are the list's views timed once its figures are a
	// minute old.
	staleViews int
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var (
		c         config
		bareServe bool
		barePage  string
	)
	fs.IntVar(&c.monitors, "monitors", 1000, "monitors of the workspace")
	fs.DurationVar(&c.interval, "interval", time.Minute, "the monitors' check interval, in their history and under the server")
	fs.IntVar(&c.requests, "requests", 500, "sequential GETs of each page measured")
	fs.IntVar(&c.warmup, "warmup-requests", 50, "unmeasured GETs of each page before (stopping after a tenth of -page-time)")
	fs.DurationVar(&c.pageTime, "page-time", 3*time.Minute, "the measured GETs of a page stop after this long, if -requests are not done by then")
	fs.IntVar(&c.streams, "streams", 100, "live streams open at once, 10 per viewer")
	fs.DurationVar(&c.idle, "idle", 20*time.Second, "measured idle time with no stream open, and with -streams open")
	fs.IntVar(&c.staleViews, "stale-views", 2, "views of the list, each a minute after the last, when every monitor's figures are computed afresh")
	fs.IntVar(&c.changes, "changes", 6, "state changes of the flipped monitor timed to the streams, each followed by a view of the list")
	fs.DurationVar(&c.settle, "settle", 15*time.Second, "wait after the server starts (its first checks of every monitor) before measuring")
	fs.BoolVar(&bareServe, "bare-serve", false, "internal: serve the bare handler")
	fs.StringVar(&barePage, "bare-page", "", "internal: the page the bare handler serves")
	return func(ctx context.Context, e session.Env) error {
		if bareServe {
			return load.ServeBare(ctx, barePage, e.Stdin, e.Stdout)
		}
		c.engines, c.pgURL, c.out, c.keep, c.tocsin = e.Engines, e.PGURL, e.Out, e.Keep, e.Tocsin
		if err := c.validate(); err != nil {
			return err
		}
		b := &bench{c: c, log: e.Stderr}
		defer b.close()
		res, err := b.run(ctx)
		if err != nil {
			return err
		}
		var sb strings.Builder
		report(&sb, c, b.machine(ctx), res)
		return session.Report(sb.String(), e.Stdout, c.out)
	}
}

func (c config) validate() error {
	switch {
	case len(c.engines) == 0:
		return errors.New("nothing to measure")
	case c.monitors < 1:
		return errors.New("-monitors must be at least 1")
	case c.interval < 10*time.Second || c.interval > 24*time.Hour:
		return errors.New("-interval must be from 10s to 24h, a monitor's bounds")
	case c.requests < 1 || c.warmup < 0:
		return errors.New("-requests must be at least 1, -warmup-requests not negative")
	case c.streams < 1 || c.changes < 1:
		return errors.New("-streams and -changes must be at least 1")
	case c.pageTime < 0:
		return errors.New("-page-time must not be negative (0: no limit)")
	case c.idle <= 0 || c.settle < 0:
		return errors.New("-idle must be positive, -settle not negative")
	}
	return nil
}
