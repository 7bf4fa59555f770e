package pages

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
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
	seed      time.Duration // filling the database
	changes   int           // state changes written
	incidents int           // public incidents written
	pageBytes int           // the main page's HTML
	cold      []time.Duration
	quiet     []time.Duration            // a page read after a quiet spell, nothing changed
	touched   []time.Duration            // a page read after a quiet spell, changed by another writer
	cached    map[string][]time.Duration // by what: page, summary, badge; sorted
	bare      []*round
	tocsin    []*round
	peak      int64 // the server's peak RSS (VmHWM), bytes
}

// What the cached measurements fetch.
var cachedURLs = []string{"page", "summary.json", "badge"}

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
	b.Session, err = session.Open(ctx, session.Options{Name: "pages", Log: b.log, Tocsin: b.c.tocsin, Keep: b.c.keep})
	if err != nil {
		return nil, err
	}
	target, err := seed.StartTarget()
	if err != nil {
		return nil, err
	}
	defer target.Close()
	var out []*engineResult
	for _, e := range b.c.engines {
		res, err := b.engine(ctx, e, target.URL)
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
func (b *bench) engine(ctx context.Context, e, target string) (*engineResult, error) {
	res := &engineResult{engine: e, cached: map[string][]time.Duration{}}
	dbURL, drop, err := b.freshDatabase(ctx, e)
	if err != nil {
		return nil, err
	}
	b.Undo(drop)
	keys, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		return nil, err
	}
	b.Logf("%s: seeding %d monitors with %d days of history, incidents and %d pages", e, b.c.components, historyDays, b.c.coldPages+1)
	begin := time.Now()
	fx, err := b.seed(ctx, dbURL, keys, target)
	if err != nil {
		return nil, fmt.Errorf("seeding: %w", err)
	}
	res.seed, res.changes, res.incidents = time.Since(begin), fx.changes, fx.incidents
	b.Logf("%s: seeded in %s: %d state changes, %d public incidents", e, figure.Dur(res.seed), res.changes, res.incidents)

	// As an operator runs it: the keyring in the environment, the
	// database and the page budget on the command line.
	srv, err := b.Bin.Serve(ctx, b.Dir, "tocsin-"+e, []string{"TOCSIN_SECRET_KEYS=" + keys},
		"--data-dir", filepath.Join(b.Dir, e), "--database-url", dbURL, "--status-page-rate-limit", "10000000")
	if err != nil {
		return nil, err
	}
	stopSrv := b.start(srv)
	defer stopSrv()
	b.Logf("%s: tocsin serve at %s (pid %d)", e, srv.Base, srv.Pid())
	base := srv.Base + "/status/"
	// A cold render on a running server, not on one starting: its first
	// checks of the monitors, all due, and its jobs' first rounds done.
	if err := session.Sleep(ctx, b.c.settle); err != nil {
		return nil, err
	}

	rt := load.Transport(1)
	defer rt.CloseIdleConnections()
	if _, _, _, err := load.Fetch(ctx, rt, srv.Base+"/healthz", nil); err != nil {
		return nil, err
	}
	for _, slug := range fx.coldSlugs {
		_, _, d, err := load.Fetch(ctx, rt, base+slug, nil)
		if err != nil {
			return nil, fmt.Errorf("cold render: %w", err)
		}
		res.cold = append(res.cold, d)
	}
	slowest := slices.Index(res.cold, slices.Max(res.cold))
	slices.Sort(res.cold)
	b.Logf("%s: %d cold renders: median %s, max %s (render %d of %d)", e, len(res.cold), figure.Dur(figure.Percentile(res.cold, 0.5)),
		figure.Dur(res.cold[len(res.cold)-1]), slowest+1, len(res.cold))
	if res.quiet, res.touched, err = b.afterQuiet(ctx, e, dbURL, rt, base, fx.coldSlugs); err != nil {
		return nil, err
	}

	page := base + fx.mainSlug
	body, header, _, err := load.Fetch(ctx, rt, page, nil)
	if err != nil {
		return nil, err
	}
	if err := checkPage(body, b.c.components); err != nil {
		return nil, err
	}
	res.pageBytes = len(body)
	urls := map[string]string{"page": page, "summary.json": page + "/summary.json",
		"badge": page + "/badge/" + fx.componentID + ".svg"}
	for _, what := range cachedURLs {
		if _, err := load.Sequential(ctx, rt, urls[what], nil, b.c.requests); err != nil { // warm-up
			return nil, err
		}
		if res.cached[what], err = load.Sequential(ctx, rt, urls[what], nil, b.c.requests); err != nil {
			return nil, err
		}
		lat := res.cached[what]
		b.Logf("%s: %d sequential GETs of the %s from the cache: p50 %s, p99 %s", e, len(lat), what,
			figure.Dur(figure.Percentile(lat, 0.5)), figure.Dur(figure.Percentile(lat, 0.99)))
	}

	// The bare handler answers what Tocsin just answered.
	pagePath := filepath.Join(b.Dir, "page-"+e+".json")
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

	var raw *sql.DB
	if e == "postgres" {
		if raw, err = sql.Open("pgx", dbURL); err != nil {
			return nil, err
		}
		defer raw.Close()
		raw.SetMaxOpenConns(1) // one backend of ours, left out of PostgreSQL's CPU
	}
	for r := range b.c.rounds {
		for _, t := range []struct {
			name string
			url  string
			pid  int
			out  *[]*round
		}{{"bare", bare.Base + "/status/" + fx.mainSlug, bare.Pid(), &res.bare}, {"tocsin", page, srv.Pid(), &res.tocsin}} {
			var pg map[int]bool
			if raw != nil && t.name == "tocsin" {
				if pg, err = pgfresh.Processes(ctx, raw); err != nil {
					return nil, err
				}
			}
			rd, err := loadRound(ctx, t.url, b.c.clients, b.c.warmup, b.c.duration, t.pid, pg)
			if err != nil {
				return nil, err
			}
			rd.n = r + 1
			*t.out = append(*t.out, rd)
			b.Logf("%s: round %d, %s: %.0f req/s, server CPU %s a request, %d failed, machine %.0f%% busy (other %.0f%%)",
				e, r+1, t.name, rd.rate(), figure.Dur(rd.perRequest()), rd.failed, rd.cpu.Busy, rd.cpu.Other)
		}
	}
	res.peak = host.PeakRSS(srv.Pid())
	return res, nil
}

// checkPage makes sure the page shows every component: the benchmark
// measures the page it means to.
func checkPage(body []byte, components int) error {
	for i := range components {
		if name := fmt.Sprintf("Service %02d", i+1); !bytes.Contains(body, []byte(name)) {
			return fmt.Errorf("the page does not show %q", name)
		}
	}
	return nil
}
