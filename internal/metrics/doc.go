// Package metrics computes the availability figures of the metrics
// endpoints from a subject's state history, check counts and latency
// sketches. It is pure: no clock, no I/O; callers pass now and the data.
//
// The method (DESIGN §7): over a span, the state history is integrated into
// exact durations per state, which with the time before the subject existed
// add up to the span. Known time is UP+DEGRADED+DOWN. availability is
// (UP+DEGRADED)/known, so unknown, pending, paused and maintenance time
// neither help nor hurt it; unadjustedAvailability is (UP+DEGRADED) over the
// time the subject existed, nothing excluded; coverage is known time over the
// time the subject existed and was neither paused nor in maintenance, so our
// own blind spots (UNKNOWN, PENDING) show up there. A ratio with nothing to
// divide by is nil, never a made-up 0 or 1. Durations of buckets add up
// exactly to the durations of the whole span, so series and totals agree.
// Latency percentiles come from DDSketch, mergeable across rollups, with a
// stated relative accuracy; count, sum, min and max are exact. Error
// budgets and burn rates use the same known time as availability.
package metrics
