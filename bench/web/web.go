// Package web measures the signed-in web app: the server's time for the
// monitors list of a workspace of -monitors monitors and for one
// monitor's page with 90 days of history, next to a bare net/http handler
// serving the list's bytes in the same run, and what -streams open live
// streams cost the server and how soon a state change reaches them.
//
// Each engine's database is filled by the seeding package: an owner with
// a one-time password and a viewer per 10 streams; the monitors, checked
// every -interval, with 100 days of state changes and their checks and
// rollups as the store holds them under the default retention; and one
// more monitor, checked every 10 s and turned DOWN by one failed check,
// aimed at a target the benchmark flips between 200 and 500. `tocsin
// serve` starts on it and runs for -settle; the benchmark signs the owner
// in through the sign-in form, changes the one-time password through the
// password form, and with the session cookie measures -requests
// sequential GETs of the list and of a page (and of the bare handler,
// this binary with -bare-serve); then the server idle for -idle with no
// stream open and with -streams open; then -changes state changes of the
// flipped monitor, each timed from its moment as the server recorded it
// to its arrival at each stream, each followed by a view of the list.
package web

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The targets: the server's time for the pages, p99.
const (
	listP99 = 50 * time.Millisecond
	pageP99 = 100 * time.Millisecond
	// overviewMaxAge is how old the list's figures may grow before the
	// server computes them afresh.
	overviewMaxAge = time.Minute
)

type config struct {
	monitors, requests, warmup, streams, changes, staleViews int
	interval, pageTime, idle, settle                         time.Duration
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
	fs.IntVar(&c.staleViews, "stale-views", 2, "views of the list, each a minute after the last, when every monitor's figures are computed afresh")
	fs.IntVar(&c.changes, "changes", 6, "state changes of the flipped monitor timed to the streams, each followed by a view of the list")
	fs.DurationVar(&c.settle, "settle", 15*time.Second, "wait after the server starts (its first checks of every monitor) before measuring")
	return session.BarePage(fs, func(ctx context.Context, e session.Env) error {
		switch {
		case c.monitors < 1 || c.requests < 1 || c.warmup < 0 || c.streams < 1 || c.changes < 1:
			return errors.New("-monitors, -requests, -streams and -changes must be at least 1, -warmup-requests not negative")
		case c.interval < 10*time.Second || c.interval > 24*time.Hour:
			return errors.New("-interval must be from 10s to 24h, a monitor's bounds")
		case c.pageTime < 0 || c.idle <= 0 || c.settle < 0:
			return errors.New("-idle must be positive, -page-time and -settle not negative")
		}
		return session.Measure(ctx, "web", e, false, fmt.Sprintf("Web app: %d monitors, %d live streams", c.monitors, c.streams), func(s *session.Session) (func(io.Writer), error) {
			steady, err := seed.StartTarget()
			if err != nil {
				return nil, err
			}
			defer steady.Close()
			flip, err := seed.StartTarget()
			if err != nil {
				return nil, err
			}
			defer flip.Close()
			b := &bench{Session: s, c: c}
			b.results, err = session.PerEngine(s, func(e string) (*result, error) {
				flip.Set(http.StatusOK)
				return b.engine(ctx, e, steady, flip)
			})
			return b.report, err
		})
	})
}

type bench struct {
	*session.Session
	c       config
	results []*result
}

// result is what was measured of one engine's server.
type result struct {
	engine               string
	fx                   seed.WebFixture
	listBytes, pageBytes int
	list, page, bare     []time.Duration // sorted
	cold                 []time.Duration // the list's first view after each state change, sorted
	stale                []time.Duration // the list's first view once its figures are a minute old, sorted
	quiet, open          idleWindow      // no stream open; -streams open
	latencies            []time.Duration // a state change's arrival at each stream, sorted
	peak                 int64
}

// idleWindow is what the server and PostgreSQL used over an idle window.
type idleWindow struct {
	elapsed time.Duration
	cpu     session.Share
	rss     int64 // the server's, at the window's end
}

