package checks

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/bench/internal/pgfresh"
)

func (b *bench) machine(ctx context.Context) host.Machine {
	m := host.Describe()
	if slices.Contains(b.c.engines, "postgres") {
		m.Postgres = pgfresh.ServerVersion(ctx, b.c.pgURL)
	}
	m.Tocsin = b.Bin.Rev
	return m
}

func report(w io.Writer, c config, m host.Machine, res []*result) {
	perSecond := float64(c.monitors) / c.interval.Seconds()
	fmt.Fprintf(w, "# Check engine: %d HTTP monitors every %s\n\n", c.monitors, c.interval)
	fmt.Fprint(w, m)
	fmt.Fprintf(w, ".\n\nLoad: %.0f checks/s (%.1fM a day). Each run: %s warm-up (not measured), %s measured, %s grace for the window's last checks. "+
		"At most %d checks in flight; check timeout %d s. Runs in this order: ", perSecond, perSecond*86400/1e6, c.warmup, c.duration, c.grace, c.concurrency, c.timeout)
	for i, r := range res {
		if i > 0 {
			fmt.Fprint(w, ", ")
		}
		fmt.Fprintf(w, "%d. %s", r.Order, runName(r))
	}
	fmt.Fprint(w, ".\n\n")

	bareCPU, bareN := time.Duration(0), 0
	for _, r := range res {
		if r.Name == "bare" && r.Window != nil && r.Window.Started > 0 {
			bareCPU += r.CPU.ChildTime / time.Duration(r.Window.Started)
			bareN++
		}
	}
	if bareN > 0 {
		bareCPU /= time.Duration(bareN)
	}

	fmt.Fprint(w, "## Due vs done, and lag (start − due)\n\n")
	fmt.Fprint(w, "| run | due | done | missing | duplicates | off-slot | results | unknown: missed start / shutdown / other | lag p50 | p90 | p99 | p99.9 | max |\n")
	fmt.Fprint(w, "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range res {
		x := r.Window
		if x == nil {
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %s | %d / %d / %d | %s | %s | %s | %s | %s |\n",
			runName(r), x.Due, x.Done, x.Missing, x.Duplicates, x.OffSlot, results(x.Results),
			x.MissedStart, x.ShuttingDown, x.OtherUnknown,
			dur(x.Lag.P50), dur(x.Lag.P90), dur(x.Lag.P99), dur(x.Lag.P999), dur(x.Lag.Max))
	}

	fmt.Fprint(w, "\n## CPU time\n\n")
	fmt.Fprint(w, "\"Per check\" is the process's CPU time over the window (Linux's counters, in 10 ms ticks) divided by the checks it ran "+
		"in the window (for the bare loop, the GETs it started); tocsin serve's includes its idle API, notifier and sweeper; PostgreSQL's is the time of the benchmark database's backends and the cluster's "+
		"background writers over the window, divided likewise. The shares are of the whole machine (100% = all CPUs); steal is time the hypervisor gave the VM's CPUs to others.\n\n")
	fmt.Fprint(w, "| run | checks in window | process CPU | per check | PostgreSQL per check | total per check | vs bare | machine busy | process | target | PostgreSQL | other | steal |\n")
	fmt.Fprint(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range res {
		n := checksRun(r)
		if n == 0 {
			continue
		}
		per := r.CPU.ChildTime / time.Duration(n)
		pg, total := "–", per
		if r.Name == "postgres" {
			pgPer := r.CPU.PostgresTime / time.Duration(n)
			pg, total = dur(pgPer), per+pgPer
		}
		ratio := "–"
		if bareCPU > 0 {
			ratio = fmt.Sprintf("%.2f", float64(total)/float64(bareCPU))
			if r.Name != "bare" && r.Name != "postgres" {
				ratio = fmt.Sprintf("**%.2f**", float64(total)/float64(bareCPU))
			} else if r.Name == "postgres" {
				ratio = fmt.Sprintf("**%.2f** (%.2f without PostgreSQL)", float64(total)/float64(bareCPU), float64(per)/float64(bareCPU))
			}
		}
		fmt.Fprintf(w, "| %s | %d | %.1f s | %s | %s | **%s** | %s | %.0f%% | %.0f%% | %.0f%% | %.0f%% | %.0f%% | %.0f%% |\n",
			runName(r), n, r.CPU.ChildTime.Seconds(), dur(per), pg, dur(total), ratio,
			r.CPU.Busy, r.CPU.Child, r.CPU.Target, r.CPU.Postgres, r.CPU.Other, r.CPU.Steal)
	}

	for _, r := range res {
		if r.CPU.Other > 10 {
			fmt.Fprintf(w, "\n%s was disturbed: other processes used %.0f%% of the machine during its window.\n", runName(r), r.CPU.Other)
		}
	}

	fmt.Fprint(w, "\n## Memory and storage\n\n")
	fmt.Fprint(w, "Peak RSS is the process's VmHWM (warm-up included). Bytes per observation: the growth of the observations table "+
		"with its primary key over the window divided by the rows added (SQLite: its pages in `dbstat`; PostgreSQL: `pg_total_relation_size`). "+
		fmt.Sprintf("A day at this load is %.1fM observations; 1,000 monitors at 60 s make 1.44M a day.\n\n", perSecond*86400/1e6))
	fmt.Fprint(w, "| run | peak RSS | per monitor | RSS at end | Go heap in use | rows added | bytes per observation | per day at this load | per day, 1,000 monitors at 60 s | WAL per observation | database at the end |\n")
	fmt.Fprint(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range res {
		heap := "–"
		if r.Engine != nil {
			heap = fmtSize(int64(r.Engine.HeapInuse))
		}
		row := fmt.Sprintf("| %s | %s | %s | %s | %s |", runName(r), fmtSize(r.Peak), fmtSize(r.Peak/int64(c.monitors)),
			fmtSize(r.RSS), heap)
		rows := r.After.Rows - r.Before.Rows
		if r.Name == "bare" || rows <= 0 {
			fmt.Fprint(w, row+" – | – | – | – | – | – |\n")
			continue
		}
		per := float64(r.After.Bytes-r.Before.Bytes) / float64(rows)
		perObs := fmt.Sprintf("%.0f", per)
		wal := "–"
		if r.Name == "postgres" {
			perObs += fmt.Sprintf(" (heap %.0f, index %.0f)", float64(r.After.Heap-r.Before.Heap)/float64(rows),
				float64(r.After.Index-r.Before.Index)/float64(rows))
			wal = fmt.Sprintf("%.0f B", float64(r.After.WAL-r.Before.WAL)/float64(rows))
			if n := r.After.OtherXacts - r.Before.OtherXacts; n > 0 {
				wal += fmt.Sprintf(" (not ours alone: other databases ran %d transactions meanwhile)", n)
			}
		}
		fmt.Fprintf(w, "%s %d | %s | %s | %s | %s | %s |\n", row, rows, perObs,
			fmtSize(int64(per*perSecond*86400)), fmtSize(int64(per*1000*1440)), wal, fmtSize(r.DBSize))
	}

	fmt.Fprint(w, "\n## Inside the engine, over the window (the server's GET /metrics)\n\n")
	fmt.Fprint(w, "| run | checks | observations written | write errors | batches | observations per batch | mean batch time | most queued | most in flight | GCs | allocated per check |\n")
	fmt.Fprint(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range res {
		e := r.Engine
		if e == nil {
			continue
		}
		n := checksRun(r)
		perBatch, batchTime := "–", "–"
		if e.Batches > 0 {
			perBatch = fmt.Sprintf("%.1f", e.Written/e.Batches)
			batchTime = dur(time.Duration(e.BatchSeconds / e.Batches * float64(time.Second)))
		}
		alloc := "–"
		if n > 0 {
			alloc = fmtSize(int64(e.Allocated) / int64(n))
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %.0f | %s | %s | %.0f | %.0f | %.0f | %s |\n", runName(r), n, e.Written,
			e.WriteErrors, e.Batches, perBatch, batchTime, e.MaxQueued, e.MaxInFlight, e.GCs, alloc)
	}

	fmt.Fprint(w, "\n## Verdicts\n\n")
	for _, r := range res {
		if r.Name == "bare" || r.Window == nil {
			continue
		}
		x := r.Window
		missed := x.Missing + x.MissedStart
		fmt.Fprintf(w, "- **%s**: none missed: %s (%d due, %d without an observation, %d given up as missed starts, %d duplicates); ",
			r.Name, verdict(missed == 0 && x.Duplicates == 0), x.Due, x.Missing, x.MissedStart, x.Duplicates)
		fmt.Fprintf(w, "lag p99 < 1 s: %s (%s); ", verdict(x.Lag.N > 0 && x.Lag.P99 < time.Second), dur(x.Lag.P99))
		if n := checksRun(r); n > 0 {
			per := r.CPU.ChildTime / time.Duration(n)
			total := per
			if r.Name == "postgres" {
				total += r.CPU.PostgresTime / time.Duration(n)
			}
			fmt.Fprintf(w, "CPU per check < 1 ms: %s (%s", verdict(total < time.Millisecond), dur(total))
			if r.Name == "postgres" {
				fmt.Fprintf(w, ", of which %s in tocsin serve", dur(per))
			}
			fmt.Fprint(w, ")")
		}
		fmt.Fprint(w, ".\n")
	}
}

// checksRun is what a run's CPU time is divided by: the engine's checks
// over the window (run, or given up as missed starts), or the bare loop's
// GETs started in it.
func checksRun(r *result) int {
	if r.Name == "bare" {
		if r.Window == nil {
			return 0
		}
		return r.Window.Started
	}
	if r.Engine == nil {
		return 0
	}
	n := r.Engine.Missed
	for _, v := range r.Engine.Checks {
		n += v
	}
	return int(n)
}

func runName(r *result) string {
	if r.Name == "bare" {
		return fmt.Sprintf("bare loop (run %d)", r.Order)
	}
	return "tocsin serve, " + r.Name
}

func verdict(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**not met**"
}

func results(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, ", ")
}

// dur prints a duration with three significant digits.
func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%.3g µs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3g s", d.Seconds())
}

func fmtSize(n int64) string {
	switch {
	case n < 10<<10:
		return fmt.Sprintf("%d B", n)
	case n < 10<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 10<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
