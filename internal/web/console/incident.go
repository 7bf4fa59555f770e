package console

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
)

// One incident's page. Its forms POST …/acknowledge, …/updates
// (update-status, update-message), …/resolve (resolve-message) and …/edit
// (title, affected…, public, public-title).

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

func (IncidentDetail) template() string { return "incident.html" }

// Open reports whether the incident is not resolved.
func (d IncidentDetail) Open() bool { return d.ResolvedAt.IsZero() }

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

func incidentPath(ws, id string) string { return "/w/" + ws + "/incidents/" + id }

// incidentID is the path's incident id; anything that is not one is not
// found, before it reaches the database.
func (w *Server) incidentID(q *request) (string, error) { return w.pathID(q, ids.Incident) }

func (w *Server) incidentPage(q *request) error {
	id, err := w.incidentID(q)
	if err != nil {
		return err
	}
	return w.renderIncident(q, http.StatusOK, id, nil)
}

// renderIncident answers with incident id's page; fill, when not nil,
// puts a refused form's values and messages back.
func (w *Server) renderIncident(q *request, status int, id string, fill func(*IncidentDetail)) error {
	inc, err := w.app.GetIncident(q.ctx(), q.actor, id)
	if err != nil {
		return err
	}
	return w.servePage(q, NavIncidents, status, func(s Shell) (view, error) {
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
		return v, nil
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
	refused func(v *IncidentDetail, p *posted, fe FormErrors), fieldOf map[string]string) error {
	id, err := w.incidentID(q)
	if err != nil {
		return err
	}
	p, err := q.posted()
	if err != nil {
		return err
	}
	err = change(id, p)
	if err == nil && len(p.bad) == 0 {
		return q.redirect(incidentPath(q.actor.WorkspaceID, id), flash)
	}
	fe, ok := p.errors(err, fieldOf)
	if !ok {
		return err
	}
	return w.renderIncident(q, http.StatusUnprocessableEntity, id, func(v *IncidentDetail) { refused(v, p, fe) })
}

// mayChangeIncidents is the app's verdict on the actor's role, for a form
// refused before the app is called.
func mayChangeIncidents(q *request) error { return q.actor.Require(account.ScopeIncidentsWrite) }

func (w *Server) acknowledgeIncident(q *request) error {
	return w.incidentAction(q, "incident-acknowledged", func(id string, _ *posted) error {
		_, err := w.app.AcknowledgeIncident(q.ctx(), q.actor, id)
		return err
	}, func(v *IncidentDetail, _ *posted, fe FormErrors) { v.UpdateErrors = fe }, nil)
}

func (w *Server) resolveIncident(q *request) error {
	return w.incidentAction(q, "incident-resolved", func(id string, p *posted) error {
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

func (w *Server) postIncidentUpdate(q *request) error {
	return w.incidentAction(q, "incident-updated", func(id string, p *posted) error {
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

func (w *Server) updateIncident(q *request) error {
	read := func(p *posted) IncidentSettings {
		return IncidentSettings{Title: p.get("title"), PublicTitle: p.get("public-title"), Public: p.f.Get("public") != "",
			Affected: p.list("affected")}
	}
	return w.incidentAction(q, "incident-saved", func(id string, p *posted) error {
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
