package metrics

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// randomTimeline makes a history around [from, to): a creation time that
// may fall before, inside or after it, changes before, inside and after it,
// sometimes unsorted, sometimes to a state this package does not know.
func randomTimeline(r *rand.Rand, from, to time.Time) Timeline {
	span := to.Sub(from)
	at := func() time.Time { return from.Add(time.Duration(r.Int64N(int64(span)*3/2)) - span/4) }
	states := append(slices.Clone(monitor.States), "BOGUS")
	tl := Timeline{Created: at(), Start: states[r.IntN(len(states))]}
	for range r.IntN(40) {
		tl.Changes = append(tl.Changes, Change{At: at(), To: states[r.IntN(len(states))]})
	}
	if r.IntN(3) > 0 {
		slices.SortStableFunc(tl.Changes, byAt)
	}
	return tl
}

// naive integrates by cutting [from, to) at every instant anything happens
// and asking, for each piece, which state held at its start.
func naive(tl Timeline, from, to time.Time) Durations {
	changes := slices.Clone(tl.Changes)
	slices.SortStableFunc(changes, byAt)
	stateAt := func(t time.Time) (monitor.State, bool) {
		if t.Before(tl.Created) {
			return "", false
		}
		s := tl.Start
		for _, c := range changes {
			if !c.At.After(t) {
				s = c.To
			}
		}
		return s, true
	}
	cuts := []time.Time{from, to}
	if tl.Created.After(from) && tl.Created.Before(to) {
		cuts = append(cuts, tl.Created)
	}
	for _, c := range changes {
		if c.At.After(from) && c.At.Before(to) {
			cuts = append(cuts, c.At)
		}
	}
	slices.SortFunc(cuts, time.Time.Compare)
	var d Durations
	for i := 1; i < len(cuts); i++ {
		x := cuts[i].Sub(cuts[i-1])
		if s, ok := stateAt(cuts[i-1]); ok {
			d.add(s, x)
		} else {
			d.BeforeCreation += x
		}
	}
	return d
}

func TestDurationsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 7))
	for i := range 2000 {
		from := t0.Add(time.Duration(r.Int64N(int64(400 * 24 * time.Hour))))
		to := from.Add(time.Duration(1 + r.Int64N(int64(40*24*time.Hour))))
		tl := randomTimeline(r, from, to)
		before := slices.Clone(tl.Changes)
		d := tl.Durations(from, to)
		if !slices.Equal(before, tl.Changes) {
			t.Fatalf("#%d: Durations reordered the caller's changes", i)
		}
		if d.Total() != to.Sub(from) {
			t.Fatalf("#%d: total %v, span %v", i, d.Total(), to.Sub(from))
		}
		if want := naive(tl, from, to); d != want {
			t.Fatalf("#%d: got %+v, naive %+v", i, d, want)
		}
		bs, err := Buckets(from, to, Day, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		var sum Durations
		for _, b := range bs {
			bd := tl.Durations(b.Start, b.End)
			if bd.Total() != b.End.Sub(b.Start) {
				t.Fatalf("#%d: bucket %v total %v", i, b, bd.Total())
			}
			sum = sum.Add(bd)
		}
		if sum != d {
			t.Fatalf("#%d: buckets add up to %+v, span %+v", i, sum, d)
		}
		rs := d.Ratios()
		if rs.Availability != nil && rs.UnadjustedAvailability != nil && *rs.Availability < *rs.UnadjustedAvailability {
			t.Fatalf("#%d: availability %v < unadjusted %v (%+v)", i, *rs.Availability, *rs.UnadjustedAvailability, d)
		}
		for _, p := range []*float64{rs.Availability, rs.UnadjustedAvailability, rs.Coverage} {
			if p != nil && (*p < 0 || *p > 1) {
				t.Fatalf("#%d: ratio %v out of [0,1] (%+v)", i, *p, d)
			}
		}
	}
}

func TestDurationsCreatedLate(t *testing.T) {
	from, to := t0, t0.Add(30*24*time.Hour)
	created := to.Add(-24 * time.Hour)
	tl := Timeline{Created: created, Start: monitor.StateUp, Changes: []Change{
		{At: created.Add(5 * time.Hour), To: monitor.StateDown},
		{At: created.Add(6 * time.Hour), To: monitor.StateUp},
	}}
	d := tl.Durations(from, to)
	want := Durations{Up: 23 * time.Hour, Down: time.Hour, BeforeCreation: 29 * 24 * time.Hour}
	if d != want {
		t.Fatalf("got %+v, want %+v", d, want)
	}
	rs := d.Ratios()
	wantRatio(t, "availability", rs.Availability, 23.0/24)
	wantRatio(t, "unadjusted", rs.UnadjustedAvailability, 23.0/24)
	wantRatio(t, "coverage", rs.Coverage, 1)
}

