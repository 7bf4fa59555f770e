package console

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The monitor pages, read side: the list and one monitor's page, and the
// forms on it that pause, resume and delete.

// listPageSize is how many monitors the list shows at once.
const listPageSize = 100

// uptimeDays is how many days the uptime bar shows, today the last.
const uptimeDays = 90

// recentRows is how many checks and state changes a monitor's page shows.
const recentRows = 20

// countedStates are the states the list always counts, in order; the
// others are counted when a monitor is in them.
var countedStates = []monitor.State{monitor.StateUp, monitor.StateDown, monitor.StateDegraded, monitor.StateUnknown, monitor.StatePaused}

func (w *Server) monitors(q *request) {
	query := q.r.URL.Query()
	// The query's text is judged here, where it enters, as the API's edge
	// does: no byte of it that is not valid UTF-8 without NUL goes on.
	var fe FormErrors
	get := func(name string) string { return judgedText(query, &fe, name, name) }
	form := MonitorFilterForm{State: strings.ToLower(get("state")), Type: get("type"), Q: get("q")}
	cursor := get("cursor")
	filter := app.MonitorFilter{Name: form.Q}
	if form.State != "" {
		filter.States = []monitor.State{monitor.State(strings.ToUpper(form.State))}
	}
	if form.Type != "" {
		filter.Types = []monitor.Type{monitor.Type(form.Type)}
	}
	page := app.PageRequest{Cursor: cursor, Limit: listPageSize}
	var list app.Page[monitor.Monitor]
	if !fe.Any() {
		var err error
		if list, err = w.app.ListMonitors(q.ctx(), q.actor, filter, page); err != nil {
			if errs.KindOf(err) != errs.KindInvalid {
				w.fail(q.w, q.r, &q.ws, err)
				return
			}
			fe, _ = formErrors(err, map[string]string{"query.state": "state", "query.type": "type", "query.q": "q"})
		}
	}
	keepFilterFields(&fe, "state", "type", "q")
	status := http.StatusOK
	if fe.Any() {
		status = http.StatusUnprocessableEntity
	}
	w.render(q, NavMonitors, status, func(s Shell) ([]byte, error) {
		s.Live = liveURL(q)
		v := Monitors{Shell: s, Filter: form, Errors: fe}
		// The counts, the overall figures and each row's 24 hours come
		// from one overview, read in two queries however many monitors.
		ov, err := w.app.WorkspaceOverview(q.ctx(), q.actor, app.KindMonitor, "24h", "30d")
		if err != nil {
			return nil, err
		}
		v.Counts, v.Any = stateCounts(ov.States, countedStates)
		day, month := ov.Windows[0], ov.Windows[1]
		v.Availability24h, v.Availability30d = day.All, month.All
		if fe.Any() {
			return RenderMonitors(v)
		}
		byID := day.Of
		for _, m := range list.Items {
			v.Rows = append(v.Rows, MonitorRow{ID: m.ID, Name: m.Name, Type: m.Type, Target: target(m), Interval: m.Interval(),
				State: m.State, LastCheckAt: m.Last.At, LastLatency: m.Last.Latency, Availability24h: byID[m.ID]})
		}
		v.Matching = list.Total
		if list.NextCursor != "" {
			v.NextPage = nextPageURL("/w/"+q.actor.WorkspaceID+"/monitors", list.NextCursor, map[string]string{"state": form.State, "type": form.Type, "q": form.Q})
		}
		return RenderMonitors(v)
	})
}

// judgedText is vals' field name, judged where it enters: text that is
// not valid UTF-8 without NUL goes no further, reads as empty and gets a
// message at field.
func judgedText(vals url.Values, fe *FormErrors, name, field string) string {
	v := vals.Get(name)
	if !clean.Valid(v) {
		if fe.Fields == nil {
			fe.Fields = map[string]string{}
		}
		fe.Fields[field] = invalidText
		return ""
	}
	return v
}

