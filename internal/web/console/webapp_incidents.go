package console

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
)

// The incident pages: the list with the "New incident" form, and one
// incident's page with its timeline and the forms that acknowledge,
// update, resolve and change it, each over the app function the API's
// route beside it calls.

// The flashes of the incident and maintenance pages.
func init() {
	for code, msg := range map[string]string{
		"incident-created":      "The incident is open. Its first update is on the timeline.",
		"incident-acknowledged": "The incident is acknowledged.",
		"incident-updated":      "The update is posted.",
		"incident-resolved":     "The incident is resolved.",
		"incident-saved":        "The incident's settings are saved.",
		"maintenance-created":   "The maintenance window is created. What it covers enters maintenance within seconds of its start.",
		"maintenance-saved":     "The maintenance window is saved.",
		"maintenance-deleted":   "The maintenance window is deleted.",
	} {
		flashes[code] = Flash{Kind: FlashSuccess, Message: msg}
	}
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

// lasted is how long inc lasted, or has so far.
func lasted(inc *incident.Incident, now time.Time) time.Duration {
	if inc.ResolvedAt != nil {
		return inc.ResolvedAt.Sub(inc.StartedAt)
	}
	return now.Sub(inc.StartedAt)
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

// badLink is the message for a list's link whose cursor does not work.
const badLink = "This link to a page of the list does not work; here is the first page."

func (w *Server) incidents(q *request) {
	w.renderIncidents(q, http.StatusOK, IncidentForm{Status: string(incident.Investigating)}, FormErrors{})
}

func (w *Server) renderIncidents(q *request, status int, form IncidentForm, fe FormErrors) {
	v := Incidents{Form: form, Errors: fe}
	cursor := q.r.URL.Query().Get("cursor")
	if !clean.Valid(cursor) {
		cursor, v.ListErrors.Summary = "", badLink
	}
	now := w.app.Now()
	open := app.PageRequest{Limit: app.MaxPageLimit}
	for len(v.Open) < maxOpenIncidents {
		p, err := w.app.ListIncidents(q.ctx(), q.actor, app.IncidentFilter{Status: "open"}, open)
		if err != nil {
			w.fail(q.w, q.r, &q.ws, err)
			return
		}
		v.Open = append(v.Open, incidentRows(p.Items, now)...)
		if open.Cursor = p.NextCursor; open.Cursor == "" {
			break
		}
	}
	resolved, err := w.app.ListIncidents(q.ctx(), q.actor, app.IncidentFilter{Status: "resolved"}, app.PageRequest{Cursor: cursor, Limit: listPageSize})
	if errs.KindOf(err) == errs.KindInvalid && cursor != "" {
		v.ListErrors.Summary = badLink
		resolved, err = w.app.ListIncidents(q.ctx(), q.actor, app.IncidentFilter{Status: "resolved"}, app.PageRequest{Limit: listPageSize})
	}
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	v.Resolved = incidentRows(resolved.Items, now)
	if resolved.NextCursor != "" {
		v.NextPage = nextPageURL("/w/"+q.actor.WorkspaceID+"/incidents", resolved.NextCursor, nil)
	}
	if v.ListErrors.Any() && status == http.StatusOK {
		status = http.StatusUnprocessableEntity
	}
	w.render(q, NavIncidents, status, func(s Shell) ([]byte, error) {
		v.Shell = s
		if q.actor.Require(account.ScopeIncidentsWrite) == nil {
			var err error
			if v.Subjects, err = w.subjects(q); err != nil {
				return nil, err
			}
		}
		return RenderIncidents(v)
	})
}

// incidentFields are the incident forms' fields by the API's names.
var incidentFields = map[string]string{"title": "title", "status": "status", "message": "message",
	"affectedMonitors": "affected", "public": "public", "publicTitle": "public-title"}

func (w *Server) createIncident(q *request) {
	p, ok := q.posted()
	if !ok {
		return
	}
	form := IncidentForm{Title: p.get("title"), Status: p.get("status"), Message: p.get("message"),
		PublicTitle: p.get("public-title"), Public: p.f.Get("public") != "", Affected: p.list("affected")}
	d := app.IncidentDraft{Title: form.Title, Status: incident.Status(form.Status), Message: form.Message,
		AffectedMonitors: form.Affected, Public: form.Public, PublicTitle: form.PublicTitle}
	var err error
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
			w.fail(q.w, q.r, &q.ws, err)
			return
		}
		w.renderIncidents(q, http.StatusUnprocessableEntity, form, fe)
		return
	}
	q.redirect(incidentPath(q.actor.WorkspaceID, inc.ID), "incident-created")
}

