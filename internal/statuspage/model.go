// Package statuspage is the public face of a workspace: what a status page
// shows its readers, in their words, and the summary maths (a page's
// headline, a group's status, the summary.json for aggregators). It is
// pure: the app assembles a Page from the store and the metrics, and
// package web/public renders and serves it (HTML, the Atom feed, SVG
// badges). Nothing here may hold a monitor's URL, host, headers, failure
// reasons or internal name: a Page carries only the display names and
// public text an operator wrote for the page.
package statuspage

import (
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// Status is a component's state in its readers' words.
type Status string

const (
	Operational  Status = "operational"   // UP
	Degraded     Status = "degraded"      // DEGRADED: degraded performance
	Outage       Status = "outage"        // DOWN
	UnderMaint   Status = "maintenance"   // MAINTENANCE: under maintenance
	NoData       Status = "no_data"       // UNKNOWN and PENDING: never "operational"
	NotMonitored Status = "not_monitored" // PAUSED, on a page that shows paused components
)

// StatusOf maps a subject's state to what the page says of it. PAUSED is
// NotMonitored here; a page that hides paused components drops them
// before rendering.
func StatusOf(s monitor.State) Status {
	switch s {
	case monitor.StateUp:
		return Operational
	case monitor.StateDegraded:
		return Degraded
	case monitor.StateDown:
		return Outage
	case monitor.StateMaintenance:
		return UnderMaint
	case monitor.StatePaused:
		return NotMonitored
	default: // UNKNOWN, PENDING, anything new
		return NoData
	}
}

// Page is one status page as its readers see it at GeneratedAt.
type Page struct {
	Slug        string
	Title       string
	Description string // public text; may be empty
	// Accent is the page's accent colour, "#rrggbb" (validated when the
	// page was saved); empty means the default.
	Accent string
	// LogoVersion is non-empty when the page has a logo; it changes with
	// the logo, so the logo's URL can be cached forever.
	LogoVersion string
	FooterLinks []Link
	Groups      []Group
	// ShowUptime shows each component's bar and uptime figure; BarDays is
	// the bar's length in days (default 90).
	ShowUptime bool
	BarDays    int
	// Incidents are the public incidents still open, newest first.
	Incidents []Incident
	// Maintenance are the public maintenance windows active now or
	// scheduled to begin (soonest first).
	Maintenance []Maintenance
	GeneratedAt time.Time
}

// Link is a footer link. URL is http(s), validated when the page was saved.
type Link struct {
	Label string
	URL   string
}

// Group is an ordered, named set of components; Name may be empty for
// components shown without a heading.
type Group struct {
	// ID names the group in summary.json; optional: a group without one
	// is "group-<n>" there, by its position (1-based).
	ID         string
	Name       string
	Components []Component
}

// Component is one monitor or heartbeat under its public name.
type Component struct {
	// ID is the component's id (spc_…): stable, and unguessable enough to
	// name a badge of a password-protected page.
	ID          string
	Name        string
	Description string // public text; may be empty
	Status      Status
	// Days are the bar's days, oldest first, BarDays of them ending today
	// (UTC); empty when the page does not show uptime.
	Days []Day
	// Uptime is the availability over the bar's days (nil: no data).
	Uptime *float64
	// Uptime24h, Uptime7d, Uptime30d feed the badges (nil: no data).
	Uptime24h, Uptime7d, Uptime30d *float64
}

// Day is one day of a component's bar.
type Day struct {
	Date time.Time // midnight UTC of the day
	// Availability is (UP+DEGRADED) / known time; nil when nothing was
	// known that day (before the component existed, paused, no data).
	Availability *float64
	// Time in the states the readers care about.
	Down, Degraded, Maintenance time.Duration
	// Incidents are the titles of public incidents that touched the
	// component that day.
	Incidents []string
}

// Incident stage, as its updates say (the incidents API's statuses).
type Stage string

const (
	Investigating Stage = "investigating"
	Identified    Stage = "identified"
	Monitoring    Stage = "monitoring"
	Resolved      Stage = "resolved"
)

// Incident is a public incident.
type Incident struct {
	ID         string
	Title      string
	Stage      Stage
	StartedAt  time.Time
	ResolvedAt time.Time // zero while open
	UpdatedAt  time.Time
	// Updates oldest first.
	Updates []Update
	// ComponentIDs are the page's components it affects.
	ComponentIDs []string
}

// Update is one entry of an incident's public timeline.
type Update struct {
	Stage   Stage
	Message string
	At      time.Time
}

// Maintenance is a public maintenance window's current or next occurrence.
type Maintenance struct {
	ID          string
	Title       string
	Description string
	StartsAt    time.Time
	EndsAt      time.Time
	Active      bool
	// ComponentIDs are the page's components it holds in maintenance.
	ComponentIDs []string
}

// History is one month of a page's past public incidents.
type History struct {
	Page      Page      // the page's header and footer; its Groups may be empty
	Month     time.Time // first instant of the month, UTC
	Incidents []Incident
	// Older and Newer are the neighbouring months holding incidents; zero
	// when there is none (Newer is also zero for the current month).
	Older, Newer time.Time
}

// Overall is the page's one-sentence status: the worst component status,
// and active public incidents and maintenance.
func (p Page) Overall() Status {
	worst := Operational
	rank := map[Status]int{Operational: 0, NotMonitored: 0, NoData: 1, UnderMaint: 2, Degraded: 3, Outage: 4}
	for _, g := range p.Groups {
		for _, c := range g.Components {
			if rank[c.Status] > rank[worst] {
				worst = c.Status
			}
		}
	}
	return worst
}
