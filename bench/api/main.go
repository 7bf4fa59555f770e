// Package api measures the throughput and latency of Tocsin's API on
// this machine against a bare net/http handler, each served by its own
// process on loopback:
//
//	bare           a handler returning a fixed ~500-byte JSON body
//	<engine>-get   authenticated GET /api/v1/monitors/{id} (-ops get)
//	<engine>-post  POST /api/v1/monitors (-ops post)
//
// Each target gets a closed-loop load of -concurrency keep-alive clients for
// -duration, after a -warmup, for -rounds rounds interleaved across targets.
// Run it from the module root:
//
//	go run ./bench api -duration 10s -rounds 3 -ops get
//
// The servers are `tocsin serve` (built from this checkout unless -tocsin
// names a binary; API keys and workspaces made with `tocsin key create` and
// `tocsin user create`) and this binary re-executed as the bare handler.
// PostgreSQL targets need a server where -pg-url's user may CREATE
// DATABASE; a fresh database is created per run and dropped at the end.
package api

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/session"
)

// config is what the flags ask for.
type config struct {
	tocsin      string
	concurrency int
	duration    time.Duration
	warmup      time.Duration
	rounds      int
	targets     []string
	pgURL       string
	rateLimit   int
	postGuess   float64
	keys        int
	keepWork    bool
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var c config
	var ops, bareServe string
	var bare bool
	fs.IntVar(&c.concurrency, "concurrency", 32, "concurrent keep-alive clients (closed loop)")
	fs.StringVar(&ops, "ops", "get,post", "operations measured on each engine: get, post")
	fs.BoolVar(&bare, "bare", true, "measure the bare handler too, as the baseline")
	fs.IntVar(&c.rateLimit, "rate-limit", 1_000_000, "tocsin --rate-limit (requests per minute per API key); high so the limiter never refuses")
	fs.Float64Var(&c.postGuess, "post-rate-guess", 2500, "expected POST req/s before the first measurement; sizes the workspaces made for the monitor quota")
	fs.IntVar(&c.keys, "keys", 32, "API keys the GET clients share out (client w uses key w mod keys); 1: every client on one key")
	fs.StringVar(&bareServe, "bare-serve", "", "internal: serve the bare handler on this address and exit on SIGTERM")
	return func(ctx context.Context, e session.Env) error {
		if bareServe != "" {
			return serveBare(ctx, bareServe)
		}
		c.tocsin, c.duration, c.warmup, c.rounds, c.pgURL, c.keepWork = e.Tocsin, e.Duration, e.Warmup, e.Rounds, e.PGURL, e.Keep
		if bare {
			c.targets = append(c.targets, "bare")
		}
		for _, eng := range e.Engines {
			for op := range strings.SplitSeq(ops, ",") {
				switch op = strings.TrimSpace(op); op {
				case "get", "post":
					c.targets = append(c.targets, eng+"-"+op)
				case "":
				default:
					return fmt.Errorf("-ops: unknown operation %q; known: get, post", op)
				}
			}
		}
		switch {
		case len(c.targets) == 0:
			return errors.New("no targets to run")
		case c.concurrency < 1 || c.rounds < 1 || c.duration <= 0 || c.warmup < 0:
			return errors.New("-concurrency and -rounds must be at least 1, -duration positive, -warmup not negative")
		}
		b := newBench(c, e.Stderr)
		defer b.close()
		res, err := b.run(ctx)
		if err != nil {
			return err
		}
		var sb strings.Builder
		report(&sb, c, machineInfo(b), res)
		return session.Report(sb.String(), e.Stdout, e.Out)
	}
}