func incidentPath(ws, id string) string { return "/w/" + ws + "/incidents/" + id }

// incidentID is the path's incident id; anything that is not one is not
// found, before it reaches the database.
func (w *Server) incidentID(q *request) (string, bool) { return w.pathID(q, ids.Incident) }

func (w *Server) incidentPage(q *request) {
	id, ok := w.incidentID(q)
	if !ok {
		return
	}
	w.renderIncident(q, http.StatusOK, id, nil)
}

// renderIncident answers with incident id's page; fill, when not nil,
// puts a refused form's values and messages back.
func (w *Server) renderIncident(q *request, status int, id string, fill func(*IncidentDetail)) {
	inc, err := w.app.GetIncident(q.ctx(), q.actor, id)
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	w.render(q, NavIncidents, status, func(s Shell) ([]byte, error) {
		subjects, err := w.subjects(q)
		if err != nil {
			return nil, err
		}
		byID := map[string]Subject{}
		for _, sub := range subjects {
			byID[sub.ID] = sub
		}
		v := IncidentDetail{Shell: s, ID: inc.ID, Title: inc.Title, Subject: subjectOf(inc.Subject),
			Cause: inc.Cause, State: incidentState(inc), Status: string(inc.Status), Public: inc.Public, PublicTitle: inc.PublicTitle,
			StartedAt: inc.StartedAt, Duration: lasted(inc, w.app.Now()), Subjects: subjects,
			Settings: IncidentSettings{Title: inc.Title, PublicTitle: inc.PublicTitle, Public: inc.Public, Affected: inc.AffectedMonitors}}
		if inc.AcknowledgedAt != nil {
			v.AcknowledgedAt = *inc.AcknowledgedAt
		}
		if inc.ResolvedAt != nil {
			v.ResolvedAt = *inc.ResolvedAt
		}
		for _, a := range inc.AffectedMonitors {
			sub, ok := byID[a]
			if !ok {
				sub = Subject{ID: a, Name: a, Heartbeat: strings.HasPrefix(a, "hb_")}
			}
			v.Affected = append(v.Affected, sub)
		}
		v.Timeline = timeline(inc)
		if fill != nil {
			fill(&v)
		}
		return RenderIncident(v)
	})
}

// timeline is the incident's updates and its events, oldest first; an
// event comes before an update at the same instant.
func timeline(inc *incident.Incident) []TimelineEntry {
	by := ""
	if inc.Origin == incident.Automatic {
		by = "Tocsin, when the subject went down"
	}
	out := []TimelineEntry{{At: inc.StartedAt, Event: "opened", By: by}}
	if inc.AcknowledgedAt != nil {
		out = append(out, TimelineEntry{At: *inc.AcknowledgedAt, Event: "acknowledged"})
	}
	if inc.ResolvedAt != nil {
		by := ""
		if inc.Origin == incident.Automatic && len(inc.Updates) > 0 && inc.Updates[len(inc.Updates)-1].Automatic {
			by = "Tocsin, when the subject recovered"
		}
		out = append(out, TimelineEntry{At: *inc.ResolvedAt, Event: "resolved", By: by})
	}
	for _, u := range inc.Updates {
		out = append(out, TimelineEntry{At: u.At, Status: string(u.Status), Message: u.Message, Automatic: u.Automatic})
	}
	slices.SortStableFunc(out, func(a, b TimelineEntry) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return eventFirst(a) - eventFirst(b)
	})
	return out
}

