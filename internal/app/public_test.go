package app

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// The reads of status pages return a workspace's public incidents and
// windows that touch the page's subjects, and nothing private, nothing of
// another workspace, nothing of other subjects.
func TestPublicReads(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) { testPublicReads(t, e) })
	}
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func incidentIDs(incs []*incident.Incident) []string {
	out := []string{}
	for _, inc := range incs {
		out = append(out, inc.ID)
	}
	return out
}

func testPublicReads(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	var now time.Time
	a := New(db, nil, func() time.Time { return now }, slog.New(slog.DiscardHandler), Config{})
	ua, wa := seed(t, db, "acme")
	ub, wb := seed(t, db, "other")
	actorA := Actor{UserID: ua.ID, WorkspaceID: wa.ID, Role: account.RoleOwner}
	actorB := Actor{UserID: ub.ID, WorkspaceID: wb.ID, Role: account.RoleOwner}
	m1 := addMonitor(t, db, wa.ID, monitor.Config{Confirmations: 1, Recoveries: 1})
	m2 := addMonitor(t, db, wa.ID, monitor.Config{Confirmations: 1, Recoveries: 1})
	m3 := addMonitor(t, db, wa.ID, monitor.Config{Confirmations: 1, Recoveries: 1}) // not on the page
	h1 := newHeartbeat(t, db, wa.ID, t0, 60, 10, 0)
	mb := addMonitor(t, db, wb.ID, monitor.Config{})
	// The page: m1, m2, h1; another workspace's monitor, and m3 under the
	// wrong type, name nothing of the page's workspace.
	page := []SubjectRef{{"monitor", m1.ID}, {"monitor", m2.ID}, {"heartbeat", h1.ID}, {"monitor", mb.ID}, {"heartbeat", m3.ID}}

	create := func(actor Actor, when string, public bool, affected ...string) *incident.Incident {
		t.Helper()
		now = at(when)
		inc, err := a.CreateIncident(ctx, actor, IncidentDraft{Title: "t " + when, Message: "Looking.", Public: public,
			AffectedMonitors: affected})
		check(t, err)
		return inc
	}
	resolve := func(inc *incident.Incident, when string) {
		t.Helper()
		now = at(when)
		_, err := a.ResolveIncident(ctx, actorA, inc.ID, "")
		check(t, err)
	}
	jan := create(actorA, "2026-01-10T10:00:00Z", true, m1.ID)
	resolve(jan, "2026-01-10T11:00:00Z")
	create(actorA, "2026-02-15T10:00:00Z", false, m1.ID) // private
	create(actorB, "2026-02-16T10:00:00Z", true, mb.ID)  // another workspace's
	edge := create(actorA, "2026-03-01T00:00:00Z", true, h1.ID)
	create(actorA, "2026-03-03T00:00:00Z", false, m1.ID, m2.ID) // private, open
	create(actorA, "2026-03-03T01:00:00Z", true, m3.ID)         // public, not on the page
	old := create(actorA, "2026-03-04T00:00:00Z", true, m2.ID)
	resolve(old, "2026-03-04T06:00:00Z")
	recent := create(actorA, "2026-03-10T00:00:00Z", true, m1.ID, m2.ID)
	resolve(recent, "2026-03-10T12:00:00Z")
	// An automatic incident of m2, published.
	observe(t, db, m2, monitor.ResultUp, at("2026-03-11T00:00:00Z"))
	observe(t, db, m2, monitor.ResultDown, at("2026-03-11T00:01:00Z"))
	autos, err := a.ListIncidents(ctx, actorA, IncidentFilter{Status: "open", SubjectID: m2.ID}, PageRequest{})
	check(t, err)
	var auto *incident.Incident
	for _, inc := range autos.Items {
		if inc.Origin == incident.Automatic {
			auto = inc
		}
	}
	if auto == nil || auto.Public {
		t.Fatalf("the automatic incident: %+v", autos.Items)
	}
	now = at("2026-03-11T00:02:00Z")
	yes := true
	_, err = a.UpdateIncident(ctx, actorA, auto.ID, IncidentPatch{Public: &yes})
	check(t, err)
	_, err = a.PostIncidentUpdate(ctx, actorA, auto.ID, incident.Identified, "We are on it.")
	check(t, err)
	open := create(actorA, "2026-03-12T00:00:00Z", true, h1.ID)
	now = at("2026-03-12T00:05:00Z")
	_, err = a.PostIncidentUpdate(ctx, actorA, open.ID, incident.Identified, "Found it.")
	check(t, err)

	t.Run("incidents", func(t *testing.T) {
		got, err := a.PublicIncidents(ctx, wa.ID, page, at("2026-03-05T00:00:00Z"), 50)
		check(t, err)
		wantStrings(t, "open and recently resolved", incidentIDs(got), open.ID, auto.ID, recent.ID, edge.ID)
		if u := got[0].Updates; len(u) != 2 || u[0].Status != incident.Investigating || u[1].Status != incident.Identified ||
			u[1].Message != "Found it." || !got[0].Public {
			t.Errorf("the open incident's updates: %+v", u)
		}
		// What Tocsin wrote on the automatic incident (its cause) is not
		// public; what a person adds is.
		if u := got[1].Updates; got[1].ID != auto.ID || len(u) != 1 || u[0].Message != "We are on it." {
			t.Errorf("the automatic incident's public updates: %+v", u)
		}
		got, err = a.PublicIncidents(ctx, wa.ID, page, at("2026-03-10T12:00:00Z"), 50) // resolved exactly then
		check(t, err)
		wantStrings(t, "resolved at since", incidentIDs(got), open.ID, auto.ID, recent.ID, edge.ID)
		got, err = a.PublicIncidents(ctx, wa.ID, page, at("2026-03-10T12:00:01Z"), 50)
		check(t, err)
		wantStrings(t, "resolved before since", incidentIDs(got), open.ID, auto.ID, edge.ID)
		got, err = a.PublicIncidents(ctx, wa.ID, page, time.Time{}, 2)
		check(t, err)
		wantStrings(t, "limited", incidentIDs(got), open.ID, auto.ID)
		got, err = a.PublicIncidents(ctx, wa.ID, []SubjectRef{{"monitor", m3.ID}}, time.Time{}, 50)
		check(t, err)
		if len(got) != 1 || got[0].AffectedMonitors[0] != m3.ID {
			t.Errorf("m3's public incidents: %v", incidentIDs(got))
		}
		got, err = a.PublicIncidents(ctx, wb.ID, page, time.Time{}, 50)
		check(t, err)
		if len(got) != 1 || got[0].WorkspaceID != wb.ID {
			t.Errorf("the other workspace's: %v", incidentIDs(got))
		}
		if got, err = a.PublicIncidents(ctx, wa.ID, nil, time.Time{}, 50); err != nil || len(got) != 0 {
			t.Errorf("no subjects: %v %v", incidentIDs(got), err)
		}
	})

	t.Run("months", func(t *testing.T) {
		got, older, newer, err := a.PublicIncidentMonths(ctx, wa.ID, page, at("2026-03-15T08:00:00Z"))
		check(t, err)
		wantStrings(t, "March", incidentIDs(got), open.ID, auto.ID, recent.ID, old.ID, edge.ID)
		if !older.Equal(at("2026-01-01T00:00:00Z")) || !newer.IsZero() {
			t.Errorf("March's neighbours: %v %v", older, newer)
		}
		got, older, newer, err = a.PublicIncidentMonths(ctx, wa.ID, page, at("2026-02-10T00:00:00Z"))
		check(t, err)
		if len(got) != 0 || !older.Equal(at("2026-01-01T00:00:00Z")) || !newer.Equal(at("2026-03-01T00:00:00Z")) {
			t.Errorf("February (only private and another workspace's): %v, %v %v", incidentIDs(got), older, newer)
		}
		// A month is a UTC month, whatever the zone of the time given.
		got, older, newer, err = a.PublicIncidentMonths(ctx, wa.ID, page, time.Date(2026, 2, 1, 1, 0, 0, 0, time.FixedZone("", 2*3600)))
		check(t, err)
		wantStrings(t, "January", incidentIDs(got), jan.ID)
		if !older.IsZero() || !newer.Equal(at("2026-03-01T00:00:00Z")) || len(got[0].Updates) != 2 {
			t.Errorf("January's neighbours: %v %v", older, newer)
		}
	})

	t.Run("maintenance", func(t *testing.T) {
		now = at("2026-03-20T10:00:00Z")
		window := func(actor Actor, d MaintenanceDraft) string {
			t.Helper()
			v, err := a.CreateMaintenanceWindow(ctx, actor, d)
			check(t, err)
			return v.ID
		}
		active := window(actorA, MaintenanceDraft{Name: "db upgrade", Description: "Faster queries.", Public: true,
			StartsAt: at("2026-03-20T09:00:00Z"), EndsAt: at("2026-03-20T11:00:00Z"), MonitorIDs: []string{m1.ID, m3.ID}})
		nightly := window(actorA, MaintenanceDraft{Name: "nightly", Public: true, StartsAt: at("2026-03-01T00:00:00Z"),
			Recurrence: &Recurrence{Cron: "0 2 * * *", Duration: time.Hour}, HeartbeatIDs: []string{h1.ID}})
		window(actorA, MaintenanceDraft{Name: "private", StartsAt: at("2026-03-20T09:00:00Z"), EndsAt: at("2026-03-20T11:00:00Z"),
			MonitorIDs: []string{m1.ID, m2.ID}, HeartbeatIDs: []string{h1.ID}})
		later := window(actorA, MaintenanceDraft{Name: "move", Public: true, StartsAt: at("2026-04-30T00:00:00Z"),
			EndsAt: at("2026-04-30T04:00:00Z"), MonitorIDs: []string{m2.ID}})
		window(actorA, MaintenanceDraft{Name: "elsewhere", Public: true, StartsAt: at("2026-03-20T09:00:00Z"),
			EndsAt: at("2026-03-20T11:00:00Z"), MonitorIDs: []string{m3.ID}})
		window(actorB, MaintenanceDraft{Name: "theirs", Public: true, StartsAt: at("2026-03-20T09:00:00Z"),
			EndsAt: at("2026-03-20T11:00:00Z"), MonitorIDs: []string{mb.ID}})

		got, err := a.PublicMaintenance(ctx, wa.ID, page, now, 7*24*time.Hour)
		check(t, err)
		wantEqual(t, got, []PublicWindow{
			{ID: active, Name: "db upgrade", Description: "Faster queries.", Active: true, StartsAt: at("2026-03-20T09:00:00Z"),
				EndsAt: at("2026-03-20T11:00:00Z"), Subjects: []SubjectRef{{"monitor", m1.ID}}},
			{ID: nightly, Name: "nightly", StartsAt: at("2026-03-21T02:00:00Z"), EndsAt: at("2026-03-21T03:00:00Z"),
				Subjects: []SubjectRef{{"heartbeat", h1.ID}}},
		})
		got, err = a.PublicMaintenance(ctx, wa.ID, page, now, 60*24*time.Hour)
		check(t, err)
		if len(got) != 3 || got[2].ID != later || got[2].Active || !got[2].StartsAt.Equal(at("2026-04-30T00:00:00Z")) {
			t.Errorf("within 60 days: %+v", got)
		}
		// In the nightly occurrence, after the one-off window ended.
		got, err = a.PublicMaintenance(ctx, wa.ID, page, at("2026-03-21T02:30:00Z"), 0)
		check(t, err)
		wantEqual(t, got, []PublicWindow{{ID: nightly, Name: "nightly", Active: true, StartsAt: at("2026-03-21T02:00:00Z"),
			EndsAt: at("2026-03-21T03:00:00Z"), Subjects: []SubjectRef{{"heartbeat", h1.ID}}}})
		// Made private, it leaves the page.
		_, err = a.UpdateMaintenanceWindow(ctx, actorA, nightly, func(cur MaintenanceView) (MaintenanceDraft, error) {
			return MaintenanceDraft{Name: cur.Name, StartsAt: cur.StartsAt, HeartbeatIDs: cur.HeartbeatIDs,
				Recurrence: &Recurrence{Cron: cur.Cron, Timezone: cur.Timezone, Duration: cur.Duration}}, nil
		})
		check(t, err)
		got, err = a.PublicMaintenance(ctx, wa.ID, page, at("2026-03-21T02:30:00Z"), 0)
		check(t, err)
		if len(got) != 0 {
			t.Errorf("after the window was made private: %+v", got)
		}
		got, err = a.PublicMaintenance(ctx, wb.ID, page, now, time.Hour)
		check(t, err)
		if len(got) != 1 || got[0].Name != "theirs" || !slices.Equal(got[0].Subjects, []SubjectRef{{"monitor", mb.ID}}) {
			t.Errorf("the other workspace's: %+v", got)
		}
	})
}
