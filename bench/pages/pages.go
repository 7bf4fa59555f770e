// Package pages measures public status pages: cold renders, reads after
// a quiet spell, the cache, and throughput next to a bare handler serving
// the same bytes; docs/benchmarks.md ("Status pages") tells the method.
package pages

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
)

// The targets: the server's time for a page, p99.
const (
	cachedP99 = 50 * time.Millisecond
	coldP99   = 300 * time.Millisecond
	// quietSpell is longer than the bound a status page is served within
	// (5 s): a reader after it waits for the page to be checked.
	quietSpell    = 6 * time.Second
	maxComponents = 100
)

type config struct {
	components, coldPages, requests, clients int
	settle                                   time.Duration
}

type bench struct {
	*session.Session
	c       config
	results []*result
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var c config
	fs.IntVar(&c.components, "components", 50, "components of each page, one monitor each")
	fs.IntVar(&c.coldPages, "cold-pages", 30, "pages besides the main one, each fetched once: the cold renders")
	fs.IntVar(&c.requests, "requests", 3000, "sequential GETs of the cached page measured, after as many again of warm-up")
	fs.IntVar(&c.clients, "clients", 8, "concurrent keep-alive clients of the throughput rounds")
	fs.DurationVar(&c.settle, "settle", 5*time.Second, "wait after the server starts (its first checks and jobs) before the cold renders")
	return func(ctx context.Context, e session.Env) error {
		if c.components > maxComponents {
			return fmt.Errorf("-components must be from 1 to %d (a page's limit)", maxComponents)
		}
		if err := session.AtLeast1("-components, -cold-pages, -requests, -clients and -rounds", c.components, c.coldPages, c.requests, c.clients, e.Rounds); err != nil {
			return err
		}
		title := fmt.Sprintf("Status pages: %d components, 90 days of history", c.components)
		return session.Measure(ctx, "pages", e, false, title, func(s *session.Session) session.Bench { return &bench{Session: s, c: c} })
	}
}

type result struct {
	engine         string
	fx             seed.Pages
	pageBytes      int
	cold           []time.Duration
	quiet, touched []time.Duration // a page read after a quiet spell: nothing changed; changed by another writer
	cached         []time.Duration // the main page from the cache, sorted
	bare, tocsin   []session.Outcome
	ratios         []float64
	peak           int64
}

func (b *bench) Engine(ctx context.Context, e string) error {
	r := &result{engine: e}
	b.results = append(b.results, r)
	dbURL, keys, target, err := seed.Fresh(ctx, b.Session, e)
	if err != nil {
		return err
	}
	b.Logf("%s: seeding %d monitors with their history, incidents and %d pages", e, b.c.components, b.c.coldPages+1)
	if r.fx, err = seed.StatusPages(ctx, dbURL, keys, target.URL, b.c.components, b.c.coldPages); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	srv, err := b.Serve(ctx, "tocsin-"+e, dbURL, "--status-page-rate-limit", "10000000")
	if err != nil {
		return err
	}
	// A cold render on a running server, not on one starting: its first
	// checks of the monitors and its jobs' first rounds done.
	if err := session.Sleep(ctx, b.c.settle); err != nil {
		return err
	}
	base := srv.Base + "/status/"
	rt := session.Transport(1)
	defer rt.CloseIdleConnections()
	if _, err := session.Sequential(ctx, rt, srv.Base+"/healthz", nil, 1, 0); err != nil {
		return err
	}
	// Each cold page read once: rendered cold; then after a quiet spell;
	// then after another, every page changed as another node's edit would.
	for i, to := range []*[]time.Duration{&r.cold, &r.quiet, &r.touched} {
		if i == 2 {
			db, err := seed.OpenRaw(dbURL)
			if err == nil {
				_, err = db.ExecContext(ctx, `UPDATE status_pages SET updated_at = updated_at + 1`)
				db.Close()
			}
			if err != nil {
				return err
			}
		}
		if err := session.Sleep(ctx, time.Duration(min(i, 1))*quietSpell); err != nil {
			return err
		}
		for _, slug := range r.fx.ColdSlugs {
			_, _, d, err := session.Fetch(ctx, rt, base+slug, nil)
			if err != nil {
				return err
			}
			*to = append(*to, d)
		}
		slices.Sort(*to)
	}
	b.Logf("%s: cold p99 %s; after a quiet spell p99 %s, with every page changed %s", e, session.P(r.cold, 0.99), session.P(r.quiet, 0.99), session.P(r.touched, 0.99))
	page := base + r.fx.MainSlug
	body, header, _, err := session.Fetch(ctx, rt, page, nil)
	if err != nil {
		return err
	}
	var names []string // the page the benchmark means to measure
	for i := range b.c.components {
		names = append(names, fmt.Sprintf("Service %02d", i+1))
	}
	if err := session.Shows(body, names...); err != nil {
		return err
	}
	r.pageBytes = len(body)
	if _, err := session.Sequential(ctx, rt, page, nil, b.c.requests, 0); err != nil { // warm-up
		return err
	}
	if r.cached, err = session.Sequential(ctx, rt, page, nil, b.c.requests, 0); err != nil {
		return err
	}

	bare, err := b.BareChild(ctx, "bare-"+e, header, body) // what Tocsin just answered
	if err != nil {
		return err
	}
	tr := session.Transport(b.c.clients)
	defer tr.CloseIdleConnections()
	closed := func(url string, pid int, db string) session.Outcome {
		next := func(int, int) *http.Request { return session.Get(url) }
		_, o := b.Phase(ctx, pid, db, func(d time.Duration) session.Outcome { return session.Closed(ctx, tr, b.c.clients, d, next, nil) })
		return o
	}
	for i := range b.Rounds {
		bo := closed(bare.Base+"/status/"+r.fx.MainSlug, bare.Pid(), "")
		to := closed(page, srv.Pid(), dbURL)
		r.bare, r.tocsin, r.ratios = append(r.bare, bo), append(r.tocsin, to), append(r.ratios, to.Rate()/bo.Rate())
		b.Logf("%s: round %d: bare %.0f req/s, tocsin %.0f req/s (%.2f), server CPU %s a request", e, i+1, bo.Rate(), to.Rate(),
			to.Rate()/bo.Rate(), session.Dur(to.PerOK(to.CPU.ServerTime)))
	}
	r.peak = session.PeakRSS(srv.Pid())
	return ctx.Err()
}

