package monitor

import (
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// TestObserveTable: every state × result, at the edge of each threshold.
func TestObserveTable(t *testing.T) {
	type tc struct {
		from      State
		downs     int // streak before the result
		ups       int
		r         Result
		th        Thresholds
		want      State
		wantTrans bool
	}
	def := Thresholds{}
	var cases []tc
	for _, from := range []State{StatePending, StateUp, StateDegraded, StateUnknown} {
		cases = append(cases,
			// up and degraded take effect at once outside DOWN
			tc{from, 0, 0, ResultUp, def, StateUp, from != StateUp},
			tc{from, 0, 0, ResultDegraded, def, StateDegraded, from != StateDegraded},
			// one down is a blip: the state stands
			tc{from, 0, 0, ResultDown, def, from, false},
			// the second consecutive down confirms
			tc{from, 1, 0, ResultDown, def, StateDown, true},
			// with confirmations 1 the first down is enough
			tc{from, 0, 0, ResultDown, Thresholds{Confirmations: 1}, StateDown, true},
			// with confirmations 3, two are not
			tc{from, 1, 0, ResultDown, Thresholds{Confirmations: 3}, from, false},
			tc{from, 2, 0, ResultDown, Thresholds{Confirmations: 3}, StateDown, true},
			// unknown changes nothing
			tc{from, 1, 0, ResultUnknown, def, from, false},
		)
	}
	cases = append(cases,
		tc{StateDown, 2, 0, ResultDown, def, StateDown, false},
		tc{StateDown, 2, 0, ResultUp, def, StateUp, true},
		tc{StateDown, 2, 0, ResultDegraded, def, StateDegraded, true},
		tc{StateDown, 2, 0, ResultUp, Thresholds{Recoveries: 2}, StateDown, false},
		tc{StateDown, 0, 1, ResultUp, Thresholds{Recoveries: 2}, StateUp, true},
		tc{StateDown, 0, 1, ResultDegraded, Thresholds{Recoveries: 2}, StateDegraded, true},
		tc{StateDown, 2, 0, ResultUnknown, def, StateDown, false},
	)
	for _, r := range Results {
		// Paused: nothing moves. Maintenance: the state holds.
		cases = append(cases,
			tc{StatePaused, 0, 0, r, Thresholds{Confirmations: 1}, StatePaused, false},
			tc{StateMaintenance, 5, 0, r, Thresholds{Confirmations: 1}, StateMaintenance, false},
		)
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s(downs=%d,ups=%d)+%s%+v", c.from, c.downs, c.ups, c.r, c.th)
		tr := Tracker{State: c.from, Since: t0, Downs: c.downs, Ups: c.ups}
		got, trans := tr.Observe(c.r, "", t0.Add(time.Minute), c.th)
		if got.State != c.want || (trans != nil) != c.wantTrans {
			t.Errorf("%s: state %s, transition %v; want %s, transition %v", name, got.State, trans, c.want, c.wantTrans)
			continue
		}
		if trans != nil && (trans.From != c.from || trans.To != c.want || !trans.At.Equal(t0.Add(time.Minute)) || trans.Cause == "" || !got.Since.Equal(trans.At)) {
			t.Errorf("%s: transition %+v, since %v", name, trans, got.Since)
		}
		if c.r == ResultUnknown && (got.Downs != c.downs || got.Ups != c.ups || !got.LastKnown.IsZero()) {
			t.Errorf("%s: an unknown result moved the streaks or the last known time: %+v", name, got)
		}
	}
}

// TestSequences: the stories a user would tell.
func TestSequences(t *testing.T) {
	run := func(tr Tracker, th Thresholds, rs ...Result) (Tracker, []State) {
		var seen []State
		at := t0
		for _, r := range rs {
			at = at.Add(time.Minute)
			var trans *Transition
			tr, trans = tr.Observe(r, "", at, th)
			if trans != nil {
				seen = append(seen, trans.To)
			}
		}
		return tr, seen
	}
	eq := func(name string, got, want []State) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: transitions %v, want %v", name, got, want)
		}
	}
	start := NewTracker(t0, false)
	_, seen := run(start, Thresholds{}, ResultUp, ResultDown, ResultUp, ResultDown, ResultUp)
	eq("blips never open", seen, []State{StateUp})
	_, seen = run(start, Thresholds{}, ResultUp, ResultDown, ResultUnknown, ResultDown, ResultUp)
	eq("an unknown between two downs neither breaks nor extends the streak", seen, []State{StateUp, StateDown, StateUp})
	_, seen = run(start, Thresholds{Recoveries: 2}, ResultDown, ResultDown, ResultUp, ResultDown, ResultUp, ResultUp)
	eq("recovery needs two ups in a row", seen, []State{StateDown, StateUp})
	_, seen = run(start, Thresholds{}, ResultUnknown, ResultUnknown, ResultUnknown)
	eq("unknowns alone leave PENDING", seen, nil)
	_, seen = run(start, Thresholds{}, ResultDegraded, ResultUp, ResultDegraded)
	eq("slow and fast", seen, []State{StateDegraded, StateUp, StateDegraded})
}

