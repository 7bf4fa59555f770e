package recur

import (
	"time"

	"github.com/teambition/rrule-go"
)

// rrule-go walks a rule from DTSTART on every question. To keep each
// question cheap however old the rule, the walk restarts at the period
// (day, week, month or year) that holds the instant asked about.

// maxRRuleSteps bounds one walk through the rule's occurrences: one period
// of the densest accepted rule (a year of 96 times a day) fits well within.
const maxRRuleSteps = 100_000

func (s rruleSeq) iterator(at time.Time) (rrule.Next, bool) {
	r, err := rrule.NewRRule(s.restartAt(at))
	if err != nil {
		return nil, false
	}
	return r.Iterator(), true
}

func (s rruleSeq) after(w time.Time) (t time.Time, ok bool) {
	defer contain(&ok)
	next, ok := s.iterator(w)
	if !ok {
		return time.Time{}, false
	}
	for range maxRRuleSteps {
		v, ok := next()
		if !ok {
			return time.Time{}, false
		}
		if v.After(w) {
			return v, true
		}
	}
	return time.Time{}, false
}

// atOrBefore restarts the rule at the period holding w and, only when that
// stretch has no occurrence, looks again further back, doubling the
// distance each time.
func (s rruleSeq) atOrBefore(w time.Time) (t time.Time, ok bool) {
	defer contain(&ok)
	if w.Before(s.opt.Dtstart) {
		return time.Time{}, false
	}
	for back := 0; ; back = max(1, 2*back) {
		from := s.periodsBack(w, back)
		if s.opt.Count > 0 || !from.After(s.opt.Dtstart) {
			from = s.opt.Dtstart
		}
		next, ok := s.iterator(from)
		if !ok {
			return time.Time{}, false
		}
		var last time.Time
		done := false
		for range maxRRuleSteps {
			v, more := next()
			if done = !more || v.After(w); done {
				break
			}
			last = v
		}
		switch {
		case !done:
			return time.Time{}, false // too dense to walk: no answer rather than a wrong one
		case !last.IsZero():
			return last, true
		}
		if from.Equal(s.opt.Dtstart) {
			return time.Time{}, false
		}
	}
}

// periodsBack returns w moved back by k periods of the rule, or the zero
// time once that is more than about a thousand years.
func (s rruleSeq) periodsBack(w time.Time, k int) time.Time {
	k *= s.opt.Interval
	switch s.opt.Freq {
	case rrule.DAILY:
		if k > 366_000 {
			return time.Time{}
		}
		return w.AddDate(0, 0, -k)
	case rrule.WEEKLY:
		if k > 52_000 {
			return time.Time{}
		}
		return w.AddDate(0, 0, -7*k)
	case rrule.MONTHLY:
		if k > 12_000 {
			return time.Time{}
		}
		return w.AddDate(0, -k, 0)
	}
	if k > 1000 {
		return time.Time{}
	}
	return w.AddDate(-k, 0, 0)
}

// restartAt returns the rule's options with DTSTART moved forward to the
// start of the latest period (day, week, month or year, counted in steps of
// INTERVAL from DTSTART) that begins at or before at. The rule yields the
// same occurrences from there on; rules with COUNT must count from the
// start and are not moved.
func (s rruleSeq) restartAt(at time.Time) rrule.ROption {
	o := s.opt
	ds := o.Dtstart
	if o.Count > 0 || !at.After(ds) {
		return o
	}
	n := o.Interval
	day0 := time.Date(ds.Year(), ds.Month(), ds.Day(), 0, 0, 0, 0, time.UTC)
	var start time.Time
	switch o.Freq {
	case rrule.DAILY:
		k := daysBetween(day0, at) / n
		start = day0.AddDate(0, 0, k*n)
	case rrule.WEEKLY:
		// rrule-go counts weeks from the WKST day on or before DTSTART.
		sinceWkst := ((int(ds.Weekday())+6)%7 - o.Wkst.Day() + 7) % 7
		week0 := day0.AddDate(0, 0, -sinceWkst)
		k := daysBetween(week0, at) / 7 / n
		start = week0.AddDate(0, 0, 7*k*n)
	case rrule.MONTHLY:
		months := (at.Year()-ds.Year())*12 + int(at.Month()) - int(ds.Month())
		k := months / n
		start = time.Date(ds.Year(), ds.Month()+time.Month(k*n), 1, 0, 0, 0, 0, time.UTC)
	case rrule.YEARLY:
		k := (at.Year() - ds.Year()) / n
		start = time.Date(ds.Year()+k*n, 1, 1, 0, 0, 0, 0, time.UTC)
	default:
		return o
	}
	if start.After(ds) {
		o.Dtstart = start
	}
	return o
}

func daysBetween(from, to time.Time) int {
	return int(to.Sub(from) / (24 * time.Hour))
}
