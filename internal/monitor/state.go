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
	// DownsFrom and UpsFrom are when the streaks' first results were
	// observed, or the first since the state last changed if a streak is
	// older: what a confirmed outage or recovery is dated from (DESIGN
	// §7), never before Since. Zero with no streak.
	DownsFrom, UpsFrom time.Time
	// LastKnown is when the last up, degraded or down result was observed.
	LastKnown time.Time
	// Last is the last known result.
	Last Result
}

// Transition is one change of state, with its cause: stored as the state
// history that metrics integrate. At is when the new state began; a
// change confirmed later than it began (an outage dated from the first
// failed check of the streak that confirmed it, a span no node was
// checking, recorded when a node noticed it) carries when in
// ConfirmedAt, which is zero otherwise.
type Transition struct {
	From, To    State
	At          time.Time
	ConfirmedAt time.Time
	Cause       string
	// Quiet marks a change for the state history only: into UNKNOWN for
	// an outage of this service, and back from it to the state it
	// interrupted (DESIGN §7). It writes no event, opens or resolves no
	// incident, and so tells nobody.
	Quiet bool
}

// Confirmed is when the change was confirmed: what its events, alerts
// and ids are dated by.
func (tr Transition) Confirmed() time.Time {
	if tr.ConfirmedAt.After(tr.At) {
		return tr.ConfirmedAt
	}
	return tr.At
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

// confirm moves to s as of start, when the streak that confirms it began,
// confirmed at at. The start never reaches back before the current state
// began (Since): an UNKNOWN, a gap, a maintenance window or a pause is
// never rewritten. Nor does it pass at.
func (t Tracker) confirm(s State, start, at time.Time, cause string) (Tracker, *Transition) {
	if start.Before(t.Since) {
		start = t.Since
	}
	if start.IsZero() || start.After(at) {
		start = at
	}
	t, tr := t.moveTo(s, start, cause)
	if tr != nil && start.Before(at) {
		tr.ConfirmedAt = at
	}
	return t, tr
}

// Observe applies one check result, with its reason, at time at. While
// paused nothing changes (no checks should run); during maintenance the
// streaks move but the state stays MAINTENANCE. A transition's cause says
// what the check found and how many checks confirmed it (DownCause,
// UpCause).
//
// A confirmed outage begins at the first failed check of the streak that
// confirmed it, and a recovery from DOWN at the first passing check of
// its streak (DESIGN §7): the transition is dated then, and confirmed at
// at. A streak older than the current state counts from its first check
// since that state began. A streak that never confirms changes nothing.
func (t Tracker) Observe(r Result, reason string, at time.Time, th Thresholds) (Tracker, *Transition) {
	th = th.WithDefaults()
	if t.State == StatePaused || !r.Known() {
		return t, nil
	}
	t.LastKnown, t.Last = at, r
	if r == ResultDown {
		if t.Downs == 0 || t.DownsFrom.Before(t.Since) {
			t.DownsFrom = at
		}
		t.Downs++
		t.Ups, t.UpsFrom = 0, time.Time{}
	} else {
		if t.Ups == 0 || t.UpsFrom.Before(t.Since) {
			t.UpsFrom = at
		}
		t.Ups++
		t.Downs, t.DownsFrom = 0, time.Time{}
	}
	if t.State == StateMaintenance {
		return t, nil
	}
	switch {
	case r == ResultDown && t.Downs >= th.Confirmations:
		return t.confirm(StateDown, t.DownsFrom, at, DownCause(reason, t.Downs))
	case r == ResultDown:
		return t, nil // not confirmed yet: the state stands
	case t.State == StateDown && t.Ups < th.Recoveries:
		return t, nil // recovering, not recovered
	}
	start := at // UP and DEGRADED take effect at once, but a recovery counts from its streak
	if t.State == StateDown {
		start = t.UpsFrom
	}
	if r == ResultDegraded {
		return t.confirm(StateDegraded, start, at, UpCause(t.State, r, reason, t.Ups))
	}
	return t.confirm(StateUp, start, at, UpCause(t.State, r, reason, t.Ups))
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
	tr.ConfirmedAt, tr.Quiet = to, true
	return t, tr
}

// Pause stops the machine; Resume starts over from PENDING, since nothing
// is known about the time in between.
func (t Tracker) Pause(now time.Time) (Tracker, *Transition) {
	t.Downs, t.Ups, t.DownsFrom, t.UpsFrom = 0, 0, time.Time{}, time.Time{}
	return t.moveTo(StatePaused, now, "paused")
}

func (t Tracker) Resume(now time.Time) (Tracker, *Transition) {
	if t.State != StatePaused {
		return t, nil
	}
	t.Downs, t.Ups, t.DownsFrom, t.UpsFrom, t.LastKnown, t.Last = 0, 0, time.Time{}, time.Time{}, time.Time{}, ""
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