func TestTickUnknownAfterTwoIntervals(t *testing.T) {
	iv := time.Minute
	up, _ := NewTracker(t0, false).Observe(ResultUp, "", t0, Thresholds{})
	for _, c := range []struct {
		name string
		tr   Tracker
		at   time.Duration
		want State
	}{
		{"up, a known result 119 s ago", up, 119 * time.Second, StateUp},
		{"up, none for two intervals", up, 2 * iv, StateUnknown},
		{"pending since creation", NewTracker(t0, false), 2 * iv, StateUnknown},
		{"pending, young", NewTracker(t0, false), iv, StatePending},
		{"paused never goes unknown", NewTracker(t0, true), time.Hour, StatePaused},
	} {
		got, trans := c.tr.Tick(t0.Add(c.at), iv)
		if got.State != c.want || (trans != nil) != (c.want != c.tr.State) {
			t.Errorf("%s: %s %v", c.name, got.State, trans)
		}
	}
	// Unknown results do not keep a monitor out of UNKNOWN…
	tr, _ := up.Observe(ResultUnknown, "", t0.Add(90*time.Second), Thresholds{})
	if got, _ := tr.Tick(t0.Add(2*iv), iv); got.State != StateUnknown {
		t.Errorf("unknown results counted as known: %s", got.State)
	}
	// …and a known result brings it back.
	unk, _ := up.Tick(t0.Add(3*iv), iv)
	back, trans := unk.Observe(ResultUp, "", t0.Add(4*iv), Thresholds{})
	if back.State != StateUp || trans == nil || trans.From != StateUnknown {
		t.Errorf("recovery from UNKNOWN: %s %+v", back.State, trans)
	}
}

func TestPauseResumeMaintenance(t *testing.T) {
	down, _ := NewTracker(t0, false).Observe(ResultDown, "", t0, Thresholds{Confirmations: 1})
	p, tr := down.Pause(t0.Add(time.Minute))
	if p.State != StatePaused || tr == nil || p.Downs != 0 {
		t.Fatalf("pause: %+v %+v", p, tr)
	}
	r, tr := p.Resume(t0.Add(2 * time.Minute))
	if r.State != StatePending || tr == nil || !r.LastKnown.IsZero() {
		t.Fatalf("resume: %+v %+v", r, tr)
	}
	if _, tr := r.Resume(t0); tr != nil {
		t.Error("resuming a running monitor changed it")
	}

	up, _ := NewTracker(t0, false).Observe(ResultUp, "", t0, Thresholds{})
	m, tr := up.StartMaintenance(t0.Add(time.Minute))
	if m.State != StateMaintenance || tr == nil {
		t.Fatalf("maintenance: %+v", m)
	}
	// Downs during maintenance alert nobody…
	m, tr = m.Observe(ResultDown, "", t0.Add(2*time.Minute), Thresholds{})
	m, tr2 := m.Observe(ResultDown, "", t0.Add(3*time.Minute), Thresholds{})
	if m.State != StateMaintenance || tr != nil || tr2 != nil {
		t.Fatalf("down during maintenance: %+v", m)
	}
	// …and when it ends the confirmed outage shows.
	if e, tr := m.EndMaintenance(t0.Add(4*time.Minute), Thresholds{}); e.State != StateDown || tr == nil || tr.Cause == "" {
		t.Errorf("end of maintenance after two downs: %+v %+v", e, tr)
	}
	m2, _ := up.StartMaintenance(t0)
	if e, _ := m2.EndMaintenance(t0, Thresholds{}); e.State != StateUp {
		t.Errorf("end of quiet maintenance: %s", e.State)
	}
	fresh, _ := NewTracker(t0, false).StartMaintenance(t0)
	if e, _ := fresh.EndMaintenance(t0, Thresholds{}); e.State != StatePending {
		t.Errorf("end of maintenance with nothing known: %s", e.State)
	}
	if pm, tr := NewTracker(t0, true).StartMaintenance(t0); pm.State != StatePaused || tr != nil {
		t.Error("maintenance unpaused a paused monitor")
	}
}

