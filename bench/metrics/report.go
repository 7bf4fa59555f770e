package metrics

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/bench/internal/pgfresh"
)

// Targets (docs/benchmarks.md, "Metrics").
const (
	yearTarget     = 50 * time.Millisecond
	yearVsDay      = 3.0
	listingTarget  = 200 * time.Millisecond
	rollupShare    = 0.05
	storageTarget  = 5e9 // bytes of rollups for 10,000 monitors over a year
	fleet          = 10000
	hourlyKeptDays = 90 // default retention: the extrapolation's
	dailyKeptDays  = 365
)

func (b *bench) machine(ctx context.Context) host.Machine {
	m := host.Describe()
	m.Tocsin = b.Bin.Rev
	if slices.Contains(b.c.engines, "postgres") {
		m.Postgres = pgfresh.ServerVersion(ctx, b.c.pgURL)
	}
	return m
}

func engineName(e string) string {
	if e == "postgres" {
		return "PostgreSQL"
	}
	return "SQLite"
}

// rowBytes is bytes per row, 0 for none.
func rowBytes(bytes, rows int64) float64 {
	if rows == 0 {
		return 0
	}
	return float64(bytes) / float64(rows)
}

// yearOfRollups is the rollups of fleet monitors at 60 s kept a year under
// the default retention: hourly rows for 90 days, daily rows for 365.
func (r *engineResult) yearOfRollups() float64 {
	return fleet * (hourlyKeptDays*24*rowBytes(r.hourBytes, r.hourRows) + dailyKeptDays*rowBytes(r.dayBytes, r.dayRows))
}

func (r *engineResult) query(name string) *query {
	for _, q := range r.queries {
		if q.name == name {
			return q
		}
	}
	return &query{}
}

func gb(x float64) string { return fmt.Sprintf("%.2f GB", x/1e9) }

