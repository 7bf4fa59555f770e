// Package incident holds incidents and the events that tell receivers
// about them and about state changes (spec §6; DESIGN §6): what they are
// and how they are written, without I/O.
package incident

import (
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// Status is where an incident stands, as its updates say.
type Status string

const (
	Investigating Status = "investigating"
	Identified    Status = "identified"
	Monitoring    Status = "monitoring"
	Resolved      Status = "resolved"
)

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case Investigating, Identified, Monitoring, Resolved:
		return true
	}
	return false
}

// Origin tells an incident opened by a subject going DOWN from one a
// person wrote (for a status page).
type Origin string

const (
	Automatic Origin = "automatic"
	Manual    Origin = "manual"
)

// Subject is what an automatic incident or a state change is about: a
// monitor or a heartbeat.
type Subject struct {
	Type string `json:"type"` // "monitor" or "heartbeat"
	ID   string `json:"id"`
	Name string `json:"name"`
}

// SubjectType is "monitor" or "heartbeat", by the id's prefix.
func SubjectType(id string) string {
	if strings.HasPrefix(id, "hb_") {
		return "heartbeat"
	}
	return "monitor"
}

// Update is one entry of an incident's timeline.
type Update struct {
	Status  Status    `json:"status"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
	// Automatic marks the updates Tocsin writes itself on an automatic
	// incident (its cause, its recovery): they name internal things, so
	// status pages never show them.
	Automatic bool `json:"-"`
}

// Incident is an outage, opened when a subject goes DOWN and resolved when
// it recovers, or written by a person.
type Incident struct {
	ID               string   `json:"id"`
	WorkspaceID      string   `json:"workspaceId"`
	Title            string   `json:"title"`
	Status           Status   `json:"status"`
	Origin           Origin   `json:"origin"`
	Subject          *Subject `json:"subject,omitempty"` // automatic ones
	Cause            string   `json:"cause"`
	AffectedMonitors []string `json:"affectedMonitors"`
	// Public shows the incident, its title for readers and its updates as
	// written on the status pages that hold one of the subjects it touches
	// (Touches).
	Public bool `json:"public"`
	// PublicTitle is the title readers see; empty: Title for a manual
	// incident, and for an automatic one (whose Title names the internal
	// monitor) a title the page makes from its components' public names.
	PublicTitle    string     `json:"publicTitle"`
	StartedAt      time.Time  `json:"startedAt"`
	AcknowledgedAt *time.Time `json:"acknowledgedAt"`
	ResolvedAt     *time.Time `json:"resolvedAt"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
	Updates        []Update   `json:"updates"` // oldest first
}

// Touches are the monitors and heartbeats the incident concerns: its
// subject, if any, and the affected ones; a public incident shows on the
// status pages that hold any of them.
func (i *Incident) Touches() []string {
	out := slices.Clone(i.AffectedMonitors)
	if i.Subject != nil && !slices.Contains(out, i.Subject.ID) {
		out = append(out, i.Subject.ID)
	}
	return out
}

// Open reports whether the incident is not resolved.
func (i *Incident) Open() bool { return i.ResolvedAt == nil }

// Event types.
const (
	IncidentOpened        = "incident.opened"
	IncidentAcknowledged  = "incident.acknowledged"
	IncidentUpdated       = "incident.updated"
	IncidentResolved      = "incident.resolved"
	MonitorStateChanged   = "monitor.state_changed"
	HeartbeatStateChanged = "heartbeat.state_changed"
	SLOBurnRate           = "slo.burn_rate"
	Test                  = "test"
)

// EventTypes are every event type, as a channel's filter names them.
var EventTypes = []string{IncidentOpened, IncidentAcknowledged, IncidentUpdated, IncidentResolved,
	MonitorStateChanged, HeartbeatStateChanged, SLOBurnRate, Test}

// Event is what a receiver gets: {id, type, createdAt, workspaceId, data}.
type Event struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	CreatedAt   time.Time `json:"createdAt"`
	WorkspaceID string    `json:"workspaceId"`
	Data        any       `json:"data"`
}

// IncidentData is the data of incident.* events.
type IncidentData struct {
	Incident *Incident `json:"incident"`
}

// StateChangeData is the data of *.state_changed events.
type StateChangeData struct {
	Subject Subject       `json:"subject"`
	From    monitor.State `json:"from"`
	To      monitor.State `json:"to"`
	Cause   string        `json:"cause"`
	// At is when the new state began; ConfirmedAt when the checks
	// confirmed it (the same time unless the change was dated back to
	// the first check of the streak that confirmed it).
	At          time.Time `json:"at"`
	ConfirmedAt time.Time `json:"confirmedAt"`
}

// BurnRateData is the data of slo.burn_rate events: a subject's
// objective spends its error budget too fast (status firing: both windows
// of rule burn at factor or faster), or no longer (resolved: no rule
// fires, or reason says why it ends). Burn rates are over the rule's
// windows; nil when nothing was known in them.
type BurnRateData struct {
	Subject            Subject   `json:"subject"`
	Status             string    `json:"status"` // firing or resolved
	Reason             string    `json:"reason,omitempty"`
	Rule               string    `json:"rule"`
	LongWindowSeconds  int       `json:"longWindowSeconds"`
	ShortWindowSeconds int       `json:"shortWindowSeconds"`
	Factor             float64   `json:"factor"`
	BurnRateLong       *float64  `json:"burnRateLong"`
	BurnRateShort      *float64  `json:"burnRateShort"`
	Target             float64   `json:"target,omitempty"`     // 0: the objective was removed
	PeriodDays         int       `json:"periodDays,omitempty"` // 0: the objective was removed
	BudgetRemaining    *float64  `json:"budgetRemaining"`
	OpenedAt           time.Time `json:"openedAt"`
	At                 time.Time `json:"at"`
}

// StateChangedType is the event type of a state change of the subject
// with this id.
func StateChangedType(subjectID string) string {
	if SubjectType(subjectID) == "heartbeat" {
		return HeartbeatStateChanged
	}
	return MonitorStateChanged
}

// Effect is what a state change does to its subject's incident.
type Effect int

const (
	None    Effect = iota
	OpenNew        // open one, unless one is open
	Resolve        // resolve the open one, if any
)

// EffectOf is what the transition tr does to its subject's incident: DOWN
// opens one (one per subject: a DOWN after UNKNOWN or MAINTENANCE keeps
// the open one); recovering, to UP or DEGRADED, resolves it, and so does
// pausing (a paused subject would never recover). UNKNOWN and
// MAINTENANCE neither open nor resolve: they say nothing of the outage.
func EffectOf(tr monitor.Transition) Effect {
	switch tr.To {
	case monitor.StateDown:
		return OpenNew
	case monitor.StateUp, monitor.StateDegraded, monitor.StatePaused:
		return Resolve
	}
	return None
}

// AutoTitle is the title of an automatic incident of subject s.
func AutoTitle(s Subject) string { return s.Name + " is down" }

// ResolveMessage is the last update of an automatic incident resolved by
// the transition tr: what recovered and why, as in "checkout recovered
// (up): checks pass again (after 1 passing check)"; the incident's cause
// keeps what had failed.
func ResolveMessage(s Subject, tr monitor.Transition) string {
	if tr.To == monitor.StatePaused {
		return s.Name + " was paused"
	}
	m := s.Name + " recovered (" + strings.ToLower(string(tr.To)) + ")"
	if tr.Cause != "" {
		m += ": " + tr.Cause
	}
	return m
}
