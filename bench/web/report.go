package web

import (
	"fmt"
	"io"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
)

// The targets: the server's time for the pages, p99.
const (
	listP99 = 50 * time.Millisecond
	pageP99 = 100 * time.Millisecond
)

func report(w io.Writer, c config, m host.Machine, rs []*engineResult) {
	fmt.Fprintf(w, "# Web app: %d monitors, %d live streams\n\n", c.monitors, c.streams)
	fmt.Fprint(w, m)
	fmt.Fprintf(w, ".\n\nEach engine's database holds one workspace of %d HTTP monitors checked every %s, with %d days of state changes each "+
		"and their checks as the store holds them under the default retention (raw 30 days where the pages read raw rows, "+
		"hourly rollups 90 days, daily ones older), and one more monitor checked every %d s that the benchmark turns DOWN and UP. "+
		"The server runs every monitor's checks meanwhile. Times run from sending a GET, with the owner's session cookie, "+
		"to reading the whole answer over a keep-alive loopback connection: up to %d sequential GETs, or as many as %s allows, "+
		"after up to %d unmeasured ones; the bare handler answers the list's bytes and headers as Tocsin sent them.\n\n",
		c.monitors, c.interval, historyDays, liveInterval, c.requests, c.pageTime, c.warmup)

	fmt.Fprint(w, "## Server time\n\n")
	fmt.Fprint(w, "| engine | page | GETs | p50 | p90 | p99 | max | size | target |\n")
	fmt.Fprint(w, "|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | monitors list | %d | %s | %s | %s | %s | %.0f KiB | p99 under %s: %s |\n", r.engine, len(r.list),
			pct(r.list, 0.5), pct(r.list, 0.9), pct(r.list, 0.99), pct(r.list, 1), float64(r.listBytes)/1024,
			figure.Dur(listP99), figure.Verdict(figure.Percentile(r.list, 0.99) < listP99))
		fmt.Fprintf(w, "| %s | bare handler, the list's bytes | %d | %s | %s | %s | %s | %.0f KiB | – |\n", r.engine, len(r.bare),
			pct(r.bare, 0.5), pct(r.bare, 0.9), pct(r.bare, 0.99), pct(r.bare, 1), float64(r.listBytes)/1024)
		fmt.Fprintf(w, "| %s | list / bare | | %s | %s | %s | | | |\n", r.engine,
			ratio(r.list, r.bare, 0.5), ratio(r.list, r.bare, 0.9), ratio(r.list, r.bare, 0.99))
		if len(r.cold) > 0 {
			fmt.Fprintf(w, "| %s | monitors list, first view after a state change | %d | %s | %s | %s | %s | %.0f KiB | – |\n", r.engine, len(r.cold),
				pct(r.cold, 0.5), pct(r.cold, 0.9), pct(r.cold, 0.99), pct(r.cold, 1), float64(r.listBytes)/1024)
		}
		if len(r.stale) > 0 {
			fmt.Fprintf(w, "| %s | monitors list, first view with its figures a minute old | %d | %s | %s | %s | %s | %.0f KiB | – |\n", r.engine, len(r.stale),
				pct(r.stale, 0.5), pct(r.stale, 0.9), pct(r.stale, 0.99), pct(r.stale, 1), float64(r.listBytes)/1024)
		}
		fmt.Fprintf(w, "| %s | a monitor's page | %d | %s | %s | %s | %s | %.0f KiB | p99 under %s: %s |\n", r.engine, len(r.page),
			pct(r.page, 0.5), pct(r.page, 0.9), pct(r.page, 0.99), pct(r.page, 1), float64(r.pageBytes)/1024,
			figure.Dur(pageP99), figure.Verdict(figure.Percentile(r.page, 0.99) < pageP99))
	}

	fmt.Fprint(w, "\n## Live streams\n\n")
	fmt.Fprintf(w, "Idle for %s with no stream open, then with %d open (10 per viewer), no page requested; "+
		"CPU per second of wall time, resident memory at the window's end.\n\n", c.idle, c.streams)
	fmt.Fprint(w, "| engine | streams | server CPU/s | PostgreSQL CPU/s | server RSS | bare handler CPU/s | bare RSS | machine busy | other |\n")
	fmt.Fprint(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		for _, x := range []struct {
			n int
			w idleWindow
		}{{0, r.quiet}, {c.streams, r.open}} {
			pg := "–"
			if r.engine == "postgres" {
				pg = figure.Dur(perSecond(x.w.pg, x.w.elapsed))
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %.1f MiB | %s | %.1f MiB | %.0f%% | %.0f%% |\n", r.engine, x.n,
				figure.Dur(perSecond(x.w.server, x.w.elapsed)), pg, mib(x.w.rss),
				figure.Dur(perSecond(x.w.bare, x.w.elapsed)), mib(x.w.bareRSS), x.w.busy, x.w.other)
		}
	}
	fmt.Fprintf(w, "\nA state change reaching the streams, from its moment as the server recorded it (the event's `since`) "+
		"to the event read at each stream; %d changes (DOWN, UP, …) of the flipped monitor, with the live poll at its default:\n\n", c.changes)
	fmt.Fprint(w, "| engine | deliveries | p50 | p90 | max |\n")
	fmt.Fprint(w, "|---|---:|---:|---:|---:|\n")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s |\n", r.engine, len(r.latencies),
			pct(r.latencies, 0.5), pct(r.latencies, 0.9), pct(r.latencies, 1))
	}

	fmt.Fprint(w, "\nSeeding (not measured): ")
	for i, r := range rs {
		if i > 0 {
			fmt.Fprint(w, "; ")
		}
		fmt.Fprintf(w, "%s %s (%d state changes, %d checks, %d hourly and %d daily rollup rows, %d buckets rolled up by the job)",
			r.engine, figure.Dur(r.seed), r.fx.changes, r.fx.checks, r.fx.hourRows, r.fx.dayRows, r.fx.rollBuckets)
	}
	fmt.Fprint(w, ". Peak server RSS: ")
	for i, r := range rs {
		if i > 0 {
			fmt.Fprint(w, ", ")
		}
		fmt.Fprintf(w, "%s %.1f MiB", r.engine, mib(r.peak))
	}
	fmt.Fprint(w, ".\n")
}

func pct(sorted []time.Duration, q float64) string { return figure.Dur(figure.Percentile(sorted, q)) }

// ratio is Tocsin's quantile over the bare handler's.
func ratio(tocsin, bare []time.Duration, q float64) string {
	b := figure.Percentile(bare, q)
	if b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f×", float64(figure.Percentile(tocsin, q))/float64(b))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
