package console

import (
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// The view models of the monitor pages. Figures that may be unknown
// (availability with no known time, a latency with no check) are
// pointers: nil shows "no data", never a made-up 0 or 100 %.

// StateCount is how many of the workspace's monitors are in a state.
type StateCount struct {
	State monitor.State
	Count int
}

// MonitorFilterForm re-fills the list's filter form (GET, fields
// "state", "type" and "q"); empty fields filter nothing.
type MonitorFilterForm struct {
	// State is a monitor.State in lower case ("down"), or "".
	State string
	// Type is a monitor.Type ("http"), or "".
	Type string
	// Q is the text the name contains.
	Q string
}

// Active reports whether any filter is set.
func (f MonitorFilterForm) Active() bool { return f.State != "" || f.Type != "" || f.Q != "" }

// MonitorRow is one monitor in the list.
type MonitorRow struct {
	// ID is the monitor's id (mon_…), in /w/{ws}/monitors/{id} and the
	// row's data-monitor-id.
	ID string
	// Name is its name.
	Name string
	// Type is its type.
	Type monitor.Type
	// Target is what it checks: the URL, or host:port.
	Target string
	// Interval is how often it checks.
	Interval time.Duration
	// State is its current state (the state cell's data-state).
	State monitor.State
	// LastCheckAt is when it was last checked; zero shows "never".
	LastCheckAt time.Time
	// LastLatency is the last check's latency.
	LastLatency time.Duration
	// Availability24h is its availability over the last 24 hours (0 to
	// 1); nil when nothing was known.
	Availability24h *float64
}

// Monitors is GET /w/{ws}/monitors.
type Monitors struct {
	// Shell: set Shell.Active to NavMonitors; roles that grant
	// monitors:write see the "New monitor" button.
	Shell Shell
	// Availability24h and Availability30d are the workspace's overall
	// availability over its monitors (0 to 1); nil when nothing was known.
	Availability24h, Availability30d *float64
	// Counts are the workspace's monitors by state, whatever the filter,
	// in the order to show them.
	Counts []StateCount
	// Filter re-fills the filter form.
	Filter MonitorFilterForm
	// Errors holds a filter's message (fields "state", "type", "q").
	Errors FormErrors
	// Rows are the monitors that match the filter, one page of them.
	Rows []MonitorRow
	// Matching is how many monitors match the filter in all.
	Matching int
	// Any says the workspace has a monitor at all: without one, the page
	// shows how to create the first.
	Any bool
	// NextPage is the local URL of the next page ("" on the last).
	NextPage string
}

// LatencyPoint is one bucket of the latency chart: the percentiles of
// the checks in [Start, End), in milliseconds; nil when there was no
// check.
type LatencyPoint struct {
	Start, End time.Time
	P50, P95   *float64
}

// UptimeDay is one day of the uptime bar: its availability (0 to 1),
// nil for no data.
type UptimeDay struct {
	Day          time.Time
	Availability *float64
}

// CheckRow is one recent check.
type CheckRow struct {
	At         time.Time
	Result     monitor.Result
	Latency    time.Duration
	StatusCode int // 0: none
	Reason     string
}

// StateRow is one change in the state history: At is when the new state
// began, ConfirmedAt when the checks confirmed it, if later (an outage
// dated from its first failed check); zero otherwise.
type StateRow struct {
	At          time.Time
	ConfirmedAt time.Time
	From, To    monitor.State
	Cause       string
}

// SLOView is an objective and its error budget over the period ending
// now.
type SLOView struct {
	// Target is the share of known time to be UP or DEGRADED (0.999).
	Target     float64
	PeriodDays int
	// Allowed is the budget of down time, Spent what was used of it.
	Allowed, Spent time.Duration
	// Left is the fraction of the budget left (negative when overspent);
	// nil when nothing was known.
	Left *float64
	// BurnRate1h and BurnRate6h: 1 spends exactly the budget over the
	// period; nil when nothing was known.
	BurnRate1h, BurnRate6h *float64
}

// MonitorDetail is GET /w/{ws}/monitors/{id}.
type MonitorDetail struct {
	// Shell: set Shell.Active to NavMonitors; roles that grant
	// monitors:write get pause/resume, edit and delete.
	Shell Shell
	// ID, Name, Type, Target and Interval describe the monitor.
	ID       string
	Name     string
	Type     monitor.Type
	Target   string
	Interval time.Duration
	// State is its current state, since StateSince.
	State      monitor.State
	StateSince time.Time
	// Paused says it is paused (no checks run).
	Paused bool
	// Cause is the last check's reason ("" when it passed or none ran).
	Cause string
	// LastCheckAt is when it was last checked; zero shows "never".
	LastCheckAt time.Time
	// LastLatency is the last check's latency.
	LastLatency time.Duration
	// Availability24h, Availability30d and Availability90d (0 to 1); nil
	// when nothing was known.
	Availability24h, Availability30d, Availability90d *float64
	// Latency is the chart's hourly buckets of the last 24 hours, oldest
	// first.
	Latency []LatencyPoint
	// Uptime is the bar's days, oldest first.
	Uptime []UptimeDay
	// SLO is the objective and its budget; nil when none is set.
	SLO *SLOView
	// Checks are the most recent checks, newest first.
	Checks []CheckRow
	// States are the most recent state changes, newest first.
	States []StateRow
}
