package web

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"

	"github.com/tocsin/tocsin/bench/internal/child"
	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/bench/internal/load"
	"github.com/tocsin/tocsin/bench/internal/pgfresh"
	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/secrets"
)

// bench owns the work directory, the servers and the databases of a run.
type bench struct {
	c   config
	log io.Writer
	*session.Session
	running []*child.Process // stopped by close if a run fails
}

// engineResult is what was measured of one engine's server.
type engineResult struct {
	engine    string
	seed      time.Duration
	fx        fixture
	listBytes int
	pageBytes int
	list      []time.Duration // sorted
	cold      []time.Duration // the list's first view after each state change, sorted
	stale     []time.Duration // the list's first view once its figures are a minute old, sorted
	bare      []time.Duration
	page      []time.Duration
	quiet     idleWindow      // no stream open
	open      idleWindow      // -streams open
	latencies []time.Duration // a state change's arrival at each stream, sorted
	peak      int64           // the server's peak RSS (VmHWM), bytes
}

// idleWindow is what the server, PostgreSQL and the bare handler used
// over an idle window.
type idleWindow struct {
	elapsed                time.Duration
	server, pg, bare, self time.Duration // CPU time
	rss, bareRSS           int64         // resident at the window's end
	busy, other            float64       // % of the machine
}

func perSecond(cpu, elapsed time.Duration) time.Duration {
	if elapsed <= 0 {
		return 0
	}
	return time.Duration(float64(cpu) / elapsed.Seconds())
}

func (b *bench) close() {
	for _, p := range b.running {
		p.Stop(30 * time.Second)
	}
	if b.Session != nil {
		b.Session.Close()
	}
}

func (b *bench) machine(ctx context.Context) host.Machine {
	m := host.Describe()
	m.Tocsin = b.Bin.Rev
	if slices.Contains(b.c.engines, "postgres") {
		m.Postgres = pgfresh.ServerVersion(ctx, b.c.pgURL)
	}
	return m
}

