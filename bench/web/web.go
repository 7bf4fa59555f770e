// Package web measures the signed-in web app: the monitors list and a
// monitor's page next to a bare handler, and what live streams cost and
// how soon a state change reaches them; docs/benchmarks.md ("Web") tells
// the method.
package web

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"time"

	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
)

// The targets: the server's time for the pages, p99.
const (
	listP99 = 50 * time.Millisecond
	pageP99 = 100 * time.Millisecond
)

type config struct {
	monitors, requests, warmup, streams, changes int
	interval, pageTime, idle, settle             time.Duration
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var c config
	fs.IntVar(&c.monitors, "monitors", 1000, "monitors of the workspace")
	fs.DurationVar(&c.interval, "interval", time.Minute, "the monitors' check interval, in their history and under the server")
	fs.IntVar(&c.requests, "requests", 500, "sequential GETs of each page measured")
	fs.IntVar(&c.warmup, "warmup-requests", 50, "unmeasured GETs of each page before (stopping after a tenth of -page-time)")
	fs.DurationVar(&c.pageTime, "page-time", 3*time.Minute, "the measured GETs of a page stop after this long, if -requests are not done by then")
	fs.IntVar(&c.streams, "streams", 100, "live streams open at once, 10 per viewer")
	fs.DurationVar(&c.idle, "idle", 20*time.Second, "measured idle time with no stream open, and with -streams open")
	fs.IntVar(&c.changes, "changes", 6, "state changes of the flipped monitor timed to the streams, each followed by a view of the list")
	fs.DurationVar(&c.settle, "settle", 15*time.Second, "wait after the server starts (its first checks of every monitor) before measuring")
	return func(ctx context.Context, e session.Env) error {
		switch {
		case c.warmup < 0:
			return errors.New("-warmup-requests must not be negative")
		case c.interval < 10*time.Second || c.interval > 24*time.Hour:
			return errors.New("-interval must be from 10s to 24h, a monitor's bounds")
		case c.pageTime < 0 || c.idle <= 0 || c.settle < 0:
			return errors.New("-idle must be positive, -page-time and -settle not negative")
		}
		if err := session.AtLeast1("-monitors, -requests, -streams and -changes", c.monitors, c.requests, c.streams, c.changes); err != nil {
			return err
		}
		title := fmt.Sprintf("Web app: %d monitors, %d live streams", c.monitors, c.streams)
		return session.Measure(ctx, "web", e, false, title, func(s *session.Session) session.Bench { return &bench{Session: s, c: c} })
	}
}

type bench struct {
	*session.Session
	c       config
	results []*result
}

func (b *bench) Run(ctx context.Context) error {
	steady, err := seed.StartTarget()
	if err != nil {
		return err
	}
	defer steady.Close()
	flip, err := seed.StartTarget()
	if err != nil {
		return err
	}
	defer flip.Close()
	b.results, err = session.PerEngine(ctx, b.Session, func(ctx context.Context, e string) (*result, error) {
		flip.Set(http.StatusOK)
		return b.engine(ctx, e, steady, flip)
	})
	return err
}

// result is what was measured of one engine's server.
type result struct {
	engine               string
	fx                   seed.WebFixture
	listBytes, pageBytes int
	list, page, bare     []time.Duration // sorted
	cold                 []time.Duration // the list's first view after each state change, sorted
	quiet, open          idleWindow      // no stream open; -streams open
	latencies            []time.Duration // a state change's arrival at each stream, sorted
}

