package console

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/incident"
)

// The incidents list, with its "New incident" form (title, status,
// message, affected…, public, public-title); the list pages by GET cursor.

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

func (Incidents) template() string { return "incidents.html" }

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

// maxOpenIncidents bounds the open incidents the list shows (one per
// subject at most, plus manual ones).
const maxOpenIncidents = 500

// subjects are the workspace's monitors and heartbeats by name.
func (w *Server) subjects(q *request) ([]Subject, error) {
	var out []Subject
	page := app.PageRequest{Limit: app.MaxPageLimit}
	for {
		p, err := w.app.ListMonitors(q.ctx(), q.actor, app.MonitorFilter{}, page)
		if err != nil {
			return nil, err
		}
		for _, m := range p.Items {
			out = append(out, Subject{ID: m.ID, Name: m.Name})
		}
		if page.Cursor = p.NextCursor; page.Cursor == "" {
			break
		}
	}
	page = app.PageRequest{Limit: app.MaxPageLimit}
	for {
		p, err := w.app.ListHeartbeats(q.ctx(), q.actor, app.HeartbeatFilter{}, page)
		if err != nil {
			return nil, err
		}
		for _, h := range p.Items {
			out = append(out, Subject{ID: h.ID, Name: h.Name, Heartbeat: true})
		}
		if page.Cursor = p.NextCursor; page.Cursor == "" {
			break
		}
	}
	slices.SortStableFunc(out, func(a, b Subject) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// incidentState is open, acknowledged or resolved.
func incidentState(inc *incident.Incident) string {
	switch {
	case !inc.Open():
		return "resolved"
	case inc.AcknowledgedAt != nil:
		return "acknowledged"
	}
	return "open"
}

func subjectOf(s *incident.Subject) *Subject {
	if s == nil {
		return nil
	}
	return &Subject{ID: s.ID, Name: s.Name, Heartbeat: s.Type == "heartbeat"}
}

func incidentRows(in []*incident.Incident, now time.Time) []IncidentRow {
	out := make([]IncidentRow, 0, len(in))
	for _, inc := range in {
		out = append(out, IncidentRow{ID: inc.ID, Title: inc.Title, Subject: subjectOf(inc.Subject), State: incidentState(inc),
			Status: string(inc.Status), StartedAt: inc.StartedAt, Duration: lasted(inc, now), Public: inc.Public})
	}
	return out
}

func (w *Server) incidents(q *request) error {
	return w.renderIncidents(q, http.StatusOK, IncidentForm{Status: string(incident.Investigating)}, FormErrors{})
}

func (w *Server) renderIncidents(q *request, status int, form IncidentForm, fe FormErrors) error {
	v := Incidents{Form: form, Errors: fe}
	now := w.app.Now()
	open := app.PageRequest{Limit: app.MaxPageLimit}
	for len(v.Open) < maxOpenIncidents {
		p, err := w.app.ListIncidents(q.ctx(), q.actor, app.IncidentFilter{Status: "open"}, open)
		if err != nil {
			return err
		}
		v.Open = append(v.Open, incidentRows(p.Items, now)...)
		if open.Cursor = p.NextCursor; open.Cursor == "" {
			break
		}
	}
	resolved, next, err := linkedPage(q, "incidents", &v.ListErrors, func(p app.PageRequest) (app.Page[*incident.Incident], error) {
		return w.app.ListIncidents(q.ctx(), q.actor, app.IncidentFilter{Status: "resolved"}, p)
	})
	if err != nil {
		return err
	}
	v.Resolved, v.NextPage = incidentRows(resolved.Items, now), next
	if v.ListErrors.Any() && status == http.StatusOK {
		status = http.StatusUnprocessableEntity
	}
	return w.servePage(q, NavIncidents, status, func(s Shell) (view, error) {
		v.Shell = s
		if q.actor.Require(account.ScopeIncidentsWrite) == nil {
			var err error
			if v.Subjects, err = w.subjects(q); err != nil {
				return nil, err
			}
		}
		return v, nil
	})
}

// incidentFields are the incident forms' fields by the API's names.
var incidentFields = map[string]string{"title": "title", "status": "status", "message": "message",
	"affectedMonitors": "affected", "public": "public", "publicTitle": "public-title"}

func (w *Server) createIncident(q *request) error {
	p, err := q.posted()
	if err != nil {
		return err
	}
	form := IncidentForm{Title: p.get("title"), Status: p.get("status"), Message: p.get("message"),
		PublicTitle: p.get("public-title"), Public: p.f.Get("public") != "", Affected: p.list("affected")}
	d := app.IncidentDraft{Title: form.Title, Status: incident.Status(form.Status), Message: form.Message,
		AffectedMonitors: form.Affected, Public: form.Public, PublicTitle: form.PublicTitle}

	var inc *incident.Incident
	if len(p.bad) > 0 {
		if err = q.actor.Require(account.ScopeIncidentsWrite); err == nil {
			err = invalidFields(app.ValidateIncident(d))
		}
	} else {
		inc, err = w.app.CreateIncident(q.ctx(), q.actor, d)
	}
	if err != nil || len(p.bad) > 0 {
		fe, ok := p.errors(err, incidentFields)
		if !ok {
			return err
		}
		return w.renderIncidents(q, http.StatusUnprocessableEntity, form, fe)
	}
	return q.redirect(incidentPath(q.actor.WorkspaceID, inc.ID), "incident-created")
}
