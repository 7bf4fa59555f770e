package deliveries

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/bench/internal/pgfresh"
	"github.com/tocsin/tocsin/internal/notify"
)

// latencyTarget is the product's target: a monitor's DOWN reaches its
// webhook within this, at the 99th percentile, after the confirming check.
const latencyTarget = 2 * time.Second

func (b *bench) machine(ctx context.Context) host.Machine {
	m := host.Describe()
	m.Tocsin = b.Bin.Rev
	if slices.Contains(b.c.engines, "postgres") {
		m.Postgres = pgfresh.ServerVersion(ctx, b.c.pgURL)
	}
	return m
}

// summary is one target's throughput over every round.
type summary struct {
	rounds                     []*throughput
	rate                       float64 // median deliveries/s
	elapsed, setup, created    time.Duration
	delivered, dups, bad, held int
	conns                      int
	bytes                      int64
	cpu                        cpuShare // shares averaged over the rounds, times summed
	perSender, perRecv, perPG  time.Duration
	failed                     map[string]int
}

func summarize(ts []*throughput) summary {
	s := summary{rounds: ts, failed: map[string]int{}}
	var rates, elapsed, setup, created []float64
	for _, t := range ts {
		rates = append(rates, t.rate())
		elapsed = append(elapsed, float64(t.elapsed))
		setup = append(setup, float64(t.setup))
		created = append(created, float64(t.created))
		s.delivered += t.recv.Unique
		s.dups += t.recv.Duplicates
		s.bad += t.recv.BadSignatures + t.recv.Refused
		s.conns += t.recv.Conns
		s.bytes += t.recv.Bytes
		s.held += t.store[notify.Held]
		for k, v := range t.failed {
			s.failed[k] += v
		}
		c := t.cpu
		s.cpu.Busy += c.Busy
		s.cpu.Sender += c.Sender
		s.cpu.Receiver += c.Receiver
		s.cpu.Postgres += c.Postgres
		s.cpu.IRQ += c.IRQ
		s.cpu.Other += c.Other
		s.cpu.Steal += c.Steal
		s.cpu.SenderTime += c.SenderTime
		s.cpu.ReceiverTime += c.ReceiverTime
		s.cpu.PostgresTime += c.PostgresTime
	}
	if n := float64(len(ts)); n > 0 {
		s.cpu.Busy, s.cpu.Sender, s.cpu.Receiver = s.cpu.Busy/n, s.cpu.Sender/n, s.cpu.Receiver/n
		s.cpu.Postgres, s.cpu.IRQ, s.cpu.Other, s.cpu.Steal = s.cpu.Postgres/n, s.cpu.IRQ/n, s.cpu.Other/n, s.cpu.Steal/n
	}
	s.rate = figure.Median(rates)
	s.elapsed, s.setup, s.created = time.Duration(figure.Median(elapsed)), time.Duration(figure.Median(setup)), time.Duration(figure.Median(created))
	if s.delivered > 0 {
		d := time.Duration(s.delivered)
		s.perSender, s.perRecv, s.perPG = s.cpu.SenderTime/d, s.cpu.ReceiverTime/d, s.cpu.PostgresTime/d
	}
	return s
}

func report(w io.Writer, c config, m host.Machine, res *results) {
	fmt.Fprintf(w, "# Deliveries: %d events to %d webhook channels", c.deliveries, c.channels)
	if c.monitors > 0 {
		fmt.Fprintf(w, "; %d monitors going DOWN", c.monitors)
	}
	fmt.Fprintf(w, "\n\n%s.\n\n", m)
	throughputReport(w, c, res)
	if len(res.latency) > 0 {
		latencyReport(w, c, res)
	}
	targetsReport(w, res)
}

