package api

import (
	"context"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/bench/internal/pgfresh"
)

func machineInfo(b *bench) host.Machine {
	m := host.Describe()
	m.Tocsin = b.Bin.Rev
	if b.pg {
		m.Postgres = pgfresh.ServerVersion(context.Background(), b.c.pgURL)
	}
	return m
}

func sortedLatencies(l []time.Duration) []time.Duration {
	return slices.Sorted(slices.Values(l))
}

// fmtDur prints a latency in milliseconds, with precision that suits it.
func fmtDur(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 1:
		return fmt.Sprintf("%.3f ms", ms)
	case ms < 100:
		return fmt.Sprintf("%.2f ms", ms)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

// disturbance is the share of the machine, in percent, that other
// processes may use before a round counts as disturbed.
const disturbance = 10.0

func fmtMicros(d time.Duration) string {
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

// row is a target's results over all rounds.
type row struct {
	name          string
	rates         []float64
	median        float64
	p50, p99      time.Duration
	requests, err int
	statuses      map[string]int
	exhausted     bool
	disturbed     int      // rounds during which other processes used > 10% of the machine
	cpu           cpuShare // median of the rounds, field by field
	// CPU time per request of the server and of PostgreSQL, median of the rounds
	serverPerReq, pgPerReq time.Duration
}

// perRequest converts a share of the machine during a phase into CPU time
// per request.
func perRequest(share float64, p phase) time.Duration {
	n := p.ok + p.errors
	if n == 0 {
		return 0
	}
	cpuTime := share / 100 * float64(runtime.NumCPU()) * float64(p.elapsed)
	return time.Duration(cpuTime / float64(n))
}

func summarize(t *target) row {
	r := row{name: t.name, statuses: map[string]int{}}
	var all []time.Duration
	for _, p := range t.phases {
		r.rates = append(r.rates, p.rate())
		all = append(all, p.latencies...)
		r.requests += p.ok + p.errors
		r.err += p.errors
		r.exhausted = r.exhausted || p.exhausted
		if p.cpu.other > disturbance {
			r.disturbed++
		}
		for k, v := range p.statuses {
			r.statuses[k] += v
		}
	}
	r.median = figure.Median(r.rates)
	var srv, pg []float64
	for _, p := range t.phases {
		srv = append(srv, float64(perRequest(p.cpu.server, p)))
		pg = append(pg, float64(perRequest(p.cpu.pg, p)))
	}
	r.serverPerReq, r.pgPerReq = time.Duration(figure.Median(srv)), time.Duration(figure.Median(pg))
	field := func(f func(cpuShare) float64) float64 {
		xs := make([]float64, len(t.phases))
		for i, p := range t.phases {
			xs[i] = f(p.cpu)
		}
		return figure.Median(xs)
	}
	r.cpu = cpuShare{
		busy:   field(func(c cpuShare) float64 { return c.busy }),
		self:   field(func(c cpuShare) float64 { return c.self }),
		server: field(func(c cpuShare) float64 { return c.server }),
		pg:     field(func(c cpuShare) float64 { return c.pg }),
		other:  field(func(c cpuShare) float64 { return c.other }),
	}
	slices.Sort(all)
	r.p50, r.p99 = figure.Percentile(all, 0.50), figure.Percentile(all, 0.99)
	return r
}

func report(w io.Writer, c config, m host.Machine, targets []*target) {
	fmt.Fprintf(w, "Machine: %s CPUs, %s; Linux %s; %s\n", m.CPUs, m.CPUModel, m.Kernel, m.GoVersion)
	if m.Postgres != "" {
		fmt.Fprintf(w, "PostgreSQL: %s, on the same machine\n", m.Postgres)
	}
	if m.Tocsin != "" {
		fmt.Fprintf(w, "tocsin: %s\n", m.Tocsin)
	}
	fmt.Fprintf(w, "Date: %s\n", m.Date)
	fmt.Fprintf(w, "Load: %d keep-alive clients, closed loop, %s per round after a %s warm-up, %d rounds interleaved; tocsin --rate-limit %d\n\n",
		c.concurrency, c.duration, c.warmup, c.rounds, c.rateLimit)

	rows := make([]row, len(targets))
	var bare *row
	for i, t := range targets {
		rows[i] = summarize(t)
		if t.name == "bare" {
			bare = &rows[i]
		}
	}
	fmt.Fprintln(w, "| target | rounds | median req/s | req/s per round | p50 | p99 | vs bare | vs bare, paired by round | errors |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		ratio, paired := "–", "–"
		if bare != nil && bare.median > 0 {
			ratio = fmt.Sprintf("%.2f", r.median/bare.median)
			// Round i of every target runs in the same pass as bare's
			// round i; the median of the per-round ratios resists the
			// machine's speed drifting from one pass to the next.
			var rs []float64
			for i := range min(len(r.rates), len(bare.rates)) {
				rs = append(rs, r.rates[i]/bare.rates[i])
			}
			paired = fmt.Sprintf("%.2f", figure.Median(rs))
		}
		per := make([]string, len(r.rates))
		for i, x := range r.rates {
			per[i] = fmt.Sprintf("%.0f", x)
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %s | %s | %s | %s | %s | %d |\n", r.name, len(r.rates), r.median,
			strings.Join(per, ", "), fmtDur(r.p50), fmtDur(r.p99), ratio, paired, r.err)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "CPU use while measuring, in % of the whole machine (median of the rounds):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | machine busy | apibench (load) | server | postgres | other processes | server CPU per request | postgres CPU per request |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	noisy := false
	for _, r := range rows {
		pg := "–"
		if r.pgPerReq > time.Microsecond {
			pg = fmtMicros(r.pgPerReq)
		}
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %s | %s |\n", r.name, r.cpu.busy, r.cpu.self, r.cpu.server, r.cpu.pg,
			r.cpu.other, fmtMicros(r.serverPerReq), pg)
		noisy = noisy || r.disturbed > 0
	}
	fmt.Fprintln(w)
	if noisy {
		fmt.Fprintf(w, "WARNING: other processes used more than %.0f%% of the machine during some rounds (listed below); the medians resist one such round, not more.\n", disturbance)
		fmt.Fprintln(w)
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s: %d requests, %d errors", r.name, r.requests, r.err)
		for _, k := range slices.Sorted(maps.Keys(r.statuses)) {
			fmt.Fprintf(w, "; %s ×%d", k, r.statuses[k])
		}
		if r.disturbed > 0 {
			fmt.Fprintf(w, "; %d of %d rounds disturbed by other processes", r.disturbed, len(r.rates))
		}
		if r.exhausted {
			fmt.Fprint(w, "; WARNING: a round ran out of workspace quota early")
		}
		fmt.Fprintln(w)
	}
}