func report(w io.Writer, c config, m host.Machine, res []*engineResult) {
	fmt.Fprintf(w, "# Metrics benchmark\n\n")
	fmt.Fprintf(w, "Machine: %s.\n\n", m)
	fmt.Fprintf(w, "Data per engine: one monitor checked every %s for %d days; %d monitors checked every 60 s for %d days, "+
		"the last %d whole UTC day(s) and today raw and rolled up by the job, the %d days before as hourly and daily rollups. "+
		"`tocsin serve` with the default retention (raw 30 days, hourly rollups 90, daily 400); every monitor paused, so it runs no checks. "+
		"Latencies over loopback, one request at a time, %d measured answers per query after %d warm-up answers, the queries taking turns.\n\n",
		c.interval, c.days, c.monitors, c.monitorDays, c.rawDays, c.monitorDays-c.rawDays, c.reps, c.warmup)

	fmt.Fprintf(w, "## Targets\n\n| target |")
	for _, r := range res {
		fmt.Fprintf(w, " %s |", engineName(r.engine))
	}
	fmt.Fprintf(w, "\n|---|")
	for range res {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintln(w)
	row := func(name string, cell func(r *engineResult) string) {
		fmt.Fprintf(w, "| %s |", name)
		for _, r := range res {
			fmt.Fprintf(w, " %s |", cell(r))
		}
		fmt.Fprintln(w)
	}
	row("365-day answer under 50 ms (median)", func(r *engineResult) string {
		d := r.query("year monitor, 365 d").percentile(0.5)
		return fmt.Sprintf("%s: %s", figure.Dur(d), figure.Verdict(d < yearTarget))
	})
	row("365-day answer at most 3× the 24-hour one (medians)", func(r *engineResult) string {
		y, d := r.query("year monitor, 365 d").percentile(0.5), r.query("year monitor, 24 h").percentile(0.5)
		ratio := float64(y) / float64(max(d, 1))
		return fmt.Sprintf("%.2f×: %s", ratio, figure.Verdict(ratio <= yearVsDay))
	})
	row("listing of 100 monitors over 30 days under 200 ms (median)", func(r *engineResult) string {
		d := r.query("listing, 100 monitors, 30 d").percentile(0.5)
		return fmt.Sprintf("%s: %s", figure.Dur(d), figure.Verdict(d < listingTarget))
	})
	row("rollups under 5% of the check engine's CPU", func(r *engineResult) string {
		per := r.rollDay.perObservation()
		share := float64(per) / float64(c.checkCPU[r.engine])
		return fmt.Sprintf("%s per observation, %.1f%% of %s per check: %s", figure.Dur(per), 100*share,
			figure.Dur(c.checkCPU[r.engine]), figure.Verdict(share < rollupShare))
	})
	row("a year of rollups of 10,000 monitors at most 5 GB", func(r *engineResult) string {
		y := r.yearOfRollups()
		return fmt.Sprintf("%s: %s", gb(y), figure.Verdict(y <= storageTarget))
	})
	fmt.Fprintln(w)

	fmt.Fprintf(w, "## Answers\n\nMedian and p90 of the time from sending the request to reading the whole answer.\n\n| query |")
	for _, r := range res {
		fmt.Fprintf(w, " %s median | p90 |", engineName(r.engine))
	}
	fmt.Fprintf(w, " answer | gzipped | checks counted |\n|---|")
	for range res {
		fmt.Fprintf(w, "---:|---:|")
	}
	fmt.Fprintf(w, "---:|---:|---:|\n")
	if len(res) > 0 {
		for i, q := range res[0].queries {
			fmt.Fprintf(w, "| %s (`%s`) |", q.name, shortPath(q.path))
			for _, r := range res {
				rq := r.queries[i]
				fmt.Fprintf(w, " %s | %s |", figure.Dur(rq.percentile(0.5)), figure.Dur(rq.percentile(0.9)))
			}
			fmt.Fprintf(w, " %s | %s | %d |\n", kib(q.bytes), kib(q.gzipped), q.checks)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "CPU while the answers were measured, percent of all CPUs (the machine's load average before each engine's run):\n\n")
	fmt.Fprintf(w, "| engine | busy | server | PostgreSQL | benchmark | others | steal | server peak RSS | load average |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range res {
		l := r.load
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f MiB | %s |\n", engineName(r.engine), l.busy, l.server, l.postgres,
			l.self, l.other, l.steal, float64(r.serverRSS)/(1<<20), r.loadavg)
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "## The rollup job\n\napp.Rollup in the benchmark process, round after round until a round wrote nothing; "+
		"CPU of this process (getrusage) and of PostgreSQL's processes for the database.\n\n")
	fmt.Fprintf(w, "| engine | run | observations rolled up | buckets | rounds | wall | CPU | in PostgreSQL | CPU per observation | of a check's CPU |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range res {
		for _, run := range []struct {
			name string
			r    rollupRun
		}{{fmt.Sprintf("one monitor, %d days", c.days), r.rollYear}, {fmt.Sprintf("%d monitors, today and the %d days before", c.monitors+1, c.rawDays), r.rollDay}} {
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %s | %s | %s | %s | %.1f%% |\n", engineName(r.engine), run.name, run.r.observations,
				run.r.buckets, run.r.rounds, figure.Dur(run.r.wall), figure.Dur(run.r.cpu), figure.Dur(run.r.pg), figure.Dur(run.r.perObservation()),
				100*float64(run.r.perObservation())/float64(c.checkCPU[r.engine]))
		}
	}
	fmt.Fprintf(w, "\nThe target is read on the second run, where every monitor has checks in every hour, as in service; "+
		"the first spreads the job's cost per hour over one monitor's 120 checks.\n\n")

	fmt.Fprintf(w, "## Storage\n\n| engine | raw, per observation | an hour of rollups, packed by day (its latency summary) | daily rollup row (summary) | rollups per monitor-day (24 hours + 1 day) | 10,000 monitors at 60 s, a year of rollups | for reference: their raw rows of 30 days |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range res {
		raw := rowBytes(r.rawBytes, r.rawRows)
		h, d := rowBytes(r.hourBytes, r.hourRows), rowBytes(r.dayBytes, r.dayRows)
		fmt.Fprintf(w, "| %s | %.0f B | %.0f B (%.0f B) | %.0f B (%.0f B) | %.0f B | %s | %s |\n", engineName(r.engine), raw, h, r.hourSketch, d, r.daySketch, 24*h+d,
			gb(r.yearOfRollups()), gb(fleet*1440*30*raw))
	}
	fmt.Fprintf(w, "\nRow bytes are what writing %d monitors' hourly rollups of %.0f days, each day's then packed into one row a monitor as the rollup job packs them, "+
		"then their daily rollups, added to the table, indexes included, measured with the table compacted (VACUUM FULL; SQLite: VACUUM) before and after the hours "+
		"(SQLite: the dbstat virtual table; PostgreSQL: pg_total_relation_size); raw bytes are the observations table over its rows once written. "+
		"A year: hourly rows kept 90 days, daily rows 365, as the default retention keeps them.\n\n", c.monitors, res[0].rollupDays)
	fmt.Fprintf(w, "Preparing: ")
	for i, r := range res {
		if i > 0 {
			fmt.Fprintf(w, "; ")
		}
		fmt.Fprintf(w, "%s: raw rows written in %s, housekeeping %s, rollups written in %s; when measured, observations %s and rollups %s",
			engineName(r.engine), r.seedRaw.Round(time.Second), r.housekeeping.Round(time.Millisecond), r.seedRollups.Round(time.Second),
			mib(r.finalRaw), mib(r.finalRolls))
	}
	fmt.Fprintf(w, ".\n")
}

func shortPath(p string) string {
	for i := 0; i < len(p); i++ {
		if p[i] == '?' {
			return p[i+1:]
		}
	}
	return p
}

func kib(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
