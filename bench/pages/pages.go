// Package pages measures how fast Tocsin serves a public status page of
// -components components with 90 days of history: the server's time for
// a page rendered from the database (cold), after a quiet spell, and from
// its cache, and the requests a second it holds next to a bare net/http
// handler serving the same bytes in the same run.
//
// Each engine's database is filled by the seeding package with months of
// history: monitors of a loopback target with 100 days of state changes,
// public incidents with updates (one open), a public maintenance window
// ahead, the main page of every monitor in 5 groups and -cold-pages more
// like it. `tocsin serve` starts on it with a status page budget no
// benchmark reaches and runs for -settle; then, over keep-alive loopback
// connections: the first GET of each other page (a miss of the server's
// cache); each read again after a quiet spell with nothing changed, and
// after another with every page touched in the database as another
// node's edit would; -requests sequential GETs of the main page, its
// summary.json and a badge; and -rounds rounds of -clients clients in a
// closed loop on the bare handler (this binary with -bare-serve) and then
// on Tocsin.
package pages

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
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
	quietSpell = 6 * time.Second
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
	fs.IntVar(&c.requests, "requests", 3000, "sequential GETs of each cached URL measured, after as many again of warm-up")
	fs.IntVar(&c.clients, "clients", 8, "concurrent keep-alive clients of the throughput rounds")
	fs.DurationVar(&c.settle, "settle", 5*time.Second, "wait after the server starts (its first checks and jobs) before the cold renders")
	return session.BarePage(fs, func(ctx context.Context, e session.Env) error {
		switch {
		case c.components < 1 || c.components > 100:
			return errors.New("-components must be from 1 to 100 (a page's limit)")
		case c.coldPages < 1 || c.requests < 1 || c.clients < 1 || e.Rounds < 1:
			return errors.New("-cold-pages, -requests, -clients and -rounds must be at least 1")
		}
		return session.Measure(ctx, "pages", e, false, fmt.Sprintf("Status pages: %d components, 90 days of history", c.components), func(s *session.Session) (func(io.Writer), error) {
			target, err := seed.StartTarget()
			if err != nil {
				return nil, err
			}
			defer target.Close()
			b := &bench{Session: s, c: c}
			b.results, err = session.PerEngine(s, func(e string) (*result, error) {
				return b.engine(ctx, e, target.URL)
			})
			return b.report, err
		})
	})
}

type result struct {
	engine         string
	fx             seed.Pages
	pageBytes      int
	cold           []time.Duration
	quiet, touched []time.Duration            // a page read after a quiet spell: nothing changed; changed by another writer
	cached         map[string][]time.Duration // page, summary.json, badge; sorted
	bare, tocsin   []session.Outcome
	ratios         []float64
	peak           int64
}

var cachedURLs = []string{"page", "summary.json", "badge"}