func (b *bench) Report(w *session.Report) {
	c, p := b.c, session.P
	w.Printf("Each engine's database: %d HTTP monitors with 100 days of state changes, public incidents with updates (one open), "+
		"a public maintenance window ahead, and %d public pages of every monitor in %d groups. Times from sending a GET to reading the "+
		"whole answer over keep-alive loopback. Cold: the first GET of each of %d pages. Quiet: each read once after %s in which nobody "+
		"read any page, with nothing changed and then with every page changed. Cache: %d sequential GETs after as many of warm-up. "+
		"Throughput: %d keep-alive clients in a closed loop, %s warm-up and %s measured, %d rounds of the bare handler and then Tocsin.\n",
		c.components, c.coldPages+1, seed.Groups, c.coldPages, quietSpell, c.requests, c.clients, b.Warmup, b.Duration, b.Rounds)
	w.Table("engine", "cold p50:", "cold p99:", "quiet p99:", "changed p99:", "page from cache p50:", "p99:", "page size:")
	for _, r := range b.results {
		w.Printf("| %s | %s | %s | %s | %s | %s | %s | %.0f KiB |\n", r.engine, p(r.cold, 0.5), p(r.cold, 0.99),
			p(r.quiet, 0.99), p(r.touched, 0.99), p(r.cached, 0.5), p(r.cached, 0.99), float64(r.pageBytes)/1024)
	}
	w.Table("engine", "bare req/s:", "tocsin req/s:", "tocsin / bare (per round)", "server CPU per request:", "bare's:", "PostgreSQL's:",
		"failed:", "other processes:", "peak RSS:")
	for _, r := range b.results {
		var cpu, bareCPU, pg, other []float64
		failed := 0
		for i, o := range r.tocsin {
			bo := r.bare[i]
			cpu, bareCPU = append(cpu, float64(o.PerOK(o.CPU.ServerTime))), append(bareCPU, float64(bo.PerOK(bo.CPU.ServerTime)))
			pg, other = append(pg, float64(o.PerOK(o.CPU.PostgresTime))), append(other, max(o.CPU.Other, bo.CPU.Other))
			failed += o.Failures() + bo.Failures()
		}
		w.Printf("| %s | %.0f | %.0f | **%.2f** (%s) | %s | %s | %s | %d | %.0f%% | %s |\n", r.engine, session.Median(session.Rates(r.bare)),
			session.Median(session.Rates(r.tocsin)), session.Median(r.ratios), session.Join(r.ratios, 2), session.MedianDur(cpu),
			session.MedianDur(bareCPU), session.MedianDur(pg), failed, session.Median(other), session.MiB(r.peak, 1))
	}
	w.Printf("\nMedians over the rounds; the ratio is the median of each round's Tocsin over the bare handler's round just before it. Other processes above 10%%: run again.\n\n## Verdicts\n\n")
	for _, r := range b.results {
		quiet := session.Percentile(r.quiet, 0.99) < coldP99 && len(r.touched) > 0 && session.Percentile(r.touched, 0.99) < coldP99
		w.Printf("- %s: cold p99 under %s: %s; after a quiet spell p99 under %s: %s; cache p99 under %s: %s.\n", r.engine,
			session.Dur(coldP99), session.Verdict(session.Percentile(r.cold, 0.99) < coldP99), session.Dur(coldP99), session.Verdict(quiet),
			session.Dur(cachedP99), session.Verdict(session.Percentile(r.cached, 0.99) < cachedP99))
	}
}
