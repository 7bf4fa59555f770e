package console

import (
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The heartbeat pages' helpers: the schedule as text, and the snippets
// that call a ping URL from a shell, a crontab, systemd and PowerShell.

// ScheduleText is the row's schedule as text.
func (r HeartbeatRow) ScheduleText() string { return ScheduleText(r.Schedule) }

// GraceText is the row's grace as text.
func (r HeartbeatRow) GraceText() string { return GraceText(r.Schedule) }

// Heartbeats is GET /w/{ws}/heartbeats.
type Heartbeats struct {
	// Shell: set Shell.Active to NavHeartbeats and Shell.Live; roles that
	// grant monitors:write see the "New heartbeat" button.
	Shell Shell
	// Counts are the workspace's heartbeats by state, whatever the filter.
	Counts []StateCount
	// Availability24h and Availability30d are the workspace's heartbeats'
	// availability together (0 to 1); nil: nothing known.
	Availability24h, Availability30d *float64
	// Filter re-fills the filter form.
	Filter HeartbeatFilterForm
	// Errors holds a filter's message (fields "state" and "q").
	Errors FormErrors
	// Rows are the heartbeats that match the filter, one page of them.
	Rows []HeartbeatRow
	// Matching is how many heartbeats match the filter in all.
	Matching int
	// Any says the workspace has a heartbeat at all.
	Any bool
	// NextPage is the local URL of the next page ("" on the last).
	NextPage string
}

func (Heartbeats) template() string { return "heartbeats.html" }

// HeartbeatFilterForm re-fills the list's filter form (GET, fields
// "state" and "q"); empty fields filter nothing.
type HeartbeatFilterForm struct {
	// State is a monitor.State in lower case ("down"), or "".
	State string
	// Q is the text the name contains.
	Q string
}

// Active reports whether any filter is set.
func (f HeartbeatFilterForm) Active() bool { return f.State != "" || f.Q != "" }

// HeartbeatRow is one heartbeat in the list.
type HeartbeatRow struct {
	// ID is the heartbeat's id (hb_…), in /w/{ws}/heartbeats/{id} and the
	// row's data-heartbeat-id.
	ID string
	// Name is its name.
	Name string
	// Schedule is when its job runs.
	Schedule heartbeat.Schedule
	// State is its current state (the state cell's data-state).
	State monitor.State
	// LastPingAt is its last ping; zero shows "never".
	LastPingAt time.Time
	// NextDeadline is when it becomes late if no ping comes; zero: nothing
	// is due.
	NextDeadline time.Time
}

// heartbeatStates are the states the heartbeats list always counts, in
// order; the others are counted when a heartbeat is in them.
var heartbeatStates = []monitor.State{monitor.StateUp, monitor.StateDown, monitor.StatePending, monitor.StatePaused}

func (w *Server) heartbeats(q *request) error {
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
	list, status, err := filteredPage(&fe, map[string]string{"query.state": "state", "query.q": "q"}, func() (app.Page[heartbeat.Heartbeat], error) {
		return w.app.ListHeartbeats(q.ctx(), q.actor, filter, app.PageRequest{Cursor: cursor, Limit: listPageSize})
	})
	if err != nil {
		return err
	}
	return w.servePage(q, NavHeartbeats, status, func(s Shell) (view, error) {
		s.Live = liveURL(q)
		v := Heartbeats{Shell: s, Filter: form, Errors: fe}
		ov, err := w.app.WorkspaceOverview(q.ctx(), q.actor, app.KindHeartbeat, "24h", "30d")
		if err != nil {
			return nil, err
		}
		v.Counts, v.Any = stateCounts(ov.States, heartbeatStates)
		v.Availability24h, v.Availability30d = ov.Windows[0].All, ov.Windows[1].All
		if fe.Any() {
			return v, nil
		}
		for _, h := range list.Items {
			v.Rows = append(v.Rows, HeartbeatRow{ID: h.ID, Name: h.Name, Schedule: h.Schedule, State: h.State(),
				LastPingAt: h.Runtime.LastPing, NextDeadline: h.NextDeadline()})
		}
		v.Matching = list.Total
		if list.NextCursor != "" {
			v.NextPage = nextPageURL("/w/"+q.actor.WorkspaceID+"/heartbeats", list.NextCursor, map[string]string{"state": form.State, "q": form.Q})
		}
		return v, nil
	})
}
