package pages

import (
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
)

// TestPageDraft checks the page of 50 monitors: 5 groups of 10, every
// monitor once.
func TestPageDraft(t *testing.T) {
	ms := make([]string, 50)
	for i := range ms {
		ms[i] = "mon_" + string(rune('A'+i))
	}
	d := pageDraft(ms)
	if len(d.Groups) != groups {
		t.Fatalf("%d groups", len(d.Groups))
	}
	seen := map[string]bool{}
	for _, g := range d.Groups {
		if len(g.Components) != 10 {
			t.Errorf("group %s: %d components", g.Name, len(g.Components))
		}
		for _, c := range g.Components {
			seen[c.MonitorID] = true
		}
	}
	if len(seen) != len(ms) {
		t.Errorf("%d monitors shown, want %d", len(seen), len(ms))
	}
	if !d.ShowUptime || !d.ShowIncidents || !d.ShowMaintenance {
		t.Errorf("the page hides something: %+v", d)
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
	rd := func(n, ok int, server time.Duration, other float64) *round {
		return &round{n: n, ok: ok, elapsed: 10 * time.Second, cpu: cpuShare{Busy: 90, Other: other, ServerTime: server}}
	}
	fast := &engineResult{engine: "sqlite", pageBytes: 600 << 10,
		cold:  ms(100, 120, 250),
		quiet: ms(1, 2, 3), touched: ms(80, 90, 120),
		cached: map[string][]time.Duration{"page": ms(1, 2, 40), "summary.json": ms(1, 1, 2), "badge": ms(1, 1, 1)},
		bare:   []*round{rd(1, 10000, 5*time.Second, 1), rd(2, 10000, 5*time.Second, 1), rd(3, 12000, 5*time.Second, 1)},
		tocsin: []*round{rd(1, 5000, 5*time.Second, 1), rd(2, 6000, 5*time.Second, 30), rd(3, 3000, 5*time.Second, 1)}}
	slow := &engineResult{engine: "postgres", pageBytes: 600 << 10,
		cold:  ms(100, 200, 301),
		quiet: ms(1, 2, 3), touched: ms(80, 90, 400),
		cached: map[string][]time.Duration{"page": ms(1, 2, 50), "summary.json": ms(1), "badge": ms(1)},
		bare:   []*round{rd(1, 10000, time.Second, 0)},
		tocsin: []*round{rd(1, 8000, time.Second, 0)}}
	s := summarize(fast)
	if s.bare != 1000 || s.tocsin != 500 || s.ratio != 0.5 || s.cpu != time.Millisecond {
		t.Errorf("summary = %+v", s)
	}
	if len(s.noisy) != 1 || s.noisy[0] != 2 {
		t.Errorf("noisy rounds = %v, want [2]", s.noisy)
	}
	var b strings.Builder
	c := config{components: 50, coldPages: 3, requests: 3, clients: 8, rounds: 3, duration: 10 * time.Second}
	report(&b, c, host.Machine{Date: "now"}, []*engineResult{fast, slow})
	out := b.String()
	for _, want := range []string{
		"| sqlite | 120.0 ms | 250.0 ms | 2.00 ms | 40.0 ms |",
		"cold p99 under 300.0 ms: met; cache p99 under 50.0 ms: met |",
		"cold p99 under 300.0 ms: **not met**; cache p99 under 50.0 ms: **not met** |",
		"| sqlite | 1,000 | 500 | **0.50** (0.50, 0.60, 0.25) | 1.00 ms | 500 µs | 2.00× |",
		"| postgres | 1,000 | 800 | **0.80** (0.80) |",
		"| sqlite | 2.00 ms | 3.00 ms | 90.0 ms | 120.0 ms | p99 under 300.0 ms: met |",
		"| postgres | 2.00 ms | 3.00 ms | 90.0 ms | 400.0 ms | p99 under 300.0 ms: **not met** |",
		"**Noisy:** other processes used more than 10% of the machine in sqlite round 2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}

func TestThousands(t *testing.T) {
	for x, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", 12345.6: "12,346"} {
		if got := thousands(x); got != want {
			t.Errorf("thousands(%v) = %q, want %q", x, got, want)
		}
	}
}
