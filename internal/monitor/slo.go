package monitor

// SLO is the service level objective a user sets on a monitor or a
// heartbeat, as it is stored: the share of known time it should be UP or
// DEGRADED over a rolling period of days. Its bounds and maths are
// package metrics' (metrics.Objective, the same fields), which imports
// this package.
type SLO struct {
	Target     float64
	PeriodDays int
}
