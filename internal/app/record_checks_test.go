package app

// The decisions of recording a check and of pausing, without a database:
// what a finished check moves of its monitor's runtime row. Internal,
// because they are unexported.

import (
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

func TestCheckedMovesTheRuntime(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	base := func() store.Runtime {
		return store.Runtime{Seq: 7, MonitorID: "mon_x", Interval: time.Minute, NextDue: t0,
			LeaseOwner: "node/abc", LeaseUntil: t0.Add(2 * time.Minute),
			Tracker: monitor.Tracker{State: monitor.StateUp, Since: t0.Add(-time.Hour), Ups: 3,
				LastKnown: t0.Add(-time.Minute), Last: monitor.ResultUp}}
	}
	done := func(r monitor.Result, started, due time.Time) monitor.Completed {
		return monitor.Completed{Seq: 7, Thresholds: monitor.Thresholds{Confirmations: 1},
			Observation: monitor.Observation{MonitorID: "mon_x", StartedAt: started, Due: due, Result: r,
				Reason: "it said " + string(r), Latency: 42 * time.Millisecond, StatusCode: 503}}
	}

	t.Run("down confirmed", func(t *testing.T) {
		rt := base()
		at := t0.Add(3 * time.Millisecond)
		tr := checked(&rt, done(monitor.ResultDown, at, t0))
		if tr == nil || tr.From != monitor.StateUp || tr.To != monitor.StateDown || !tr.At.Equal(at) {
			t.Fatalf("transition %+v, want UP→DOWN at %v", tr, at)
		}
		want := monitor.LastCheck{At: at, Result: monitor.ResultDown, Reason: "it said down", Latency: 42 * time.Millisecond, StatusCode: 503}
		if rt.Last != want {
			t.Fatalf("last check %+v, want %+v", rt.Last, want)
		}
		// The next slot follows the one it ran late for.
		if next := monitor.NextSlot("mon_x", time.Minute, at); !rt.NextDue.Equal(next) {
			t.Fatalf("next due %v, want %v", rt.NextDue, next)
		}
		if rt.LeaseOwner != "" || !rt.LeaseUntil.IsZero() {
			t.Fatalf("lease %q until %v, want released", rt.LeaseOwner, rt.LeaseUntil)
		}
	})

	t.Run("started before its slot", func(t *testing.T) {
		rt := base()
		due := t0.Add(time.Minute)
		checked(&rt, done(monitor.ResultUp, t0, due))
		if next := monitor.NextSlot("mon_x", time.Minute, due); !rt.NextDue.Equal(next) {
			t.Fatalf("next due %v, want the slot after %v: %v", rt.NextDue, due, next)
		}
	})

	t.Run("an older check keeps the latest", func(t *testing.T) {
		rt := base()
		rt.Last = monitor.LastCheck{At: t0.Add(time.Hour), Result: monitor.ResultUp}
		checked(&rt, done(monitor.ResultDown, t0, t0))
		if !rt.Last.At.Equal(t0.Add(time.Hour)) || rt.Last.Result != monitor.ResultUp {
			t.Fatalf("last check %+v, want the later one kept", rt.Last)
		}
	})

	t.Run("unknown says nothing yet", func(t *testing.T) {
		rt := base()
		if tr := checked(&rt, done(monitor.ResultUnknown, t0, t0)); tr != nil || rt.Tracker.State != monitor.StateUp {
			t.Fatalf("transition %+v, state %s; want none, UP", tr, rt.Tracker.State)
		}
	})

	t.Run("paused stays never due", func(t *testing.T) {
		rt := base()
		rt.NextDue = time.Time{}
		rt.Tracker = monitor.Tracker{State: monitor.StatePaused, Since: t0.Add(-time.Hour)}
		if tr := checked(&rt, done(monitor.ResultDown, t0, t0)); tr != nil || !rt.NextDue.IsZero() {
			t.Fatalf("transition %+v, next due %v; want none, never", tr, rt.NextDue)
		}
	})
}

// TestGapBeforeACheck: a check that starts more than an interval after
// its slot ends a span no node was checking; a paused monitor has none.
func TestGapBeforeACheck(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rt := func(s monitor.State) store.Runtime {
		return store.Runtime{Seq: 7, MonitorID: "mon_x", Interval: time.Minute, NextDue: t0,
			Tracker: monitor.Tracker{State: s, Since: t0.Add(-time.Hour)}}
	}
	late := func(by time.Duration) monitor.Completed {
		return monitor.Completed{Seq: 7, Observation: monitor.Observation{MonitorID: "mon_x", StartedAt: t0.Add(by), Due: t0,
			Result: monitor.ResultUnknown}}
	}
	r := rt(monitor.StateUp)
	if trs := gap(&r, late(time.Minute)); trs != nil || r.Tracker != rt(monitor.StateUp).Tracker {
		t.Fatalf("late by one interval: %+v, tracker %+v; want no gap", trs, r.Tracker)
	}
	tr := gap(&r, late(time.Minute+time.Second))
	if tr == nil || tr.To != monitor.StateUnknown || !tr.At.Equal(t0) || !tr.Quiet || r.Tracker.State != monitor.StateUnknown {
		t.Fatalf("late by more than an interval: %+v, tracker %+v", tr, r.Tracker)
	}
	// The check itself, which could not tell, leaves it UNKNOWN: UP is
	// not written before a check says so.
	if tr := checked(&r, late(time.Minute+time.Second)); tr != nil || r.Tracker.State != monitor.StateUnknown {
		t.Fatalf("the check after the gap: %+v, state %s", tr, r.Tracker.State)
	}
	r = rt(monitor.StatePaused)
	if trs := gap(&r, late(time.Hour)); trs != nil || r.Tracker.State != monitor.StatePaused {
		t.Fatalf("paused: %+v, state %s; want no gap", trs, r.Tracker.State)
	}
}

func TestPausedMovesTheRuntime(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rt := store.Runtime{Seq: 7, MonitorID: "mon_x", Interval: time.Minute, NextDue: t0, LeaseOwner: "node/abc",
		LeaseUntil: t0.Add(time.Minute), Tracker: monitor.Tracker{State: monitor.StateDown, Since: t0.Add(-time.Hour), Downs: 4}}
	tr := paused(&rt, true, t0)
	if tr == nil || tr.To != monitor.StatePaused || !rt.NextDue.IsZero() || rt.LeaseOwner != "" || !rt.LeaseUntil.IsZero() {
		t.Fatalf("pause: transition %+v, runtime %+v", tr, rt)
	}
	at := t0.Add(10 * time.Minute)
	tr = paused(&rt, false, at)
	if tr == nil || tr.From != monitor.StatePaused || tr.To != monitor.StatePending || !tr.At.Equal(at) {
		t.Fatalf("resume: transition %+v", tr)
	}
	if next := monitor.NextSlot("mon_x", time.Minute, at); !rt.NextDue.Equal(next) {
		t.Fatalf("resumed: next due %v, want %v", rt.NextDue, next)
	}
}
