package console

import (
	"net/http"
	"strings"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The heartbeat pages, read side: the list and one heartbeat's page, and
// the forms on it that pause, resume, delete and give a new ping URL;
// each over the same app function as the API route beside it.

// heartbeatStates are the states the heartbeats list always counts, in
// order; the others are counted when a heartbeat is in them.
var heartbeatStates = []monitor.State{monitor.StateUp, monitor.StateDown, monitor.StatePending, monitor.StatePaused}

func heartbeatPath(ws, id string) string { return "/w/" + ws + "/heartbeats/" + id }

func (w *Server) heartbeats(q *request) {
	query := q.r.URL.Query()
	// The query's text is judged here, where it enters.
	var fe FormErrors
	get := func(name string) string { return judgedText(query, &fe, name, name) }
	form := HeartbeatFilterForm{State: strings.ToLower(get("state")), Q: get("q")}
	cursor := get("cursor")
	filter := app.HeartbeatFilter{Name: form.Q}
	if form.State != "" {
		filter.States = []monitor.State{monitor.State(strings.ToUpper(form.State))}
	}
	page := app.PageRequest{Cursor: cursor, Limit: listPageSize}
	var list app.Page[heartbeat.Heartbeat]
	if !fe.Any() {
		var err error
		if list, err = w.app.ListHeartbeats(q.ctx(), q.actor, filter, page); err != nil {
			if errs.KindOf(err) != errs.KindInvalid {
				w.fail(q.w, q.r, &q.ws, err)
				return
			}
			fe, _ = formErrors(err, map[string]string{"query.state": "state", "query.q": "q"})
		}
	}
	keepFilterFields(&fe, "state", "q")
	status := http.StatusOK
	if fe.Any() {
		status = http.StatusUnprocessableEntity
	}
	w.render(q, NavHeartbeats, status, func(s Shell) ([]byte, error) {
		s.Live = liveURL(q)
		v := Heartbeats{Shell: s, Filter: form, Errors: fe}
		ov, err := w.app.WorkspaceOverview(q.ctx(), q.actor, app.KindHeartbeat, "24h", "30d")
		if err != nil {
			return nil, err
		}
		v.Counts, v.Any = stateCounts(ov.States, heartbeatStates)
		v.Availability24h, v.Availability30d = ov.Windows[0].All, ov.Windows[1].All
		if fe.Any() {
			return RenderHeartbeats(v)
		}
		for _, h := range list.Items {
			v.Rows = append(v.Rows, HeartbeatRow{ID: h.ID, Name: h.Name, Schedule: h.Schedule, State: h.State(),
				LastPingAt: h.Runtime.LastPing, NextDeadline: h.NextDeadline()})
		}
		v.Matching = list.Total
		if list.NextCursor != "" {
			v.NextPage = nextPageURL("/w/"+q.actor.WorkspaceID+"/heartbeats", list.NextCursor, map[string]string{"state": form.State, "q": form.Q})
		}
		return RenderHeartbeats(v)
	})
}

// heartbeatID is the path's heartbeat id; anything that is not one is not
// found, before it reaches the database.
func (w *Server) heartbeatID(q *request) (string, bool) { return w.pathID(q, ids.Heartbeat) }

// pingURL is the full ping URL of a token, as the API gives it.
func (w *Server) pingURL(token string) string { return w.base + "/ping/" + token }

func (w *Server) heartbeatPage(q *request) {
	id, ok := w.heartbeatID(q)
	if !ok {
		return
	}
	w.render(q, NavHeartbeats, http.StatusOK, func(s Shell) ([]byte, error) {
		s.Live = liveURL(q)
		h, err := w.app.GetHeartbeat(q.ctx(), q.actor, id)
		if err != nil {
			return nil, err
		}
		rt := h.Runtime
		v := HeartbeatDetail{Shell: s, ID: h.ID, Name: h.Name, Schedule: h.Schedule, MaxRuntimeSeconds: h.MaxRuntimeSeconds,
			State: rt.State, StateSince: rt.Since, Paused: h.Paused, PingURL: w.pingURL(h.Token), LastPingAt: rt.LastPing,
			NextDeadline: h.NextDeadline(), LastExitCode: -1, LastDuration: -1}
		if rt.LastCompletion != 0 {
			v.LastResult, v.LastExitCode, v.LastDuration = rt.LastCompletion.String(), rt.LastExitCode, rt.LastDuration
		}
		f, err := readFigures(q, w.app.HeartbeatMetricsEach, id, "")
		if err != nil {
			return nil, err
		}
		v.Availability24h, v.Availability30d, v.Availability90d = f.day.Figures.Ratios.Availability, f.a30, f.a90
		v.Uptime, v.SLO = f.uptime, f.slo
		pings, err := w.app.ListPings(q.ctx(), q.actor, id, app.PingQuery{PageRequest: app.PageRequest{Limit: recentRows}})
		if err != nil {
			return nil, err
		}
		for _, p := range pings.Items {
			v.Pings = append(v.Pings, PingRow{At: p.At, Signal: p.Signal.String(), ExitCode: p.ExitCode, Duration: p.Duration,
				Client: p.Client, UserAgent: p.UserAgent, Body: strings.ToValidUTF8(string(p.Body), "\uFFFD"), Truncated: p.Truncated,
				Ignored: p.Ignored})
		}
		if v.States, err = w.stateRows(q, id); err != nil {
			return nil, err
		}
		// The cause of the state it is in: the change that put it there.
		if len(v.States) > 0 && v.States[0].To == rt.State && rt.State != monitor.StateUp {
			v.Cause = v.States[0].Cause
		}
		return RenderHeartbeat(v)
	})
}

func (w *Server) pauseHeartbeat(q *request)  { w.setHeartbeatPaused(q, true) }
func (w *Server) resumeHeartbeat(q *request) { w.setHeartbeatPaused(q, false) }

func (w *Server) setHeartbeatPaused(q *request, paused bool) {
	id, ok := w.heartbeatID(q)
	if !ok {
		return
	}
	if _, err := w.app.SetHeartbeatPaused(q.ctx(), q.actor, id, paused); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	flash := "heartbeat-resumed"
	if paused {
		flash = "heartbeat-paused"
	}
	q.redirect(heartbeatPath(q.actor.WorkspaceID, id), flash)
}

func (w *Server) deleteHeartbeat(q *request) {
	id, ok := w.heartbeatID(q)
	if !ok {
		return
	}
	if err := w.app.DeleteHeartbeat(q.ctx(), q.actor, id); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect("/w/"+q.actor.WorkspaceID+"/heartbeats", "heartbeat-deleted")
}

// rotateHeartbeat gives the heartbeat a new ping URL; its page, where the
// redirect leads, shows it.
func (w *Server) rotateHeartbeat(q *request) {
	id, ok := w.heartbeatID(q)
	if !ok {
		return
	}
	if _, err := w.app.RotateHeartbeatToken(q.ctx(), q.actor, id); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect(heartbeatPath(q.actor.WorkspaceID, id)+"#url-h", "heartbeat-rotated")
}