func TestDurationsStartAndEdges(t *testing.T) {
	from, to := t0, t0.Add(10*time.Hour)
	tl := Timeline{Start: monitor.StatePending, Changes: []Change{
		{At: from.Add(-time.Hour), To: monitor.StateDown}, // before the span: sets the state at from
		{At: from.Add(2 * time.Hour), To: monitor.StateUp},
		{At: from.Add(4 * time.Hour), To: monitor.StateUnknown},
		{At: from.Add(5 * time.Hour), To: monitor.StatePaused},
		{At: from.Add(6 * time.Hour), To: monitor.StateMaintenance},
		{At: from.Add(8 * time.Hour), To: monitor.StateDegraded},
		{At: to, To: monitor.StateDown}, // at the end: outside [from, to)
	}}
	d := tl.Durations(from, to)
	want := Durations{Down: 2 * time.Hour, Up: 2 * time.Hour, Unknown: time.Hour, Paused: time.Hour, Maintenance: 2 * time.Hour, Degraded: 2 * time.Hour}
	if d != want {
		t.Fatalf("got %+v, want %+v", d, want)
	}
	rs := d.Ratios()
	wantRatio(t, "availability", rs.Availability, 4.0/6)
	wantRatio(t, "unadjusted", rs.UnadjustedAvailability, 4.0/10)
	wantRatio(t, "coverage", rs.Coverage, 6.0/7)
	if got := tl.Durations(to, from); got != (Durations{}) {
		t.Errorf("inverted span: %+v", got)
	}
}

func TestPendingLowersCoverage(t *testing.T) {
	d := Durations{Pending: time.Hour, Up: 3 * time.Hour}
	rs := d.Ratios()
	wantRatio(t, "availability", rs.Availability, 1)
	wantRatio(t, "coverage", rs.Coverage, 0.75)
	wantRatio(t, "unadjusted", rs.UnadjustedAvailability, 0.75)
}

func TestRatiosNil(t *testing.T) {
	for _, c := range []struct {
		name                string
		d                   Durations
		avail, unadj, cover bool // which are non-nil
	}{
		{"empty", Durations{}, false, false, false},
		{"before creation", Durations{BeforeCreation: time.Hour}, false, false, false},
		{"paused", Durations{Paused: time.Hour}, false, true, false},
		{"maintenance and paused", Durations{Paused: time.Hour, Maintenance: time.Hour}, false, true, false},
		{"unknown", Durations{Unknown: time.Hour}, false, true, true},
		{"pending", Durations{Pending: time.Hour}, false, true, true},
		{"down", Durations{Down: time.Hour}, true, true, true},
	} {
		rs := c.d.Ratios()
		if (rs.Availability != nil) != c.avail || (rs.UnadjustedAvailability != nil) != c.unadj || (rs.Coverage != nil) != c.cover {
			t.Errorf("%s: got %v %v %v, want non-nil %v %v %v", c.name, rs.Availability, rs.UnadjustedAvailability, rs.Coverage, c.avail, c.unadj, c.cover)
		}
		for _, p := range []*float64{rs.Availability, rs.UnadjustedAvailability, rs.Coverage} {
			if p != nil && *p != 0 && c.name != "down" {
				t.Errorf("%s: ratio %v, want 0", c.name, *p)
			}
		}
	}
}

func TestChecks(t *testing.T) {
	c := Checks{Up: 1, Degraded: 2, Down: 3, Unknown: 4}.Add(Checks{Up: 10, Degraded: 20, Down: 30, Unknown: 40})
	if c != (Checks{Up: 11, Degraded: 22, Down: 33, Unknown: 44}) || c.Total() != 110 {
		t.Fatalf("got %+v total %d", c, c.Total())
	}
}

func wantRatio(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: nil, want %v", name, want)
		return
	}
	if d := *got - want; d > 1e-12 || d < -1e-12 {
		t.Errorf("%s: %v, want %v", name, *got, want)
	}
}
