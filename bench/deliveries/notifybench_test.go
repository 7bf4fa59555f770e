package deliveries

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/internal/notify"
)

func TestAutoChannels(t *testing.T) {
	bound := notify.RateBound(notify.Webhook)
	for _, c := range []struct{ n, want int }{{1, 1}, {bound, 1}, {bound + 1, 2}, {20000, (20000 + bound - 1) / bound}} {
		if got := autoChannels(c.n); got != c.want {
			t.Errorf("autoChannels(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 10; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5 * time.Millisecond}, {0.9, 9 * time.Millisecond}, {0.99, 10 * time.Millisecond}, {1, 10 * time.Millisecond}} {
		if got := figure.Percentile(lat, c.q); got != c.want {
			t.Errorf("figure.Percentile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := figure.Median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("median = %v", got)
	}
}

// TestReport renders made-up results and checks the figures and verdicts.
func TestReport(t *testing.T) {
	tp := func(target string, round int, elapsed time.Duration, held int) *throughput {
		x := &throughput{target: target, round: round, n: 1000, channels: 2, elapsed: elapsed,
			recv: stats{Unique: 1000 - held, Bytes: 723 * int64(1000-held), Conns: 32}}
		if target != "bare" {
			x.created = 3 * time.Second
			x.store = map[notify.Status]int{notify.Succeeded: 1000 - held, notify.Held: held}
		}
		return x
	}
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	res := &results{
		targets: []string{"bare", "sqlite", "postgres"},
		throughput: []*throughput{tp("bare", 1, 100*time.Millisecond, 0), tp("sqlite", 1, time.Second, 0),
			tp("postgres", 1, 2*time.Second, 10)},
		latency: []*latency{
			{engine: "sqlite", round: 1, monitors: 3, total: ms(100, 200, 300), outbox: ms(90, 190, 290), sending: ms(1, 1, 1)},
			{engine: "postgres", round: 1, monitors: 3, total: ms(500, 2500), outbox: ms(400, 2400), sending: ms(1, 1)},
		},
	}
	c := config{engines: []string{"sqlite", "postgres"}, deliveries: 1000, channels: 2, concurrency: 32, rounds: 1,
		monitors: 3, latencyRounds: 1}
	var b bytes.Buffer
	report(&b, c, host.Machine{}, res)
	out := b.String()
	for _, want := range []string{
		"| bare | **10000** | 1.00 |",
		"| sqlite | **1000** | **0.10** | 1000 (0.10) |",
		"| postgres | **495** | **0.05** |",
		"postgres: 10 deliveries were held back",
		"| sqlite | 3 | 3 | 200.0 ms | 300.0 ms | **300.0 ms** | 300.0 ms | met |",
		"| sqlite: from the confirming check to the webhook, p99 | < 2.00 s | 300.0 ms | met |",
		"| postgres: every DOWN change delivered | 3 | 2 | **not met** |",
		"| postgres: from the confirming check to the webhook, p99 | < 2.00 s | 2.50 s | **not met** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
