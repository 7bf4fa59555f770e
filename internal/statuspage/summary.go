package statuspage

import (
	"encoding/json"
	"fmt"
	"time"
)

// SummaryJSON renders /status/{slug}/summary.json in the shape of
// Atlassian Statuspage's /api/v2/summary.json, which status aggregators
// already read. pageURL is the page's absolute URL. Fields appear in this
// order:
//
//	{
//	  "page": {"id", "name", "url", "time_zone", "updated_at"},
//	  "components": [{"id", "name", "status", "description", "position",
//	                  "group_id", "group", "components"?, "page_id"}],
//	  "incidents": [{"id", "name", "status", "impact", "created_at",
//	                 "updated_at", "started_at", "monitoring_at",
//	                 "resolved_at", "shortlink", "page_id",
//	                 "incident_updates": [{"id", "status", "body",
//	                     "incident_id", "created_at", "updated_at",
//	                     "display_at"}],
//	                 "components": [{"id", "name", "status"}]}],
//	  "scheduled_maintenances": [{"id", "name", "status", "impact",
//	                 "scheduled_for", "scheduled_until", "description",
//	                 "shortlink", "page_id", "incident_updates": [],
//	                 "components": [{"id", "name", "status"}]}],
//	  "status": {"indicator", "description"}
//	}
//
// Times are RFC 3339 in UTC; "time_zone" is always "Etc/UTC".
//
// Component status is operational, degraded_performance, partial_outage,
// major_outage or under_maintenance, as Atlassian's. A component that is
// down is major_outage; a group is the worst of its members, except that
// a group with some but not all members down is partial_outage.
//
// Where we differ from Atlassian:
//   - Component status has two more values: "no_data" (the component has
//     no known state: it is new, or its checks could not tell — never
//     reported as operational) and "not_monitored" (paused, on a page
//     that shows paused components).
//   - status.indicator is none, minor, major, critical or maintenance as
//     Atlassian's, and "unknown" when components have no data; its
//     description is our one sentence ("All systems operational",
//     "Partial outage", …).
//   - page.id is the page's slug; component ids are our component ids
//     (spc_…); a group's id is the one the page gives it, else
//     "group-<n>" by its position (1-based). Components shown without a
//     group have a null group_id. No component has created_at,
//     updated_at, showcase or only_show_if_degraded.
//   - An incident's impact is "major" when a component it affects is
//     down, else "minor"; an update's id is "<incident id>-<n>", n
//     counting its updates from the oldest (1); updates are newest first
//     as Atlassian's.
//   - A maintenance's status is "in_progress" or "scheduled"; its text is
//     in "description" and incident_updates is empty.
//   - Only open public incidents and active or scheduled public
//     maintenance are listed, as Atlassian's summary does.
func SummaryJSON(p Page, pageURL string) ([]byte, error) {
	s := summary{
		Page: sumPage{
			ID: p.Slug, Name: p.Title, URL: pageURL, TimeZone: "Etc/UTC",
			UpdatedAt: stamp(p.GeneratedAt),
		},
		Components:  []sumComponent{},
		Incidents:   []sumIncident{},
		Maintenance: []sumMaintenance{},
	}
	byID := map[string]Component{}
	pos := 0
	for gi, g := range p.Groups {
		var groupID *string
		if g.Name != "" {
			id := g.ID
			if id == "" {
				id = fmt.Sprintf("group-%d", gi+1)
			}
			groupID = &id
			pos++
			grp := sumComponent{ID: id, Name: g.Name, Status: groupStatus(g), Position: pos, Group: true, Members: []string{}, PageID: p.Slug}
			for _, c := range g.Components {
				grp.Members = append(grp.Members, c.ID)
			}
			s.Components = append(s.Components, grp)
		}
		for _, c := range g.Components {
			byID[c.ID] = c
			pos++
			var desc *string
			if c.Description != "" {
				desc = &c.Description
			}
			s.Components = append(s.Components, sumComponent{
				ID: c.ID, Name: c.Name, Status: wireStatus(c.Status), Description: desc,
				Position: pos, GroupID: groupID, PageID: p.Slug,
			})
		}
	}
	affected := func(ids []string) []sumRef {
		out := []sumRef{}
		for _, id := range ids {
			if c, ok := byID[id]; ok {
				out = append(out, sumRef{ID: c.ID, Name: c.Name, Status: wireStatus(c.Status)})
			}
		}
		return out
	}
	for _, in := range p.Incidents {
		impact := "minor"
		for _, id := range in.ComponentIDs {
			if byID[id].Status == Outage {
				impact = "major"
			}
		}
		si := sumIncident{
			ID: in.ID, Name: in.Title, Status: string(in.Stage), Impact: impact,
			CreatedAt: stamp(in.StartedAt), UpdatedAt: stamp(in.LastUpdate()), StartedAt: stamp(in.StartedAt),
			ResolvedAt: optStamp(in.ResolvedAt), Shortlink: pageURL + "#" + in.ID, PageID: p.Slug,
			Updates: []sumUpdate{}, Components: affected(in.ComponentIDs),
		}
		for i := len(in.Updates) - 1; i >= 0; i-- {
			u := in.Updates[i]
			at := stamp(u.At)
			si.Updates = append(si.Updates, sumUpdate{
				ID: fmt.Sprintf("%s-%d", in.ID, i+1), Status: string(u.Stage), Body: u.Message,
				IncidentID: in.ID, CreatedAt: at, UpdatedAt: at, DisplayAt: at,
			})
		}
		for _, u := range in.Updates {
			if u.Stage == Monitoring && si.MonitoringAt == nil {
				si.MonitoringAt = optStamp(u.At)
			}
		}
		s.Incidents = append(s.Incidents, si)
	}
	for _, m := range p.Maintenance {
		status := "scheduled"
		if m.Active {
			status = "in_progress"
		}
		s.Maintenance = append(s.Maintenance, sumMaintenance{
			ID: m.ID, Name: m.Title, Status: status, Impact: "maintenance",
			ScheduledFor: stamp(m.StartsAt), ScheduledUntil: stamp(m.EndsAt), Description: m.Description,
			Shortlink: pageURL, PageID: p.Slug, Updates: []sumUpdate{}, Components: affected(m.ComponentIDs),
		})
	}
	h := p.Headline()
	s.Status = sumStatus{Indicator: string(h.Indicator), Description: h.Sentence}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("statuspage: summary.json: %w", err)
	}
	return append(b, '\n'), nil
}

