package console

import (
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The view models of the heartbeat pages: the list, one heartbeat's page
// and the form. A heartbeat's schedule is a heartbeat.Schedule as stored.

// HeartbeatFilterForm re-fills the list's filter form (GET, fields
// "state" and "q"); empty fields filter nothing.
type HeartbeatFilterForm struct {
	// State is a monitor.State in lower case ("down"), or "".
	State string
	// Q is the text the name contains.
	Q string
}

// Active reports whether any filter is set.
func (f HeartbeatFilterForm) Active() bool { return f.State != "" || f.Q != "" }

// HeartbeatRow is one heartbeat in the list.
type HeartbeatRow struct {
	// ID is the heartbeat's id (hb_…), in /w/{ws}/heartbeats/{id} and the
	// row's data-heartbeat-id.
	ID string
	// Name is its name.
	Name string
	// Schedule is when its job runs.
	Schedule heartbeat.Schedule
	// State is its current state (the state cell's data-state).
	State monitor.State
	// LastPingAt is its last ping; zero shows "never".
	LastPingAt time.Time
	// NextDeadline is when it becomes late if no ping comes; zero: nothing
	// is due.
	NextDeadline time.Time
}

// Heartbeats is GET /w/{ws}/heartbeats.
type Heartbeats struct {
	// Shell: set Shell.Active to NavHeartbeats and Shell.Live; roles that
	// grant monitors:write see the "New heartbeat" button.
	Shell Shell
	// Counts are the workspace's heartbeats by state, whatever the filter.
	Counts []StateCount
	// Availability24h and Availability30d are the workspace's heartbeats'
	// availability together (0 to 1); nil: nothing known.
	Availability24h, Availability30d *float64
	// Filter re-fills the filter form.
	Filter HeartbeatFilterForm
	// Errors holds a filter's message (fields "state" and "q").
	Errors FormErrors
	// Rows are the heartbeats that match the filter, one page of them.
	Rows []HeartbeatRow
	// Matching is how many heartbeats match the filter in all.
	Matching int
	// Any says the workspace has a heartbeat at all.
	Any bool
	// NextPage is the local URL of the next page ("" on the last).
	NextPage string
}

// PingRow is one received ping.
type PingRow struct {
	At time.Time
	// Signal is "start", "success" or "fail".
	Signal string
	// ExitCode is the exit code it gave; -1: none.
	ExitCode int
	// Duration is the run's, for the end of a run that sent /start; -1:
	// none.
	Duration time.Duration
	// Client is the address it came from; UserAgent what it said it was.
	Client, UserAgent string
	// Body is what a POST carried (valid UTF-8); Truncated says it was cut
	// at 10 KiB when received.
	Body      string
	Truncated bool
	// Ignored says it came while the heartbeat was paused.
	Ignored bool
}

// pingPreview is how much of a body the list shows on its line.
const pingPreview = 80

// Preview is the start of the body on one line, for the list.
func (p PingRow) Preview() string {
	return clean.Shorten(strings.Join(strings.Fields(p.Body), " "), pingPreview)
}

// Longer reports whether the preview leaves something out: the whole body
// is then behind a disclosure.
func (p PingRow) Longer() bool { return p.Preview() != p.Body || p.Truncated }

// HeartbeatDetail is GET /w/{ws}/heartbeats/{id}.
type HeartbeatDetail struct {
	// Shell: set Shell.Active to NavHeartbeats and Shell.Live; roles that
	// grant monitors:write get pause/resume, edit, delete and a new ping
	// URL.
	Shell Shell
	ID    string
	Name  string
	// Schedule is when its job runs; MaxRuntimeSeconds 0 is no limit.
	Schedule          heartbeat.Schedule
	MaxRuntimeSeconds int
	// State is its current state, since StateSince; Cause is why it is in
	// it ("" when UP or nothing says).
	State      monitor.State
	StateSince time.Time
	Cause      string
	Paused     bool
	// PingURL is the full ping URL (base URL + "/ping/" + token).
	PingURL string
	// LastPingAt and NextDeadline: zero for never and nothing due.
	LastPingAt, NextDeadline time.Time
	// LastResult is the last completed run's "success" or "fail" ("":
	// none yet), with its exit code (-1: none) and duration (-1: no
	// start).
	LastResult   string
	LastExitCode int
	LastDuration time.Duration
	// Availability24h, Availability30d and Availability90d (0 to 1); nil
	// when nothing was known.
	Availability24h, Availability30d, Availability90d *float64
	// Uptime is the bar's days, oldest first.
	Uptime []UptimeDay
	// SLO is the objective and its budget; nil when none is set.
	SLO *SLOView
	// Pings are the most recent pings, newest first.
	Pings []PingRow
	// States are the most recent state changes, newest first.
	States []StateRow
}

// Snippet is one way to call the ping URL, ready to copy.
type Snippet struct {
	// ID is the code element's id (the copy button's target).
	ID string
	// Title names it; Note says what it does.
	Title, Note string
	// Text is the code.
	Text string
}

// HeartbeatValues are the form's values as typed (or as stored, for an
// edit). Numbers are text, so a bad one comes back as typed.
type HeartbeatValues struct {
	Name string
	// Kind is "period" or "cron": which of the schedule's fields count.
	Kind                 string
	Period, Grace        string
	Cron, Timezone       string
	MaxRuntime           string
	SLOTarget, SLOPeriod string
	Paused               bool
}

// HeartbeatForm is the create or edit form of a heartbeat: GET
// /w/{ws}/heartbeats/new and /w/{ws}/heartbeats/{id}/edit, POSTed to
// /w/{ws}/heartbeats (create) or /w/{ws}/heartbeats/{id}/edit (update).
// Field names: name, kind (period or cron), period (seconds), grace
// (seconds), cron, timezone, max-runtime (seconds), slo-target (percent),
// slo-period (days), paused (new only).
type HeartbeatForm struct {
	// Shell: the workspace is Shell.WorkspaceID.
	Shell Shell
	// Mode is FormNew or FormEdit.
	Mode FormMode
	// ID is the heartbeat's id when editing.
	ID string
	// Values re-fill the form.
	Values HeartbeatValues
	// Errors holds the fields' messages, by the field names above (see
	// HeartbeatField for the API's pointers).
	Errors FormErrors
}

// Edit reports whether the form edits a stored heartbeat.
func (f HeartbeatForm) Edit() bool { return f.Mode == FormEdit }

// Action is where the form POSTs to save.
func (f HeartbeatForm) Action() string {
	if f.Edit() {
		return "/w/" + f.Shell.WorkspaceID + "/heartbeats/" + f.ID + "/edit"
	}
	return "/w/" + f.Shell.WorkspaceID + "/heartbeats"
}

// NewHeartbeatValues are the values of an empty form: an hourly job with
// the API's default grace.
func NewHeartbeatValues() HeartbeatValues {
	return HeartbeatValues{Kind: "period", Period: "3600", Grace: strconv.Itoa(heartbeat.DefaultGraceSeconds), Timezone: "UTC"}
}

// HeartbeatFormValues are a stored heartbeat's values for its edit form.
func HeartbeatFormValues(h heartbeat.Heartbeat) HeartbeatValues {
	s := h.Schedule
	v := HeartbeatValues{Name: h.Name, Kind: "period", Grace: strconv.Itoa(s.GraceSeconds), Paused: h.Paused, Timezone: "UTC"}
	if s.Cron != "" {
		v.Kind, v.Cron, v.Timezone = "cron", s.Cron, s.Timezone
	} else {
		v.Period = strconv.Itoa(s.PeriodSeconds)
	}
	if h.MaxRuntimeSeconds > 0 {
		v.MaxRuntime = strconv.Itoa(h.MaxRuntimeSeconds)
	}
	if o := h.SLO; o != nil {
		v.SLOTarget = strconv.FormatFloat(o.Target*100, 'f', -1, 64)
		v.SLOPeriod = strconv.Itoa(o.PeriodDays)
	}
	return v
}

// HeartbeatField is the form field where the message of a field error
// with JSON pointer ptr (as heartbeat.Draft.Normalize and the app name
// them) belongs; kind is the schedule's ("period" or "cron"). "" means
// the error has no field of its own.
func HeartbeatField(ptr, kind string) string {
	switch ptr {
	case "/name":
		return "name"
	case "/schedule":
		if kind == "cron" {
			return "cron"
		}
		return "period"
	case "/schedule/periodSeconds":
		return "period"
	case "/schedule/cron":
		return "cron"
	case "/schedule/timezone":
		return "timezone"
	case "/schedule/graceSeconds":
		return "grace"
	case "/maxRuntimeSeconds":
		return "max-runtime"
	case "/slo/periodDays":
		return "slo-period"
	}
	if strings.HasPrefix(ptr, "/slo") {
		return "slo-target"
	}
	return ""
}

// heartbeatLabels name the form's fields in messages.
var heartbeatLabels = map[string]string{
	"name": "Name", "kind": "Schedule", "period": "Period", "grace": "Grace", "cron": "Cron expression", "timezone": "Time zone",
	"max-runtime": "Maximum run time", "slo-target": "SLO target", "slo-period": "SLO period",
}

// HeartbeatFieldMessage is a message for field name as a sentence that
// names the field ("Period must be between 60 and 31536000."), so it
// reads alone in the error summary too. The schedule's "must have
// periodSeconds or cron" reads as the empty field it is.
func HeartbeatFieldMessage(name, msg string) string {
	if strings.HasPrefix(msg, "must have periodSeconds or cron") || strings.HasPrefix(msg, "must have either") {
		msg = "must not be empty"
	}
	msg = strings.TrimSuffix(strings.TrimSpace(msg), ".") + "."
	if label := heartbeatLabels[name]; label != "" {
		return label + " " + msg
	}
	return msg
}

// DurationText is the run's duration as text.
func (p PingRow) DurationText() string { return DurationText(p.Duration) }

// LastDurationText is the last run's duration as text.
func (d HeartbeatDetail) LastDurationText() string { return DurationText(d.LastDuration) }
