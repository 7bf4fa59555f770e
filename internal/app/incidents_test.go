package app

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// Incidents open and resolve with their subject's state, in the
// transaction of the state change, and every change and incident event is
// in the outbox, in order.
func TestAutomaticIncidents(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Run("Monitor", func(t *testing.T) { testMonitorIncidents(t, e) })
			t.Run("Heartbeat", func(t *testing.T) { testHeartbeatIncidents(t, e) })
		})
	}
}

// eventTypes reads the workspace's outbox: each event's type, and the
// events decoded as receivers get them.
func eventTypes(t *testing.T, db *store.DB, wsID string) ([]string, []map[string]any) {
	t.Helper()
	evs, err := db.ListEvents(ctx, wsID, 0, 1000)
	check(t, err)
	var (
		types   []string
		decoded []map[string]any
	)
	for _, e := range evs {
		var m map[string]any
		check(t, json.Unmarshal(e.Payload, &m))
		if m["id"] != e.ID || m["type"] != e.Type || m["workspaceId"] != wsID || m["createdAt"] == nil || m["data"] == nil {
			t.Fatalf("event %s: payload %s", e.ID, e.Payload)
		}
		types, decoded = append(types, e.Type), append(decoded, m)
	}
	return types, decoded
}

func wantStrings(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %q, want %q", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
	}
}

func testMonitorIncidents(t *testing.T, e storetest.Engine) {
	db, _ := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	m := addMonitor(t, db, w.ID, monitor.Config{Confirmations: 1, Recoveries: 1})
	at := t0
	tick := func() time.Time { at = at.Add(time.Minute); return at }
	observe(t, db, m, monitor.ResultUp, tick())
	observe(t, db, m, monitor.ResultDown, tick())
	downAt := at
	observe(t, db, m, monitor.ResultUnknown, tick()) // says nothing of the outage
	observe(t, db, m, monitor.ResultDown, tick())
	open, err := db.ListIncidents(ctx, w.ID, store.IncidentQuery{Status: "open"})
	check(t, err)
	if len(open) != 1 {
		t.Fatalf("%d open incidents, want one for the monitor that went DOWN (once, through UNKNOWN)", len(open))
	}
	inc := open[0]
	if inc.Origin != incident.Automatic || inc.Subject == nil || inc.Subject.ID != m.ID || inc.Subject.Type != "monitor" ||
		inc.Status != incident.Investigating || !inc.StartedAt.Equal(downAt) || inc.Cause == "" || inc.Title != "m is down" ||
		len(inc.Updates) != 1 || inc.Updates[0].Message != inc.Cause || len(inc.AffectedMonitors) != 1 {
		t.Errorf("the automatic incident: %+v", inc)
	}
	observe(t, db, m, monitor.ResultUp, tick())
	got, err := db.GetIncident(ctx, w.ID, inc.ID)
	check(t, err)
	if got.Open() || !got.ResolvedAt.Equal(at) || got.Status != incident.Resolved || len(got.Updates) != 2 ||
		got.Updates[1].Status != incident.Resolved || got.Updates[1].Message != "m recovered (up): checks pass again (after 1 passing check)" {
		t.Errorf("after recovery: %+v", got)
	}
	// Another outage is another incident.
	observe(t, db, m, monitor.ResultDown, tick())
	all, err := db.ListIncidents(ctx, w.ID, store.IncidentQuery{SubjectID: m.ID})
	check(t, err)
	if len(all) != 2 || !all[0].Open() || all[1].ID != inc.ID {
		t.Fatalf("incidents of the monitor, newest first: %+v", all)
	}
	page, err := db.ListIncidents(ctx, w.ID, store.IncidentQuery{Limit: 1, BeforeID: all[0].ID})
	check(t, err)
	if len(page) != 1 || page[0].ID != inc.ID {
		t.Errorf("the page after the newest: %+v", page)
	}
	if _, err := db.GetIncident(ctx, "ws_other", inc.ID); err == nil {
		t.Error("another workspace's incident was found")
	}

	types, evs := eventTypes(t, db, w.ID)
	wantStrings(t, "events", types,
		incident.MonitorStateChanged, // PENDING → UP
		incident.MonitorStateChanged, incident.IncidentOpened,
		incident.MonitorStateChanged, // → UNKNOWN
		incident.MonitorStateChanged, // → DOWN, the incident still open
		incident.MonitorStateChanged, incident.IncidentResolved,
		incident.MonitorStateChanged, incident.IncidentOpened)
	data := evs[1]["data"].(map[string]any)
	if s := data["subject"].(map[string]any); s["id"] != m.ID || s["name"] != "m" || data["to"] != "DOWN" || data["from"] != "UP" {
		t.Errorf("state change event data: %v", data)
	}
	opened := evs[2]["data"].(map[string]any)["incident"].(map[string]any)
	if opened["id"] != inc.ID || opened["status"] != "investigating" || opened["resolvedAt"] != nil {
		t.Errorf("incident.opened data: %v", opened)
	}
	resolved := evs[6]["data"].(map[string]any)["incident"].(map[string]any)
	if resolved["id"] != inc.ID || resolved["status"] != "resolved" || resolved["resolvedAt"] == nil || len(resolved["updates"].([]any)) != 2 {
		t.Errorf("incident.resolved data: %v", resolved)
	}
}

