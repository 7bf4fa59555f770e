// Package stamp is the one format of an instant that leaves the service:
// RFC 3339 in UTC with exactly six fractional digits,
// "2026-11-25T14:00:00.123456Z". Every timestamp in API responses, event
// payloads and notification bodies goes through it, so clients can compare
// them as strings and parse them with one layout. Times are stored to the
// microsecond, so nothing is lost.
package stamp

import "time"

// Layout formats a UTC time (Format converts first).
const Layout = "2006-01-02T15:04:05.000000Z"

// Format writes t in the wire format.
func Format(t time.Time) string { return t.UTC().Format(Layout) }

// Append appends t in the wire format.
func Append(dst []byte, t time.Time) []byte { return t.UTC().AppendFormat(dst, Layout) }

// Time is an instant that marshals in the wire format. Decoding accepts
// any RFC 3339 time.
type Time struct{ time.Time }

// Of wraps t.
func Of(t time.Time) Time { return Time{t} }

// Ptr wraps *t; nil stays nil.
func Ptr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	return &Time{*t}
}

// MarshalJSON writes the quoted wire format.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(Layout)+2)
	b = append(b, '"')
	b = Append(b, t.Time)
	return append(b, '"'), nil
}

// MarshalText writes the wire format.
func (t Time) MarshalText() ([]byte, error) { return Append(nil, t.Time), nil }
