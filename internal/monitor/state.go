package monitor

import (
	"fmt"
	"time"
)

// Result is what one check concluded (DESIGN §4).
type Result string

const (
	ResultUp       Result = "up"
	ResultDegraded Result = "degraded"
	ResultDown     Result = "down"
	// ResultUnknown: the probe could not tell. It never counts as up or
	// down, never opens an incident, and shows up as lost coverage.
	ResultUnknown Result = "unknown"
)

// Results lists every result.
var Results = []Result{ResultUp, ResultDegraded, ResultDown, ResultUnknown}

// Known reports whether the result says something about the target.
func (r Result) Known() bool { return r == ResultUp || r == ResultDegraded || r == ResultDown }

// Thresholds say how many consecutive results change a state: a single
// blip opens no incident.
type Thresholds struct {
	Confirmations int // consecutive downs before DOWN; default 2
	Recoveries    int // consecutive ups (or degraded) to leave DOWN; default 1
}

// WithDefaults fills zero thresholds.
func (t Thresholds) WithDefaults() Thresholds {
	if t.Confirmations <= 0 {
		t.Confirmations = DefaultConfirmations
	}
	if t.Recoveries <= 0 {
		t.Recoveries = DefaultRecoveries
	}
	return t
}

// Tracker is the part of a monitor the state machine keeps between
// results. It is a value: every step returns a new one.
type Tracker struct {
	State State
	Since time.Time
	// Streaks of consecutive known results; unknown results touch neither.
	Downs int
	Ups   int // up or degraded
	// LastKnown is when the last up, degraded or down result was observed.
	LastKnown time.Time
	// Last is the last known result.
	Last Result
}

// Transition is one change of state, with its cause: stored as the state
// history that metrics integrate.
type Transition struct {
	From, To State
	At       time.Time
	Cause    string
	// Quiet marks a change for the state history only: into UNKNOWN for
	// an outage of this service, and back from it to the state it
	// interrupted (DESIGN §7). It writes no event, opens or resolves no
	// incident, and so tells nobody.
	Quiet bool
}

// NewTracker starts a monitor's history.
func NewTracker(now time.Time, paused bool) Tracker {
	if paused {
		return Tracker{State: StatePaused, Since: now}
	}
	return Tracker{State: StatePending, Since: now}
}

func (t Tracker) moveTo(s State, at time.Time, cause string) (Tracker, *Transition) {
	if t.State == s {
		return t, nil
	}
	tr := &Transition{From: t.State, To: s, At: at, Cause: cause}
	t.State, t.Since = s, at
	return t, tr
}

// Observe applies one check result, with its reason, at time at. While
// paused nothing changes (no checks should run); during maintenance the
// streaks move but the state stays MAINTENANCE. A transition's cause says
// what the check found and how many checks confirmed it (DownCause,
// UpCause).
func (t Tracker) Observe(r Result, reason string, at time.Time, th Thresholds) (Tracker, *Transition) {
	th = th.WithDefaults()
	if t.State == StatePaused || !r.Known() {
		return t, nil
	}
	t.LastKnown, t.Last = at, r
	if r == ResultDown {
		t.Downs++
		t.Ups = 0
	} else {
		t.Ups++
		t.Downs = 0
	}
	if t.State == StateMaintenance {
		return t, nil
	}
	switch {
	case r == ResultDown && t.Downs >= th.Confirmations:
		return t.moveTo(StateDown, at, DownCause(reason, t.Downs))
	case r == ResultDown:
		return t, nil // not confirmed yet: the state stands
	case t.State == StateDown && t.Ups < th.Recoveries:
		return t, nil // recovering, not recovered
	case r == ResultDegraded:
		return t.moveTo(StateDegraded, at, UpCause(t.State, r, reason, t.Ups))
	default:
		return t.moveTo(StateUp, at, UpCause(t.State, r, reason, t.Ups))
	}
}

// Tick marks the monitor UNKNOWN once no known result has arrived for two
// intervals (the probe could not tell, or no check ran).
func (t Tracker) Tick(now time.Time, interval time.Duration) (Tracker, *Transition) {
	switch t.State {
	case StatePaused, StateMaintenance, StateUnknown:
		return t, nil
	}
	// Count from the later of the last known result and the last change
	// (creation, resume, end of maintenance), so each starts with a grace.
	last := t.LastKnown
	if t.Since.After(last) {
		last = t.Since
	}
	if now.Sub(last) >= 2*interval {
		return t.moveTo(StateUnknown, now, fmt.Sprintf("no known result for %s", now.Sub(last).Round(time.Second)))
	}
	return t, nil
}

// Gap records a span, from to to, in which no node ran the monitor's
// checks (DESIGN §7: our own outages are UNKNOWN, never UP): UNKNOWN from
// from, with GapCause, quietly, until a check says more; the first check
// that returns it to the state the gap interrupted does so quietly too
// (the caller tells it by the history). The streaks stand: no check ran.
// A paused monitor has no checks to miss, maintenance holds its state,
// and an UNKNOWN one is unknown already; a span before the current state
// began is not the current state's to mark.
func (t Tracker) Gap(from, to time.Time) (Tracker, *Transition) {
	switch t.State {
	case StatePaused, StateMaintenance, StateUnknown:
		return t, nil
	}
	if from.Before(t.Since) {
		from = t.Since
	}
	if !to.After(from) {
		return t, nil
	}
	t, tr := t.moveTo(StateUnknown, from, GapCause(from, to))
	tr.Quiet = true
	return t, tr
}

// Pause stops the machine; Resume starts over from PENDING, since nothing
// is known about the time in between.
func (t Tracker) Pause(now time.Time) (Tracker, *Transition) {
	t.Downs, t.Ups = 0, 0
	return t.moveTo(StatePaused, now, "paused")
}

func (t Tracker) Resume(now time.Time) (Tracker, *Transition) {
	if t.State != StatePaused {
		return t, nil
	}
	t.Downs, t.Ups, t.LastKnown, t.Last = 0, 0, time.Time{}, ""
	return t.moveTo(StatePending, now, "resumed")
}

// StartMaintenance holds the state at MAINTENANCE: checks run and count,
// but nothing alerts.
func (t Tracker) StartMaintenance(now time.Time) (Tracker, *Transition) {
	if t.State == StatePaused {
		return t, nil
	}
	return t.moveTo(StateMaintenance, now, "maintenance window began")
}

// EndMaintenance returns to the state the results seen so far support.
func (t Tracker) EndMaintenance(now time.Time, th Thresholds) (Tracker, *Transition) {
	th = th.WithDefaults()
	if t.State != StateMaintenance {
		return t, nil
	}
	const cause = "maintenance window ended"
	switch {
	case t.Downs >= th.Confirmations:
		return t.moveTo(StateDown, now, cause)
	case t.Last == ResultDegraded && t.Ups > 0:
		return t.moveTo(StateDegraded, now, cause)
	case t.Last == ResultUp && t.Ups > 0:
		return t.moveTo(StateUp, now, cause)
	default:
		return t.moveTo(StatePending, now, cause)
	}
}
