// Package deliveries measures how Tocsin's notifier moves events from the
// outbox to webhook receivers on this machine, on SQLite and on
// PostgreSQL:
//
//  1. deliveries per second: -deliveries manual incidents are written
//     while no server runs (one incident.opened delivery each), then
//     `tocsin serve` starts and the clock runs from its first attempt
//     until the receiver has handled every delivery id and the store shows
//     every delivery succeeded.
//     A bare Go sender in the same run POSTs as many signed bodies of the
//     same size to the same receiver with the same concurrency, as the
//     baseline;
//
//  2. the time from a monitor going DOWN to its webhook arriving:
//     `tocsin serve` checks -monitors HTTP monitors of a local target that the benchmark turns
//     from 200 to 500 once every monitor is UP; the receiver records, for
//     every monitor.state_changed to DOWN, its arrival minus the event's
//     data.at (the confirming check's time).
//
//     go run ./bench deliveries -out /tmp/deliveries.md
//
// The receiver is a child process (this binary re-executed with -receive):
// it verifies every signature with its channel's secret, which the parent
// writes to its stdin, dedupes on X-Service-Delivery and answers 204. The
// server is `tocsin serve`, built from this checkout unless -tocsin names a
// binary, with its default settings; this process writes what each phase
// starts from (owners, channels, incidents, monitors) through the app
// before the server starts, and runs the bare sender and the monitors'
// target, an httptest server. Results and how to read them:
// docs/benchmarks.md, "Deliveries".
package deliveries

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/monitor"
)

// config is what the flags ask for.
type config struct {
	engines     []string
	pgURL       string
	deliveries  int // N: incidents, one delivery each
	channels    int // webhook channels the deliveries are spread over; 0: as few as the rate bound allows
	concurrency int // the bare sender's deliveries in flight (the notifier's are 32)
	rounds      int
	bare        bool

	monitors      int // M: monitors that go DOWN
	confirmations int // 0: the product's default
	latencyRounds int

	timeout time.Duration // the longest one measured phase may take
	out     string
	keep    bool
	tocsin  string // the binary; "": build ./cmd/tocsin
	// hurry checks every monitor at once instead of at its slot, when it
	// is created and again when the target fails: the smoke test's way
	// through two check intervals. The measured latency is unchanged: it
	// counts from the confirming check.
	hurry bool
}

// interval is the monitors' check interval: the minimum a monitor may have.
const interval = monitor.MinIntervalSeconds * time.Second

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var (
		c       config
		receive bool
	)
	fs.IntVar(&c.deliveries, "deliveries", 20000, "manual incidents written before the notifier starts, one webhook delivery each")
	fs.IntVar(&c.channels, "channels", 0, "webhook channels (each in a workspace of its own) the deliveries are spread over; "+
		"0: as few as keep every channel within its rate bound of events a minute, so that none is held back")
	fs.IntVar(&c.concurrency, "concurrency", 32, "the bare sender's deliveries in flight; keep it at 32, the notifier's bound in tocsin serve")
	fs.BoolVar(&c.bare, "bare", true, "measure the bare sender too, as the baseline")
	fs.IntVar(&c.monitors, "monitors", 300, "HTTP monitors that go DOWN together in the latency measurement; 0: no latency measurement")
	fs.IntVar(&c.confirmations, "confirmations", 0, "consecutive down results before DOWN; 0: the default (2)")
	fs.IntVar(&c.latencyRounds, "latency-rounds", 1, "latency measurements per engine, each on a fresh database; their samples are pooled")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "the longest one measured phase may take before the run fails")
	fs.BoolVar(&receive, "receive", false, "internal: run the webhook receiver")
	fs.BoolVar(&c.hurry, "hurry", false, "internal: check each monitor at once rather than at its slot (the smoke test)")
	return func(ctx context.Context, e session.Env) error {
		if receive {
			return serveReceiver(ctx, e.Stdin, e.Stdout, e.Stderr)
		}
		c.engines, c.pgURL, c.rounds, c.out, c.keep, c.tocsin = e.Engines, e.PGURL, e.Rounds, e.Out, e.Keep, e.Tocsin
		if err := c.validate(); err != nil {
			return err
		}
		if c.channels == 0 {
			c.channels = autoChannels(c.deliveries)
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
	case c.deliveries < 1 || c.rounds < 1 || c.concurrency < 1:
		return errors.New("-deliveries, -rounds and -concurrency must be at least 1")
	case c.channels < 0 || c.channels > c.deliveries:
		return errors.New("-channels must be from 0 to -deliveries")
	case c.monitors < 0 || c.latencyRounds < 1:
		return errors.New("-monitors must not be negative, and -latency-rounds must be at least 1")
	case c.confirmations < 0 || c.confirmations > monitor.MaxConfirmations:
		return fmt.Errorf("-confirmations must be from 0 to %d", monitor.MaxConfirmations)
	case c.timeout <= 0:
		return errors.New("-timeout must be positive")
	}
	return nil
}

// confirmationsOrDefault is how many down results make a monitor DOWN.
func (c config) confirmationsOrDefault() int {
	if c.confirmations == 0 {
		return monitor.DefaultConfirmations
	}
	return c.confirmations
}
