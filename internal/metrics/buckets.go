package metrics

import (
	"fmt"
	"time"
)

// Resolution is the step of a series.
type Resolution string

const (
	Hour Resolution = "hour"
	Day  Resolution = "day"
)

// Bucket is one step of a series: [Start, End).
type Bucket struct {
	Start, End time.Time
}

// MaxBuckets bounds a series.
const MaxBuckets = 10000

// Buckets splits [from, to) at hour or day boundaries of loc (UTC when
// nil); the first and last may be partial (clipped to from and to). Days
// follow loc's calendar, so across a DST change a day lasts 23 or 25 hours;
// hours are the local clock's, always 60 minutes of real time. An empty
// span has no buckets. Ends are in UTC. Errors are *SpanError naming "resolution" (unknown,
// or more than MaxBuckets) or "to" (before from).
func Buckets(from, to time.Time, res Resolution, loc *time.Location) ([]Bucket, error) {
	if loc == nil {
		loc = time.UTC
	}
	var next func(time.Time) time.Time
	switch res {
	case Hour:
		next = nextHour
	case Day:
		next = func(t time.Time) time.Time { return nextDay(t, loc) }
	default:
		return nil, &SpanError{Field: "resolution", Message: "must be hour or day"}
	}
	if to.Before(from) {
		return nil, &SpanError{Field: "to", Message: "must not be before from"}
	}
	var bs []Bucket
	for cur := from; cur.Before(to); {
		if len(bs) == MaxBuckets {
			return nil, &SpanError{Field: "resolution", Message: fmt.Sprintf("at most %d buckets: choose a coarser resolution or a shorter span", MaxBuckets)}
		}
		end := next(cur.In(loc)).UTC()
		if end.After(to) {
			end = to
		}
		bs = append(bs, Bucket{Start: cur, End: end})
		cur = end
	}
	return bs, nil
}

// nextHour is the first instant after t at which t's local clock shows a
// whole hour, computed from t's UTC offset (time.Date would make the
// repeated hour of a fall-back night two hours long).
func nextHour(t time.Time) time.Time {
	_, off := t.Zone()
	local := t.Unix() + int64(off)
	rem := local % 3600
	if rem < 0 {
		rem += 3600
	}
	return time.Unix(t.Unix()-rem+3600, 0)
}

// nextDay is the next local midnight after t (or the first instant of that
// day where midnight falls in a DST gap).
func nextDay(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.Date()
	n := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	if !n.After(t) { // cannot happen with real zones; never loop
		n = t.Add(24 * time.Hour)
	}
	return n
}
