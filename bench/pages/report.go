package pages

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/internal/app"
)

// The targets: the server's time for the page, p99.
const (
	cachedP99 = 50 * time.Millisecond
	coldP99   = 300 * time.Millisecond
	// noisyOther is the share of the machine other processes may use in a
	// round before the report flags it.
	noisyOther = 10.0
)

// throughput is an engine's rounds summed up.
type throughput struct {
	bare, tocsin float64   // medians of the rounds' requests/s
	ratio        float64   // median of the rounds' tocsin/bare
	ratios       []float64 // by round
	cpu          time.Duration
	bareCPU      time.Duration
	pgCPU        time.Duration // PostgreSQL's per tocsin request
	busy, other  float64       // tocsin rounds' means, %
	self         float64       // the load generator's, %
	steal        float64
	failed       int
	noisy        []int // rounds in which other processes used more than noisyOther
}

func summarize(r *engineResult) throughput {
	var (
		t                     throughput
		bares, tocsins        []float64
		cpus, bareCPUs, pgCPU []float64
	)
	for i, tr := range r.tocsin {
		tocsins = append(tocsins, tr.rate())
		cpus = append(cpus, float64(tr.perRequest()))
		if tr.ok > 0 {
			pgCPU = append(pgCPU, float64(tr.cpu.PostgresTime/time.Duration(tr.ok)))
		}
		t.busy += tr.cpu.Busy / float64(len(r.tocsin))
		t.other += tr.cpu.Other / float64(len(r.tocsin))
		t.self += tr.cpu.Self / float64(len(r.tocsin))
		t.steal += tr.cpu.Steal / float64(len(r.tocsin))
		t.failed += tr.failed
		noisy := tr.cpu.Other > noisyOther
		if i < len(r.bare) {
			br := r.bare[i]
			bares = append(bares, br.rate())
			bareCPUs = append(bareCPUs, float64(br.perRequest()))
			t.failed += br.failed
			noisy = noisy || br.cpu.Other > noisyOther
			if br.rate() > 0 {
				t.ratios = append(t.ratios, tr.rate()/br.rate())
			}
		}
		if noisy {
			t.noisy = append(t.noisy, tr.n)
		}
	}
	t.bare, t.tocsin, t.ratio = figure.Median(bares), figure.Median(tocsins), figure.Median(t.ratios)
	t.cpu, t.bareCPU = time.Duration(figure.Median(cpus)), time.Duration(figure.Median(bareCPUs))
	t.pgCPU = time.Duration(figure.Median(pgCPU))
	return t
}