// keepFilterFields keeps fe's messages of a list's filter form's fields;
// a message of any other field is the page's cursor's: the link does not
// work, and the list starts from its first page.
func keepFilterFields(fe *FormErrors, fields ...string) {
	for name := range fe.Fields {
		if !slices.Contains(fields, name) {
			delete(fe.Fields, name)
			fe.Summary = "This link to a page of the list does not work; the filter above starts from the first page."
		}
	}
}

// nextPageURL is the link to a list's next page at path: its cursor and
// the filter's fields that are set.
func nextPageURL(path, cursor string, filter map[string]string) string {
	next := url.Values{"cursor": {cursor}}
	for k, val := range filter {
		if val != "" {
			next.Set(k, val)
		}
	}
	return path + "?" + next.Encode()
}

// stateCounts counts subjects by state: those of counted always, in
// order, then any other state one is in. some says there is one.
func stateCounts(states []app.LiveState, counted []monitor.State) (out []StateCount, some bool) {
	n := map[monitor.State]int{}
	for _, s := range states {
		n[s.State]++
		some = true
	}
	for _, st := range counted {
		out = append(out, StateCount{State: st, Count: n[st]})
	}
	for _, st := range monitor.States {
		if n[st] > 0 && !slices.Contains(counted, st) {
			out = append(out, StateCount{State: st, Count: n[st]})
		}
	}
	return out, some
}

