package heartbeat

import (
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

var rt0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

func settings(t *testing.T, s Schedule, maxRuntime time.Duration) Settings {
	t.Helper()
	return Settings{Plan: mustPlan(t, s), MaxRuntime: maxRuntime}
}

// hourly is a period schedule: every hour, 5 minutes' grace.
var hourly = Schedule{PeriodSeconds: 3600, GraceSeconds: 300}

// everyTen is a cron schedule: at minutes 0, 10, 20… with 1 minute's grace.
var everyTen = Schedule{Cron: "*/10 * * * *", Timezone: "UTC", GraceSeconds: 60}

// coverage stands for the service's record of receiving pings: one gap or
// none. It records the spans the state machine asks about.
type coverage struct {
	gapFrom, gapTo time.Time // a gap in which nothing was received; zero: none
	asked          [][2]time.Time
}

func (c *coverage) covered(from, to time.Time) (bool, time.Time, time.Time) {
	c.asked = append(c.asked, [2]time.Time{from, to})
	if !c.gapFrom.IsZero() && c.gapFrom.Before(to) && c.gapTo.After(from) {
		return false, c.gapFrom, c.gapTo
	}
	return true, time.Time{}, time.Time{}
}

func ping(sig Signal, exit int, rid string, at time.Time) Ping {
	return Ping{Signal: sig, ExitCode: exit, RunID: rid, At: at}
}

func wantTransition(t *testing.T, tr *monitor.Transition, to monitor.State, cause string) {
	t.Helper()
	switch {
	case tr == nil && to == "":
	case tr == nil:
		t.Fatalf("no transition, want → %s (%s)", to, cause)
	case to == "":
		t.Fatalf("transition %s → %s (%s), want none", tr.From, tr.To, tr.Cause)
	case tr.To != to || !strings.Contains(tr.Cause, cause):
		t.Fatalf("transition → %s (%q), want → %s containing %q", tr.To, tr.Cause, to, cause)
	}
}

func TestPingSignals(t *testing.T) {
	s := settings(t, hourly, 0)
	for _, c := range []struct {
		name      string
		ping      Ping
		state     monitor.State
		cause     string
		exitCode  int
		completed Signal
	}{
		{"success", ping(SignalSuccess, -1, "", rt0), monitor.StateUp, "success", -1, SignalSuccess},
		{"exit 0", ping(SignalSuccess, 0, "", rt0), monitor.StateUp, "success", 0, SignalSuccess},
		{"fail", ping(SignalFail, -1, "", rt0), monitor.StateDown, "failure: the job reported failure", -1, SignalFail},
		{"exit 3", ping(SignalFail, 3, "", rt0), monitor.StateDown, "exit code 3", 3, SignalFail},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, tr, dur := New(rt0.Add(-time.Hour), false).Ping(c.ping, s)
			wantTransition(t, tr, c.state, c.cause)
			if r.LastCompletion != c.completed || r.LastExitCode != c.exitCode || dur != -1 || r.LastDuration != -1 {
				t.Errorf("runtime %+v, duration %v", r, dur)
			}
			// Each completion expects the next run a period later.
			if want := rt0.Add(time.Hour + 5*time.Minute); !r.Deadline.Equal(want) || !r.Wake(s).Equal(want) {
				t.Errorf("deadline %v, wake %v, want %v", r.Deadline, r.Wake(s), want)
			}
		})
	}
}

func TestPingPairsRuns(t *testing.T) {
	s := settings(t, hourly, time.Hour)
	r := New(rt0, false)
	r, tr, _ := r.Ping(ping(SignalStart, -1, "a", rt0), s)
	wantTransition(t, tr, "", "") // a start alone says nothing of success
	r, _, _ = r.Ping(ping(SignalStart, -1, "b", rt0.Add(time.Minute)), s)
	r, _, _ = r.Ping(ping(SignalStart, -1, "", rt0.Add(2*time.Minute)), s)
	if len(r.Open) != 3 || !r.LastStart.Equal(rt0.Add(2*time.Minute)) {
		t.Fatalf("open runs %+v", r.Open)
	}
	// By run id: a's end takes 10 minutes from a's start.
	r, tr, dur := r.Ping(ping(SignalSuccess, -1, "a", rt0.Add(10*time.Minute)), s)
	wantTransition(t, tr, monitor.StateUp, "success")
	if dur != 10*time.Minute || r.LastDuration != dur || len(r.Open) != 2 {
		t.Fatalf("duration %v, open %+v", dur, r.Open)
	}
	// Without one: the latest open start (the unnamed one at +2 min).
	_, _, dur = r.Ping(ping(SignalSuccess, -1, "", rt0.Add(12*time.Minute)), s)
	if dur != 10*time.Minute {
		t.Fatalf("duration %v, want from the latest start", dur)
	}
	// An id no start carries: a completion without a duration.
	_, _, dur = r.Ping(ping(SignalSuccess, -1, "zz", rt0.Add(12*time.Minute)), s)
	if dur != -1 {
		t.Fatalf("duration %v of an unpaired completion", dur)
	}
}

