package seed

import (
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// TestHistory checks the seeded state history: it starts at creation,
// alternates UP with one span of trouble at a time, moves forward in
// time, ends UP an hour or more before now, and holds every kind of span.
func TestHistory(t *testing.T) {
	const days = 100
	created := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	now := created.Add(days * Day)
	seen := map[monitor.State]int{}
	for seed := range uint64(20) {
		h := History(rand.New(rand.NewPCG(seed, 1)), created, now)
		if len(h) < 3 {
			t.Fatalf("seed %d: %d changes over %d days", seed, len(h), days)
		}
		if f := h[0]; f.From != monitor.StatePending || f.To != monitor.StateUp || !f.At.Equal(created) {
			t.Fatalf("seed %d: first change %+v", seed, f)
		}
		for i := 1; i < len(h); i++ {
			prev, tr := h[i-1], h[i]
			if tr.From != prev.To || tr.From == tr.To {
				t.Fatalf("seed %d: change %d %s→%s follows one to %s", seed, i, tr.From, tr.To, prev.To)
			}
			if !tr.At.After(prev.At) {
				t.Fatalf("seed %d: change %d at %s, not after %s", seed, i, tr.At, prev.At)
			}
			if (tr.From == monitor.StateUp) == (tr.To == monitor.StateUp) {
				t.Fatalf("seed %d: change %d %s→%s does not leave or return to UP", seed, i, tr.From, tr.To)
			}
			if tr.From == monitor.StateUp {
				seen[tr.To]++
			}
		}
		if last := h[len(h)-1]; last.To != monitor.StateUp || last.At.After(now.Add(-time.Hour)) {
			t.Fatalf("seed %d: last change %+v", seed, last)
		}
	}
	for _, s := range Spans {
		if seen[s.State] == 0 {
			t.Errorf("no span of %s in 20 histories", s.State)
		}
	}
}

// TestTarget: 200 until set, then what it is set to.
func TestTarget(t *testing.T) {
	tg, err := StartTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	get := func() int {
		resp, err := http.Get(tg.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get(); s != http.StatusOK {
		t.Fatalf("status %d, want 200", s)
	}
	tg.Set(http.StatusInternalServerError)
	if s := get(); s != http.StatusInternalServerError {
		t.Fatalf("status %d after Set(500)", s)
	}
}

// TestPageDraft checks the page of 50 monitors: 5 groups of 10, every
// monitor once.
func TestPageDraft(t *testing.T) {
	ms := make([]string, 50)
	for i := range ms {
		ms[i] = "mon_" + string(rune('A'+i))
	}
	d := PageDraft(ms)
	if len(d.Groups) != Groups {
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