func throughputReport(w io.Writer, c config, res *results) {
	bound := notify.RateBound(notify.Webhook)
	fmt.Fprintf(w, "Throughput: per target and round, %d incident.opened deliveries spread over %d webhook channels, each in a "+
		"workspace of its own (a webhook channel takes %d events a minute and holds the rest back for a summary), to the "+
		"receiver: a child process that verifies every signature with its channel's secret, handles each X-Service-Delivery "+
		"once and answers 204. On an engine the incidents are written first (one transaction each through the app, 8 at a "+
		"time) with no server running; then `tocsin serve` starts (its notifier has 32 deliveries in flight) and the clock "+
		"runs from the first attempt the store records until the receiver has handled every delivery and the store holds none "+
		"pending. Bare: this process POSTs as many signed bodies of the same size over keep-alive connections, %d in flight, "+
		"with no database. %d round(s), the targets in a rotating order starting with %s, each engine round on a fresh database.\n\n",
		c.deliveries, c.channels, bound, c.concurrency, c.rounds, strings.Join(res.targets, ", "))

	byTarget := map[string][]*throughput{}
	for _, t := range res.throughput {
		byTarget[t.target] = append(byTarget[t.target], t)
	}
	for _, ts := range byTarget {
		slices.SortFunc(ts, func(a, b *throughput) int { return cmp.Compare(a.round, b.round) })
	}
	sums := map[string]summary{}
	for name, ts := range byTarget {
		sums[name] = summarize(ts)
	}
	bare, hasBare := sums["bare"]

	fmt.Fprint(w, "## Deliveries per second\n\n")
	fmt.Fprint(w, "| target | deliveries/s | vs bare | per round (vs bare) | all delivered in | delivered | duplicates | "+
		"bad signatures | held | body | connections opened | incidents written in | CPU per delivery: sender | receiver | "+
		"PostgreSQL | machine busy | sender | receiver | PostgreSQL | interrupts | other | steal |\n")
	fmt.Fprint(w, "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, name := range res.targets {
		s, ok := sums[name]
		if !ok {
			continue
		}
		ratio := "–"
		if hasBare && bare.rate > 0 {
			ratio = fmt.Sprintf("%.2f", s.rate/bare.rate)
			if name != "bare" {
				ratio = "**" + ratio + "**"
			}
		}
		var rounds []string
		for _, t := range s.rounds {
			r := fmt.Sprintf("%.0f", t.rate())
			if name != "bare" && hasBare {
				if bt := roundOf(bare.rounds, t.round); bt != nil && bt.rate() > 0 {
					r += fmt.Sprintf(" (%.2f)", t.rate()/bt.rate())
				}
			}
			rounds = append(rounds, r)
		}
		body := "–"
		if s.delivered > 0 {
			body = fmt.Sprintf("%d B", s.bytes/int64(s.delivered))
		}
		created, pg, pgShare := "–", "–", "–"
		if name != "bare" {
			created = figure.Dur(s.created)
		}
		if name == "postgres" {
			pg, pgShare = figure.Dur(s.perPG), fmt.Sprintf("%.0f%%", s.cpu.Postgres)
		}
		fmt.Fprintf(w, "| %s | **%.0f** | %s | %s | %s | %d | %d | %d | %d | %s | %d | %s | %s | %s | %s | %.0f%% | %.0f%% | %.0f%% | %s | %.0f%% | %.0f%% | %.0f%% |\n",
			name, s.rate, ratio, strings.Join(rounds, ", "), figure.Dur(s.elapsed), s.delivered, s.dups, s.bad, s.held, body, s.conns,
			created, figure.Dur(s.perSender), figure.Dur(s.perRecv), pg, s.cpu.Busy, s.cpu.Sender, s.cpu.Receiver, pgShare, s.cpu.IRQ, s.cpu.Other, s.cpu.Steal)
	}
	fmt.Fprint(w, "\nDeliveries/s and the times are medians over the rounds; counts are totals. The sender is `tocsin serve` "+
		"(engines; its CPU includes its start) or this process (bare). CPU shares are of the whole machine (100% = all CPUs), averaged over the "+
		"rounds; PostgreSQL is the benchmark database's backends with the cluster's background writers; interrupts are mostly "+
		"the loopback network's softirqs, which Linux charges to no process; steal is time the hypervisor gave the VM's CPUs to "+
		"others. \"Per delivery\" is that CPU time over the deliveries handled.\n")
	for _, name := range res.targets {
		s := sums[name]
		if len(s.failed) > 0 {
			fmt.Fprintf(w, "\n%s: answers other than 204: %s.\n", name, kinds(s.failed))
		}
		if s.held > 0 {
			fmt.Fprintf(w, "\n%s: %d deliveries were held back by their channel's rate bound (%d events a minute): "+
				"spread them over more channels (-channels) to measure the notifier rather than the bound.\n", name, s.held, bound)
		}
		for _, t := range s.rounds {
			if t.cpu.Other > 10 {
				fmt.Fprintf(w, "\nRound %d of %s was disturbed: other processes used %.0f%% of the machine.\n", t.round, name, t.cpu.Other)
			}
		}
	}
}