// A heartbeat's incident comes with the ping that failed it (on SQLite,
// through the journal), and pausing resolves it.
func testHeartbeatIncidents(t *testing.T, e storetest.Engine) {
	db, a := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	h := newHeartbeat(t, db, w.ID, t0, 60, 10, 0)
	record(t, db, ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Second), "", ""))
	record(t, db, ping(h.Token, heartbeat.SignalFail, t0.Add(2*time.Second), "", ""))
	open, err := db.ListIncidents(ctx, w.ID, store.IncidentQuery{Status: "open", SubjectID: h.ID})
	check(t, err)
	if len(open) != 1 || open[0].Subject.Type != "heartbeat" || open[0].Title != "job is down" || !open[0].StartedAt.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("open incidents of the failed job: %+v", open)
	}
	check(t, a.setHeartbeatPaused(ctx, w.ID, h.ID, true, t0.Add(3*time.Second)))
	got, err := db.GetIncident(ctx, w.ID, open[0].ID)
	check(t, err)
	if got.Open() || got.Updates[len(got.Updates)-1].Message != "job was paused" {
		t.Errorf("after pausing: %+v", got)
	}
	types, _ := eventTypes(t, db, w.ID)
	wantStrings(t, "events", types,
		incident.HeartbeatStateChanged, // NEW → UP
		incident.HeartbeatStateChanged, incident.IncidentOpened,
		incident.HeartbeatStateChanged, incident.IncidentResolved)

	// Deleting a job that is down resolves its incident: nothing is left
	// to recover.
	check(t, a.setHeartbeatPaused(ctx, w.ID, h.ID, false, t0.Add(4*time.Second)))
	record(t, db, ping(h.Token, heartbeat.SignalFail, t0.Add(5*time.Second), "", ""))
	open, err = db.ListIncidents(ctx, w.ID, store.IncidentQuery{Status: "open"})
	check(t, err)
	if len(open) != 1 {
		t.Fatalf("%d open incidents after the job failed again", len(open))
	}
	check(t, a.DeleteHeartbeat(ctx, Actor{WorkspaceID: w.ID, Role: account.RoleOwner}, h.ID))
	got, err = db.GetIncident(ctx, w.ID, open[0].ID)
	check(t, err)
	if got.Open() || got.Updates[len(got.Updates)-1].Message != "job was deleted" {
		t.Errorf("after deleting the job: %+v", got)
	}
	types, _ = eventTypes(t, db, w.ID)
	if types[len(types)-1] != incident.IncidentResolved {
		t.Errorf("the last event after deleting the job: %s", types[len(types)-1])
	}
}