// wireStatus is a component's status in summary.json.
func wireStatus(s Status) string {
	switch s {
	case Operational:
		return "operational"
	case Degraded:
		return "degraded_performance"
	case Outage:
		return "major_outage"
	case UnderMaint:
		return "under_maintenance"
	case NotMonitored:
		return "not_monitored"
	default:
		return "no_data"
	}
}

// groupStatus is the worst of a group's monitored members; some down of
// several is a partial outage.
func groupStatus(g Group) string {
	var monitored, down int
	for _, c := range g.Components {
		switch c.Status {
		case NotMonitored:
			continue
		case Outage:
			down++
		}
		monitored++
	}
	switch {
	case monitored == 0 && len(g.Components) > 0:
		return "not_monitored"
	case monitored == 0:
		return "no_data"
	case down > 0 && down < monitored:
		return "partial_outage"
	}
	return wireStatus(Page{Groups: []Group{g}}.Overall())
}

// LastUpdate is when the incident was last updated: its latest update,
// else its start.
func (in Incident) LastUpdate() time.Time {
	t := in.UpdatedAt
	for _, u := range in.Updates {
		if u.At.After(t) {
			t = u.At
		}
	}
	if t.IsZero() {
		t = in.StartedAt
	}
	return t
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func optStamp(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := stamp(t)
	return &s
}

type summary struct {
	Page        sumPage          `json:"page"`
	Components  []sumComponent   `json:"components"`
	Incidents   []sumIncident    `json:"incidents"`
	Maintenance []sumMaintenance `json:"scheduled_maintenances"`
	Status      sumStatus        `json:"status"`
}

type sumPage struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	URL       string `json:"url"`
	TimeZone  string `json:"time_zone"`
	UpdatedAt string `json:"updated_at"`
}

type sumComponent struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Status      string   `json:"status"`
	Description *string  `json:"description"`
	Position    int      `json:"position"`
	GroupID     *string  `json:"group_id"`
	Group       bool     `json:"group"`
	Members     []string `json:"components,omitempty"`
	PageID      string   `json:"page_id"`
}

type sumRef struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

type sumIncident struct {
	ID           string      `json:"id"`
	Name         string      `json:"name"`
	Status       string      `json:"status"`
	Impact       string      `json:"impact"`
	CreatedAt    string      `json:"created_at"`
	UpdatedAt    string      `json:"updated_at"`
	StartedAt    string      `json:"started_at"`
	MonitoringAt *string     `json:"monitoring_at"`
	ResolvedAt   *string     `json:"resolved_at"`
	Shortlink    string      `json:"shortlink"`
	PageID       string      `json:"page_id"`
	Updates      []sumUpdate `json:"incident_updates"`
	Components   []sumRef    `json:"components"`
}

type sumUpdate struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	Body       string `json:"body"`
	IncidentID string `json:"incident_id"`
	CreatedAt  string `json:"created_at"`
	UpdatedAt  string `json:"updated_at"`
	DisplayAt  string `json:"display_at"`
}

type sumMaintenance struct {
	ID             string      `json:"id"`
	Name           string      `json:"name"`
	Status         string      `json:"status"`
	Impact         string      `json:"impact"`
	ScheduledFor   string      `json:"scheduled_for"`
	ScheduledUntil string      `json:"scheduled_until"`
	Description    string      `json:"description"`
	Shortlink      string      `json:"shortlink"`
	PageID         string      `json:"page_id"`
	Updates        []sumUpdate `json:"incident_updates"`
	Components     []sumRef    `json:"components"`
}

type sumStatus struct {
	Indicator   string `json:"indicator"`
	Description string `json:"description"`
}
