// Package pings measures how many heartbeat pings Tocsin acknowledges
// per second on this machine, each committed to the database before its
// 200, on SQLite and on PostgreSQL, next to a bare net/http handler in the
// same run.
//
//	go run ./bench pings -duration 30s -out /tmp/pings.md
//
// Every server is a process of its own: `tocsin serve` (built from this
// checkout, or the binary -tocsin names) on a database the benchmark
// prepared with -heartbeats heartbeats, and the bare handler (this binary
// re-executed with -bare-serve), which reads the request and writes a
// fixed acknowledgement of the same size. For each -rounds round, and
// each target in turn, -clients keep-alive clients send plain GET pings in
// a closed loop, spread over the heartbeats, for -warmup and then the
// measured -duration. Then each target takes an open loop at each -rate:
// pings sent on schedule, answered or not, for -warmup and -duration,
// which shows whether it keeps up with that rate and how busy the machine
// is doing so. Then each target takes a burst: -burst pings at once
// over -burst-conns connections opened beforehand, to show that a burst is
// queued and answered, not dropped. Finally the pings stored in each
// database are counted against those acknowledged. Results and how to
// read them: docs/benchmarks.md, "Pings".
package pings

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tocsin/tocsin/bench/internal/session"
)

// config is what the flags ask for.
type config struct {
	engines    []string
	bare       bool
	pgURL      string
	duration   time.Duration
	warmup     time.Duration
	rounds     int
	clients    int
	heartbeats int
	burst      int
	burstConns int
	rates      []float64
	rateConns  int
	out        string
	keep       bool
	tocsin     string // the binary; "": build ./cmd/tocsin
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var (
		c         config
		bareServe bool
		rates     string
	)
	fs.BoolVar(&c.bare, "bare", true, "measure the bare net/http handler too, as the baseline")
	fs.IntVar(&c.clients, "clients", 64, "concurrent keep-alive clients of the sustained load")
	fs.IntVar(&c.heartbeats, "heartbeats", 10000, "heartbeats the pings are spread over (at 600 pings a minute each, 10,000 take 100,000/s before the per-heartbeat limit answers 429)")
	fs.StringVar(&rates, "rate", fmt.Sprint(postgresRate), "comma-separated rates, pings a second, offered to each target in turn in an open loop (sent on schedule, answered or not), after the sustained load; empty or 0: none")
	fs.IntVar(&c.rateConns, "rate-conns", 1000, "keep-alive connections the open loop may use at once")
	fs.IntVar(&c.burst, "burst", 20000, "pings of the burst sent to each target at once; 0: no burst")
	fs.IntVar(&c.burstConns, "burst-conns", 4000, "connections the burst is sent over, opened beforehand")
	fs.BoolVar(&bareServe, "bare-serve", false, "internal: serve the bare handler")
	return func(ctx context.Context, e session.Env) error {
		if bareServe {
			return serveBare(ctx, e.Stdin, e.Stdout)
		}
		c.engines, c.pgURL, c.duration, c.warmup, c.rounds, c.out, c.keep, c.tocsin = e.Engines, e.PGURL, e.Duration, e.Warmup, e.Rounds, e.Out, e.Keep, e.Tocsin
		for r := range strings.SplitSeq(rates, ",") {
			if r = strings.TrimSpace(r); r == "" || r == "0" {
				continue
			}
			v, err := strconv.ParseFloat(r, 64)
			if err != nil || v <= 0 {
				return fmt.Errorf("-rate: %q is not a positive number of pings a second", r)
			}
			c.rates = append(c.rates, v)
		}
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
	case len(c.engines) == 0 && !c.bare:
		return errors.New("nothing to measure")
	case c.clients < 1 || c.heartbeats < 1 || c.rounds < 1:
		return errors.New("-clients, -heartbeats and -rounds must be at least 1")
	case c.duration <= 0 || c.warmup < 0:
		return errors.New("-duration must be positive and -warmup not negative")
	case len(c.rates) > 0 && c.rateConns < 1:
		return errors.New("-rate-conns must be at least 1")
	case c.burst < 0 || (c.burst > 0 && (c.burstConns < 1 || c.burstConns > c.burst)):
		return errors.New("-burst must not be negative, and -burst-conns from 1 to -burst")
	}
	if c.burst > 0 {
		// This process holds every burst connection, and the server as
		// many again.
		if limit := openFileLimit(); limit > 0 && c.burstConns+256 > limit {
			return fmt.Errorf("-burst-conns %d: this process may open only %d files (ulimit -n)", c.burstConns, limit)
		}
	}
	return nil
}

// openFileLimit is RLIMIT_NOFILE as Go raised it at start; 0 if unknown.
func openFileLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
