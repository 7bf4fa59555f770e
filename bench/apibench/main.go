// Command apibench measures the throughput and latency of Tocsin's API on
// this machine against a bare net/http handler, each served by its own
// process on loopback:
//
//	bare           a handler returning a fixed ~500-byte JSON body
//	sqlite-get     authenticated GET /api/v1/monitors/{id}, embedded SQLite
//	postgres-get   the same on PostgreSQL
//	sqlite-post    POST /api/v1/monitors, embedded SQLite
//	postgres-post  the same on PostgreSQL
//
// Each target gets a closed-loop load of -concurrency keep-alive clients for
// -duration, after a -warmup, for -rounds rounds interleaved across targets.
// Run it from the module root:
//
//	go run ./bench/apibench -duration 10s -rounds 3
//
// The servers are `tocsin serve` (built from this checkout unless -tocsin
// names a binary; API keys and workspaces made with `tocsin key create` and
// `tocsin user create`) and this binary re-executed as the bare handler.
// PostgreSQL targets need a server where -pg-url's user may CREATE
// DATABASE; a fresh database is created per run and dropped at the end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
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

var allTargets = []string{"bare", "sqlite-get", "postgres-get", "sqlite-post", "postgres-post"}

func main() { session.Main("apibench", run) }

func run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	var c config
	var targets, bareServe string
	fs := flag.NewFlagSet("apibench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.tocsin, "tocsin", "", "path to a tocsin binary; default: build ./cmd/tocsin of this module")
	fs.IntVar(&c.concurrency, "concurrency", 32, "concurrent keep-alive clients (closed loop)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measured time per target and round")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured load before each measured round")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds, interleaved across targets")
	fs.StringVar(&targets, "targets", strings.Join(allTargets, ","), "comma-separated targets to run")
	fs.StringVar(&c.pgURL, "pg-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"PostgreSQL server for the postgres-* targets (the user must be able to CREATE DATABASE); empty skips them")
	fs.IntVar(&c.rateLimit, "rate-limit", 1_000_000, "tocsin --rate-limit (requests per minute per API key); high so the limiter never refuses")
	fs.Float64Var(&c.postGuess, "post-rate-guess", 2500, "expected POST req/s before the first measurement; sizes the workspaces made for the monitor quota")
	fs.IntVar(&c.keys, "keys", 32, "API keys the GET clients share out (client w uses key w mod keys); 1: every client on one key")
	fs.BoolVar(&c.keepWork, "keep", false, "keep the work directory (server logs, SQLite files) and PostgreSQL databases")
	fs.StringVar(&bareServe, "bare-serve", "", "internal: serve the bare handler on this address and exit on SIGTERM")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if bareServe != "" {
		return serveBare(ctx, bareServe)
	}
	for t := range strings.SplitSeq(targets, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if !slices.Contains(allTargets, t) {
			return fmt.Errorf("unknown target %q; known: %s", t, strings.Join(allTargets, ", "))
		}
		if strings.HasPrefix(t, "postgres-") && c.pgURL == "" {
			fmt.Fprintf(stderr, "skipping %s: -pg-url is empty\n", t)
			continue
		}
		c.targets = append(c.targets, t)
	}
	switch {
	case len(c.targets) == 0:
		return errors.New("no targets to run")
	case c.concurrency < 1 || c.rounds < 1 || c.duration <= 0 || c.warmup < 0:
		return errors.New("-concurrency and -rounds must be at least 1, -duration positive, -warmup not negative")
	}
	b := newBench(c, stderr)
	defer b.close()
	res, err := b.run(ctx)
	if err != nil {
		return err
	}
	report(stdout, c, machineInfo(b), res)
	return nil
}