func (b *bench) engine(ctx context.Context, e, target string) (*result, error) {
	r := &result{engine: e, cached: map[string][]time.Duration{}}
	dbURL, keys, err := b.FreshDB(ctx, e)
	if err != nil {
		return nil, err
	}
	b.Logf("%s: seeding %d monitors with their history, incidents and %d pages", e, b.c.components, b.c.coldPages+1)
	if r.fx, err = seed.StatusPages(ctx, dbURL, keys, target, b.c.components, b.c.coldPages); err != nil {
		return nil, fmt.Errorf("seeding: %w", err)
	}
	srv, err := b.Serve(ctx, "tocsin-"+e, dbURL, "--status-page-rate-limit", "10000000")
	if err != nil {
		return nil, err
	}
	// A cold render on a running server, not on one starting: its first
	// checks of the monitors and its jobs' first rounds done.
	if err := session.Sleep(ctx, b.c.settle); err != nil {
		return nil, err
	}
	base := srv.Base + "/status/"
	rt := session.Transport(1)
	defer rt.CloseIdleConnections()
	if _, err := session.Sequential(ctx, rt, srv.Base+"/healthz", nil, 1); err != nil {
		return nil, err
	}
	readAll := func() ([]time.Duration, error) {
		var out []time.Duration
		for _, slug := range r.fx.ColdSlugs {
			lat, err := session.Sequential(ctx, rt, base+slug, nil, 1)
			if err != nil {
				return nil, err
			}
			out = append(out, lat...)
		}
		slices.Sort(out)
		return out, nil
	}
	if r.cold, err = readAll(); err != nil {
		return nil, fmt.Errorf("cold render: %w", err)
	}
	if err := session.Sleep(ctx, quietSpell); err != nil {
		return nil, err
	}
	if r.quiet, err = readAll(); err != nil {
		return nil, err
	}
	if err := touchPages(ctx, dbURL); err != nil {
		return nil, err
	}
	if err := session.Sleep(ctx, quietSpell); err != nil {
		return nil, err
	}
	if r.touched, err = readAll(); err != nil {
		return nil, err
	}
	b.Logf("%s: cold p99 %s; after a quiet spell p99 %s, with every page changed %s", e,
		session.Dur(session.Percentile(r.cold, 0.99)), session.Dur(session.Percentile(r.quiet, 0.99)), session.Dur(session.Percentile(r.touched, 0.99)))

	page := base + r.fx.MainSlug
	body, header, _, err := session.Fetch(ctx, rt, page, nil)
	if err != nil {
		return nil, err
	}
	for i := range b.c.components { // the page the benchmark means to measure
		if name := fmt.Sprintf("Service %02d", i+1); !bytes.Contains(body, []byte(name)) {
			return nil, fmt.Errorf("the page does not show %q", name)
		}
	}
	r.pageBytes = len(body)
	urls := map[string]string{"page": page, "summary.json": page + "/summary.json", "badge": page + "/badge/" + r.fx.ComponentID + ".svg"}
	for _, what := range cachedURLs {
		if _, err := session.Sequential(ctx, rt, urls[what], nil, b.c.requests); err != nil { // warm-up
			return nil, err
		}
		if r.cached[what], err = session.Sequential(ctx, rt, urls[what], nil, b.c.requests); err != nil {
			return nil, err
		}
	}

	bare, err := b.BareChild(ctx, "bare-"+e, header, body) // what Tocsin just answered
	if err != nil {
		return nil, err
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
	return r, ctx.Err()
}

// touchPages changes every page's configuration in the database, as
// another node's edit would.
func touchPages(ctx context.Context, dbURL string) error {
	db, err := seed.OpenRaw(dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `UPDATE status_pages SET updated_at = updated_at + 1`)
	return err
}

func (b *bench) report(w io.Writer) {
	c := b.c
	fmt.Fprintf(w, "Each engine's database: %d HTTP monitors with 100 days of state changes, public incidents with updates (one open), "+
		"a public maintenance window ahead, and %d public pages of every monitor in %d groups. Times from sending a GET to reading the "+
		"whole answer over keep-alive loopback. Cold: the first GET of each of %d pages. Quiet: each read once after %s in which nobody "+
		"read any page, with nothing changed and then with every page changed. Cache: %d sequential GETs after as many of warm-up. "+
		"Throughput: %d keep-alive clients in a closed loop, %s warm-up and %s measured, %d rounds of the bare handler and then Tocsin.\n\n",
		c.components, c.coldPages+1, seed.Groups, c.coldPages, quietSpell, c.requests, c.clients, b.Warmup, b.Duration, b.Rounds)
	p := func(xs []time.Duration, q float64) string { return session.Dur(session.Percentile(xs, q)) }
	fmt.Fprint(w, "| engine | cold p50 | cold p99 | quiet p99 | changed p99 | page from cache p50 | p99 | summary.json p99 | badge p99 | page size |\n")
	fmt.Fprint(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range b.results {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f KiB |\n", r.engine, p(r.cold, 0.5), p(r.cold, 0.99),
			p(r.quiet, 0.99), p(r.touched, 0.99), p(r.cached["page"], 0.5), p(r.cached["page"], 0.99),
			p(r.cached["summary.json"], 0.99), p(r.cached["badge"], 0.99), float64(r.pageBytes)/1024)
	}
	fmt.Fprint(w, "\n| engine | bare req/s | tocsin req/s | tocsin / bare (per round) | server CPU per request | bare's | PostgreSQL's | failed | other processes | peak RSS |\n")
	fmt.Fprint(w, "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range b.results {
		var bare, tocsin, cpu, bareCPU, pg, other []float64
		var per []string
		failed := 0
		for i, o := range r.tocsin {
			bo := r.bare[i]
			bare, tocsin, per = append(bare, bo.Rate()), append(tocsin, o.Rate()), append(per, fmt.Sprintf("%.2f", r.ratios[i]))
			cpu, bareCPU = append(cpu, float64(o.PerOK(o.CPU.ServerTime))), append(bareCPU, float64(bo.PerOK(bo.CPU.ServerTime)))
			pg, other = append(pg, float64(o.PerOK(o.CPU.PostgresTime))), append(other, max(o.CPU.Other, bo.CPU.Other))
			failed += o.Failures() + bo.Failures()
		}
		fmt.Fprintf(w, "| %s | %.0f | %.0f | **%.2f** (%s) | %s | %s | %s | %d | %.0f%% | %.1f MiB |\n", r.engine, session.Median(bare),
			session.Median(tocsin), session.Median(r.ratios), strings.Join(per, ", "), session.Dur(time.Duration(session.Median(cpu))),
			session.Dur(time.Duration(session.Median(bareCPU))), session.Dur(time.Duration(session.Median(pg))), failed, session.Median(other), float64(r.peak)/(1<<20))
	}
	fmt.Fprint(w, "\nMedians over the rounds; the ratio is the median of each round's Tocsin over the bare handler's round just before it. Other processes above 10%: run again.\n")
	fmt.Fprint(w, "\n## Verdicts\n\n")
	for _, r := range b.results {
		quiet := session.Percentile(r.quiet, 0.99) < coldP99 && len(r.touched) > 0 && session.Percentile(r.touched, 0.99) < coldP99
		fmt.Fprintf(w, "- %s: cold p99 under %s: %s; after a quiet spell p99 under %s: %s; cache p99 under %s: %s.\n", r.engine,
			session.Dur(coldP99), session.Verdict(session.Percentile(r.cold, 0.99) < coldP99), session.Dur(coldP99), session.Verdict(quiet),
			session.Dur(cachedP99), session.Verdict(session.Percentile(r.cached["page"], 0.99) < cachedP99))
	}
}