func TestPingWhilePausedOrInMaintenance(t *testing.T) {
	s := settings(t, hourly, 0)
	paused := New(rt0, true)
	r, tr, _ := paused.Ping(ping(SignalFail, 1, "", rt0), s)
	wantTransition(t, tr, "", "")
	if r.State != monitor.StatePaused || !r.LastPing.IsZero() || !r.Deadline.IsZero() {
		t.Fatalf("a paused heartbeat moved: %+v", r)
	}
	up, _, _ := New(rt0, false).Ping(ping(SignalSuccess, -1, "", rt0), s)
	held, tr := up.EnterMaintenance(rt0.Add(time.Minute), "window began")
	wantTransition(t, tr, monitor.StateMaintenance, "window began")
	r, tr, _ = held.Ping(ping(SignalFail, 2, "", rt0.Add(2*time.Minute)), s)
	wantTransition(t, tr, "", "")
	if r.State != monitor.StateMaintenance || r.LastExitCode != 2 || !r.LastPing.Equal(rt0.Add(2*time.Minute)) {
		t.Fatalf("in maintenance a ping is recorded without a transition: %+v", r)
	}
}

func TestSweepLateOverrunAndOutage(t *testing.T) {
	s := settings(t, hourly, 30*time.Minute)
	up, _, _ := New(rt0, false).Ping(ping(SignalSuccess, -1, "", rt0), s)
	deadline := rt0.Add(65 * time.Minute)

	t.Run("not yet due", func(t *testing.T) {
		r, trs := up.Sweep(deadline.Add(-time.Second), s, (&coverage{}).covered)
		if len(trs) != 0 || !r.Deadline.Equal(deadline) {
			t.Fatalf("%+v %+v", trs, r)
		}
	})
	t.Run("late", func(t *testing.T) {
		c := &coverage{}
		r, trs := up.Sweep(deadline, s, c.covered)
		if len(trs) != 1 {
			t.Fatalf("transitions %+v", trs)
		}
		wantTransition(t, &trs[0], monitor.StateDown, "late: no ping since")
		if !r.Late || !r.Deadline.IsZero() || !r.Wake(s).Equal(Never) {
			t.Fatalf("after a late verdict nothing is due until a ping: %+v", r)
		}
		// A period schedule: any ping since the last would have counted.
		if len(c.asked) != 1 || !c.asked[0][0].Equal(rt0) || !c.asked[0][1].Equal(deadline) {
			t.Fatalf("asked about %v, want [%v %v]", c.asked, rt0, deadline)
		}
		// A good ping recovers.
		r, tr, _ := r.Ping(ping(SignalSuccess, -1, "", deadline.Add(time.Minute)), s)
		wantTransition(t, tr, monitor.StateUp, "success")
		if r.Late {
			t.Fatal("still late after a ping")
		}
	})
	t.Run("outage since the last ping", func(t *testing.T) {
		c := &coverage{gapFrom: rt0.Add(10 * time.Minute), gapTo: rt0.Add(20 * time.Minute)}
		r, trs := up.Sweep(deadline, s, c.covered)
		if len(trs) != 1 {
			t.Fatalf("transitions %+v", trs)
		}
		wantTransition(t, &trs[0], monitor.StateUnknown, "not receiving pings from 2026-02-02T12:10:00Z to 2026-02-02T12:20:00Z")
		// It waits for the next run, listening from the passed deadline.
		if want := rt0.Add(2*time.Hour + 5*time.Minute); !r.Deadline.Equal(want) || !r.WindowStart.Equal(deadline) {
			t.Fatalf("deadline %v window %v, want %v from %v", r.Deadline, r.WindowStart, want, deadline)
		}
		// That run missed with the service listening: DOWN.
		r, trs = r.Sweep(rt0.Add(2*time.Hour+5*time.Minute), s, c.covered)
		if len(trs) != 1 {
			t.Fatalf("transitions %+v", trs)
		}
		wantTransition(t, &trs[0], monitor.StateDown, "late")
	})
	t.Run("several runs missed in an outage", func(t *testing.T) {
		c := &coverage{gapFrom: rt0.Add(time.Minute), gapTo: rt0.Add(5 * time.Hour)}
		r, trs := up.Sweep(rt0.Add(6*time.Hour+10*time.Minute), s, c.covered)
		// The runs due by +1:05 … +5:05 could each have pinged in the
		// outage (a period schedule listens from the last deadline): one
		// UNKNOWN. The one due by +6:05 was listened for throughout: DOWN.
		if len(trs) != 2 || trs[0].To != monitor.StateUnknown || trs[1].To != monitor.StateDown ||
			!trs[1].At.Equal(rt0.Add(6*time.Hour+5*time.Minute)) {
			t.Fatalf("transitions %+v", trs)
		}
		if r.State != monitor.StateDown {
			t.Fatalf("state %s", r.State)
		}
	})
	t.Run("overrun", func(t *testing.T) {
		started, _, _ := up.Ping(ping(SignalStart, -1, "", rt0.Add(time.Minute)), s)
		if want := rt0.Add(31 * time.Minute); !started.Wake(s).Equal(want) {
			t.Fatalf("wake %v, want the overrun at %v", started.Wake(s), want)
		}
		r, trs := started.Sweep(rt0.Add(31*time.Minute), s, (&coverage{}).covered)
		if len(trs) != 1 {
			t.Fatalf("transitions %+v", trs)
		}
		wantTransition(t, &trs[0], monitor.StateDown, "overrun: the run started at 2026-02-02T12:01:00Z did not end within 30m0s")
		// Reported once.
		if _, trs := r.Sweep(rt0.Add(32*time.Minute), s, (&coverage{}).covered); len(trs) != 0 {
			t.Fatalf("overrun reported again: %+v", trs)
		}
		// In an outage, an overrun is UNKNOWN: the end may have been lost.
		c := &coverage{gapFrom: rt0.Add(20 * time.Minute), gapTo: rt0.Add(25 * time.Minute)}
		_, trs = started.Sweep(rt0.Add(31*time.Minute), s, c.covered)
		if len(trs) != 1 {
			t.Fatalf("transitions %+v", trs)
		}
		wantTransition(t, &trs[0], monitor.StateUnknown, "the end of the run started at")
	})
	t.Run("paused and maintenance hold", func(t *testing.T) {
		paused, _ := up.Pause(rt0.Add(time.Minute))
		if _, trs := paused.Sweep(rt0.Add(10*time.Hour), s, (&coverage{}).covered); len(trs) != 0 {
			t.Fatalf("paused: %+v", trs)
		}
		held, _ := up.EnterMaintenance(rt0.Add(time.Minute), "window")
		r, trs := held.Sweep(rt0.Add(3*time.Hour), s, (&coverage{}).covered)
		if len(trs) != 0 || r.State != monitor.StateMaintenance || !r.Deadline.After(rt0.Add(3*time.Hour)) {
			t.Fatalf("maintenance: %+v, %+v", trs, r)
		}
	})
}