func latencyReport(w io.Writer, c config, res *results) {
	conf := c.confirmationsOrDefault()
	fmt.Fprintf(w, "\n## From DOWN to the webhook\n\n%d HTTP monitors checked every %s, %d consecutive down results make DOWN, "+
		"of an in-process target (httptest) that answers 200 until all are UP and their UP changes delivered, then 500. "+
		"The check engine and the notifier are those of `tocsin serve`, with its default options; one webhook "+
		"channel hears monitor.state_changed. For every change to DOWN the receiver records its arrival minus the event's "+
		"data.at, the confirming check's start. The two parts: from data.at to the start of the delivery's first attempt "+
		"as the store recorded it (the check, the observation writer's batch, the outbox until the notifier claims it), "+
		"and from there to the arrival (rendering, signing, the POST). Latencies pooled over %d measurement(s) per engine.\n\n",
		c.monitors, interval, conf, c.latencyRounds)
	fmt.Fprintf(w, "| engine | DOWN changes | delivered | p50 | p90 | p99 | max | p99 < %s | to the first attempt: p50 | p99 | "+
		"attempt to arrival: p50 | p99 | all UP delivered in | all DOWN delivered after the flip | held | duplicates |\n", figure.Dur(latencyTarget))
	fmt.Fprint(w, "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, e := range c.engines {
		l := poolLatency(res.latency, e)
		if l == nil {
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | **%s** | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d |\n",
			e, l.monitors, len(l.total), figure.Dur(figure.Percentile(l.total, 0.5)), figure.Dur(figure.Percentile(l.total, 0.9)),
			figure.Dur(figure.Percentile(l.total, 0.99)), figure.Dur(figure.Percentile(l.total, 1)), figure.Verdict(latencyMet(l)),
			figure.Dur(figure.Percentile(l.outbox, 0.5)), figure.Dur(figure.Percentile(l.outbox, 0.99)),
			figure.Dur(figure.Percentile(l.sending, 0.5)), figure.Dur(figure.Percentile(l.sending, 0.99)),
			figure.Dur(l.upIn), figure.Dur(l.downIn), l.store[notify.Held], l.recv.Duplicates)
	}
	fmt.Fprint(w, "\n\"All UP delivered in\" (from the server's start) and \"all DOWN delivered after the flip\" are the longest of the "+
		"measurements; they include waiting for each monitor's slot, up to one interval per check.\n")
	for _, l := range res.latency {
		if l.window > 0 {
			fmt.Fprintf(w, "\n%s, measurement %d: the flip waited %s for the rate window of the UP changes to end, "+
				"so that the DOWN ones were not held back.\n", l.engine, l.round, figure.Dur(l.window))
		}
	}
}

// poolLatency merges an engine's measurements; nil if it has none.
func poolLatency(ls []*latency, engine string) *latency {
	var out *latency
	for _, l := range ls {
		if l.engine != engine {
			continue
		}
		if out == nil {
			out = &latency{engine: engine, store: map[notify.Status]int{}}
		}
		out.monitors += l.monitors
		out.total = append(out.total, l.total...)
		out.outbox = append(out.outbox, l.outbox...)
		out.sending = append(out.sending, l.sending...)
		out.upIn, out.downIn = max(out.upIn, l.upIn), max(out.downIn, l.downIn)
		out.recv.Duplicates += l.recv.Duplicates
		for k, v := range l.store {
			out.store[k] += v
		}
	}
	if out != nil {
		for _, xs := range [][]time.Duration{out.total, out.outbox, out.sending} {
			slices.Sort(xs)
		}
	}
	return out
}

// latencyMet: every DOWN change arrived, and their p99 is under the target.
func latencyMet(l *latency) bool {
	return len(l.total) == l.monitors && figure.Percentile(l.total, 0.99) < latencyTarget
}

func targetsReport(w io.Writer, res *results) {
	fmt.Fprint(w, "\n## Targets\n\n| target | required | measured | |\n|---|---|---|---|\n")
	engines := slices.DeleteFunc(slices.Clone(res.targets), func(t string) bool { return t == "bare" })
	for _, e := range engines {
		l := poolLatency(res.latency, e)
		if l == nil {
			continue
		}
		fmt.Fprintf(w, "| %s: every DOWN change delivered | %d | %d | %s |\n", e, l.monitors, len(l.total), figure.Verdict(len(l.total) == l.monitors))
		fmt.Fprintf(w, "| %s: from the confirming check to the webhook, p99 | < %s | %s | %s |\n", e, figure.Dur(latencyTarget),
			figure.Dur(figure.Percentile(l.total, 0.99)), figure.Verdict(latencyMet(l)))
	}
	for _, t := range res.throughput {
		if t.target == "bare" {
			continue
		}
		if ok := t.recv.Unique == t.store[notify.Succeeded] && t.store[notify.Succeeded]+t.store[notify.Held] == t.n; !ok {
			fmt.Fprintf(w, "| %s, round %d: every delivery made once | %d | %d handled, store %v | %s |\n",
				t.target, t.round, t.n, t.recv.Unique, t.store, figure.Verdict(false))
		}
	}
}

func roundOf(ts []*throughput, round int) *throughput {
	for _, t := range ts {
		if t.round == round {
			return t
		}
	}
	return nil
}

// kinds lists counts by kind, the most frequent first.
func kinds(m map[string]int) string {
	ks := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
