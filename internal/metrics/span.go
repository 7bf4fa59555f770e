package metrics

import (
	"fmt"
	"time"
)

// Windows are the named windows the API accepts, each ending now.
var Windows = map[string]time.Duration{
	"1h":   time.Hour,
	"24h":  24 * time.Hour,
	"7d":   7 * 24 * time.Hour,
	"30d":  30 * 24 * time.Hour,
	"90d":  90 * 24 * time.Hour,
	"365d": 365 * 24 * time.Hour,
}

// windowNames lists Windows in order, for messages.
const windowNames = "1h, 24h, 7d, 30d, 90d or 365d"

// MaxSpan bounds a from/to span: a year and some, which the daily rollups
// answer cheaply.
const MaxSpan = 400 * 24 * time.Hour

// SpanError names the query field that made a span invalid, with a message
// saying what would be accepted.
type SpanError struct {
	Field   string // "window", "from", "to" or "resolution"
	Message string
}

func (e *SpanError) Error() string { return e.Field + ": " + e.Message }

// Span validates a window name or a from/to pair (exactly one of them) and
// returns [from, to) in UTC, truncated to the microsecond (what both
// databases store). A to after now is clamped to now: the future has no
// history, and counting the current state into it would invent one; the
// caller reports the span it answered for. from must then still be before
// to, and the span at most MaxSpan.
func Span(window string, from, to *time.Time, now time.Time) (time.Time, time.Time, error) {
	now = now.UTC().Truncate(time.Microsecond)
	if window != "" {
		if from != nil || to != nil {
			return fail("window", "give either window or from and to, not both")
		}
		w, ok := Windows[window]
		if !ok {
			return fail("window", "must be one of "+windowNames)
		}
		return now.Add(-w), now, nil
	}
	switch {
	case from == nil && to == nil:
		return fail("window", "required: one of "+windowNames+", or from and to")
	case from == nil:
		return fail("from", "required with to (an RFC 3339 time)")
	case to == nil:
		return fail("to", "required with from (an RFC 3339 time)")
	}
	f := from.UTC().Truncate(time.Microsecond)
	t := to.UTC().Truncate(time.Microsecond)
	if !f.Before(t) {
		return fail("to", "must be after from")
	}
	if t.After(now) {
		t = now
	}
	if !f.Before(t) {
		return fail("from", "must be before now")
	}
	if t.Sub(f) > MaxSpan {
		return fail("from", fmt.Sprintf("must be at most %d days before to", MaxSpan/(24*time.Hour)))
	}
	return f, t, nil
}

func fail(field, msg string) (time.Time, time.Time, error) {
	return time.Time{}, time.Time{}, &SpanError{Field: field, Message: msg}
}