func (b *bench) run(ctx context.Context) ([]*engineResult, error) {
	var err error
	b.Session, err = session.Open(ctx, session.Options{Name: "web", Log: b.log, Tocsin: b.c.tocsin, Keep: b.c.keep})
	if err != nil {
		return nil, err
	}
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
	var out []*engineResult
	for _, e := range b.c.engines {
		flip.Set(http.StatusOK)
		res, err := b.engine(ctx, e, steady, flip)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// start runs p until the run ends; stop stops it sooner.
func (b *bench) start(p *child.Process) (stop func()) {
	b.running = append(b.running, p)
	return func() {
		p.Stop(30 * time.Second)
		b.running = slices.DeleteFunc(b.running, func(q *child.Process) bool { return q == p })
	}
}

// engine seeds a database of engine e, serves it, and measures it.
func (b *bench) engine(ctx context.Context, e string, steady, flip *seed.Target) (*engineResult, error) {
	res := &engineResult{engine: e}
	dbURL, drop, err := b.freshDatabase(ctx, e)
	if err != nil {
		return nil, err
	}
	b.Undo(drop)
	keys, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		return nil, err
	}
	b.Logf("%s: seeding %d monitors with %d days of history and their checks", e, b.c.monitors, historyDays)
	begin := time.Now()
	if res.fx, err = b.seed(ctx, dbURL, keys, steady.URL, flip.URL); err != nil {
		return nil, fmt.Errorf("seeding: %w", err)
	}
	fx := res.fx
	res.seed = time.Since(begin)
	b.Logf("%s: seeded in %s (the rollup job wrote %d buckets)", e, figure.Dur(res.seed), fx.rollBuckets)

	srv, err := b.Bin.Serve(ctx, b.Dir, "tocsin-"+e, []string{"TOCSIN_SECRET_KEYS=" + keys},
		"--data-dir", filepath.Join(b.Dir, e), "--database-url", dbURL)
	if err != nil {
		return nil, err
	}
	stopSrv := b.start(srv)
	defer stopSrv()
	b.Logf("%s: tocsin serve at %s (pid %d); settling for %s", e, srv.Base, srv.Pid(), b.c.settle)
	if err := session.Sleep(ctx, b.c.settle); err != nil {
		return nil, err
	}
	owner, err := signInOwner(ctx, srv.Base, fx.ownerOTP)
	if err != nil {
		return nil, fmt.Errorf("signing the owner in: %w", err)
	}
	hdr := cookieHeader(owner)
	ws := srv.Base + "/w/" + fx.workspace
	listURL, pageURL := ws+"/monitors", ws+"/monitors/"+fx.firstID

	rt := load.Transport(1)
	defer rt.CloseIdleConnections()
	body, header, _, err := load.Fetch(ctx, rt, listURL, hdr)
	if err != nil {
		return nil, err
	}
	if err := checkPage(body, fx.firstName, "Availability"); err != nil {
		return nil, fmt.Errorf("the list: %w", err)
	}
	res.listBytes = len(body)
	page, _, _, err := load.Fetch(ctx, rt, pageURL, hdr)
	if err != nil {
		return nil, err
	}
	if err := checkPage(page, fx.firstName, "Recent checks"); err != nil {
		return nil, fmt.Errorf("the monitor's page: %w", err)
	}
	res.pageBytes = len(page)
	measure := func(what, url string, h http.Header) ([]time.Duration, error) {
		if b.c.warmup > 0 {
			if _, err := load.SequentialWithin(ctx, rt, url, h, b.c.warmup, b.c.pageTime/10); err != nil {
				return nil, err
			}
		}
		lat, err := load.SequentialWithin(ctx, rt, url, h, b.c.requests, b.c.pageTime)
		if err != nil {
			return nil, err
		}
		b.Logf("%s: %d sequential GETs of %s: p50 %s, p99 %s, max %s", e, len(lat), what,
			figure.Dur(figure.Percentile(lat, 0.5)), figure.Dur(figure.Percentile(lat, 0.99)), figure.Dur(lat[len(lat)-1]))
		return lat, nil
	}
	if res.list, err = measure("the monitors list", listURL, hdr); err != nil {
		return nil, err
	}
	if res.page, err = measure("a monitor's page", pageURL, hdr); err != nil {
		return nil, err
	}

	// The bare handler answers what Tocsin answered for the list.
	pagePath := filepath.Join(b.Dir, "list-"+e+".json")
	if err := (load.Captured{Header: header, Body: body}).Save(pagePath); err != nil {
		return nil, err
	}
	bare, err := child.Start(ctx, b.Self, b.Dir, "bare-"+e, nil, b.Area, "-bare-serve", "-bare-page", pagePath)
	if err != nil {
		return nil, err
	}
	stopBare := b.start(bare)
	defer stopBare()
	b.Logf("%s: bare handler at %s (pid %d)", e, bare.Base, bare.Pid())
	bareRT := load.Transport(1)
	defer bareRT.CloseIdleConnections()
	if _, err := load.Sequential(ctx, bareRT, bare.Base+"/", hdr, b.c.warmup); err != nil {
		return nil, err
	}
	if res.bare, err = load.Sequential(ctx, bareRT, bare.Base+"/", hdr, b.c.requests); err != nil {
		return nil, err
	}
	b.Logf("%s: %d sequential GETs of the bare handler: p50 %s, p99 %s", e, len(res.bare),
		figure.Dur(figure.Percentile(res.bare, 0.5)), figure.Dur(figure.Percentile(res.bare, 0.99)))
	bareRT.CloseIdleConnections()
	rt.CloseIdleConnections()

	if err := b.live(ctx, res, srv, bare, dbURL, ws+"/live", flip, listURL, hdr); err != nil {
		return nil, fmt.Errorf("live streams: %w", err)
	}
	res.peak = host.PeakRSS(srv.Pid())
	return res, nil
}

// live measures the server idle without streams and with -streams open,
// and then the time state changes of the flipped monitor take to reach
// them; after each change, one view of the list at listURL, whose
// availability figures the change makes the server compute again.
func (b *bench) live(ctx context.Context, res *engineResult, srv, bare *child.Process, dbURL, url string, flip *seed.Target,
	listURL string, hdr http.Header) error {
	e, fx := res.engine, res.fx
	var raw *sql.DB
	if e == "postgres" {
		var err error
		if raw, err = sql.Open("pgx", dbURL); err != nil {
			return err
		}
		defer raw.Close()
		raw.SetMaxOpenConns(1) // one backend of ours, left out of PostgreSQL's CPU
	}
	window := func() (idleWindow, error) {
		var pg map[int]bool
		if raw != nil {
			var err error
			if pg, err = pgfresh.Processes(ctx, raw); err != nil {
				return idleWindow{}, err
			}
		}
		a := host.TakeSample()
		t0 := time.Now()
		if err := session.Sleep(ctx, b.c.idle); err != nil {
			return idleWindow{}, err
		}
		z := host.TakeSample()
		w := idleWindow{elapsed: time.Since(t0)}
		sh := host.Split(a, z, srv.Pid(), pg)
		w.server, w.pg, w.busy, w.other = sh.ServerTime, sh.PostgresTime, sh.Busy, sh.Other
		a.Each(z, func(pid int, ticks uint64) {
			if pid == bare.Pid() {
				w.bare = time.Duration(ticks) * host.ClockTick
			}
		})
		_, w.rss = host.Memory(srv.Pid())
		_, w.bareRSS = host.Memory(bare.Pid())
		return w, nil
	}
	var err error
	if res.quiet, err = window(); err != nil {
		return err
	}
	b.Logf("%s: idle, no stream: server CPU %s a second, RSS %.1f MiB", e, figure.Dur(perSecond(res.quiet.server, res.quiet.elapsed)),
		float64(res.quiet.rss)/(1<<20))

	// The viewers sign in, each opening up to 10 streams.
	var sessions []string
	for i, email := range fx.viewers {
		s, err := signIn(ctx, srv.Base, email, viewerPassword)
		if err != nil {
			return fmt.Errorf("signing %s in: %w", email, err)
		}
		for range min(perPerson, b.c.streams-i*perPerson) {
			sessions = append(sessions, s)
		}
	}
	st := openStreams(ctx, url, sessions, fx.liveID)
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
		figure.Dur(perSecond(res.open.server, res.open.elapsed)), float64(res.open.rss)/(1<<20))

	// State changes: the target fails, the monitor's next check turns it
	// DOWN; it answers again, the next turns it UP.
	wait := 3*time.Duration(liveInterval)*time.Second + 30*time.Second
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
			figure.Dur(figure.Percentile(lat, 0.5)), figure.Dur(lat[len(lat)-1]))
		res.latencies = append(res.latencies, lat...)

		rt := load.Transport(1)
		body, _, d, err := load.Fetch(ctx, rt, listURL, hdr)
		rt.CloseIdleConnections()
		if err != nil {
			return err
		}
		if err := checkPage(body, fx.firstName, "Availability"); err != nil {
			return fmt.Errorf("the list after a change: %w", err)
		}
		b.Logf("%s: the list's first view after change %d: %s", e, k+1, figure.Dur(d))
		res.cold = append(res.cold, d)
	}
	slices.Sort(res.latencies)
	slices.Sort(res.cold)

	// Every monitor's figures are computed afresh once they are a minute
	// old: the first view after that pays for all of them.
	for k := range b.c.staleViews {
		if err := session.Sleep(ctx, app.OverviewMaxAge+time.Second); err != nil {
			return err
		}
		rt := load.Transport(1)
		body, _, d, err := load.Fetch(ctx, rt, listURL, hdr)
		rt.CloseIdleConnections()
		if err != nil {
			return err
		}
		if err := checkPage(body, fx.firstName, "Availability"); err != nil {
			return fmt.Errorf("the list after a minute: %w", err)
		}
		b.Logf("%s: the list's first view with its figures a minute old (%d): %s", e, k+1, figure.Dur(d))
		res.stale = append(res.stale, d)
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