func perSecond(cpu, elapsed time.Duration) time.Duration {
	return time.Duration(float64(cpu) / max(elapsed.Seconds(), 1e-9))
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
			err = checkPage(body, fx.FirstName, word)
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
			if _, err := session.SequentialWithin(ctx, rt, url, h, b.c.warmup, b.c.pageTime/10); err != nil {
				return nil, err
			}
		}
		lat, err := session.SequentialWithin(ctx, rt, url, h, b.c.requests, b.c.pageTime)
		if err != nil {
			return nil, err
		}
		b.Logf("%s: %d sequential GETs of %s: p50 %s, p99 %s, max %s", e, len(lat), what,
			session.Dur(session.Percentile(lat, 0.5)), session.Dur(session.Percentile(lat, 0.99)), session.Dur(lat[len(lat)-1]))
		return lat, nil
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
	bareRT := session.Transport(1)
	defer bareRT.CloseIdleConnections()
	if _, err := session.Sequential(ctx, bareRT, bare.Base+"/", hdr, b.c.warmup); err != nil {
		return nil, err
	}
	if res.bare, err = session.Sequential(ctx, bareRT, bare.Base+"/", hdr, b.c.requests); err != nil {
		return nil, err
	}
	b.Logf("%s: %d sequential GETs of the bare handler: p50 %s, p99 %s", e, len(res.bare),
		session.Dur(session.Percentile(res.bare, 0.5)), session.Dur(session.Percentile(res.bare, 0.99)))
	bareRT.CloseIdleConnections()
	rt.CloseIdleConnections()

	if err := b.live(ctx, res, srv, bare, dbURL, ws+"/live", flip, listURL, hdr); err != nil {
		return nil, fmt.Errorf("live streams: %w", err)
	}
	res.peak = session.PeakRSS(srv.Pid())
	return res, nil
}