// TestGap: a span no node was checking is UNKNOWN in the history, with its
// cause, quietly, until a check says more; the streaks do not move, since
// no check ran.
func TestGap(t *testing.T) {
	from, to := t0.Add(10*time.Minute), t0.Add(10*time.Minute+33*time.Second)
	for _, s := range []State{StatePending, StateUp, StateDegraded, StateDown} {
		tr := Tracker{State: s, Since: t0, Downs: 2, Ups: 0, LastKnown: t0.Add(9 * time.Minute), Last: ResultDown}
		got, move := tr.Gap(from, to)
		wantCause := "no Tocsin node was checking from 2026-11-21T12:10:00Z to 2026-11-21T12:10:33Z"
		if move == nil || *move != (Transition{From: s, To: StateUnknown, At: from, ConfirmedAt: to, Cause: wantCause, Quiet: true}) {
			t.Errorf("%s: into the gap %+v, want a quiet move with cause %q, confirmed at its end", s, move, wantCause)
		}
		want := tr
		want.State, want.Since = StateUnknown, from
		if got != want {
			t.Errorf("%s: tracker %+v, want %+v", s, got, want)
		}
	}

	// The check after it moves it as from UNKNOWN: an up check to UP, one
	// failure short of the confirmations nowhere.
	tr, _ := Tracker{State: StateUp, Since: t0, LastKnown: t0, Last: ResultUp, Ups: 1}.Gap(from, to)
	if _, move := tr.Observe(ResultDown, "refused", to, Thresholds{Confirmations: 2}); move != nil {
		t.Errorf("one failure after the gap: %+v", move)
	}
	if _, move := tr.Observe(ResultUp, "", to, Thresholds{}); move == nil || move.From != StateUnknown || move.To != StateUp || !move.At.Equal(to) {
		t.Errorf("a passing check after the gap: %+v", move)
	}

	t.Run("no gap to record", func(t *testing.T) {
		for _, s := range []State{StatePaused, StateMaintenance, StateUnknown} {
			tr := Tracker{State: s, Since: t0}
			if got, move := tr.Gap(from, to); got != tr || move != nil {
				t.Errorf("%s: %+v, %+v; want no change", s, got, move)
			}
		}
		tr := Tracker{State: StateUp, Since: t0}
		if got, move := tr.Gap(to, to); got != tr || move != nil {
			t.Errorf("an empty span: %+v, %+v", got, move)
		}
		// A span over before the current state began.
		tr = Tracker{State: StateUp, Since: to}
		if got, move := tr.Gap(from, to); got != tr || move != nil {
			t.Errorf("a span before the state: %+v, %+v", got, move)
		}
	})

	t.Run("begins no earlier than the state", func(t *testing.T) {
		since := from.Add(3 * time.Second)
		_, move := Tracker{State: StateUp, Since: since}.Gap(from, to)
		if move == nil || !move.At.Equal(since) || move.Cause != GapCause(since, to) {
			t.Fatalf("transition %+v, want the gap from %v", move, since)
		}
	})
}