func report(w io.Writer, c config, m host.Machine, rs []*engineResult) {
	fmt.Fprintf(w, "# Status pages: %d components, %d days of history\n\n", c.components, app.DefaultStatusPageUptimeDays)
	fmt.Fprint(w, m)
	fmt.Fprintf(w, ".\n\nEach engine's database holds %d HTTP monitors with %d days of state changes each, public incidents "+
		"with updates (one open), a public maintenance window ahead, and %d public pages of every monitor in %d groups "+
		"with the default 90-day bars. Times run from sending a GET to reading the whole answer over a keep-alive loopback connection. "+
		"Cold: the first GET of each of %d pages, a miss of the server's cache that reads the database and renders. "+
		"Cache: %d sequential GETs after as many of warm-up. Throughput: %d keep-alive clients in a closed loop, "+
		"%s warm-up and %s measured per server, %d rounds of the bare handler and then Tocsin; "+
		"the bare handler answers the page's bytes and headers as Tocsin sent them.\n\n",
		c.components, historyDays, c.coldPages+1, groups, c.coldPages, c.requests, c.clients, c.warmup, c.duration, c.rounds)

	fmt.Fprint(w, "## Server time\n\n")
	fmt.Fprint(w, "| engine | cold p50 | cold p99 | page from cache p50 | p99 | summary.json p50 | p99 | badge p50 | p99 | page size | verdicts |\n")
	fmt.Fprint(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rs {
		coldMet := figure.Percentile(r.cold, 0.99) < coldP99
		cacheMet := figure.Percentile(r.cached["page"], 0.99) < cachedP99
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f KiB | cold p99 under %s: %s; cache p99 under %s: %s |\n",
			r.engine, pct(r.cold, 0.5), pct(r.cold, 0.99),
			pct(r.cached["page"], 0.5), pct(r.cached["page"], 0.99),
			pct(r.cached["summary.json"], 0.5), pct(r.cached["summary.json"], 0.99),
			pct(r.cached["badge"], 0.5), pct(r.cached["badge"], 0.99),
			float64(r.pageBytes)/1024, figure.Dur(coldP99), figure.Verdict(coldMet), figure.Dur(cachedP99), figure.Verdict(cacheMet))
	}
	fmt.Fprintf(w, "\nWith %d cold renders, p99 is the slowest of them.\n\n", c.coldPages)

	fmt.Fprint(w, "## A reader after a quiet spell\n\n")
	fmt.Fprintf(w, "Each of the %d other pages read once after %s in which nobody read any page: first with nothing changed "+
		"(the reader waits for the page's stamp), then after every page's configuration was touched in the database, as "+
		"another node's edit would (the reader waits for a new render).\n\n", c.coldPages, quietSpell)
	fmt.Fprint(w, "| engine | nothing changed p50 | p99 | page changed p50 | p99 | verdict |\n")
	fmt.Fprint(w, "|---|---:|---:|---:|---:|---|\n")
	for _, r := range rs {
		met := len(r.touched) > 0 && figure.Percentile(r.touched, 0.99) < coldP99 && figure.Percentile(r.quiet, 0.99) < coldP99
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | p99 under %s: %s |\n", r.engine, pct(r.quiet, 0.5), pct(r.quiet, 0.99),
			pct(r.touched, 0.5), pct(r.touched, 0.99), figure.Dur(coldP99), figure.Verdict(met))
	}
	fmt.Fprint(w, "\n")

	fmt.Fprint(w, "## Throughput\n\n")
	fmt.Fprint(w, "| engine | bare req/s | tocsin req/s | tocsin / bare (per round) | server CPU per request | bare's | CPU vs bare | PostgreSQL's | machine busy | load generator | other | steal | failed | peak RSS |\n")
	fmt.Fprint(w, "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var noisy []string
	for _, r := range rs {
		t := summarize(r)
		per := make([]string, len(t.ratios))
		for i, x := range t.ratios {
			per[i] = fmt.Sprintf("%.2f", x)
		}
		pg := "–"
		if r.engine == "postgres" {
			pg = figure.Dur(t.pgCPU)
		}
		cpuRatio := "–"
		if t.bareCPU > 0 {
			cpuRatio = fmt.Sprintf("%.2f×", float64(t.cpu)/float64(t.bareCPU))
		}
		fmt.Fprintf(w, "| %s | %s | %s | **%.2f** (%s) | %s | %s | %s | %s | %.0f%% | %.0f%% | %.0f%% | %.0f%% | %d | %.1f MiB |\n",
			r.engine, thousands(t.bare), thousands(t.tocsin), t.ratio, strings.Join(per, ", "),
			figure.Dur(t.cpu), figure.Dur(t.bareCPU), cpuRatio, pg, t.busy, t.self, t.other, t.steal, t.failed, float64(r.peak)/(1<<20))
		for _, n := range t.noisy {
			noisy = append(noisy, fmt.Sprintf("%s round %d", r.engine, n))
		}
	}
	fmt.Fprint(w, "\nMedians over the rounds; the ratio is the median of each round's Tocsin over the bare handler's "+
		"round just before it; CPU vs bare, the medians of the server's CPU per request. Machine busy, load generator (this process), other and steal are the Tocsin rounds' means, in percent of all CPUs.")
	if len(noisy) > 0 {
		fmt.Fprintf(w, " **Noisy:** other processes used more than %.0f%% of the machine in %s; run it again.", noisyOther, strings.Join(noisy, ", "))
	}
	fmt.Fprint(w, "\n\nSeeding (not measured): ")
	for i, r := range rs {
		if i > 0 {
			fmt.Fprint(w, "; ")
		}
		fmt.Fprintf(w, "%s %s (%d state changes, %d public incidents)", r.engine, figure.Dur(r.seed), r.changes, r.incidents)
	}
	fmt.Fprint(w, ".\n")
}

func pct(sorted []time.Duration, q float64) string { return figure.Dur(figure.Percentile(sorted, q)) }

// thousands prints a rate with separators: 12,345.
func thousands(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
