package recur

import (
	"fmt"
	"strings"
	"time"
)

// MaxRecurringDuration bounds each occurrence of a recurring window: a
// longer one is better written as a one-off window.
const MaxRecurringDuration = 7 * 24 * time.Hour

// Window is a maintenance window's timing: one-off [Start, End), or (when
// Rule is set) the occurrences of Rule, each open for Duration of elapsed
// time.
//
// For a recurring window a non-zero Start is the earliest instant an
// occurrence may begin, and a non-zero Until the latest (inclusive, like
// RRULE's UNTIL); an occurrence that began in time runs its full Duration.
// End is for one-off windows only.
type Window struct {
	Start, End time.Time
	Rule       *Rule
	Duration   time.Duration
	Until      time.Time
}

// Active reports whether t is inside an occurrence (start inclusive, end
// exclusive) and, if so, when that occurrence ends. When occurrences
// overlap, the end is that of the latest one to start; the caller asks
// again then.
func (w Window) Active(t time.Time) (active bool, end time.Time) {
	if w.Rule == nil {
		if !t.Before(w.Start) && t.Before(w.End) {
			return true, w.End
		}
		return false, time.Time{}
	}
	if w.Duration <= 0 {
		return false, time.Time{}
	}
	latest := t
	if !w.Until.IsZero() && w.Until.Before(latest) {
		latest = w.Until
	}
	start, ok := w.Rule.Prev(latest)
	if !ok || (!w.Start.IsZero() && start.Before(w.Start)) {
		return false, time.Time{}
	}
	end = start.Add(w.Duration)
	if t.Before(end) {
		return true, end
	}
	return false, time.Time{}
}

// NextStart returns when the next occurrence strictly after after begins;
// false when none is left.
func (w Window) NextStart(after time.Time) (time.Time, bool) {
	if w.Rule == nil {
		if after.Before(w.Start) {
			return w.Start, true
		}
		return time.Time{}, false
	}
	if !w.Start.IsZero() && after.Before(w.Start) {
		after = w.Start.Add(-time.Nanosecond) // Start itself may be an occurrence
	}
	next, ok := w.Rule.Next(after)
	if !ok || (!w.Until.IsZero() && next.After(w.Until)) {
		return time.Time{}, false
	}
	return next, true
}

// Validate checks the window; the error is FieldErrors naming every failing
// field ("start", "end", "duration", "until", "rule.cron", "rule.rrule",
// "rule.dtstart", "rule.location").
func (w Window) Validate() error {
	var errs FieldErrors
	if w.Rule == nil {
		switch {
		case w.Start.IsZero():
			errs.add("start", "is required for a one-off window")
		case w.End.IsZero():
			errs.add("end", "is required for a one-off window")
		case !w.End.After(w.Start):
			errs.add("end", "must be after start")
		}
		if w.Duration != 0 {
			errs.add("duration", "is only for recurring windows; a one-off window has an end")
		}
		if !w.Until.IsZero() {
			errs.add("until", "is only for recurring windows")
		}
		return errs.err()
	}
	if ruleErrs, ok := w.Rule.Validate().(FieldErrors); ok {
		for _, fe := range ruleErrs {
			errs.add("rule."+fe.Field, fe.Message)
		}
	}
	switch {
	case w.Duration <= 0:
		errs.add("duration", "must be positive")
	case w.Duration > MaxRecurringDuration:
		errs.add("duration", fmt.Sprintf("must be at most %s", MaxRecurringDuration))
	}
	if !w.End.IsZero() {
		errs.add("end", "is only for one-off windows; a recurring window has a duration (and optionally until)")
	}
	if !w.Until.IsZero() && !w.Start.IsZero() && !w.Until.After(w.Start) {
		errs.add("until", "must be after start")
	}
	return errs.err()
}

// FieldError names one failing field and says why.
type FieldError struct {
	Field   string
	Message string
}

// FieldErrors lists every failing field of a value; Validate methods return
// it (as error) or nil.
type FieldErrors []FieldError

func (e FieldErrors) Error() string {
	parts := make([]string, len(e))
	for i, fe := range e {
		parts[i] = fe.Field + ": " + fe.Message
	}
	return strings.Join(parts, "; ")
}

func (e *FieldErrors) add(field, msg string) {
	*e = append(*e, FieldError{Field: field, Message: msg})
}

// err returns e as an error, or a true nil when e is empty.
func (e FieldErrors) err() error {
	if len(e) == 0 {
		return nil
	}
	return e
}