// engine seeds a database of engine e, serves it, and measures it.
func (b *bench) engine(ctx context.Context, e string, steady, flip *seed.Target) (*result, error) {
	res := &result{engine: e}
	dbURL, keys, err := b.FreshDB(ctx, e)
	if err != nil {
		return nil, err
	}
	b.Logf("%s: seeding %d monitors with their history and checks", e, b.c.monitors)
	if res.fx, err = seed.WebApp(ctx, dbURL, keys, seed.Web{Monitors: b.c.monitors, Streams: b.c.streams, Interval: b.c.interval,
		Steady: steady.URL, Flip: flip.URL, Logf: b.Logf}); err != nil {
		return nil, fmt.Errorf("seeding: %w", err)
	}
	fx := res.fx
	srv, err := b.Serve(ctx, "tocsin-"+e, dbURL)
	if err != nil {
		return nil, err
	}
	if err := session.Sleep(ctx, b.c.settle); err != nil {
		return nil, err
	}
	owner, err := signInOwner(ctx, srv.Base, fx.OwnerOTP)
	if err != nil {
		return nil, fmt.Errorf("signing the owner in: %w", err)
	}
	hdr := cookieHeader(owner)
	ws := srv.Base + "/w/" + fx.Workspace
	listURL, pageURL := ws+"/monitors", ws+"/monitors/"+fx.FirstID

	rt := session.Transport(1)
	defer rt.CloseIdleConnections()
	// The pages the benchmark means to measure: the list and the first
	// monitor's page, each showing what it should.
	fetch := func(url, word string) ([]byte, http.Header, error) {
		body, header, _, err := session.Fetch(ctx, rt, url, hdr)
		if err == nil {
			err = session.Shows(body, fx.FirstName, word)
		}
		return body, header, err
	}
	body, header, err := fetch(listURL, "Availability")
	if err != nil {
		return nil, err
	}
	page, _, err := fetch(pageURL, "Recent checks")
	if err != nil {
		return nil, err
	}
	res.listBytes, res.pageBytes = len(body), len(page)
	measure := func(what, url string, h http.Header) ([]time.Duration, error) {
		if b.c.warmup > 0 {
			if _, err := session.Sequential(ctx, rt, url, h, b.c.warmup, b.c.pageTime/10); err != nil {
				return nil, err
			}
		}
		lat, err := session.Sequential(ctx, rt, url, h, b.c.requests, b.c.pageTime)
		if err == nil {
			b.Logf("%s: %d sequential GETs of %s: p50 %s, p99 %s, max %s", e, len(lat), what, session.P(lat, 0.5), session.P(lat, 0.99), session.P(lat, 1))
		}
		return lat, err
	}
	if res.list, err = measure("the monitors list", listURL, hdr); err != nil {
		return nil, err
	}
	if res.page, err = measure("a monitor's page", pageURL, hdr); err != nil {
		return nil, err
	}

	bare, err := b.BareChild(ctx, "bare-"+e, header, body) // what Tocsin just answered
	if err != nil {
		return nil, err
	}
	if res.bare, err = measure("the bare handler", bare.Base+"/", hdr); err != nil {
		return nil, err
	}
	rt.CloseIdleConnections()

	if err := b.live(ctx, res, srv, dbURL, ws, flip, hdr); err != nil {
		return nil, fmt.Errorf("live streams: %w", err)
	}
	return res, nil
}

func (b *bench) Report(w *session.Report) {
	c, p := b.c, session.P
	w.Printf("Each engine's database: one workspace of %d HTTP monitors checked every %s with 100 days of state changes and their checks "+
		"as the store holds them under the default retention, and one more monitor checked every %d s that the benchmark turns DOWN and UP; "+
		"the server runs every monitor's checks meanwhile. Times from sending a GET with the owner's session cookie to reading the whole "+
		"answer over keep-alive loopback: up to %d sequential GETs (or as many as %s allows) after up to %d unmeasured ones.\n",
		c.monitors, c.interval, seed.LiveInterval, c.requests, c.pageTime, c.warmup)
	w.Table("engine", "page", "GETs:", "p50:", "p99:", "max:", "size:", "target")
	for _, r := range b.results {
		for _, row := range []struct {
			name   string
			lat    []time.Duration
			size   int
			target time.Duration
		}{{"monitors list", r.list, r.listBytes, listP99}, {"bare handler, the list's bytes", r.bare, r.listBytes, 0},
			{"monitors list, first view after a state change", r.cold, r.listBytes, 0}, {"a monitor's page", r.page, r.pageBytes, pageP99}} {
			verdict := "–"
			if row.target > 0 {
				verdict = fmt.Sprintf("p99 under %s: %s", session.Dur(row.target), session.Verdict(session.Percentile(row.lat, 0.99) < row.target))
			}
			if len(row.lat) > 0 {
				w.Printf("| %s | %s | %d | %s | %s | %s | %.0f KiB | %s |\n", r.engine, row.name, len(row.lat), p(row.lat, 0.5),
					p(row.lat, 0.99), p(row.lat, 1), float64(row.size)/1024, verdict)
			}
		}
	}
	w.Printf("\n## Live streams\n\nIdle for %s with no stream open, then with %d open (10 per viewer); CPU per second of wall time, "+
		"resident memory at the window's end.\n", c.idle, c.streams)
	w.Table("engine", "streams:", "server CPU/s:", "PostgreSQL CPU/s:", "server RSS:", "other processes:")
	for _, r := range b.results {
		for i, x := range []idleWindow{r.quiet, r.open} {
			w.Printf("| %s | %d | %s | %s | %s | %.0f%% |\n", r.engine, i*c.streams, session.Dur(perSecond(x.cpu.ServerTime, x.elapsed)),
				session.Dur(perSecond(x.cpu.PostgresTime, x.elapsed)), session.MiB(x.rss, 1), x.cpu.Other)
		}
	}
	w.Printf("\nA state change reaching the streams, from its moment as the server recorded it (the event's `since`) to the event read "+
		"at each stream; %d changes of the flipped monitor:\n", c.changes)
	w.Table("engine", "deliveries:", "p50:", "p90:", "max:")
	for _, r := range b.results {
		w.Printf("| %s | %d | %s | %s | %s |\n", r.engine, len(r.latencies), p(r.latencies, 0.5), p(r.latencies, 0.9), p(r.latencies, 1))
	}
}
