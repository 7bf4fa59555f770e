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

// The last update of an automatic incident says what recovered and why;
// the incident's cause keeps what had failed.
func TestResolveMessage(t *testing.T) {
	s := incident.Subject{Type: "monitor", ID: "mon_1", Name: "checkout"}
	for _, c := range []struct {
		tr   monitor.Transition
		want string
	}{
		{monitor.Transition{From: monitor.StateDown, To: monitor.StateUp, Cause: "checks pass again (after 1 passing check)"},
			"checkout recovered (up): checks pass again (after 1 passing check)"},
		{monitor.Transition{From: monitor.StateDown, To: monitor.StateDegraded, Cause: "checks pass again, but slow: 900 ms, above the degraded threshold of 500 ms (after 1 passing check)"},
			"checkout recovered (degraded): checks pass again, but slow: 900 ms, above the degraded threshold of 500 ms (after 1 passing check)"},
		{monitor.Transition{From: monitor.StateDown, To: monitor.StateUp, Cause: "the job reported success"},
			"checkout recovered (up): the job reported success"},
		{monitor.Transition{From: monitor.StateDown, To: monitor.StateUp}, "checkout recovered (up)"},
		{monitor.Transition{From: monitor.StateDown, To: monitor.StatePaused, Cause: "paused"}, "checkout was paused"},
	} {
		if got := incident.ResolveMessage(s, c.tr); got != c.want {
			t.Errorf("%s → %s: %q, want %q", c.tr.From, c.tr.To, got, c.want)
		}
	}
}
