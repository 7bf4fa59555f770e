package heartbeat

import (
	"fmt"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// MaxOpenRuns bounds the started runs a heartbeat remembers; a start beyond
// it forgets the oldest.
const MaxOpenRuns = 20

// Run is a started run that has not reported its end.
type Run struct {
	ID        string    `json:"id,omitempty"`
	StartedAt time.Time `json:"at"`
	// Overran is set once its overrun has been reported, so it is
	// reported once.
	Overran bool `json:"overran,omitempty"`
}

// Settings is what the state machine needs of a heartbeat's configuration.
type Settings struct {
	Plan       Plan
	MaxRuntime time.Duration // 0: runs may take any time
}

// Runtime is a heartbeat's state machine and what it knows of its job:
// the value that pings and the deadline sweeper move. It is a pure value;
// the store keeps it.
//
// A heartbeat starts PENDING with no deadline: it watches its job from the
// first ping on, so setting a job up raises no alert. Each completion (a
// plain ping, /fail, an exit code) sets the next deadline from the
// schedule; /start opens a run, which overruns if no completion comes
// within the maximum runtime.
type Runtime struct {
	State monitor.State
	Since time.Time

	LastPing       time.Time // any signal
	LastStart      time.Time
	LastCompletion Signal        // SignalSuccess, SignalFail, or 0 before the first
	LastExitCode   int           // -1: none given
	LastDuration   time.Duration // -1: the last completion had no start
	// Late is set when a deadline passed without a ping (DOWN), until the
	// next ping.
	Late bool
	Open []Run // oldest first

	// Expected and Deadline are the next run's (zero: none, while PENDING
	// before a first ping, PAUSED, or after the deadline was judged DOWN).
	Expected, Deadline time.Time
	// WindowStart is since when a ping would have counted toward Deadline
	// (on a cron schedule, from Expected on: Plan.listenFrom): the service
	// must have been receiving pings from then to the deadline to call its
	// absence DOWN.
	WindowStart time.Time
	// Interrupted is the state an outage of this service interrupted,
	// while the heartbeat is UNKNOWN for it ("" otherwise): the first
	// verdict after the outage that returns to it (a ping, or a deadline)
	// does so quietly, since nobody was told it had been left.
	Interrupted monitor.State
}

// New is the runtime of a new heartbeat.
func New(at time.Time, paused bool) Runtime {
	r := Runtime{State: monitor.StatePending, Since: at, LastExitCode: -1, LastDuration: -1}
	if paused {
		r.State = monitor.StatePaused
	}
	return r
}

// Never is the wake time of a heartbeat with nothing to wait for.
var Never = time.Unix(0, 1<<63-1).UTC()

// Wake is when the sweeper must look at the heartbeat next: its deadline
// or its earliest unreported overrun, Never when neither.
func (r Runtime) Wake(s Settings) time.Time {
	wake := Never
	if r.State == monitor.StatePaused {
		return wake
	}
	if !r.Deadline.IsZero() {
		wake = r.Deadline
	}
	if s.MaxRuntime > 0 {
		for _, run := range r.Open {
			if at := run.StartedAt.Add(s.MaxRuntime); !run.Overran && at.Before(wake) {
				wake = at
			}
		}
	}
	return wake
}

func (r *Runtime) move(to monitor.State, at time.Time, cause string) *monitor.Transition {
	if r.State == to {
		return nil
	}
	tr := &monitor.Transition{From: r.State, To: to, At: at, Cause: cause,
		Quiet: r.State == monitor.StateUnknown && to == r.Interrupted}
	r.State, r.Since, r.Interrupted = to, at, ""
	return tr
}

// outage moves the heartbeat to UNKNOWN, quietly, for an outage of this
// service that began at from (DESIGN §7): from then on, or from its last
// ping or change of state if one came later, and it remembers the state
// the outage interrupted. An UNKNOWN heartbeat stays as it is.
func (r *Runtime) outage(from time.Time, cause string) *monitor.Transition {
	if r.State == monitor.StateUnknown {
		return nil
	}
	was := r.State
	tr := r.move(monitor.StateUnknown, latest3(from, r.Since, r.LastPing), cause)
	tr.Quiet, r.Interrupted = true, was
	return tr
}

func latest3(a, b, c time.Time) time.Time {
	if b.After(a) {
		a = b
	}
	if c.After(a) {
		a = c
	}
	return a
}

// Gap records an outage of this service, from from to to, in which no
// node was receiving pings (DESIGN §7: our own outages are UNKNOWN, never
// UP). A heartbeat UP or DOWN is UNKNOWN from from (or from its last ping
// or change, if later): a ping may have come and been lost. The move is
// quiet, and so is the first verdict after it that returns to the state
// it interrupted: a ping, or a deadline the service saw pass. One that
// waits for no deadline (DOWN for a missed run) waits again for the next
// run after to. A heartbeat that has heard from its job since to is left
// alone (that ping said more than the outage can), and PAUSED,
// MAINTENANCE and PENDING have no known time to lose.
func (r Runtime) Gap(from, to time.Time, s Settings) (Runtime, *monitor.Transition) {
	if r.State != monitor.StateUp && r.State != monitor.StateDown {
		return r, nil
	}
	if !r.Since.Before(to) || !r.LastPing.Before(to) {
		return r, nil
	}
	start := latest3(from, r.Since, r.LastPing)
	tr := r.outage(start, outageCause(start, to, "a ping"))
	if r.Deadline.IsZero() {
		r.WindowStart = to
		if e, ok := s.Plan.Next(to); ok {
			r.Expected, r.Deadline = e.Expected, e.Deadline
		}
	}
	return r, tr
}

// held reports whether the state is one that pings and deadlines do not
// move: PAUSED (pings are ignored) and MAINTENANCE (recorded, no alerts).
func (r Runtime) held() bool {
	return r.State == monitor.StatePaused || r.State == monitor.StateMaintenance
}

// Ping is one received ping.
type Ping struct {
	Signal   Signal
	ExitCode int    // -1: none given
	RunID    string // pairs a start with its completion; "" for the latest open start
	At       time.Time
}

// Ping applies a ping. It returns the new runtime, the transition it made
// (nil when none) and, for a completion paired with a start, the run's
// duration (-1 otherwise). A paused heartbeat's pings change nothing; the
// caller records them as ignored.
func (r Runtime) Ping(p Ping, s Settings) (Runtime, *monitor.Transition, time.Duration) {
	if r.State == monitor.StatePaused {
		return r, nil, -1
	}
	r.Open = append([]Run(nil), r.Open...)
	r.LastPing = p.At
	if p.Signal == SignalStart {
		r.LastStart = p.At
		if p.RunID != "" {
			for i, run := range r.Open {
				if run.ID == p.RunID {
					r.Open = append(r.Open[:i], r.Open[i+1:]...)
					break
				}
			}
		}
		r.Open = append(r.Open, Run{ID: p.RunID, StartedAt: p.At})
		if len(r.Open) > MaxOpenRuns {
			r.Open = r.Open[len(r.Open)-MaxOpenRuns:]
		}
		return r, nil, -1
	}

	// A completion: pair it with its start.
	duration := time.Duration(-1)
	match := -1
	for i := len(r.Open) - 1; i >= 0; i-- {
		if p.RunID == "" || r.Open[i].ID == p.RunID {
			match = i
			break
		}
	}
	if match >= 0 {
		duration = max(p.At.Sub(r.Open[match].StartedAt), 0)
		r.Open = append(r.Open[:match], r.Open[match+1:]...)
	}
	r.LastCompletion, r.LastExitCode, r.LastDuration, r.Late = p.Signal, p.ExitCode, duration, false
	r.Expected, r.Deadline, r.WindowStart = time.Time{}, time.Time{}, p.At
	if e, ok := s.Plan.Next(p.At); ok {
		r.Expected, r.Deadline = e.Expected, e.Deadline
	}
	if r.held() {
		return r, nil, duration
	}
	var tr *monitor.Transition
	if p.Signal == SignalFail {
		tr = r.move(monitor.StateDown, p.At, failureCause(p.ExitCode))
	} else {
		tr = r.move(monitor.StateUp, p.At, "the job reported success")
	}
	return r, tr, duration
}

func failureCause(exitCode int) string {
	if exitCode > 0 {
		return fmt.Sprintf("failure: the job reported exit code %d", exitCode)
	}
	return "failure: the job reported failure"
}

// maxMissedRuns bounds the runs one sweep judges one by one.
const maxMissedRuns = 1000

// Coverage says whether the service was receiving pings throughout
// [from, to]; if not, gapFrom and gapTo bound the first gap.
type Coverage func(from, to time.Time) (covered bool, gapFrom, gapTo time.Time)

// Sweep judges the heartbeat at now: an overrun run and a passed deadline
// take it DOWN, with the cause; but when the service itself was not
// receiving pings for part of the time the ping could have come, the
// missed deadline says nothing (the job may well have run): the
// heartbeat is UNKNOWN from the start of that outage, quietly, as Gap
// records it, and waits for its next run. During MAINTENANCE nothing
// alerts: deadlines pass and are replaced by the next.
func (r Runtime) Sweep(now time.Time, s Settings, covered Coverage) (Runtime, []monitor.Transition) {
	if r.State == monitor.StatePaused {
		return r, nil
	}
	r.Open = append([]Run(nil), r.Open...)
	var trs []monitor.Transition
	add := func(tr *monitor.Transition) {
		if tr != nil {
			trs = append(trs, *tr)
		}
	}
	if s.MaxRuntime > 0 {
		for i, run := range r.Open {
			end := run.StartedAt.Add(s.MaxRuntime)
			if run.Overran || end.After(now) {
				continue
			}
			r.Open[i].Overran = true
			if r.held() {
				continue
			}
			if ok, gapFrom, gapTo := covered(run.StartedAt, end); !ok {
				add(r.outage(gapFrom, outageCause(gapFrom, gapTo, "the end of the run started at "+stamp(run.StartedAt))))
				continue
			}
			add(r.move(monitor.StateDown, end, fmt.Sprintf("overrun: the run started at %s did not end within %s",
				stamp(run.StartedAt), s.MaxRuntime)))
		}
	}
	// Judge each passed deadline in turn (after an outage of several runs,
	// each run's), until one is DOWN or the next is still ahead.
	for n := 0; !r.Deadline.IsZero() && !r.Deadline.After(now); n++ {
		deadline, expected := r.Deadline, r.Expected
		if !r.held() {
			ok, gapFrom, gapTo := covered(s.Plan.listenFrom(r.WindowStart, expected), deadline)
			if ok {
				add(r.move(monitor.StateDown, deadline, fmt.Sprintf("late: no ping since %s; one was expected at %s and is overdue since %s",
					stamp(r.LastPing), stamp(expected), stamp(deadline))))
				r.Late = true
				r.Expected, r.Deadline = time.Time{}, time.Time{} // DOWN until a ping
				break
			}
			add(r.outage(gapFrom, outageCause(gapFrom, gapTo, "the ping expected at "+stamp(expected))))
		}
		// Wait for the next run, listening from this deadline on.
		from := expected
		if n >= maxMissedRuns {
			from = now // a very long silence: skip ahead
		}
		r.Expected, r.Deadline, r.WindowStart = time.Time{}, time.Time{}, deadline
		if e, ok := s.Plan.Next(from); ok {
			r.Expected, r.Deadline = e.Expected, e.Deadline
		}
	}
	return r, trs
}

func outageCause(from, to time.Time, what string) string {
	return fmt.Sprintf("unknown: this service was not receiving pings from %s to %s, so %s may have been lost",
		stamp(from), stamp(to), what)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Pause holds the heartbeat: pings are ignored and nothing is due.
func (r Runtime) Pause(at time.Time) (Runtime, *monitor.Transition) {
	tr := r.move(monitor.StatePaused, at, "paused")
	r.Expected, r.Deadline = time.Time{}, time.Time{}
	return r, tr
}

// Resume watches the job again: PENDING, and, if it has ever reported, due
// by its next run after now.
func (r Runtime) Resume(at time.Time, s Settings) (Runtime, *monitor.Transition) {
	if r.State != monitor.StatePaused {
		return r, nil
	}
	tr := r.move(monitor.StatePending, at, "resumed")
	r.Open = nil
	r.Expected, r.Deadline, r.WindowStart = time.Time{}, time.Time{}, at
	if !r.LastPing.IsZero() {
		if e, ok := s.Plan.Next(at); ok {
			r.Expected, r.Deadline = e.Expected, e.Deadline
		}
	}
	return r, tr
}

// EnterMaintenance holds the heartbeat in MAINTENANCE (a paused one stays
// paused).
func (r Runtime) EnterMaintenance(at time.Time, cause string) (Runtime, *monitor.Transition) {
	if r.State == monitor.StatePaused {
		return r, nil
	}
	return r, r.move(monitor.StateMaintenance, at, cause)
}

// LeaveMaintenance returns to the state the job's reports support: DOWN
// if it was late before the window, else UP after a success, DOWN after a
// failure, PENDING before any report. Deadlines that passed inside the
// window do not count; the next one does.
func (r Runtime) LeaveMaintenance(at time.Time, cause string) (Runtime, *monitor.Transition) {
	if r.State != monitor.StateMaintenance {
		return r, nil
	}
	to := monitor.StatePending
	switch {
	case r.Late, r.LastCompletion == SignalFail:
		to = monitor.StateDown
	case r.LastCompletion == SignalSuccess:
		to = monitor.StateUp
	}
	return r, r.move(to, at, cause)
}
