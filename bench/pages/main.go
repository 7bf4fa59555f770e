// Package pages measures how fast Tocsin serves a public status page
// of 50 components with 90 days of history, on SQLite and on PostgreSQL:
// the server's time for a page rendered from the database (cold) and from
// its cache, and the requests a second it holds next to a bare net/http
// handler serving the same bytes in the same run.
//
//	go run ./bench pages -out /tmp/pages.md
//
// For each engine, a fresh database is filled through the store and the
// app as the server would have written it over the months before:
// -components HTTP monitors (aimed at a loopback target of the benchmark
// that answers 200) with 100 days of state changes each (spans of DOWN,
// DEGRADED, MAINTENANCE and UNKNOWN about every two days), public
// incidents with their updates (one still open), a public maintenance
// window ahead, and, through the status page use case, the main page of
// every monitor in 5 groups and -cold-pages more like it. Then `tocsin
// serve` (built from this checkout, or the binary -tocsin names) starts on
// it with --status-page-rate-limit 10000000, runs for -settle (its first
// checks of the monitors and its jobs' first rounds), and over keep-alive
// loopback connections the benchmark measures:
//
//   - cold renders: the first GET of each of the other pages, each a miss
//     of the server's cache that reads the database and renders;
//   - a reader after a quiet spell: each of those pages read once after
//     6 s in which nobody read any (longer than the 5 s a page may be
//     served behind the database), first with nothing changed, then with
//     every page's configuration touched in the database as another
//     node's edit would;
//   - from the cache: -requests sequential GETs each of the main page, its
//     summary.json and one component's badge, after a warm-up;
//   - throughput: -rounds rounds, each of the bare handler (this binary
//     re-executed with -bare-serve, answering the page's bytes and headers
//     as Tocsin sent them) and then Tocsin's /status/{slug}: -clients
//     keep-alive clients in a closed loop for -warmup and then the
//     measured -duration, with the CPU each server used.
//
// Results and how to read them: docs/benchmarks.md, "Status pages".
package pages

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
	engines    []string
	pgURL      string
	components int
	coldPages  int
	requests   int
	clients    int
	duration   time.Duration
	warmup     time.Duration
	settle     time.Duration
	rounds     int
	out        string
	keep       bool
	tocsin     string // the binary; "": build ./cmd/tocsin
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var (
		c         config
		bareServe bool
		barePage  string
	)
	fs.IntVar(&c.components, "components", 50, "components of each page, one monitor each")
	fs.IntVar(&c.coldPages, "cold-pages", 30, "pages besides the main one, each fetched once: the cold renders")
	fs.IntVar(&c.requests, "requests", 3000, "sequential GETs of each cached URL measured, after as many again of warm-up")
	fs.IntVar(&c.clients, "clients", 8, "concurrent keep-alive clients of the throughput rounds")
	fs.DurationVar(&c.settle, "settle", 5*time.Second, "wait after the server starts (its first checks and jobs) before the cold renders")
	fs.BoolVar(&bareServe, "bare-serve", false, "internal: serve the bare handler")
	fs.StringVar(&barePage, "bare-page", "", "internal: the page the bare handler serves")
	return func(ctx context.Context, e session.Env) error {
		if bareServe {
			return load.ServeBare(ctx, barePage, e.Stdin, e.Stdout)
		}
		c.engines, c.pgURL, c.duration, c.warmup, c.rounds, c.out, c.keep, c.tocsin = e.Engines, e.PGURL, e.Duration, e.Warmup, e.Rounds, e.Out, e.Keep, e.Tocsin
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
	case c.components < 1 || c.components > 100:
		return errors.New("-components must be from 1 to 100 (a page's limit)")
	case c.coldPages < 1 || c.requests < 1 || c.clients < 1 || c.rounds < 1:
		return errors.New("-cold-pages, -requests, -clients and -rounds must be at least 1")
	case c.duration <= 0 || c.warmup < 0 || c.settle < 0:
		return errors.New("-duration must be positive, -warmup and -settle not negative")
	}
	return nil
}
