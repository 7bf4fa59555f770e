package metrics

import (
	"slices"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// Change is one entry of a subject's state history.
type Change struct {
	At time.Time
	To monitor.State
}

// Timeline is a subject's state history as far as a window needs it.
type Timeline struct {
	Created time.Time     // when the subject was created; time before it is BeforeCreation
	Start   monitor.State // the state at the start of the queried span (or at Created if later)
	Changes []Change      // the changes after that point, sorted by At (unsorted or out-of-span entries are handled safely)
}

// Durations are the time a subject spent in each state over a span;
// together with BeforeCreation they add up exactly to the span.
type Durations struct {
	Pending, Up, Degraded, Down, Unknown, Paused, Maintenance, BeforeCreation time.Duration
}

// Durations integrates the timeline over [from, to). Changes at or before
// the point where the span begins set the state there, so one timeline
// fetched for a whole window serves each of its buckets. A state this
// package does not know counts as Unknown: the total stays exact and such
// time never counts as up. An empty or inverted span gives zero Durations.
func (t Timeline) Durations(from, to time.Time) Durations {
	var d Durations
	if !from.Before(to) {
		return d
	}
	begin := from
	if t.Created.After(from) {
		begin = t.Created
		if begin.After(to) {
			begin = to
		}
	}
	d.BeforeCreation = begin.Sub(from)

	changes := t.Changes
	if !slices.IsSortedFunc(changes, byAt) {
		changes = slices.Clone(changes)
		slices.SortStableFunc(changes, byAt)
	}
	state, at := t.Start, begin
	for _, c := range changes {
		if !c.At.Before(to) {
			break
		}
		if c.At.After(at) {
			d.add(state, c.At.Sub(at))
			at = c.At
		}
		state = c.To
	}
	d.add(state, to.Sub(at))
	return d
}

func byAt(a, b Change) int { return a.At.Compare(b.At) }

func (d *Durations) add(s monitor.State, x time.Duration) {
	switch s {
	case monitor.StatePending:
		d.Pending += x
	case monitor.StateUp:
		d.Up += x
	case monitor.StateDegraded:
		d.Degraded += x
	case monitor.StateDown:
		d.Down += x
	case monitor.StatePaused:
		d.Paused += x
	case monitor.StateMaintenance:
		d.Maintenance += x
	default:
		d.Unknown += x
	}
}

// Add sums two Durations, e.g. of adjacent spans.
func (d Durations) Add(o Durations) Durations {
	return Durations{
		Pending:        d.Pending + o.Pending,
		Up:             d.Up + o.Up,
		Degraded:       d.Degraded + o.Degraded,
		Down:           d.Down + o.Down,
		Unknown:        d.Unknown + o.Unknown,
		Paused:         d.Paused + o.Paused,
		Maintenance:    d.Maintenance + o.Maintenance,
		BeforeCreation: d.BeforeCreation + o.BeforeCreation,
	}
}

// Total is the whole span, BeforeCreation included.
func (d Durations) Total() time.Duration {
	return d.Pending + d.Up + d.Degraded + d.Down + d.Unknown + d.Paused + d.Maintenance + d.BeforeCreation
}

// Known is the time the subject's condition was known: Up+Degraded+Down.
func (d Durations) Known() time.Duration { return d.Up + d.Degraded + d.Down }

// existed is the part of the span after the subject was created.
func (d Durations) existed() time.Duration { return d.Total() - d.BeforeCreation }

// Ratios are the availability figures of a span. Each is nil when there is
// nothing to divide by: a made-up 0 or 1 would be a claim we cannot back.
type Ratios struct {
	Availability, UnadjustedAvailability, Coverage *float64
}

// Ratios computes availability = (Up+Degraded)/Known, unadjusted
// availability = (Up+Degraded)/existed and coverage =
// Known/(existed−Paused−Maintenance), where existed = Total−BeforeCreation.
func (d Durations) Ratios() Ratios {
	good := d.Up + d.Degraded
	return Ratios{
		Availability:           ratio(good, d.Known()),
		UnadjustedAvailability: ratio(good, d.existed()),
		Coverage:               ratio(d.Known(), d.existed()-d.Paused-d.Maintenance),
	}
}

func ratio(a, b time.Duration) *float64 {
	if b <= 0 {
		return nil
	}
	r := float64(a) / float64(b)
	return &r
}
