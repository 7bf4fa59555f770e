package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
)

// The maintenance windows page, /w/{ws}/maintenance, and a window's edit
// page, …/{id}/edit (the same page with EditID). The form's fields: name,
// description, kind, timezone, starts, ends, cron, rrule, duration, until,
// monitor…, heartbeat…, public; delete: POST …/{id}/delete.

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

func (Maintenance) template() string { return "maintenance.html" }

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

// localLayout is how a datetime-local field writes a wall time.
const localLayout = "2006-01-02T15:04"

// maintenanceFields are the form's fields by the API's JSON pointers.
var maintenanceFields = map[string]string{"name": "name", "description": "description", "startsAt": "starts", "endsAt": "ends",
	"monitorIds": "monitor", "heartbeatIds": "monitor", "public": "public", "kind": "kind", "timezone": "timezone", "cron": "cron",
	"rrule": "rrule", "duration": "duration", "until": "until"}

// recurrencePointers flatten the recurrence's pointers to the form's
// fields (formErrors reads a pointer's first segment).
var recurrencePointers = map[string]string{"/recurrence/cron": "/cron", "/recurrence/rrule": "/rrule",
	"/recurrence/timezone": "/timezone", "/recurrence/durationMinutes": "/duration", "/recurrence/until": "/until",
	"/recurrence": "/cron"}

// maintenanceErrors are the form's messages for err.
func maintenanceErrors(p *posted, err error) (FormErrors, bool) {
	var e *errs.Error
	if errors.As(err, &e) {
		flat := *e
		flat.Fields = make([]errs.FieldError, len(e.Fields))
		for i, f := range e.Fields {
			if to, ok := recurrencePointers[f.Pointer]; ok {
				f.Pointer = to
			}
			flat.Fields[i] = f
		}
		err = &flat
	}
	return p.errors(err, maintenanceFields)
}

// maintenanceForm is a submitted window form: what it holds and the
// draft it makes.
type maintenanceForm struct {
	values MaintenanceForm
	draft  app.MaintenanceDraft
}

// readMaintenanceForm reads the form; times are wall times in its time
// zone.
func readMaintenanceForm(p *posted) maintenanceForm {
	v := MaintenanceForm{Name: p.get("name"), Description: p.get("description"), Kind: p.get("kind"), Starts: p.get("starts"),
		Ends: p.get("ends"), Timezone: strings.TrimSpace(p.get("timezone")), Cron: p.get("cron"), RRule: p.get("rrule"),
		Duration: p.get("duration"), Until: p.get("until"), Monitors: p.list("monitor"), Heartbeats: p.list("heartbeat"),
		Public: p.f.Get("public") != ""}
	loc := time.UTC
	if v.Timezone != "" && v.Timezone != "UTC" {
		l, err := time.LoadLocation(v.Timezone)
		if err != nil || v.Timezone == "Local" {
			p.fail("timezone", "must be an IANA time zone name such as Europe/Berlin or UTC")
		} else {
			loc = l
		}
	}
	at := func(name, s string) time.Time {
		s = strings.TrimSpace(s)
		if s == "" {
			return time.Time{}
		}
		for _, layout := range []string{localLayout, localLayout + ":05", "2006-01-02 15:04"} {
			if t, err := time.ParseInLocation(layout, s, loc); err == nil {
				return t
			}
		}
		p.fail(name, "must be a date and time such as 2026-11-28T02:00")
		return time.Time{}
	}
	d := app.MaintenanceDraft{Name: v.Name, Description: v.Description, MonitorIDs: v.Monitors, HeartbeatIDs: v.Heartbeats,
		Public: v.Public, StartsAt: at("starts", v.Starts)}
	switch v.Kind {
	case "one-off", "":
		v.Kind = "one-off"
		d.EndsAt = at("ends", v.Ends)
		if d.StartsAt.IsZero() && p.bad["starts"] == "" {
			p.fail("starts", "give when the window begins")
		}
		if d.EndsAt.IsZero() && p.bad["ends"] == "" {
			p.fail("ends", "give when the window ends")
		}
	case "recurring":
		r := &app.Recurrence{Cron: v.Cron, RRule: v.RRule, Timezone: v.Timezone, Until: at("until", v.Until)}
		if s := strings.TrimSpace(v.Duration); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				p.fail("duration", "must be a whole number of minutes")
			}
			r.Duration = time.Duration(n) * time.Minute
		}
		d.Recurrence = r
	default:
		p.fail("kind", "must be one-off or recurring")
	}
	return maintenanceForm{values: v, draft: d}
}

// formOf is a stored window as the form shows it.
func formOf(v app.MaintenanceView) MaintenanceForm {
	f := MaintenanceForm{Name: v.Name, Description: v.Description, Kind: "one-off", Timezone: "UTC",
		Monitors: v.MonitorIDs, Heartbeats: v.HeartbeatIDs, Public: v.Public}
	loc := time.UTC
	if v.Recurring() {
		f.Kind, f.Cron, f.RRule, f.Timezone = "recurring", v.Cron, v.RRule, v.Timezone
		f.Duration = strconv.Itoa(int(v.Duration / time.Minute))
		if l, err := time.LoadLocation(v.Timezone); err == nil {
			loc = l
		}
	}
	wall := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.In(loc).Format(localLayout)
	}
	f.Starts, f.Ends, f.Until = wall(v.StartsAt), wall(v.EndsAt), wall(v.Until)
	return f
}

func (w *Server) maintenance(q *request) error {
	return w.renderMaintenance(q, http.StatusOK, "", MaintenanceForm{Kind: "one-off", Timezone: "UTC"}, FormErrors{})
}