// On a cron schedule only the span from the run's expected instant to its
// deadline can hide the ping that mattered: a ping before it counts for
// the previous run.
func TestSweepCronListensFromTheExpectedRun(t *testing.T) {
	s := settings(t, everyTen, 0)
	up, _, _ := New(rt0, false).Ping(ping(SignalSuccess, -1, "", rt0.Add(30*time.Second)), s)
	expected, deadline := rt0.Add(10*time.Minute), rt0.Add(11*time.Minute)
	if !up.Expected.Equal(expected) || !up.Deadline.Equal(deadline) {
		t.Fatalf("expected %v by %v", up.Expected, up.Deadline)
	}
	// An outage that ended before the run was due hides nothing.
	c := &coverage{gapFrom: rt0.Add(2 * time.Minute), gapTo: rt0.Add(3 * time.Minute)}
	_, trs := up.Sweep(deadline, s, c.covered)
	if len(trs) != 1 {
		t.Fatalf("transitions %+v", trs)
	}
	wantTransition(t, &trs[0], monitor.StateDown, "late")
	if len(c.asked) != 1 || !c.asked[0][0].Equal(expected) || !c.asked[0][1].Equal(deadline) {
		t.Fatalf("asked about %v, want [%v %v]", c.asked, expected, deadline)
	}
	// One across the expected instant may have: UNKNOWN.
	c = &coverage{gapFrom: rt0.Add(9 * time.Minute), gapTo: rt0.Add(10*time.Minute + 30*time.Second)}
	_, trs = up.Sweep(deadline, s, c.covered)
	if len(trs) != 1 {
		t.Fatalf("transitions %+v", trs)
	}
	wantTransition(t, &trs[0], monitor.StateUnknown, "not receiving pings")

	// The same outage before the run, on a period schedule: UNKNOWN, for
	// a ping then would have moved the deadline.
	ps := settings(t, Schedule{PeriodSeconds: 600, GraceSeconds: 60}, 0)
	pup, _, _ := New(rt0, false).Ping(ping(SignalSuccess, -1, "", rt0.Add(30*time.Second)), ps)
	c = &coverage{gapFrom: rt0.Add(2 * time.Minute), gapTo: rt0.Add(3 * time.Minute)}
	_, trs = pup.Sweep(pup.Deadline, ps, c.covered)
	if len(trs) != 1 {
		t.Fatalf("transitions %+v", trs)
	}
	wantTransition(t, &trs[0], monitor.StateUnknown, "not receiving pings")
}

