// Package checks measures Tocsin's check engine on this machine: many
// HTTP monitors of a local target checked at a fixed interval by the
// built `tocsin serve`, next to a bare Go loop doing the same GETs, each
// in a process of its own.
//
//	go run ./bench checks -monitors 10000 -interval 30s -duration 5m
//
// For each database engine (-engines) it makes a fresh database, creates
// -monitors monitors of the target (distinct paths /m/<i>) through the
// store (setup, not measured: the API's quota and minimum interval would
// make 10,000 monitors slow to create and forbid short intervals), starts
// `tocsin serve` on it (built from this checkout unless -tocsin names a
// binary), lets it run one -warmup, then measures -duration: checks due
// against checks done and their scheduling lag (from the stored
// observations), the server's CPU time per check, PostgreSQL's CPU time,
// the server's peak RSS, the bytes each stored observation takes, and the
// engine's own counters from the server's GET /metrics. A bare Go loop
// doing the same GETs on the same schedule, with no database, runs for the
// same time in a child process (this binary re-executed with -bare-loop),
// as the baseline. The target server is a child process as well
// (-target-serve). Results and how to read them: docs/benchmarks.md,
// "Check engine".
package checks

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/session"
)

// config is what the flags ask for.
type config struct {
	monitors    int
	interval    time.Duration
	duration    time.Duration
	warmup      time.Duration
	grace       time.Duration
	timeout     int // seconds, each check's
	concurrency int
	engines     []string
	bare        string // before, after, both, none
	pgURL       string
	keep        bool
	out         string
	tocsin      string // the binary; "": build ./cmd/tocsin
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var (
		c           config
		targetServe bool
		bareLoop    string
	)
	fs.IntVar(&c.monitors, "monitors", 10000, "HTTP monitors of the local target")
	fs.DurationVar(&c.interval, "interval", 30*time.Second, "every monitor's check interval (whole seconds)")
	fs.DurationVar(&c.grace, "grace", 5*time.Second, "time after the window for checks due in it to finish and be stored")
	fs.IntVar(&c.timeout, "timeout", 10, "each check's timeout in seconds (the monitors' timeoutSeconds)")
	fs.IntVar(&c.concurrency, "concurrency", 512, "checks (tocsin serve --check-concurrency) or bare GETs in flight at most")
	fs.StringVar(&c.bare, "bare", "before", "when the bare loop runs: before the engines, after them, both, or none")
	fs.BoolVar(&targetServe, "target-serve", false, "internal: serve the target on 127.0.0.1:0 and print its URL")
	fs.StringVar(&bareLoop, "bare-loop", "", "internal: run the bare loop over the targets in this file")
	return func(ctx context.Context, e session.Env) error {
		c.duration, c.warmup, c.engines, c.pgURL, c.keep, c.out, c.tocsin = e.Duration, e.Warmup, e.Engines, e.PGURL, e.Keep, e.Out, e.Tocsin
		if c.warmup <= 0 {
			c.warmup = c.interval
		}
		switch {
		case targetServe:
			return serveTarget(ctx, e.Stdin, e.Stdout)
		case bareLoop != "":
			return serveBare(ctx, childOptions{targets: bareLoop, concurrency: c.concurrency, interval: c.interval,
				timeout: time.Duration(c.timeout) * time.Second}, e.Stdin, e.Stdout)
		}
		switch {
		case !slices.Contains([]string{"before", "after", "both", "none"}, c.bare):
			return fmt.Errorf("-bare %q: want before, after, both or none", c.bare)
		case len(c.engines) == 0 && c.bare == "none":
			return errors.New("nothing to run")
		case c.monitors < 1 || c.concurrency < 1 || c.timeout < 1:
			return errors.New("-monitors, -concurrency and -timeout must be at least 1")
		case c.interval < time.Second || c.interval%time.Second != 0:
			return errors.New("-interval must be whole seconds")
		case c.duration <= 0 || c.grace < 0:
			return errors.New("-duration must be positive and -grace not negative")
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