// incidentAction runs one change of the path's incident and redirects to
// its page with flash; a refused form is shown again with its messages.
func (w *Server) incidentAction(q *request, flash string, change func(id string, p *posted) error,
	refused func(v *IncidentDetail, p *posted, fe FormErrors), fieldOf map[string]string) {
	id, ok := w.incidentID(q)
	if !ok {
		return
	}
	p, ok := q.posted()
	if !ok {
		return
	}
	err := change(id, p)
	if err == nil && len(p.bad) == 0 {
		q.redirect(incidentPath(q.actor.WorkspaceID, id), flash)
		return
	}
	fe, ok := p.errors(err, fieldOf)
	if !ok {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	w.renderIncident(q, http.StatusUnprocessableEntity, id, func(v *IncidentDetail) { refused(v, p, fe) })
}

// mayChangeIncidents is the app's verdict on the actor's role, for a form
// refused before the app is called.
func mayChangeIncidents(q *request) error { return q.actor.Require(account.ScopeIncidentsWrite) }

func (w *Server) acknowledgeIncident(q *request) {
	w.incidentAction(q, "incident-acknowledged", func(id string, _ *posted) error {
		_, err := w.app.AcknowledgeIncident(q.ctx(), q.actor, id)
		return err
	}, func(v *IncidentDetail, _ *posted, fe FormErrors) { v.UpdateErrors = fe }, nil)
}

func (w *Server) resolveIncident(q *request) {
	w.incidentAction(q, "incident-resolved", func(id string, p *posted) error {
		msg := p.get("resolve-message")
		if len(p.bad) > 0 {
			return mayChangeIncidents(q)
		}
		_, err := w.app.ResolveIncident(q.ctx(), q.actor, id, msg)
		return err
	}, func(v *IncidentDetail, p *posted, fe FormErrors) {
		v.ResolveMessage, v.ResolveErrors = p.get("resolve-message"), fe
	}, map[string]string{"message": "resolve-message"})
}

func (w *Server) postIncidentUpdate(q *request) {
	w.incidentAction(q, "incident-updated", func(id string, p *posted) error {
		status, msg := p.get("update-status"), p.get("update-message")
		if len(p.bad) > 0 {
			if err := mayChangeIncidents(q); err != nil {
				return err
			}
			var problems []errs.FieldError
			if !incident.Status(status).Valid() && p.bad["update-status"] == "" {
				problems = append(problems, errs.FieldError{Pointer: "/status", Message: "must be investigating, identified, monitoring or resolved"})
			}
			if p.bad["update-message"] == "" {
				problems = append(problems, incident.ValidateMessage("/message", msg)...)
			}
			return invalidFields(problems)
		}
		_, err := w.app.PostIncidentUpdate(q.ctx(), q.actor, id, incident.Status(status), msg)
		return err
	}, func(v *IncidentDetail, p *posted, fe FormErrors) {
		v.UpdateStatus, v.UpdateMessage, v.UpdateErrors = p.get("update-status"), p.get("update-message"), fe
	}, map[string]string{"status": "update-status", "message": "update-message"})
}

func (w *Server) updateIncident(q *request) {
	read := func(p *posted) IncidentSettings {
		return IncidentSettings{Title: p.get("title"), PublicTitle: p.get("public-title"), Public: p.f.Get("public") != "",
			Affected: p.list("affected")}
	}
	w.incidentAction(q, "incident-saved", func(id string, p *posted) error {
		f := read(p)
		if len(p.bad) > 0 {
			if err := mayChangeIncidents(q); err != nil {
				return err
			}
			var problems []errs.FieldError
			if p.bad["title"] == "" {
				problems = append(problems, incident.ValidateTitle(f.Title)...)
			}
			if p.bad["public-title"] == "" {
				problems = append(problems, incident.ValidatePublicTitle(f.PublicTitle)...)
			}
			return invalidFields(problems)
		}
		affected := f.Affected
		if affected == nil {
			affected = []string{}
		}
		_, err := w.app.UpdateIncident(q.ctx(), q.actor, id, app.IncidentPatch{Title: &f.Title, AffectedMonitors: &affected,
			Public: &f.Public, PublicTitle: &f.PublicTitle})
		return err
	}, func(v *IncidentDetail, p *posted, fe FormErrors) {
		v.Settings, v.SettingsErrors = read(p), fe
	}, incidentFields)
}

// eventFirst orders an event before an update at the same instant.
func eventFirst(e TimelineEntry) int {
	if e.Event != "" {
		return 0
	}
	return 1
}