// wantQuiet checks that tr is a move to `to` at at, quiet or not.
func wantQuiet(t *testing.T, tr *monitor.Transition, to monitor.State, at time.Time, quiet bool) {
	t.Helper()
	if tr == nil {
		t.Fatalf("no transition, want → %s at %v", to, at)
	}
	if tr.To != to || !tr.At.Equal(at) || tr.Quiet != quiet {
		t.Fatalf("transition %s → %s at %v (quiet %v), want → %s at %v (quiet %v)", tr.From, tr.To, tr.At, tr.Quiet, to, at, quiet)
	}
}

// An outage of this service is UNKNOWN from its start, quietly; the first
// verdict after it that agrees with the state it interrupted restores it
// quietly too, and one that does not is news.
func TestGap(t *testing.T) {
	s := settings(t, hourly, 0)
	up, _, _ := New(rt0, false).Ping(ping(SignalSuccess, -1, "", rt0), s)
	from, to := rt0.Add(10*time.Minute), rt0.Add(11*time.Minute)

	t.Run("up, then a ping", func(t *testing.T) {
		r, tr := up.Gap(from, to, s)
		wantQuiet(t, tr, monitor.StateUnknown, from, true)
		wantTransition(t, tr, monitor.StateUnknown, "not receiving pings from 2026-02-02T12:10:00Z to 2026-02-02T12:11:00Z")
		if r.Interrupted != monitor.StateUp || !r.Deadline.Equal(up.Deadline) {
			t.Fatalf("after the gap: %+v", r)
		}
		if again, tr := r.Gap(to, to.Add(time.Minute), s); tr != nil || again.Interrupted != monitor.StateUp {
			t.Fatalf("a second gap moved an UNKNOWN heartbeat: %+v", tr)
		}
		// A start says nothing; the completion after it restores UP.
		r, tr, _ = r.Ping(ping(SignalStart, -1, "", to.Add(time.Minute)), s)
		wantTransition(t, tr, "", "")
		r, tr, _ = r.Ping(ping(SignalSuccess, -1, "", to.Add(2*time.Minute)), s)
		wantQuiet(t, tr, monitor.StateUp, to.Add(2*time.Minute), true)
		if r.Interrupted != "" {
			t.Fatalf("still interrupted: %+v", r)
		}
		// And the next change is news again.
		_, tr, _ = r.Ping(ping(SignalFail, -1, "", to.Add(3*time.Minute)), s)
		wantQuiet(t, tr, monitor.StateDown, to.Add(3*time.Minute), false)
	})
	t.Run("up, then a failure", func(t *testing.T) {
		r, _ := up.Gap(from, to, s)
		_, tr, _ := r.Ping(ping(SignalFail, 2, "", to.Add(time.Minute)), s)
		wantQuiet(t, tr, monitor.StateDown, to.Add(time.Minute), false)
	})
	t.Run("up, then a missed run", func(t *testing.T) {
		r, _ := up.Gap(from, to, s)
		// The run due by +1:05 could have pinged in the outage: still
		// UNKNOWN, nothing said. The next, listened for throughout: DOWN.
		r, trs := r.Sweep(up.Deadline, s, (&coverage{gapFrom: from, gapTo: to}).covered)
		if len(trs) != 0 || r.State != monitor.StateUnknown {
			t.Fatalf("the deadline in the outage: %+v, %+v", trs, r)
		}
		_, trs = r.Sweep(r.Deadline, s, (&coverage{gapFrom: from, gapTo: to}).covered)
		if len(trs) != 1 {
			t.Fatalf("transitions %+v", trs)
		}
		wantQuiet(t, &trs[0], monitor.StateDown, rt0.Add(2*time.Hour+5*time.Minute), false)
	})
	t.Run("late, then the next run missed too", func(t *testing.T) {
		late, _ := up.Sweep(up.Deadline, s, (&coverage{}).covered)
		late.Late = false // the store keeps only what a deadline of zero says
		outFrom, outTo := up.Deadline.Add(time.Hour), up.Deadline.Add(time.Hour+time.Minute)
		r, tr := late.Gap(outFrom, outTo, s)
		wantQuiet(t, tr, monitor.StateUnknown, outFrom, true)
		// It waits for the run after the outage; missing it, it is DOWN
		// again, as it was: quietly.
		if want := outTo.Add(time.Hour + 5*time.Minute); !r.Deadline.Equal(want) || !r.WindowStart.Equal(outTo) {
			t.Fatalf("deadline %v from %v, want %v from %v", r.Deadline, r.WindowStart, want, outTo)
		}
		down, trs := r.Sweep(r.Deadline, s, (&coverage{gapFrom: outFrom, gapTo: outTo}).covered)
		if len(trs) != 1 {
			t.Fatalf("transitions %+v", trs)
		}
		wantQuiet(t, &trs[0], monitor.StateDown, outTo.Add(time.Hour+5*time.Minute), true)
		if down.Interrupted != "" {
			t.Fatalf("after the quiet return: %+v", down)
		}
		// A success instead is news: the job recovered.
		_, tr, _ = r.Ping(ping(SignalSuccess, -1, "", outTo.Add(time.Minute)), s)
		wantQuiet(t, tr, monitor.StateUp, outTo.Add(time.Minute), false)
	})
	t.Run("from the last ping or change", func(t *testing.T) {
		pinged, _, _ := up.Ping(ping(SignalSuccess, -1, "", from.Add(30*time.Second)), s)
		_, tr := pinged.Gap(from, to, s)
		wantQuiet(t, tr, monitor.StateUnknown, from.Add(30*time.Second), true)
		// Heard from since the outage ended: left alone.
		pinged, _, _ = up.Ping(ping(SignalSuccess, -1, "", to), s)
		if r, tr := pinged.Gap(from, to, s); tr != nil || r.State != monitor.StateUp {
			t.Fatalf("a heartbeat pinged at the outage's end moved: %+v", tr)
		}
	})
	t.Run("nothing to lose", func(t *testing.T) {
		paused, _ := up.Pause(rt0.Add(time.Minute))
		held, _ := up.EnterMaintenance(rt0.Add(time.Minute), "window")
		for _, r := range []Runtime{New(rt0, false), paused, held} {
			if _, tr := r.Gap(from, to, s); tr != nil {
				t.Errorf("%s moved: %+v", r.State, tr)
			}
		}
	})
	t.Run("other moves forget the interruption", func(t *testing.T) {
		r, _ := up.Gap(from, to, s)
		r, tr := r.EnterMaintenance(to.Add(time.Minute), "window")
		wantQuiet(t, tr, monitor.StateMaintenance, to.Add(time.Minute), false)
		_, tr = r.LeaveMaintenance(to.Add(2*time.Minute), "window ended")
		wantQuiet(t, tr, monitor.StateUp, to.Add(2*time.Minute), false)
	})
	t.Run("a deadline the sweep finds in an outage", func(t *testing.T) {
		// Without Gap first, the sweep dates the outage from its start.
		c := &coverage{gapFrom: from, gapTo: to}
		r, trs := up.Sweep(up.Deadline, s, c.covered)
		if len(trs) != 1 {
			t.Fatalf("transitions %+v", trs)
		}
		wantQuiet(t, &trs[0], monitor.StateUnknown, from, true)
		_, tr, _ := r.Ping(ping(SignalSuccess, -1, "", up.Deadline.Add(time.Minute)), s)
		wantQuiet(t, tr, monitor.StateUp, up.Deadline.Add(time.Minute), true)
	})
}
