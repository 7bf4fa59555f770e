package recur

import (
	"errors"
	"time"
)

// Rule is a recurrence: exactly one of Cron or RRule, in Location. Build it
// with ParseCron or ParseRRule; a Rule written by hand that does not parse
// has no occurrences.
type Rule struct {
	Cron     string
	RRule    string
	Location *time.Location
	// DTStart anchors an RRULE; its wall time in Location is what counts.
	DTStart time.Time
}

// Validate reports whether r would parse, naming the failing field.
func (r Rule) Validate() error {
	var errs FieldErrors
	if r.Location == nil {
		errs.add("location", "a time zone is required")
	}
	switch {
	case r.Cron != "" && r.RRule != "":
		errs.add("rrule", "give either cron or rrule, not both")
	case r.Cron != "":
		if _, err := ParseCron(r.Cron, time.UTC); err != nil {
			errs.add("cron", err.Error())
		}
	case r.RRule != "":
		if r.DTStart.IsZero() {
			errs.add("dtstart", "is required with an rrule")
		} else if r.Location != nil {
			if _, err := ParseRRule(r.RRule, r.DTStart, r.Location); err != nil {
				errs.add("rrule", err.Error())
			}
		}
	default:
		errs.add("cron", "give a cron expression or an rrule")
	}
	return errs.err()
}

// Next returns the first occurrence strictly after after, in Location;
// false when there is none (COUNT or UNTIL exhausted, or r is invalid).
func (r Rule) Next(after time.Time) (time.Time, bool) {
	seq, fixed, loc, err := r.compile()
	if err != nil || !inRange(after) {
		return time.Time{}, false
	}
	return nextInstant(seq, fixed, loc, after)
}

// Prev returns the last occurrence at or before atOrBefore, in Location;
// false when there is none. The search is bounded: it walks back at most
// through the zone changes of a few centuries.
func (r Rule) Prev(atOrBefore time.Time) (time.Time, bool) {
	seq, fixed, loc, err := r.compile()
	if err != nil || !inRange(atOrBefore) {
		return time.Time{}, false
	}
	return prevInstant(seq, fixed, loc, atOrBefore)
}

func (r Rule) compile() (seq wallSeq, fixed bool, loc *time.Location, err error) {
	loc = r.Location
	if loc == nil {
		loc = time.UTC
	}
	switch {
	case r.Cron != "" && r.RRule != "":
		return nil, false, nil, errors.New("both cron and rrule")
	case r.Cron != "":
		norm, err := normalizeCron(r.Cron)
		if err != nil {
			return nil, false, nil, err
		}
		return cronSeq{expr: norm}, cronFixed(norm), loc, nil
	case r.RRule != "":
		s, err := compileRRule(r.RRule, r.DTStart, loc)
		return s, true, loc, err
	}
	return nil, false, nil, errors.New("empty rule")
}

// inRange keeps the arithmetic within years 1-9998, where both libraries
// and the zone database are well defined.
func inRange(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1 && y < 9999
}