// TestOutageDatedFromFirstFailure (DESIGN §7): a confirmed outage begins at
// the first failed check of the streak that confirmed it and is confirmed
// by the last; a recovery likewise from the first passing check of its
// streak. A blip changes nothing, and no start reaches back before the
// current state began (UNKNOWN, a gap, the end of a maintenance window).
func TestOutageDatedFromFirstFailure(t *testing.T) {
	iv := 10 * time.Second
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * iv) }
	type step struct {
		r    Result
		tick bool // Tick at this step instead of a result
	}
	type want struct {
		to              State
		at, confirmedAt time.Time // confirmedAt zero: confirmed when it began
	}
	run := func(tr Tracker, th Thresholds, first int, steps ...step) (Tracker, []Transition) {
		var trs []Transition
		for i, s := range steps {
			var tn *Transition
			if s.tick {
				tr, tn = tr.Tick(at(first+i), iv)
			} else {
				tr, tn = tr.Observe(s.r, "", at(first+i), th)
			}
			if tn != nil {
				trs = append(trs, *tn)
			}
		}
		return tr, trs
	}
	up, down, unknown := step{r: ResultUp}, step{r: ResultDown}, step{r: ResultUnknown}
	degraded, tick := step{r: ResultDegraded}, step{tick: true}
	wantTrs := func(name string, got []Transition, want ...want) {
		t.Helper()
		ok := len(got) == len(want)
		for i := 0; ok && i < len(got); i++ {
			ok = got[i].To == want[i].to && got[i].At.Equal(want[i].at) && got[i].ConfirmedAt.Equal(want[i].confirmedAt)
		}
		if !ok {
			t.Errorf("%s: transitions %+v, want %+v", name, got, want)
		}
	}
	three := Thresholds{Confirmations: 3}
	fresh := NewTracker(at(0), false)

	_, trs := run(fresh, three, 1, up, down, down, down, up)
	wantTrs(t.Name()+": confirmations 3", trs, want{StateUp, at(1), time.Time{}}, want{StateDown, at(2), at(4)}, want{StateUp, at(5), time.Time{}})
	down3, _ := run(fresh, three, 1, up, down, down, down)
	if !down3.Since.Equal(at(2)) {
		t.Errorf("DOWN since %v, want the first failed check %v", down3.Since, at(2))
	}
	if tr := (Transition{At: at(2), ConfirmedAt: at(4)}); !tr.Confirmed().Equal(at(4)) || !(Transition{At: at(2)}).Confirmed().Equal(at(2)) {
		t.Error("Confirmed is not the confirmation time, or the start when confirmed at once")
	}

	_, trs = run(fresh, Thresholds{Recoveries: 3}, 1, down, down, up, degraded, up)
	wantTrs("recoveries 3", trs, want{StateDown, at(1), at(2)}, want{StateUp, at(3), at(5)})
	_, trs = run(fresh, Thresholds{Recoveries: 2}, 1, down, down, up, degraded)
	wantTrs("a recovery to DEGRADED", trs, want{StateDown, at(1), at(2)}, want{StateDegraded, at(3), at(4)})

	_, trs = run(fresh, three, 1, up, down, down, up, down, up)
	wantTrs("blips count as the state they interrupt", trs, want{StateUp, at(1), time.Time{}})
	_, trs = run(fresh, three, 1, up, down, unknown, down, unknown, down)
	wantTrs("unknown results neither break nor restart the streak", trs, want{StateUp, at(1), time.Time{}}, want{StateDown, at(2), at(6)})
	_, trs = run(fresh, three, 1, up, degraded, up)
	wantTrs("DEGRADED and back take effect at once", trs, want{StateUp, at(1), time.Time{}}, want{StateDegraded, at(2), time.Time{}}, want{StateUp, at(3), time.Time{}})

	// A streak across UNKNOWN counts from its first failure after it.
	_, trs = run(fresh, three, 1, up, down, unknown, tick, down, down)
	wantTrs("across UNKNOWN", trs, want{StateUp, at(1), time.Time{}}, want{StateUnknown, at(4), time.Time{}}, want{StateDown, at(5), at(6)})
	_, trs = run(fresh, Thresholds{Confirmations: 2}, 1, up, down, unknown, tick, down)
	wantTrs("confirmed by the first check after UNKNOWN", trs, want{StateUp, at(1), time.Time{}}, want{StateUnknown, at(4), time.Time{}}, want{StateDown, at(5), time.Time{}})

	// Across a gap: the check that ends it is where the outage starts.
	tr, _ := run(fresh, three, 1, up, down, down)
	tr, gap := tr.Gap(at(4), at(9))
	if gap == nil || !gap.ConfirmedAt.Equal(at(9)) || !gap.Quiet || !gap.At.Equal(at(4)) {
		t.Fatalf("gap %+v, want a quiet UNKNOWN from its start, confirmed when it ended", gap)
	}
	tr, trs = run(tr, three, 9, down)
	wantTrs("across a gap", trs, want{StateDown, at(9), time.Time{}})
	if !tr.Since.Equal(at(9)) {
		t.Errorf("DOWN since %v, want the end of the gap %v", tr.Since, at(9))
	}

	// Maintenance: its end is never backdated into the window, and an
	// outage after it counts from its first check after it.
	tr, _ = run(fresh, three, 1, up, down)
	tr, _ = tr.StartMaintenance(at(2))
	tr, _ = run(tr, three, 3, down)
	tr, end := tr.EndMaintenance(at(4), three)
	if end == nil || end.To != StatePending || !end.At.Equal(at(4)) || !end.ConfirmedAt.IsZero() {
		t.Fatalf("end of maintenance: %+v", end)
	}
	_, trs = run(tr, three, 5, down)
	wantTrs("a streak through maintenance, confirmed after it", trs, want{StateDown, at(5), time.Time{}})
	tr, _ = run(fresh, three, 1, up, down)
	tr, _ = tr.StartMaintenance(at(2))
	tr, _ = run(tr, three, 3, down, down)
	if _, end := tr.EndMaintenance(at(5), three); end == nil || end.To != StateDown || !end.At.Equal(at(5)) || !end.ConfirmedAt.IsZero() {
		t.Errorf("an outage confirmed in maintenance shows at its end, not before: %+v", end)
	}

	// A result dated before the state began (another node's clock
	// behind) takes effect when it says, as it always did.
	_, trs = run(NewTracker(at(100), false), three, 50, up)
	wantTrs("a result before the state began", trs, want{StateUp, at(50), time.Time{}})

	// Pausing forgets the streak.
	tr, _ = run(fresh, three, 1, up, down, down)
	tr, _ = tr.Pause(at(4))
	tr, _ = tr.Resume(at(5))
	_, trs = run(tr, three, 6, down, down, down)
	wantTrs("after a pause", trs, want{StateDown, at(6), at(8)})
}