// renderMaintenance answers with the list and its create form, or with
// window editID's edit form.
func (w *Server) renderMaintenance(q *request, status int, editID string, form MaintenanceForm, fe FormErrors) error {
	v := Maintenance{EditID: editID, Form: form, Errors: fe}
	subjects, err := w.subjects(q)
	if err != nil {
		return err
	}
	v.Subjects = subjects
	if editID == "" {
		byID := map[string]Subject{}
		for _, s := range subjects {
			byID[s.ID] = s
		}
		list, next, err := linkedPage(q, "maintenance", &v.ListErrors, func(p app.PageRequest) (app.Page[app.MaintenanceView], error) {
			return w.app.ListMaintenanceWindows(q.ctx(), q.actor, p)
		})
		if err != nil {
			return err
		}
		for _, m := range list.Items {
			row := MaintenanceRow{ID: m.ID, Name: m.Name, Description: m.Description, Recurring: m.Recurring(),
				StartsAt: m.StartsAt, EndsAt: m.EndsAt, Cron: m.Cron, RRule: m.RRule, Timezone: m.Timezone, Duration: m.Duration,
				Until: m.Until, Public: m.Public, Active: m.Active, CurrentEndsAt: m.CurrentEndsAt, NextStartAt: m.NextStartAt}
			if row.Recurring && !m.StartsAt.After(w.app.Now()) {
				row.StartsAt = time.Time{} // a start behind us says nothing
			}
			for _, id := range append(append([]string{}, m.MonitorIDs...), m.HeartbeatIDs...) {
				sub, ok := byID[id]
				if !ok {
					sub = Subject{ID: id, Name: id, Heartbeat: strings.HasPrefix(id, "hb_")}
				}
				row.Covers = append(row.Covers, sub)
			}
			v.Rows = append(v.Rows, row)
		}
		v.NextPage = next
		if v.ListErrors.Any() && status == http.StatusOK {
			status = http.StatusUnprocessableEntity
		}
	}
	return w.servePage(q, NavMaintenance, status, func(s Shell) (view, error) {
		v.Shell = s
		return v, nil
	})
}

// maintenanceRefused shows the form again with its messages, or the
// error page for an error that is not the person's to fix.
func (w *Server) maintenanceRefused(q *request, editID string, p *posted, mf maintenanceForm, err error) error {
	fe, ok := maintenanceErrors(p, err)
	if !ok {
		return err
	}
	return w.renderMaintenance(q, http.StatusUnprocessableEntity, editID, mf.values, fe)
}

func (w *Server) createMaintenance(q *request) error {
	p, err := q.posted()
	if err != nil {
		return err
	}
	mf := readMaintenanceForm(p)
	if len(p.bad) > 0 {
		if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
			return err
		}
		return w.maintenanceRefused(q, "", p, mf, invalidFields(app.ValidateMaintenance(mf.draft, w.app.Now())))
	}
	if _, err := w.app.CreateMaintenanceWindow(q.ctx(), q.actor, mf.draft); err != nil {
		return w.maintenanceRefused(q, "", p, mf, err)
	}
	return q.redirect("/w/"+q.actor.WorkspaceID+"/maintenance", "maintenance-created")
}

// maintenanceID is the path's window id; anything that is not one is not
// found.
func (w *Server) maintenanceID(q *request) (string, error) { return w.pathID(q, ids.Maintenance) }

func (w *Server) editMaintenance(q *request) error {
	id, err := w.maintenanceID(q)
	if err != nil {
		return err
	}
	if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
		return err
	}
	v, err := w.app.GetMaintenanceWindow(q.ctx(), q.actor, id)
	if err != nil {
		return err
	}
	return w.renderMaintenance(q, http.StatusOK, id, formOf(v), FormErrors{})
}

func (w *Server) updateMaintenance(q *request) error {
	id, err := w.maintenanceID(q)
	if err != nil {
		return err
	}
	p, err := q.posted()
	if err != nil {
		return err
	}
	mf := readMaintenanceForm(p)
	if len(p.bad) > 0 {
		if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
			return err
		}
		if _, err := w.app.GetMaintenanceWindow(q.ctx(), q.actor, id); err != nil {
			return err
		}
		return w.maintenanceRefused(q, id, p, mf, invalidFields(app.ValidateMaintenance(mf.draft, w.app.Now())))
	}
	_, err = w.app.UpdateMaintenanceWindow(q.ctx(), q.actor, id, func(cur app.MaintenanceView) (app.MaintenanceDraft, error) {
		d := mf.draft
		// The form shows times to the minute: a time left as shown keeps
		// the stored one, so an edit of the name leaves the timing alone.
		keep := func(typed *time.Time, stored time.Time) {
			if !typed.IsZero() && typed.Equal(stored.Truncate(time.Minute)) {
				*typed = stored
			}
		}
		keep(&d.StartsAt, cur.StartsAt)
		keep(&d.EndsAt, cur.EndsAt)
		if d.Recurrence != nil {
			r := *d.Recurrence
			keep(&r.Until, cur.Until)
			d.Recurrence = &r
		}
		return d, nil
	})
	if err != nil {
		return w.maintenanceRefused(q, id, p, mf, err)
	}
	return q.redirect("/w/"+q.actor.WorkspaceID+"/maintenance", "maintenance-saved")
}

func (w *Server) deleteMaintenance(q *request) error {
	return w.deleteListed(q, ids.Maintenance, w.app.DeleteMaintenanceWindow, "maintenance", "maintenance-deleted")
}
