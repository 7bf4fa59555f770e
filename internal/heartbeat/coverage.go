package heartbeat

import "time"

// Service spans: when this service was receiving pings. A node records
// that it is up every few seconds; a silence longer than SpanGap means it
// could not reach the database (or was stopped), and the time in between
// counts as an outage, in which a missed deadline is no evidence against
// the job.

// SpanGap is how long a node may go without recording that it is alive
// before the time in between counts as an outage.
const SpanGap = 15 * time.Second

// SpanCoverage answers Coverage from service spans, each [start, last
// seen], sorted by start.
func SpanCoverage(spans [][2]time.Time) Coverage {
	return func(from, to time.Time) (bool, time.Time, time.Time) {
		at := from // covered up to here
		for _, s := range spans {
			if !s[1].After(at) {
				continue
			}
			if s[0].After(at) {
				return false, at, earlier(s[0], to)
			}
			at = s[1]
			if !at.Before(to) {
				return true, time.Time{}, time.Time{}
			}
		}
		if !at.Before(to) {
			return true, time.Time{}, time.Time{}
		}
		return false, at, to
	}
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
