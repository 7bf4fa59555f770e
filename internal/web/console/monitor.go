package console

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
)

// MonitorDetail is GET /w/{ws}/monitors/{id}.
type MonitorDetail struct {
	// Shell: set Shell.Active to NavMonitors; roles that grant
	// monitors:write get pause/resume, edit and delete.
	Shell Shell
	// ID, Name, Type, Target and Interval describe the monitor.
	ID       string
	Name     string
	Type     monitor.Type
	Target   string
	Interval time.Duration
	// State is its current state, since StateSince.
	State      monitor.State
	StateSince time.Time
	// Paused says it is paused (no checks run).
	Paused bool
	// Cause is the last check's reason ("" when it passed or none ran).
	Cause string
	// LastCheckAt is when it was last checked; zero shows "never".
	LastCheckAt time.Time
	// LastLatency is the last check's latency.
	LastLatency time.Duration
	// Availability24h, Availability30d and Availability90d (0 to 1); nil
	// when nothing was known.
	Availability24h, Availability30d, Availability90d *float64
	// Latency is the chart's hourly buckets of the last 24 hours, oldest
	// first.
	Latency []LatencyPoint
	// Uptime is the bar's days, oldest first.
	Uptime []UptimeDay
	// SLO is the objective and its budget; nil when none is set.
	SLO *SLOView
	// Checks are the most recent checks, newest first.
	Checks []CheckRow
	// States are the most recent state changes, newest first.
	States []StateRow
}

func (MonitorDetail) template() string { return "monitor.html" }

// LatencyPoint is one bucket of the latency chart: the percentiles of
// the checks in [Start, End), in milliseconds; nil when there was no
// check.
type LatencyPoint struct {
	Start, End time.Time
	P50, P95   *float64
}

// UptimeDay is one day of the uptime bar: its availability (0 to 1),
// nil for no data.
type UptimeDay struct {
	Day          time.Time
	Availability *float64
}

// CheckRow is one recent check.
type CheckRow struct {
	At         time.Time
	Result     monitor.Result
	Latency    time.Duration
	StatusCode int // 0: none
	Reason     string
}

// StateRow is one change in the state history: At is when the new state
// began, ConfirmedAt when the checks confirmed it, if later (an outage
// dated from its first failed check); zero otherwise.
type StateRow struct {
	At          time.Time
	ConfirmedAt time.Time
	From, To    monitor.State
	Cause       string
}

// SLOView is an objective and its error budget over the period ending
// now.
type SLOView struct {
	// Target is the share of known time to be UP or DEGRADED (0.999).
	Target     float64
	PeriodDays int
	// Allowed is the budget of down time, Spent what was used of it.
	Allowed, Spent time.Duration
	// Left is the fraction of the budget left (negative when overspent);
	// nil when nothing was known.
	Left *float64
	// BurnRate1h and BurnRate6h: 1 spends exactly the budget over the
	// period; nil when nothing was known.
	BurnRate1h, BurnRate6h *float64
}

// uptimeDays is how many days the uptime bar shows, today the last.
const uptimeDays = 90

// recentRows is how many checks and state changes a monitor's page shows.
const recentRows = 20

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
func (w *Server) monitorID(q *request) (string, error) { return w.pathID(q, ids.Monitor) }

// pathID is the path's id of the kind prefix names; anything that is not
// one is not found, before it reaches the database.
func (w *Server) pathID(q *request, prefix string) (string, error) {
	id := q.r.PathValue("id")
	if !ids.Valid(prefix, id) {
		return "", errs.ErrNotFound
	}
	return id, nil
}

// deleteListed deletes what the path's id names (an id with prefix;
// anything else is not found) through del, then shows the workspace's
// list at path list with flash. Whether the actor may is del's to judge.
func (w *Server) deleteListed(q *request, prefix string, del func(context.Context, app.Actor, string) error, list, flash string) error {
	id, err := w.pathID(q, prefix)
	if err != nil {
		return err
	}
	if err := del(q.ctx(), q.actor, id); err != nil {
		return err
	}
	return q.redirect("/w/"+q.actor.WorkspaceID+"/"+list, flash)
}

func (w *Server) monitorPage(q *request) error {
	id, err := w.monitorID(q)
	if err != nil {
		return err
	}
	return w.servePage(q, NavMonitors, http.StatusOK, func(s Shell) (view, error) {
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
		return v, nil
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

func (w *Server) pauseMonitor(q *request) error { return w.setPaused(q, true) }

func (w *Server) resumeMonitor(q *request) error { return w.setPaused(q, false) }

func (w *Server) setPaused(q *request, paused bool) error {
	id, err := w.monitorID(q)
	if err != nil {
		return err
	}
	if _, err := w.app.SetPaused(q.ctx(), q.actor, id, paused); err != nil {
		return err
	}
	flash := "monitor-resumed"
	if paused {
		flash = "monitor-paused"
	}
	return q.redirect("/w/"+q.actor.WorkspaceID+"/monitors/"+id, flash)
}

func (w *Server) deleteMonitor(q *request) error {
	return w.deleteListed(q, ids.Monitor, w.app.DeleteMonitor, "monitors", "monitor-deleted")
}

// liveURL is the workspace's stream of state changes, which the list and
// a monitor's page follow (live.go).
func liveURL(q *request) string { return "/w/" + q.actor.WorkspaceID + "/live" }
