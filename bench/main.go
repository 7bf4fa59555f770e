// Command bench measures Tocsin on this machine, one area at a time,
// against a bare baseline measured in the same run, and prints a markdown
// report: `go run ./bench <area> [flags]`; `go run ./bench <area> -h`
// lists an area's flags. docs/benchmarks.md shows the latest figures.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tocsin/tocsin/bench/api"
	"github.com/tocsin/tocsin/bench/checks"
	"github.com/tocsin/tocsin/bench/deliveries"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/bench/metrics"
	"github.com/tocsin/tocsin/bench/pages"
	"github.com/tocsin/tocsin/bench/pings"
	"github.com/tocsin/tocsin/bench/web"
)

// area is one subcommand: what it measures, its defaults for the shared
// flags, and its own flags, which return its run.
type area struct {
	name, what string
	defaults   session.Common
	flags      func(*flag.FlagSet) session.Run
}

var areas = []area{
	{"api", "authenticated API reads against a bare handler",
		session.Common{Duration: 10 * time.Second, Warmup: 2 * time.Second, Rounds: 3}, api.Flags},
	{"checks", "the check engine: HTTP monitors checked on schedule against a bare loop",
		session.Common{Duration: 5 * time.Minute}, checks.Flags},
	{"pings", "heartbeat pings: closed loop, open loop, burst, stored after SIGKILL",
		session.Common{Duration: 30 * time.Second, Warmup: 5 * time.Second, Rounds: 1}, pings.Flags},
	{"deliveries", "webhook deliveries a second, and from DOWN to the webhook",
		session.Common{Rounds: 3}, deliveries.Flags},
	{"metrics", "metrics queries over a year of history, and the rollups' cost",
		session.Common{}, metrics.Flags},
	{"pages", "public status pages: cold renders, cache, throughput against a bare handler",
		session.Common{Duration: 15 * time.Second, Warmup: 3 * time.Second, Rounds: 5}, pages.Flags},
	{"web", "the signed-in web app: the monitors list and a monitor's page against a bare handler",
		session.Common{}, web.Flags},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	for _, a := range areas {
		if len(args) == 0 || a.name != args[0] {
			continue
		}
		fs := flag.NewFlagSet("bench "+a.name, flag.ContinueOnError)
		fs.SetOutput(stderr)
		e := session.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr}
		var engines string
		e.Common.Register(fs, a.defaults, &engines)
		measure := session.BareFlags(fs, a.flags(fs)) // every area may start a bare handler
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if err := e.Common.Parse(engines, stderr); err != nil {
			return err
		}
		return measure(ctx, e)
	}
	fmt.Fprintln(stderr, "usage: go run ./bench <area> [flags]; areas:")
	for _, a := range areas {
		fmt.Fprintf(stderr, "  %-11s %s\n", a.name, a.what)
	}
	return flag.ErrHelp
}
