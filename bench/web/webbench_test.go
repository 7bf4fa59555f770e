package web

import (
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
)

func TestSeedingURL(t *testing.T) {
	for in, want := range map[string]string{
		"sqlite:/tmp/x/tocsin.db":                        "sqlite:/tmp/x/tocsin.db",
		"postgres://u@127.0.0.1:5432/db?sslmode=disable": "postgres://u@127.0.0.1:5432/db?sslmode=disable&synchronous_commit=off",
	} {
		if got := seedingURL(in); got != want {
			t.Errorf("seedingURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReport renders made-up results and checks the figures and verdicts.
func TestReport(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	fast := &engineResult{engine: "sqlite", listBytes: 200 << 10, pageBytes: 40 << 10,
		list: ms(10, 20, 40), cold: ms(60, 70), stale: ms(90), bare: ms(1, 2, 4), page: ms(30, 40, 90), latencies: ms(500, 1000, 1500, 2000),
		quiet: idleWindow{elapsed: 10 * time.Second, server: 100 * time.Millisecond, rss: 50 << 20, bareRSS: 10 << 20},
		open:  idleWindow{elapsed: 10 * time.Second, server: 300 * time.Millisecond, bare: 10 * time.Millisecond, rss: 80 << 20}}
	slow := &engineResult{engine: "postgres", list: ms(60, 70, 80), bare: ms(1), page: ms(100, 200),
		latencies: ms(700), quiet: idleWindow{elapsed: 10 * time.Second, pg: 50 * time.Millisecond}}
	var b strings.Builder
	c := config{monitors: 1000, streams: 100, interval: time.Minute, requests: 3, warmup: 1, idle: 10 * time.Second, changes: 4, pageTime: time.Minute}
	report(&b, c, host.Machine{Date: "now"}, []*engineResult{fast, slow})
	out := b.String()
	for _, want := range []string{
		"# Web app: 1000 monitors, 100 live streams",
		"| sqlite | monitors list | 3 | 20.0 ms | 40.0 ms | 40.0 ms | 40.0 ms | 200 KiB | p99 under 50.0 ms: met |",
		"| sqlite | list / bare | | 10.0× | 10.0× | 10.0× |",
		"| sqlite | monitors list, first view after a state change | 2 | 60.0 ms | 70.0 ms | 70.0 ms | 70.0 ms | 200 KiB | – |",
		"| sqlite | monitors list, first view with its figures a minute old | 1 | 90.0 ms | 90.0 ms | 90.0 ms | 90.0 ms | 200 KiB | – |",
		"| sqlite | a monitor's page | 3 | 40.0 ms | 90.0 ms | 90.0 ms | 90.0 ms | 40 KiB | p99 under 100.0 ms: met |",
		"| postgres | monitors list | 3 | 70.0 ms | 80.0 ms | 80.0 ms | 80.0 ms | 0 KiB | p99 under 50.0 ms: **not met** |",
		"| postgres | a monitor's page | 2 | 100.0 ms | 200.0 ms | 200.0 ms | 200.0 ms | 0 KiB | p99 under 100.0 ms: **not met** |",
		"| sqlite | 0 | 10.0 ms | – | 50.0 MiB | 0 | 10.0 MiB |",
		"| sqlite | 100 | 30.0 ms | – | 80.0 MiB | 1.00 ms |",
		"| postgres | 0 | 0 | 5.00 ms |",
		"| sqlite | 4 | 1.00 s | 2.00 s | 2.00 s |",
		"| postgres | 1 | 700.0 ms | 700.0 ms | 700.0 ms |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
