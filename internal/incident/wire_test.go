package incident

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"
)

// TestEventTimesOnTheWire: an event's times leave in the one wire format,
// whatever zone and precision they were made with, and every other field
// marshals as declared.
func TestEventTimesOnTheWire(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 15, 0, 0, 123456789, berlin)
	ack := at.Add(time.Minute)
	inc := &Incident{ID: "inc_1", Title: "down", Status: "investigating", StartedAt: at, AcknowledgedAt: &ack, CreatedAt: at, UpdatedAt: at,
		AffectedMonitors: []string{}, Updates: []Update{{Status: "investigating", Message: "looking", At: at}}}
	for _, ev := range []Event{
		{ID: "evt_1", Type: IncidentOpened, CreatedAt: at, WorkspaceID: "ws_1", Data: IncidentData{Incident: inc}},
		{ID: "evt_2", Type: MonitorStateChanged, CreatedAt: at, WorkspaceID: "ws_1",
			Data: StateChangeData{Subject: Subject{Type: "monitor", ID: "mon_1"}, From: "UP", To: "DOWN", Cause: "timeout", At: at}},
	} {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		want := "2026-11-25T14:00:00.123456Z"
		if m["createdAt"] != want || m["id"] != ev.ID || m["workspaceId"] != "ws_1" {
			t.Errorf("event: %s", b)
		}
		data := m["data"].(map[string]any)
		if ev.Type == MonitorStateChanged {
			if data["at"] != want || data["to"] != "DOWN" || data["cause"] != "timeout" {
				t.Errorf("state change: %s", b)
			}
			continue
		}
		i := data["incident"].(map[string]any)
		if i["startedAt"] != want || i["acknowledgedAt"] != "2026-11-25T14:01:00.123456Z" || i["resolvedAt"] != nil ||
			i["title"] != "down" || i["updates"].([]any)[0].(map[string]any)["at"] != want {
			t.Errorf("incident: %s", b)
		}
		for _, tm := range regexp.MustCompile(`"\d{4}-\d\d-\d\dT[^"]*"`).FindAll(b, -1) {
			if !regexp.MustCompile(`^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"$`).Match(tm) {
				t.Errorf("%s in %s", tm, b)
			}
		}
	}
}
