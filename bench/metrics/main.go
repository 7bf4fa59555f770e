// Package metrics measures Tocsin's metrics on this machine: how fast
// `tocsin serve` answers a monitor's figures over a day, a month and a
// year and a workspace's listing, what the rollup job costs in CPU per
// observation next to the check engine's CPU per check, and how many bytes
// its rollups take, on SQLite and on PostgreSQL.
//
//	go run ./bench metrics -out /tmp/metrics.md
//
// For each engine it fills a fresh database through the store, as the
// server would have written it, with the benchmark's clock: one monitor
// checked every -interval for -days (about a million observations for a
// year at 30 s), rolled up by the rollup job (app.Rollup) run in this
// process until it has caught up, which is what its CPU is measured on;
// then -monitors monitors checked every 60 s for -monitor-days, the last
// -raw-days of them raw and rolled up by the job (measured again: every
// monitor has rows in every hour), the older days written directly as
// hourly and daily rollups (what the job would have left), which is what
// their bytes are measured on. Housekeeping (app.Housekeeping) then deletes
// the raw rows older than the raw retention, as the server does. Then
// `tocsin serve` (built from this checkout, or the binary -tocsin names)
// starts on the database with the default retention, and once its own
// rollup loop has nothing left to do, each query is sent -warmup times and
// then -reps times, the queries taking turns, one at a time over a
// keep-alive loopback connection. Results and how to read them:
// docs/benchmarks.md, "Metrics".
package metrics

import (
	"context"
	"errors"
	"flag"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/session"
)

// config is what the flags ask for.
type config struct {
	engines     []string
	pgURL       string
	days        int           // the year monitor's history
	interval    time.Duration // its interval
	monitors    int           // the workspace's other monitors, at 60 s
	monitorDays int           // their history
	rawDays     int           // of it, raw and rolled up by the job
	reps        int           // measured answers per query
	warmup      int           // unmeasured answers per query first
	checkCPU    map[string]time.Duration
	profile     string // prefix of the rollup job's CPU profiles
	out         string
	keep        bool
	tocsin      string // the binary; "": build ./cmd/tocsin
}

// The check engine's CPU per check that the rollups are compared with:
// docs/benchmarks.md, "Check engine", `tocsin serve` at c346b56 (EPYC),
// PostgreSQL's own CPU included.
var defaultCheckCPU = map[string]time.Duration{"sqlite": 566 * time.Microsecond, "postgres": 578 * time.Microsecond}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var (
		c        config
		checkCPU [2]time.Duration
	)
	fs.IntVar(&c.days, "days", 365, "days of checks of the year monitor")
	fs.DurationVar(&c.interval, "interval", 30*time.Second, "the year monitor's interval")
	fs.IntVar(&c.monitors, "monitors", 1000, "other monitors of the workspace, checked every 60 s")
	fs.IntVar(&c.monitorDays, "monitor-days", 90, "days of checks of the other monitors")
	fs.IntVar(&c.rawDays, "raw-days", 1, "of them, the last whole UTC days (and today) written raw and rolled up by the job; the older days are written as rollups")
	fs.IntVar(&c.reps, "reps", 30, "measured answers per query")
	fs.IntVar(&c.warmup, "warmup-reps", 5, "unmeasured answers per query before")
	fs.DurationVar(&checkCPU[0], "check-cpu-sqlite", defaultCheckCPU["sqlite"], "the check engine's CPU per check on SQLite, which the rollups' CPU per observation is compared with")
	fs.DurationVar(&checkCPU[1], "check-cpu-postgres", defaultCheckCPU["postgres"], "the same on PostgreSQL, its own CPU included")
	fs.StringVar(&c.profile, "rollup-profile", "", "write the CPU profile of each run of the rollup job to this path + .<engine>.<run>.pprof")
	return func(ctx context.Context, e session.Env) error {
		c.engines, c.pgURL, c.out, c.keep, c.tocsin = e.Engines, e.PGURL, e.Out, e.Keep, e.Tocsin
		c.checkCPU = map[string]time.Duration{"sqlite": checkCPU[0], "postgres": checkCPU[1]}
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
	case c.days < 2 || c.days > 3650:
		return errors.New("-days must be from 2 to 3650")
	case c.interval < time.Second:
		return errors.New("-interval must be at least 1s")
	case c.monitors < 100:
		return errors.New("-monitors must be at least 100: the listing reads 100")
	case c.rawDays < 1 || c.monitorDays <= c.rawDays+1 || c.monitorDays > 90:
		return errors.New("-raw-days must be at least 1, and -monitor-days more than -raw-days + 1 and at most 90 (the hourly rollups' default retention)")
	case c.monitorDays <= 31:
		return errors.New("-monitor-days must be more than 31: the listing asks for 30 days")
	case c.reps < 1 || c.warmup < 0:
		return errors.New("-reps must be at least 1 and -warmup not negative")
	}
	return nil
}
