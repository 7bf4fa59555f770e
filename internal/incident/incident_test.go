package incident_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
)

// What each state change does to its subject's incident: DOWN opens,
// recovery and pausing resolve, the rest say nothing of the outage.
func TestEffectOf(t *testing.T) {
	want := map[monitor.State]incident.Effect{
		monitor.StateDown:        incident.OpenNew,
		monitor.StateUp:          incident.Resolve,
		monitor.StateDegraded:    incident.Resolve,
		monitor.StatePaused:      incident.Resolve,
		monitor.StateUnknown:     incident.None,
		monitor.StateMaintenance: incident.None,
		monitor.StatePending:     incident.None,
	}
	for _, to := range monitor.States {
		w, ok := want[to]
		if !ok {
			t.Fatalf("no expectation for %s", to)
		}
		if got := incident.EffectOf(monitor.Transition{From: monitor.StateUp, To: to}); got != w {
			t.Errorf("→ %s: %v, want %v", to, got, w)
		}
	}
}

func TestSubjects(t *testing.T) {
	if incident.SubjectType("hb_01") != "heartbeat" || incident.SubjectType("mon_01") != "monitor" {
		t.Error("subject types by id prefix")
	}
	if incident.StateChangedType("hb_01") != incident.HeartbeatStateChanged || incident.StateChangedType("mon_01") != incident.MonitorStateChanged {
		t.Error("state change event types")
	}
	for _, s := range []incident.Status{incident.Investigating, incident.Identified, incident.Monitoring, incident.Resolved} {
		if !s.Valid() {
			t.Errorf("%s not valid", s)
		}
	}
	if incident.Status("open").Valid() {
		t.Error(`"open" is not a status`)
	}
}
