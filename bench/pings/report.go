package pings

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
	"github.com/tocsin/tocsin/internal/app"
)

// The targets.
const (
	sqliteVsBare = 0.60 // SQLite's acknowledged pings/s over the bare handler's
	postgresRate = 5000 // PostgreSQL's acknowledged pings/s
	// keepUpP99 is the p99 latency, from when a ping was due, under which
	// a target offered a rate in an open loop keeps up with it: one that
	// cannot falls further behind with every second, and its latencies
	// grow to many seconds.
	keepUpP99 = time.Second
)

// keepsUp tells whether a target kept up with the rate offered: every ping
// acknowledged, and the p99 latency within keepUpP99.
func (r *offeredResult) keepsUp() bool {
	return r.ok == r.sent && r.percentile(0.99) <= keepUpP99
}

// ackRate is the acknowledged pings over the window they were due in.
func (r *offeredResult) ackRate() float64 {
	return float64(r.ok) / (float64(r.sent) / r.rate)
}

func (b *bench) machine(ctx context.Context) host.Machine {
	m := host.Describe()
	m.Tocsin = b.Bin.Rev
	if slices.Contains(b.c.engines, "postgres") {
		m.Postgres = pgfresh.ServerVersion(ctx, b.c.pgURL)
	}
	return m
}

// summary is a target's sustained load over every round.
type summary struct {
	rate    float64 // median over the rounds, acknowledged/s
	all     outcome // every round's, latencies sorted
	cpu     cpuShare
	perAck  time.Duration // server CPU per acknowledged ping
	pgAck   time.Duration // PostgreSQL's
	commits int64         // over the rounds; -1: not known
}

func summarize(t *target) summary {
	s := summary{all: newOutcome()}
	var rates []float64
	for _, p := range t.rounds {
		if s.commits < 0 || p.commits < 0 {
			s.commits = -1 // one round not known: the sum is not either
		} else {
			s.commits += p.commits
		}
		rates = append(rates, p.rate())
		s.all.add(p.outcome)
		s.cpu.Busy += p.cpu.Busy
		s.cpu.Server += p.cpu.Server
		s.cpu.Postgres += p.cpu.Postgres
		s.cpu.Self += p.cpu.Self
		s.cpu.IRQ += p.cpu.IRQ
		s.cpu.Other += p.cpu.Other
		s.cpu.Steal += p.cpu.Steal
		s.cpu.ServerTime += p.cpu.ServerTime
		s.cpu.PostgresTime += p.cpu.PostgresTime
	}
	if n := float64(len(t.rounds)); n > 0 {
		s.cpu.Busy, s.cpu.Server, s.cpu.Postgres = s.cpu.Busy/n, s.cpu.Server/n, s.cpu.Postgres/n
		s.cpu.Self, s.cpu.IRQ, s.cpu.Other, s.cpu.Steal = s.cpu.Self/n, s.cpu.IRQ/n, s.cpu.Other/n, s.cpu.Steal/n
	}
	slices.Sort(s.all.lat)
	s.rate = figure.Median(rates)
	if s.all.ok > 0 {
		s.perAck = s.cpu.ServerTime / time.Duration(s.all.ok)
		s.pgAck = s.cpu.PostgresTime / time.Duration(s.all.ok)
	}
	return s
}