// live measures the server idle without streams and with -streams open,
// and then the time state changes of the flipped monitor take to reach
// them; after each change, one view of the list at listURL, whose
// availability figures the change makes the server compute again.
func (b *bench) live(ctx context.Context, res *result, srv, bare *session.Process, dbURL, url string, flip *seed.Target,
	listURL string, hdr http.Header) error {
	e, fx := res.engine, res.fx
	// view times the list's first view on a new connection.
	view := func(to *[]time.Duration, when string) error {
		rt := session.Transport(1)
		defer rt.CloseIdleConnections()
		body, _, d, err := session.Fetch(ctx, rt, listURL, hdr)
		if err == nil {
			err = checkPage(body, fx.FirstName, "Availability")
		}
		b.Logf("%s: the list's first view %s: %s", e, when, session.Dur(d))
		*to = append(*to, d)
		return err
	}
	window := func() (idleWindow, error) {
		t0 := time.Now()
		w := idleWindow{cpu: b.Window(ctx, srv.Pid(), dbURL, func() { _ = session.Sleep(ctx, b.c.idle) })}
		w.elapsed = time.Since(t0)
		w.rss = session.RSS(srv.Pid())
		return w, ctx.Err()
	}
	var err error
	if res.quiet, err = window(); err != nil {
		return err
	}
	b.Logf("%s: idle, no stream: server CPU %s a second, RSS %.1f MiB", e, session.Dur(perSecond(res.quiet.cpu.ServerTime, res.quiet.elapsed)),
		float64(res.quiet.rss)/(1<<20))

	// The viewers sign in, each opening up to 10 streams.
	var sessions []string
	for i, email := range fx.Viewers {
		s, err := signIn(ctx, srv.Base, email, seed.ViewerPassword)
		if err != nil {
			return fmt.Errorf("signing %s in: %w", email, err)
		}
		for range min(seed.PerPerson, b.c.streams-i*seed.PerPerson) {
			sessions = append(sessions, s)
		}
	}
	st := openStreams(ctx, url, sessions, fx.LiveID)
	defer st.Close()
	deadline := time.After(time.Minute)
	for range sessions {
		select {
		case <-st.ready:
		case err := <-st.errs:
			return err
		case <-deadline:
			return fmt.Errorf("not every stream had its snapshot within a minute")
		}
	}
	b.Logf("%s: %d streams open", e, len(sessions))
	if res.open, err = window(); err != nil {
		return err
	}
	b.Logf("%s: idle, %d streams: server CPU %s a second, RSS %.1f MiB", e, len(sessions),
		session.Dur(perSecond(res.open.cpu.ServerTime, res.open.elapsed)), float64(res.open.rss)/(1<<20))

	// State changes: the target fails, the monitor's next check turns it
	// DOWN; it answers again, the next turns it UP.
	wait := 3*time.Duration(seed.LiveInterval)*time.Second + 30*time.Second
	for k := range b.c.changes {
		want, status := monitor.StateDown, http.StatusInternalServerError
		if k%2 == 1 {
			want, status = monitor.StateUp, http.StatusOK
		}
	drain:
		for {
			select {
			case <-st.arrivals:
			default:
				break drain
			}
		}
		flipped := time.Now()
		flip.Set(status)
		got := map[int]bool{}
		timeout := time.After(wait)
		var lat []time.Duration
		for len(got) < len(sessions) {
			select {
			case a := <-st.arrivals:
				// A check under way as the target flipped may bring the
				// change a moment before it; the change before is at
				// least an interval older.
				if a.ev.State != want || a.ev.Since.Before(flipped.Add(-time.Second)) || got[a.stream] {
					continue
				}
				got[a.stream] = true
				lat = append(lat, a.at.Sub(a.ev.Since))
			case err := <-st.errs:
				return err
			case <-timeout:
				return fmt.Errorf("change %d to %s: %d of %d streams had it within %s", k+1, want, len(got), len(sessions), wait)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		slices.Sort(lat)
		b.Logf("%s: change %d to %s reached %d streams: p50 %s, max %s", e, k+1, want, len(lat),
			session.Dur(session.Percentile(lat, 0.5)), session.Dur(lat[len(lat)-1]))
		res.latencies = append(res.latencies, lat...)

		if err := view(&res.cold, "after a state change"); err != nil {
			return err
		}
	}
	slices.Sort(res.latencies)
	slices.Sort(res.cold)

	// Every monitor's figures are computed afresh once they are a minute
	// old: the first view after that pays for all of them.
	for k := range b.c.staleViews {
		if err := session.Sleep(ctx, overviewMaxAge+time.Second); err != nil {
			return err
		}
		if err := view(&res.stale, fmt.Sprintf("with its figures a minute old (%d)", k+1)); err != nil {
			return err
		}
	}
	slices.Sort(res.stale)
	return nil
}

// checkPage makes sure a page is the one the benchmark means to measure.
func checkPage(body []byte, words ...string) error {
	for _, w := range words {
		if !bytes.Contains(body, []byte(w)) {
			return fmt.Errorf("the page does not show %q", w)
		}
	}
	return nil
}

func (b *bench) report(w io.Writer) {
	c := b.c
	fmt.Fprintf(w, "Each engine's database: one workspace of %d HTTP monitors checked every %s with 100 days of state changes and their checks "+
		"as the store holds them under the default retention, and one more monitor checked every %d s that the benchmark turns DOWN and UP; "+
		"the server runs every monitor's checks meanwhile. Times from sending a GET with the owner's session cookie to reading the whole "+
		"answer over keep-alive loopback: up to %d sequential GETs (or as many as %s allows) after up to %d unmeasured ones.\n\n",
		c.monitors, c.interval, seed.LiveInterval, c.requests, c.pageTime, c.warmup)
	p := func(xs []time.Duration, q float64) string { return session.Dur(session.Percentile(xs, q)) }
	fmt.Fprint(w, "| engine | page | GETs | p50 | p99 | max | size | target |\n|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, r := range b.results {
		for _, row := range []struct {
			name   string
			lat    []time.Duration
			size   int
			target time.Duration
		}{{"monitors list", r.list, r.listBytes, listP99}, {"bare handler, the list's bytes", r.bare, r.listBytes, 0},
			{"monitors list, first view after a state change", r.cold, r.listBytes, 0},
			{"monitors list, first view with its figures a minute old", r.stale, r.listBytes, 0}, {"a monitor's page", r.page, r.pageBytes, pageP99}} {
			verdict := "–"
			if row.target > 0 {
				verdict = fmt.Sprintf("p99 under %s: %s", session.Dur(row.target), session.Verdict(session.Percentile(row.lat, 0.99) < row.target))
			}
			if len(row.lat) > 0 {
				fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %.0f KiB | %s |\n", r.engine, row.name, len(row.lat), p(row.lat, 0.5),
					p(row.lat, 0.99), p(row.lat, 1), float64(row.size)/1024, verdict)
			}
		}
	}
	fmt.Fprintf(w, "\n## Live streams\n\nIdle for %s with no stream open, then with %d open (10 per viewer); CPU per second of wall time, "+
		"resident memory at the window's end.\n\n", c.idle, c.streams)
	fmt.Fprint(w, "| engine | streams | server CPU/s | PostgreSQL CPU/s | server RSS | other processes |\n|---|---:|---:|---:|---:|---:|\n")
	for _, r := range b.results {
		for i, x := range []idleWindow{r.quiet, r.open} {
			fmt.Fprintf(w, "| %s | %d | %s | %s | %.1f MiB | %.0f%% |\n", r.engine, i*c.streams, session.Dur(perSecond(x.cpu.ServerTime, x.elapsed)),
				session.Dur(perSecond(x.cpu.PostgresTime, x.elapsed)), float64(x.rss)/(1<<20), x.cpu.Other)
		}
	}
	fmt.Fprintf(w, "\nA state change reaching the streams, from its moment as the server recorded it (the event's `since`) to the event read "+
		"at each stream; %d changes of the flipped monitor:\n\n| engine | deliveries | p50 | p90 | max |\n|---|---:|---:|---:|---:|\n", c.changes)
	for _, r := range b.results {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s |\n", r.engine, len(r.latencies), p(r.latencies, 0.5), p(r.latencies, 0.9), p(r.latencies, 1))
	}
}
