package store

import (
	"database/sql"
	"time"
)

// How Go values map to columns.
//
// Timestamps are BIGINT unix microseconds in UTC on both engines: one
// representation, exact round trips, cheap comparisons, no driver time-zone
// surprises. The zero time.Time round-trips too (it is just a large negative
// number), and nullable columns map the zero time to NULL.

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// nullMicros stores the zero time as NULL.
func nullMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func fromNullMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}

// nullString stores "" as NULL (optional foreign keys).
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullBytes stores nil as NULL and keeps an empty non-nil slice as an empty
// value, so the two stay distinguishable.
func nullBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}
