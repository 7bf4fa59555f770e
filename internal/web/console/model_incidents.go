package console

import (
	"time"
)

// The view models of the incident and maintenance window pages.

// Subject is a monitor or heartbeat of the workspace, as the pages name
// it and the forms offer it.
type Subject struct {
	// ID is its id (mon_… or hb_…).
	ID string
	// Name is its name.
	Name string
	// Heartbeat says it is a heartbeat, not a monitor.
	Heartbeat bool
}

// Path is the subject's page under the workspace ws.
func (s Subject) Path(ws string) string {
	if s.Heartbeat {
		return "/w/" + ws + "/heartbeats/" + s.ID
	}
	return "/w/" + ws + "/monitors/" + s.ID
}

// IncidentRow is one incident in the list.
type IncidentRow struct {
	// ID is its id (inc_…), in /w/{ws}/incidents/{id}.
	ID string
	// Title is its title.
	Title string
	// Subject is the monitor or heartbeat whose outage it is; nil for a
	// manual incident.
	Subject *Subject
	// State is "open", "acknowledged" or "resolved".
	State string
	// Status is its latest update's status (investigating, identified,
	// monitoring, resolved).
	Status string
	// StartedAt is when it began; Duration how long it lasted, or has
	// lasted so far while open.
	StartedAt time.Time
	Duration  time.Duration
	// Public says status pages show it.
	Public bool
}

// IncidentForm re-fills the "New incident" form (fields "title",
// "status", "message", "public", "public-title", "affected").
type IncidentForm struct {
	Title, Status, Message, PublicTitle string
	Public                              bool
	Affected                            []string
}

// Incidents is GET /w/{ws}/incidents.
type Incidents struct {
	// Shell: set Shell.Active to NavIncidents; roles that grant
	// incidents:write see the "New incident" form.
	Shell Shell
	// Open are the incidents not resolved, newest first; Resolved one
	// page of the resolved ones, newest first.
	Open, Resolved []IncidentRow
	// NextPage is the local URL of the next page of resolved incidents
	// ("" on the last).
	NextPage string
	// Subjects are the workspace's monitors and heartbeats the form
	// offers as affected.
	Subjects []Subject
	// Form re-fills the form; Errors are its messages.
	Form   IncidentForm
	Errors FormErrors
	// ListErrors is a message about the list's link (the page's cursor).
	ListErrors FormErrors
}

// TimelineEntry is one line of an incident's timeline: an update people
// or Tocsin posted, or an event (opened, acknowledged, resolved).
type TimelineEntry struct {
	At time.Time
	// Event is "opened", "acknowledged" or "resolved" for an event, ""
	// for an update.
	Event string
	// By says who: "Tocsin" for what the service did by itself, "" when
	// not recorded.
	By string
	// Status and Message are an update's.
	Status, Message string
	// Automatic marks an update Tocsin wrote (never shown on status
	// pages).
	Automatic bool
}

// IncidentSettings re-fills the incident's settings form (fields
// "title", "public", "public-title", "affected").
type IncidentSettings struct {
	Title, PublicTitle string
	Public             bool
	Affected           []string
}

// IncidentDetail is GET /w/{ws}/incidents/{id}.
type IncidentDetail struct {
	// Shell: set Shell.Active to NavIncidents; roles that grant
	// incidents:write see the forms.
	Shell   Shell
	ID      string
	Title   string
	Subject *Subject
	Cause   string
	State   string
	Status  string
	Public  bool
	// PublicTitle is the title status page readers see; "" for none.
	PublicTitle                 string
	StartedAt                   time.Time
	AcknowledgedAt, ResolvedAt  time.Time // zero: not yet
	Duration                    time.Duration
	Affected                    []Subject
	Timeline                    []TimelineEntry // oldest first
	Subjects                    []Subject       // offered by the settings form
	UpdateStatus, UpdateMessage string          // re-fill the update form
	ResolveMessage              string          // re-fills the resolve form
	Settings                    IncidentSettings
	// UpdateErrors, ResolveErrors and SettingsErrors are the messages of
	// the update ("update-status", "update-message"), resolve
	// ("resolve-message") and settings forms.
	UpdateErrors, ResolveErrors, SettingsErrors FormErrors
}

// Open reports whether the incident is not resolved.
func (d IncidentDetail) Open() bool { return d.ResolvedAt.IsZero() }

// MaintenanceRow is one maintenance window in the list.
type MaintenanceRow struct {
	ID          string
	Name        string
	Description string
	// Covers are its monitors and heartbeats, by name.
	Covers []Subject
	// Recurring windows have Cron or RRule, read in Timezone, each
	// occurrence lasting Duration, none beginning after Until (zero: no
	// end), none before StartsAt (zero: no start to mention); one-off
	// windows run StartsAt to EndsAt.
	Recurring        bool
	StartsAt, EndsAt time.Time
	Cron, RRule      string
	Timezone         string
	Duration         time.Duration
	Until            time.Time
	Public           bool
	// Active says an occurrence is in progress, ending at CurrentEndsAt;
	// NextStartAt is when the next begins (zero: none is left).
	Active        bool
	CurrentEndsAt time.Time
	NextStartAt   time.Time
}

// MaintenanceForm re-fills the maintenance window form (fields "name",
// "description", "kind" (one-off or recurring), "starts", "ends",
// "timezone", "cron", "rrule", "duration", "until", "monitor",
// "heartbeat", "public"). Times are as typed, "2026-11-28T02:00", read
// in Timezone.
type MaintenanceForm struct {
	Name, Description, Kind, Starts, Ends, Timezone, Cron, RRule, Duration, Until string
	Monitors, Heartbeats                                                          []string
	Public                                                                        bool
}

// Maintenance is GET /w/{ws}/maintenance, and the edit page of one window
// (GET /w/{ws}/maintenance/{id}/edit) when EditID is set.
type Maintenance struct {
	// Shell: set Shell.Active to NavMaintenance; roles that grant
	// monitors:write see the forms.
	Shell Shell
	Rows  []MaintenanceRow
	// NextPage is the local URL of the list's next page ("" on the last).
	NextPage string
	// Subjects are the workspace's monitors and heartbeats the form
	// offers.
	Subjects []Subject
	// EditID is the window being edited; "" on the list with its create
	// form.
	EditID string
	Form   MaintenanceForm
	Errors FormErrors
	// ListErrors is a message about the list's link (the page's cursor).
	ListErrors FormErrors
}