func report(w io.Writer, c config, m host.Machine, ts []*target) {
	fmt.Fprintf(w, "# Pings: %d heartbeats, %d clients\n\n", c.heartbeats, c.clients)
	fmt.Fprint(w, m)
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.name
	}
	fmt.Fprintf(w, ".\n\nLoad: %d keep-alive clients in a closed loop (each sends its next ping once the previous answer is read), "+
		"plain `GET /ping/{token}` spread evenly over %d heartbeats (hourly). Per target and round: %s warm-up (not measured), "+
		"then %s measured; %d round(s), the targets in a rotating order starting with %s. An acknowledged ping is a 200 whose "+
		"body is an acknowledgement; Tocsin sends it only once the ping is committed. Latencies are of acknowledged pings, "+
		"from sending the request to reading the whole answer.\n\n",
		c.clients, c.heartbeats, c.warmup, c.duration, c.rounds, strings.Join(names, ", "))

	sums := map[string]summary{}
	for _, t := range ts {
		sums[t.name] = summarize(t)
	}
	bare, hasBare := sums["bare"]
	fmt.Fprint(w, "## Sustained load\n\n")
	fmt.Fprint(w, "| target | acknowledged/s | vs bare | per round (vs bare) | p50 | p99 | max | acknowledged | not acknowledged "+
		"| server CPU per ping | PostgreSQL CPU per ping | pings per transaction | machine busy | server | PostgreSQL | load generator | interrupts | other | steal |\n")
	fmt.Fprint(w, "|---|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, t := range ts {
		s := sums[t.name]
		ratio := "–"
		if hasBare && bare.rate > 0 {
			ratio = fmt.Sprintf("%.2f", s.rate/bare.rate)
			if t.name != "bare" {
				ratio = "**" + ratio + "**"
			}
		}
		var rounds []string
		for i, p := range t.rounds {
			r := fmt.Sprintf("%.0f", p.rate())
			if bt := byName(ts, "bare"); bt != nil && t.name != "bare" && i < len(bt.rounds) && bt.rounds[i].rate() > 0 {
				r += fmt.Sprintf(" (%.2f)", p.rate()/bt.rounds[i].rate())
			}
			rounds = append(rounds, r)
		}
		pg := "–"
		if t.name == "postgres" {
			pg = figure.Dur(s.pgAck)
		}
		fmt.Fprintf(w, "| %s | **%.0f** | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %.0f%% | %.0f%% | %.0f%% | %.0f%% | %.0f%% | %.0f%% | %.0f%% |\n",
			t.name, s.rate, ratio, strings.Join(rounds, ", "), figure.Dur(s.all.percentile(0.5)), figure.Dur(s.all.percentile(0.99)),
			figure.Dur(figure.Percentile(s.all.lat, 1)), s.all.ok, notAcked(s.all), figure.Dur(s.perAck), pg, perCommit(s.all.ok, s.commits),
			s.cpu.Busy, s.cpu.Server, s.cpu.Postgres, s.cpu.Self, s.cpu.IRQ, s.cpu.Other, s.cpu.Steal)
	}
	fmt.Fprint(w, "\nCPU shares are of the whole machine (100% = all CPUs), averaged over the rounds: the server process, the "+
		"benchmark database's PostgreSQL backends with the cluster's background writers, this process (the load generator), "+
		"interrupts (mostly the loopback network's softirqs, which Linux charges to no process), and everything else; steal is time the hypervisor gave the VM's CPUs to others. \"Per ping\" is that CPU time over the "+
		"pings acknowledged in the measured windows. Pings per transaction: those pings over the transactions the database committed "+
		"meanwhile (PostgreSQL's `pg_stat_database`), the size of the writers' batches.\n")
	for _, t := range ts {
		if n := sums[t.name].all.statuses[429] + burstStatus(t, 429); n > 0 {
			fmt.Fprintf(w, "\n%s refused %d pings with 429: a heartbeat takes %d pings a minute in bursts of %d on each node; "+
				"spread the load over more heartbeats (-heartbeats) to measure the store rather than the limiter.\n",
				t.name, n, app.PingsPerMinute, app.PingBurst)
		}
	}
	for _, t := range ts {
		for _, p := range t.rounds {
			if p.cpu.Other > 10 {
				fmt.Fprintf(w, "\nRound %d of %s was disturbed: other processes used %.0f%% of the machine.\n", p.round, t.name, p.cpu.Other)
			}
		}
	}

	if len(c.rates) > 0 {
		fmt.Fprint(w, "\n## Open loop: pings offered at a fixed rate\n\n")
		fmt.Fprintf(w, "Pings are sent on schedule, evenly spaced, whether or not earlier ones have been answered "+
			"(as jobs ping: a cron job does not wait for another's answer), over up to %d keep-alive connections, spread over the "+
			"heartbeats; per rate and target %s warm-up, then %s measured. Latencies are from when each ping was due, not from when "+
			"a connection was free to send it, so a target that falls behind shows it in its latencies; it keeps up when it "+
			"acknowledges every ping with a p99 within %s. The CPU columns are as above.\n\n",
			c.rateConns, c.warmup, c.duration, figure.Dur(keepUpP99))
		fmt.Fprint(w, "| target | offered/s | pings | acknowledged | not acknowledged | acknowledged/s | p50 | p99 | max | kept up "+
			"| server CPU per ping | PostgreSQL CPU per ping | pings per transaction | machine busy | server | PostgreSQL | load generator | interrupts |\n")
		fmt.Fprint(w, "|---|---:|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for i := range c.rates {
			for _, t := range ts {
				if i >= len(t.offered) {
					continue
				}
				r := t.offered[i]
				perAck, pgAck := "–", "–"
				if r.ok > 0 {
					perAck = figure.Dur(r.cpu.ServerTime / time.Duration(r.ok))
					if t.name == "postgres" {
						pgAck = figure.Dur(r.cpu.PostgresTime / time.Duration(r.ok))
					}
				}
				fmt.Fprintf(w, "| %s | %.0f | %d | **%d** | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %.0f%% | %.0f%% | %.0f%% | %.0f%% | %.0f%% |\n",
					t.name, r.rate, r.sent, r.ok, notAcked(r.outcome), r.ackRate(), figure.Dur(r.percentile(0.5)), figure.Dur(r.percentile(0.99)),
					figure.Dur(figure.Percentile(r.lat, 1)), yesNo(r.keepsUp()), perAck, pgAck, perCommit(r.ok, r.commits),
					r.cpu.Busy, r.cpu.Server, r.cpu.Postgres, r.cpu.Self, r.cpu.IRQ)
			}
		}
	}

	if c.burst > 0 {
		fmt.Fprintf(w, "\n## Burst: %d pings at once\n\n", c.burst)
		fmt.Fprintf(w, "%d connections are opened beforehand (a `GET /healthz` each) and released together; each sends its %d "+
			"pings one after the other, so up to %d pings are in the server at once. It runs right after the sustained load. "+
			"\"All answered in\" is from the release to the last answer.\n\n", c.burstConns, c.burst/c.burstConns, c.burstConns)
		fmt.Fprint(w, "| target | pings | acknowledged | not acknowledged | all answered in | acknowledged/s | p50 | p99 | max | connections opened in |\n")
		fmt.Fprint(w, "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n")
		for _, t := range ts {
			b := t.burst
			if b == nil {
				continue
			}
			opened := figure.Dur(b.open)
			if b.warmFailed > 0 {
				opened += fmt.Sprintf(" (%d failed)", b.warmFailed)
			}
			fmt.Fprintf(w, "| %s | %d | **%d** | %s | %s | %.0f | %s | %s | %s | %s |\n", t.name, b.sent, b.ok, notAcked(b.outcome),
				figure.Dur(b.all), float64(b.ok)/b.all.Seconds(), figure.Dur(b.percentile(0.5)), figure.Dur(b.percentile(0.99)),
				figure.Dur(figure.Percentile(b.lat, 1)), opened)
		}
	}

	fmt.Fprint(w, "\n## Stored\n\n")
	fmt.Fprint(w, "Pings in each database at the end against the pings acknowledged in every phase (warm-ups and bursts too), "+
		"counted after the server was killed with SIGKILL, by a new process (on SQLite, after it replayed the journal the killed one left). "+
		"A ping that got no answer may be stored as well, so stored may exceed acknowledged, never fall short of it.\n\n")
	fmt.Fprint(w, "| engine | acknowledged | stored | acknowledged but missing | heartbeats created in | server peak RSS |\n")
	fmt.Fprint(w, "|---|---:|---:|---:|---:|---:|\n")
	for _, t := range ts {
		if t.raw == nil {
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s |\n", t.name, t.acked, t.stored, max(int64(t.acked)-t.stored, 0),
			figure.Dur(t.setup), fmtSize(t.peak))
	}

	fmt.Fprint(w, "\n## Targets\n\n| target | required | measured | |\n|---|---|---|---|\n")
	if s, ok := sums["sqlite"]; ok && hasBare && bare.rate > 0 {
		r := s.rate / bare.rate
		fmt.Fprintf(w, "| SQLite against the bare handler | ≥ %.2f | %.2f (%.0f vs %.0f/s) | %s |\n", sqliteVsBare, r, s.rate, bare.rate, figure.Verdict(r >= sqliteVsBare))
	}
	if s, ok := sums["postgres"]; ok {
		fmt.Fprintf(w, "| PostgreSQL, acknowledged pings/s, closed loop of %d clients | ≥ %d | %.0f | %s |\n",
			c.clients, postgresRate, s.rate, figure.Verdict(s.rate >= postgresRate))
	}
	if t := byName(ts, "postgres"); t != nil {
		for _, r := range t.offered {
			if r.rate < postgresRate {
				continue
			}
			fmt.Fprintf(w, "| PostgreSQL keeps up with %.0f pings/s offered | every ping acknowledged, p99 ≤ %s | %d of %d, p99 %s, machine %.0f%% busy | %s |\n",
				r.rate, figure.Dur(keepUpP99), r.ok, r.sent, figure.Dur(r.percentile(0.99)), r.cpu.Busy, figure.Verdict(r.keepsUp()))
		}
	}
	for _, t := range ts {
		if t.raw == nil {
			continue
		}
		if b := t.burst; b != nil {
			fmt.Fprintf(w, "| %s: a burst is queued and answered, none dropped | %d of %d acknowledged | %d | %s |\n",
				t.name, b.sent, b.sent, b.ok, figure.Verdict(b.ok == b.sent))
		}
		fmt.Fprintf(w, "| %s: every acknowledged ping stored | %d | %d stored | %s |\n", t.name, t.acked, t.stored, figure.Verdict(t.stored >= int64(t.acked)))
	}
}

// perCommit is pings over transactions, "–" when they are not known.
func perCommit(pings int, commits int64) string {
	if commits <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", float64(pings)/float64(commits))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

func burstStatus(t *target, status int) int {
	if t.burst == nil {
		return 0
	}
	return t.burst.statuses[status]
}

func byName(ts []*target, name string) *target {
	for _, t := range ts {
		if t.name == name {
			return t
		}
	}
	return nil
}

// notAcked lists the requests not acknowledged, by kind; "0" for none.
func notAcked(o outcome) string {
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(o.statuses)) {
		name := fmt.Sprint(s)
		if s == 0 {
			name = "200 without an acknowledgement"
		}
		parts = append(parts, fmt.Sprintf("%s: %d", name, o.statuses[s]))
	}
	errs := slices.SortedFunc(maps.Keys(o.errors), func(a, b string) int { return cmp.Compare(o.errors[b], o.errors[a]) })
	for _, e := range errs {
		parts = append(parts, fmt.Sprintf("%s: %d", e, o.errors[e]))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

func fmtSize(n int64) string {
	switch {
	case n <= 0:
		return "–"
	case n < 1<<20:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
}