// target is what a monitor checks, as the pages show it.
func target(m monitor.Monitor) string {
	c := m.Config
	switch m.Type {
	case monitor.TypeHTTP:
		return c.URL
	case monitor.TypeDNS:
		if c.RecordType != "" {
			return c.RecordName + " (" + c.RecordType + ")"
		}
		return c.RecordName
	}
	if c.Port == 0 {
		if m.Type == monitor.TypeTLS {
			return net.JoinHostPort(c.Host, "443")
		}
		return c.Host
	}
	return net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

// monitorID is the path's monitor id; anything that is not one is not
// found, before it reaches the database.
func (w *Server) monitorID(q *request) (string, bool) { return w.pathID(q, ids.Monitor) }

// pathID is the path's id of the kind prefix names; anything that is not
// one is not found, before it reaches the database.
func (w *Server) pathID(q *request, prefix string) (string, bool) {
	id := q.r.PathValue("id")
	if !ids.Valid(prefix, id) {
		w.fail(q.w, q.r, &q.ws, errs.ErrNotFound)
		return "", false
	}
	return id, true
}

func (w *Server) monitorPage(q *request) {
	id, ok := w.monitorID(q)
	if !ok {
		return
	}
	w.render(q, NavMonitors, http.StatusOK, func(s Shell) ([]byte, error) {
		s.Live = liveURL(q)
		m, err := w.app.GetMonitor(q.ctx(), q.actor, id)
		if err != nil {
			return nil, err
		}
		v := MonitorDetail{Shell: s, ID: m.ID, Name: m.Name, Type: m.Type, Target: target(m), Interval: m.Interval(),
			State: m.State, StateSince: m.StateSince, Paused: m.Paused, LastCheckAt: m.Last.At, LastLatency: m.Last.Latency}
		if m.Last.Result != monitor.ResultUp {
			v.Cause = m.Last.Reason
		}
		f, err := readFigures(q, w.app.MonitorMetricsEach, id, metrics.Hour)
		if err != nil {
			return nil, err
		}
		v.Availability24h, v.Availability30d, v.Availability90d = f.day.Figures.Ratios.Availability, f.a30, f.a90
		v.Uptime, v.SLO = f.uptime, f.slo
		for _, b := range f.day.Series {
			p := LatencyPoint{Start: b.Start, End: b.End}
			if b.Latency != nil {
				p.P50, p.P95 = b.Latency.P50, b.Latency.P95
			}
			v.Latency = append(v.Latency, p)
		}
		checks, err := w.app.ListChecks(q.ctx(), q.actor, id, app.CheckQuery{PageRequest: app.PageRequest{Limit: recentRows}})
		if err != nil {
			return nil, err
		}
		for _, o := range checks.Items {
			v.Checks = append(v.Checks, CheckRow{At: o.StartedAt, Result: o.Result, Latency: o.Latency, StatusCode: o.StatusCode, Reason: o.Reason})
		}
		if v.States, err = w.stateRows(q, id); err != nil {
			return nil, err
		}
		return RenderMonitor(v)
	})
}

// subjectFigures are what a monitor's or a heartbeat's page shows of its
// metrics: the last 24 hours (with their series when asked for), the
// availability over 30 and 90 days, the uptime bar's days and the
// objective's budget.
type subjectFigures struct {
	day      app.SubjectMetrics
	a30, a90 *float64
	uptime   []UptimeDay
	slo      *SLOView
}

// subjectMetrics reads one subject's metrics for each request:
// app.MonitorMetricsEach or app.HeartbeatMetricsEach.
type subjectMetrics func(ctx context.Context, actor app.Actor, id string, reqs ...app.MetricsRequest) ([]app.SubjectMetrics, error)

// readFigures reads a subject's figures for its page through read, in one
// call; dayStep is the step of the last 24 hours' series ("" for none).
func readFigures(q *request, read subjectMetrics, id string, dayStep metrics.Resolution) (subjectFigures, error) {
	var f subjectFigures
	each, err := read(q.ctx(), q.actor, id, app.MetricsRequest{Window: "24h", Resolution: dayStep},
		app.MetricsRequest{Window: "30d"}, app.MetricsRequest{Window: "90d", Resolution: metrics.Day})
	if err != nil {
		return f, err
	}
	day, month, quarter := each[0], each[1], each[2]
	f.day = day
	if slo := day.SLO; slo != nil {
		f.slo = &SLOView{Target: slo.Objective.Target, PeriodDays: slo.Objective.PeriodDays, Allowed: slo.Allowed, Spent: slo.Spent,
			Left: slo.Left, BurnRate1h: slo.BurnRate1h, BurnRate6h: slo.BurnRate6h}
	}
	f.a30 = month.Figures.Ratios.Availability
	f.a90 = quarter.Figures.Ratios.Availability
	series := quarter.Series
	if len(series) > uptimeDays { // the window's first day is a part of one
		series = series[len(series)-uptimeDays:]
	}
	for _, b := range series {
		f.uptime = append(f.uptime, UptimeDay{Day: b.Start, Availability: b.Ratios.Availability})
	}
	return f, nil
}

// stateRows are a subject's latest state changes, newest first.
func (w *Server) stateRows(q *request, id string) ([]StateRow, error) {
	states, err := w.app.ListStates(q.ctx(), q.actor, id, app.PageRequest{Limit: recentRows})
	if err != nil {
		return nil, err
	}
	var rows []StateRow
	for _, t := range states.Items {
		rows = append(rows, StateRow{At: t.At, ConfirmedAt: t.ConfirmedAt, From: t.From, To: t.To, Cause: t.Cause})
	}
	return rows, nil
}

func (w *Server) pauseMonitor(q *request)  { w.setPaused(q, true) }
func (w *Server) resumeMonitor(q *request) { w.setPaused(q, false) }

func (w *Server) setPaused(q *request, paused bool) {
	id, ok := w.monitorID(q)
	if !ok {
		return
	}
	if _, err := w.app.SetPaused(q.ctx(), q.actor, id, paused); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	flash := "monitor-resumed"
	if paused {
		flash = "monitor-paused"
	}
	q.redirect("/w/"+q.actor.WorkspaceID+"/monitors/"+id, flash)
}

func (w *Server) deleteMonitor(q *request) {
	id, ok := w.monitorID(q)
	if !ok {
		return
	}
	if err := w.app.DeleteMonitor(q.ctx(), q.actor, id); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect("/w/"+q.actor.WorkspaceID+"/monitors", "monitor-deleted")
}

// liveURL is the workspace's stream of state changes, which the list and
// a monitor's page follow (live.go).
func liveURL(q *request) string { return "/w/" + q.actor.WorkspaceID + "/live" }
