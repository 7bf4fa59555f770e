package pings

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	lat := ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5 * time.Millisecond}, {0.9, 9 * time.Millisecond}, {0.99, 10 * time.Millisecond}, {1, 10 * time.Millisecond}, {0.01, time.Millisecond}} {
		if got := figure.Percentile(lat, c.q); got != c.want {
			t.Errorf("figure.Percentile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := figure.Percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile of nothing = %v", got)
	}
	if got := figure.Median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("median = %v", got)
	}
}

// TestReport renders made-up results and checks the verdicts.
func TestReport(t *testing.T) {
	mk := func(name string, rate float64, fails map[int]int) *target {
		o := newOutcome()
		o.ok = int(rate * 10)
		o.statuses = fails
		o.lat = []time.Duration{time.Millisecond, 2 * time.Millisecond, 30 * time.Millisecond}
		tg := &target{name: name, rounds: []*phase{{outcome: o, round: 1, elapsed: 10 * time.Second,
			cpu: cpuShare{Busy: 90, Server: 50, ServerTime: 5 * time.Second}}}}
		if name != "bare" {
			tg.raw = &rawDB{engine: name}
			tg.acked, tg.stored = o.ok+100, int64(o.ok+100)
			b := newOutcome()
			b.ok = 99
			b.statuses[503] = 1
			tg.burst = &burstResult{outcome: b, sent: 100, conns: 10, all: time.Second}
		}
		if name == "postgres" {
			tg.rounds[0].commits = 8000 // 40,000 pings in batches of 5
			o := newOutcome()
			o.ok, o.statuses = 49_999, map[int]int{503: 1}
			o.lat = []time.Duration{time.Millisecond, 20 * time.Millisecond}
			tg.offered = []*offeredResult{{outcome: o, rate: 5000, sent: 50_000, cpu: cpuShare{Busy: 60}, commits: 20_000}}
		}
		if name == "sqlite" {
			o := newOutcome()
			o.ok = 50_000
			o.lat = []time.Duration{time.Millisecond, 2 * time.Second}
			tg.offered = []*offeredResult{{outcome: o, rate: 5000, sent: 50_000}}
		}
		return tg
	}
	ts := []*target{mk("bare", 10000, nil), mk("sqlite", 6500, nil), mk("postgres", 4000, map[int]int{429: 3})}
	var b bytes.Buffer
	report(&b, config{heartbeats: 1000, clients: 64, duration: 10 * time.Second, rounds: 1, burst: 100, burstConns: 10,
		rates: []float64{5000}, rateConns: 100}, host.Machine{}, ts)
	out := b.String()
	for _, want := range []string{
		"| SQLite against the bare handler | ≥ 0.60 | 0.65 (6500 vs 10000/s) | met |",
		"| PostgreSQL, acknowledged pings/s, closed loop of 64 clients | ≥ 5000 | 4000 | **not met** |",
		// One ping of 50,000 refused: not kept up, however quick the rest.
		"| PostgreSQL keeps up with 5000 pings/s offered | every ping acknowledged, p99 ≤ 1.00 s | 49999 of 50000, p99 20.0 ms, machine 60% busy | **not met** |",
		"| postgres | 5000 | 50000 | **49999** | 503: 1 | 5000 |",
		"| 0 | 0 | 2.5 | 60% |",      // the open loop: 49,999 pings over 20,000 transactions
		"| 125 µs | 0 | 5.0 | 90% |", // the sustained load's batches
		// Every ping acknowledged, but too late: not kept up either.
		"| sqlite | 5000 | 50000 | **50000** | 0 | 5000 | 1.00 ms | 2.00 s | 2.00 s | **no** |",
		"| sqlite: a burst is queued and answered, none dropped | 100 of 100 acknowledged | 99 | **not met** |",
		"| postgres: every acknowledged ping stored | 40100 | 40100 stored | met |",
		"429: 3",
		"503: 1",
		"postgres refused 3 pings with 429",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
