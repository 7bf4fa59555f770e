package console

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The monitor pages' helpers: figures as text, and the charts as inline
// SVG drawn on the server. The SVG carries no script and no style
// attribute: presentation attributes and app.css's classes only, so it
// renders under the CSP and follows the colour scheme.

// Monitors is GET /w/{ws}/monitors.
type Monitors struct {
	// Shell: set Shell.Active to NavMonitors; roles that grant
	// monitors:write see the "New monitor" button.
	Shell Shell
	// Availability24h and Availability30d are the workspace's overall
	// availability over its monitors (0 to 1); nil when nothing was known.
	Availability24h, Availability30d *float64
	// Counts are the workspace's monitors by state, whatever the filter,
	// in the order to show them.
	Counts []StateCount
	// Filter re-fills the filter form.
	Filter MonitorFilterForm
	// Errors holds a filter's message (fields "state", "type", "q").
	Errors FormErrors
	// Rows are the monitors that match the filter, one page of them.
	Rows []MonitorRow
	// Matching is how many monitors match the filter in all.
	Matching int
	// Any says the workspace has a monitor at all: without one, the page
	// shows how to create the first.
	Any bool
	// NextPage is the local URL of the next page ("" on the last).
	NextPage string
}

func (Monitors) template() string { return "monitors.html" }

// StateCount is how many of the workspace's monitors are in a state.
type StateCount struct {
	State monitor.State
	Count int
}

// MonitorFilterForm re-fills the list's filter form (GET, fields
// "state", "type" and "q"); empty fields filter nothing.
type MonitorFilterForm struct {
	// State is a monitor.State in lower case ("down"), or "".
	State string
	// Type is a monitor.Type ("http"), or "".
	Type string
	// Q is the text the name contains.
	Q string
}

// Active reports whether any filter is set.
func (f MonitorFilterForm) Active() bool { return f.State != "" || f.Type != "" || f.Q != "" }

// MonitorRow is one monitor in the list.
type MonitorRow struct {
	// ID is the monitor's id (mon_…), in /w/{ws}/monitors/{id} and the
	// row's data-monitor-id.
	ID string
	// Name is its name.
	Name string
	// Type is its type.
	Type monitor.Type
	// Target is what it checks: the URL, or host:port.
	Target string
	// Interval is how often it checks.
	Interval time.Duration
	// State is its current state (the state cell's data-state).
	State monitor.State
	// LastCheckAt is when it was last checked; zero shows "never".
	LastCheckAt time.Time
	// LastLatency is the last check's latency.
	LastLatency time.Duration
	// Availability24h is its availability over the last 24 hours (0 to
	// 1); nil when nothing was known.
	Availability24h *float64
}

// listPageSize is how many monitors the list shows at once.
const listPageSize = 100

// countedStates are the states the list always counts, in order; the
// others are counted when a monitor is in them.
var countedStates = []monitor.State{monitor.StateUp, monitor.StateDown, monitor.StateDegraded, monitor.StateUnknown, monitor.StatePaused}

func (w *Server) monitors(q *request) error {
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
	fields := map[string]string{"query.state": "state", "query.type": "type", "query.q": "q"}
	list, status, err := filteredPage(&fe, fields, func() (app.Page[monitor.Monitor], error) {
		return w.app.ListMonitors(q.ctx(), q.actor, filter, app.PageRequest{Cursor: cursor, Limit: listPageSize})
	})
	if err != nil {
		return err
	}
	return w.servePage(q, NavMonitors, status, func(s Shell) (view, error) {
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
			return v, nil
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
		return v, nil
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
