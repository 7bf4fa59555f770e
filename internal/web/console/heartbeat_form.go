package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
)

// The heartbeat form (HeartbeatForm) read into what the API's
// heartbeat body becomes: a heartbeat.Draft, for a create or as the whole
// of an edit. Only the chosen schedule's fields are read. Numbers and text
// are read as the monitor form reads them (monitorForm's number and slo),
// and a field that cannot be read is reported with the draft's own
// problems, so one answer lists every mistake.

// heartbeatForm is a submitted heartbeat form.
type heartbeatForm struct {
	values HeartbeatValues
	draft  heartbeat.Draft
	// nums reads the numbers and holds the fields that could not be read.
	nums monitorForm
}

// readHeartbeatForm reads a posted heartbeat form. Text that is not valid
// UTF-8 without NUL is refused at its field, where it enters.
func readHeartbeatForm(f url.Values) *heartbeatForm {
	hf := &heartbeatForm{}
	get := func(name string) string { return hf.nums.text(f, name, unreadText) }
	v := &hf.values
	*v = HeartbeatValues{Name: get("name"), Kind: get("kind"), Period: get("period"), Grace: get("grace"), Cron: get("cron"),
		Timezone: get("timezone"), MaxRuntime: get("max-runtime"), SLOTarget: get("slo-target"), SLOPeriod: get("slo-period"),
		Paused: f.Get("paused") != ""}
	if v.Kind != "cron" {
		v.Kind = "period"
	}
	d := &hf.draft
	d.Name, d.Paused = v.Name, v.Paused
	if v.Kind == "cron" {
		d.Schedule.Cron, d.Schedule.Timezone = v.Cron, v.Timezone
	} else {
		d.Schedule.PeriodSeconds = hf.nums.number("period", v.Period)
	}
	d.Schedule.GraceSeconds = hf.nums.number("grace", v.Grace)
	d.MaxRuntimeSeconds = hf.nums.number("max-runtime", v.MaxRuntime)
	d.SLO = hf.nums.slo(v.SLOTarget, v.SLOPeriod)
	return hf
}

// problems are the form's unreadable fields plus what the draft's own
// validation finds, when any field could not be read: the app is then
// not called, and the answer still lists every mistake.
func (hf *heartbeatForm) problems() FormErrors {
	if len(hf.nums.bad) == 0 {
		return FormErrors{}
	}
	d := hf.draft
	fields := append(d.Normalize(), app.SLOProblems(d.SLO)...)
	return hf.errors(&errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields", Fields: fields})
}

// errors are the form's messages for an app error, with the fields that
// could not be read.
func (hf *heartbeatForm) errors(err error) FormErrors {
	return appFieldErrors(err, hf.nums.bad, func(ptr string) string { return HeartbeatField(ptr, hf.values.Kind) },
		HeartbeatFieldMessage)
}

// renderHeartbeatForm answers with the form.
func (w *Server) renderHeartbeatForm(q *request, status int, v HeartbeatForm) error {
	return w.servePage(q, NavHeartbeats, status, func(s Shell) (view, error) {
		v.Shell = s
		return v, nil
	})
}

func (w *Server) newHeartbeat(q *request) error {
	if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
		return err
	}
	return w.renderHeartbeatForm(q, http.StatusOK, HeartbeatForm{Mode: FormNew, Values: NewHeartbeatValues()})
}

func (w *Server) createHeartbeat(q *request) error {
	if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
		return err
	}
	if err := q.parse(); err != nil {
		return err
	}
	hf := readHeartbeatForm(q.r.PostForm)
	v := HeartbeatForm{Mode: FormNew, Values: hf.values}
	if fe := hf.problems(); fe.Any() {
		v.Errors = fe
		return w.renderHeartbeatForm(q, http.StatusUnprocessableEntity, v)
	}
	h, err := w.app.CreateHeartbeat(q.ctx(), q.actor, hf.draft)
	if err != nil {
		return w.heartbeatFormFailed(q, v, hf, err)
	}
	return q.redirect(heartbeatPath(q.actor.WorkspaceID, h.ID)+"#url-h", "heartbeat-created")
}

func (w *Server) editHeartbeat(q *request) error {
	if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
		return err
	}
	id, err := w.heartbeatID(q)
	if err != nil {
		return err
	}
	h, err := w.app.GetHeartbeat(q.ctx(), q.actor, id)
	if err != nil {
		return err
	}
	return w.renderHeartbeatForm(q, http.StatusOK, HeartbeatForm{Mode: FormEdit, ID: h.ID, Values: HeartbeatFormValues(h)})
}

func (w *Server) updateHeartbeat(q *request) error {
	if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
		return err
	}
	id, err := w.heartbeatID(q)
	if err != nil {
		return err
	}
	if err := q.parse(); err != nil {
		return err
	}
	hf := readHeartbeatForm(q.r.PostForm)
	v := HeartbeatForm{Mode: FormEdit, ID: id, Values: hf.values}
	if fe := hf.problems(); fe.Any() {
		v.Errors = fe
		return w.renderHeartbeatForm(q, http.StatusUnprocessableEntity, v)
	}
	// The form holds every field the API's PATCH may change: the edit is
	// the whole draft, pause state as stored.
	_, err = w.app.UpdateHeartbeat(q.ctx(), q.actor, id, func(cur heartbeat.Heartbeat) (heartbeat.Draft, error) {
		d := hf.draft
		d.Paused = cur.Paused
		return d, nil
	})
	if err != nil {
		return w.heartbeatFormFailed(q, v, hf, err)
	}
	return q.redirect(heartbeatPath(q.actor.WorkspaceID, id), "heartbeat-saved")
}

// heartbeatFormFailed shows the form again with the app's objections, or
// the error page for an error that is not the person's to fix.
func (w *Server) heartbeatFormFailed(q *request, v HeartbeatForm, hf *heartbeatForm, err error) error {
	if _, ok := formErrors(err, nil); !ok || statusOf(err) == http.StatusForbidden || statusOf(err) == http.StatusNotFound {
		return err
	}
	v.Errors = hf.errors(err)
	return w.renderHeartbeatForm(q, statusOf(err), v)
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

func (HeartbeatForm) template() string { return "heartbeat_form.html" }

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

// withDefaults makes a form without a mode a new one, and a schedule
// that is not cron a period.
func (v HeartbeatForm) withDefaults() view {
	if v.Mode == "" {
		v.Mode = FormNew
	}
	if v.Values.Kind != "cron" {
		v.Values.Kind = "period"
	}
	return v
}
