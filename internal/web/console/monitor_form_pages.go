package console

import (
	"net/http"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The monitor form's pages: new, create, edit, update and "Test now",
// each over the same app function as the API route beside it.

func monitorPath(ws, id string) string { return "/w/" + ws + "/monitors/" + id }

// renderMonitorForm answers with the form.
func (w *Server) renderMonitorForm(q *request, status int, v MonitorForm) {
	w.render(q, NavNone, status, func(s Shell) ([]byte, error) {
		v.Shell = s
		return RenderMonitorForm(v)
	})
}

// may refuses, with the error page, a person whose role does not grant
// scope: the app's own check, made before a form is read or shown.
func (w *Server) may(q *request, scope account.Scope) bool {
	if err := q.actor.Require(scope); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return false
	}
	return true
}

func (w *Server) newMonitor(q *request) {
	if !w.may(q, account.ScopeMonitorsWrite) {
		return
	}
	w.renderMonitorForm(q, http.StatusOK, MonitorForm{Mode: FormNew, Values: NewMonitorValues()})
}

func (w *Server) createMonitor(q *request) {
	if !w.may(q, account.ScopeMonitorsWrite) || !q.parse() {
		return
	}
	mf := readMonitorForm(q.r.PostForm, "")
	v := MonitorForm{Mode: FormNew, Values: mf.values}
	if fe := mf.problems(nil); fe.Any() {
		v.Errors = fe
		w.renderMonitorForm(q, http.StatusUnprocessableEntity, v)
		return
	}
	m, err := w.app.CreateMonitor(q.ctx(), q.actor, mf.draft)
	if err != nil {
		w.monitorFormFailed(q, v, mf, err)
		return
	}
	q.redirect(monitorPath(q.actor.WorkspaceID, m.ID), "monitor-created")
}

// storedMonitor is monitor id of the workspace, or false after the
// error page (a monitor of another workspace, or anything that is not a
// monitor's id, is not found before it reaches the database).
func (w *Server) storedMonitor(q *request, id string) (monitor.Monitor, bool) {
	if !ids.Valid(ids.Monitor, id) {
		w.fail(q.w, q.r, &q.ws, errs.ErrNotFound)
		return monitor.Monitor{}, false
	}
	m, err := w.app.GetMonitor(q.ctx(), q.actor, id)
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return m, false
	}
	return m, true
}

// withStored adds to typed values what the form shows of m's stored
// secrets: which are set, never their values.
func withStored(v MonitorValues, m monitor.Monitor) MonitorValues {
	s := MonitorFormValues(m)
	v.HeadersSet, v.AuthStored, v.AuthPasswordSet, v.AuthTokenSet, v.AuthValueSet = s.HeadersSet, s.AuthStored, s.AuthPasswordSet, s.AuthTokenSet, s.AuthValueSet
	return v
}

func (w *Server) editMonitor(q *request) {
	if !w.may(q, account.ScopeMonitorsWrite) {
		return
	}
	m, ok := w.storedMonitor(q, q.r.PathValue("id"))
	if !ok {
		return
	}
	w.renderMonitorForm(q, http.StatusOK, MonitorForm{Mode: FormEdit, ID: m.ID, Values: MonitorFormValues(m)})
}

func (w *Server) updateMonitor(q *request) {
	if !w.may(q, account.ScopeMonitorsWrite) || !q.parse() {
		return
	}
	m, ok := w.storedMonitor(q, q.r.PathValue("id"))
	if !ok {
		return
	}
	mf := readMonitorForm(q.r.PostForm, m.Type)
	v := MonitorForm{Mode: FormEdit, ID: m.ID, Values: withStored(mf.values, m)}
	if fe := mf.problems(m.Config.AuthSet); fe.Any() {
		v.Errors = fe
		w.renderMonitorForm(q, http.StatusUnprocessableEntity, v)
		return
	}
	if _, err := w.app.UpdateMonitor(q.ctx(), q.actor, m.ID, mf.update()); err != nil {
		w.monitorFormFailed(q, v, mf, err)
		return
	}
	q.redirect(monitorPath(q.actor.WorkspaceID, m.ID), "monitor-saved")
}

// testMonitor runs one check of the form's draft and shows the form
// again, as typed, with what the check found.
func (w *Server) testMonitor(q *request) {
	if !w.may(q, account.ScopeMonitorsWrite) || !q.parse() {
		return
	}
	v := MonitorForm{Mode: FormNew}
	var stored *monitor.Monitor
	if q.r.PostForm.Get("mode") == string(FormEdit) {
		m, ok := w.storedMonitor(q, q.r.PostForm.Get("id"))
		if !ok {
			return
		}
		v.Mode, v.ID, stored = FormEdit, m.ID, &m
	}
	var mf *monitorForm
	var auth *monitor.AuthPresence
	if stored != nil {
		mf = readMonitorForm(q.r.PostForm, stored.Type)
		v.Values, auth = withStored(mf.values, *stored), stored.Config.AuthSet
	} else {
		mf = readMonitorForm(q.r.PostForm, "")
		v.Values = mf.values
	}
	mf.draft = mf.testDraft(auth)
	if fe := mf.problems(nil); fe.Any() {
		v.Errors = fe
		w.renderMonitorForm(q, http.StatusUnprocessableEntity, v)
		return
	}
	d := mf.draft
	obs, err := w.app.TestMonitor(q.ctx(), q.actor, d)
	if err != nil {
		w.monitorFormFailed(q, v, mf, err)
		return
	}
	v.Test = NewTestResult(obs, d.Config)
	w.renderMonitorForm(q, http.StatusOK, v)
}

// monitorFormFailed shows the form again with the app's objections, or
// the error page for an error that is not the person's to fix.
func (w *Server) monitorFormFailed(q *request, v MonitorForm, mf *monitorForm, err error) {
	if errs.KindOf(err) == errs.KindFeatureUnavailable { // a node that runs no checks cannot test
		v.Errors = FormErrors{Summary: "This server runs no checks, so it cannot test one: save the monitor and see its first result."}
		w.renderMonitorForm(q, http.StatusServiceUnavailable, v)
		return
	}
	if _, ok := formErrors(err, nil); !ok || statusOf(err) == http.StatusForbidden || statusOf(err) == http.StatusNotFound {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	v.Errors = mf.errors(err)
	w.renderMonitorForm(q, statusOf(err), v)
}
