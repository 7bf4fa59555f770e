package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/incident"
)

// outbox lists the types of workspace A's events, oldest first.
func (e *env) outbox(t *testing.T) []string {
	t.Helper()
	evs, err := e.db.ListEvents(context.Background(), e.wsA.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	return types
}

// A manual incident through its whole life: created, edited, updated,
// acknowledged, resolved, with an event for each change.
func TestIncidentLifecycle(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		m := e.monitorIn(e.wsA)
		r := e.req("POST", "/api/v1/incidents", k, map[string]any{"title": "Checkout is slow",
			"message": "Looking into slow payments.", "affectedMonitors": []string{m}})
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		inc := r.json(t)
		id := inc["id"].(string)
		if !strings.HasPrefix(id, "inc_") || r.header.Get("Location") != "/api/v1/incidents/"+id ||
			inc["origin"] != "manual" || inc["status"] != "investigating" || inc["subject"] != nil ||
			inc["resolvedAt"] != nil || len(inc["updates"].([]any)) != 1 || inc["affectedMonitors"].([]any)[0] != m {
			t.Fatalf("created: %s", r.body)
		}

		h := e.newHeartbeat(t, k, periodic("backup", 600, 60))["id"].(string)
		r = e.req("PATCH", "/api/v1/incidents/"+id, k, map[string]any{"title": "Payments are slow", "affectedMonitors": []string{m, h}})
		if got := r.json(t); r.status != 200 || got["title"] != "Payments are slow" || len(got["affectedMonitors"].([]any)) != 2 {
			t.Fatalf("patch: %d %s", r.status, r.body)
		}
		r = e.req("POST", "/api/v1/incidents/"+id+"/updates", k, map[string]any{"status": "identified", "message": "A slow provider."})
		if got := r.json(t); r.status != http.StatusCreated || got["status"] != "identified" || len(got["updates"].([]any)) != 2 {
			t.Fatalf("update: %d %s", r.status, r.body)
		}
		r = e.req("POST", "/api/v1/incidents/"+id+"/acknowledge", k, nil)
		acked := r.json(t)["acknowledgedAt"]
		if r.status != 200 || acked == nil {
			t.Fatalf("acknowledge: %d %s", r.status, r.body)
		}
		if r = e.req("POST", "/api/v1/incidents/"+id+"/acknowledge", k, nil); r.json(t)["acknowledgedAt"] != acked {
			t.Errorf("acknowledging again moved it: %s", r.body)
		}
		r = e.req("POST", "/api/v1/incidents/"+id+"/resolve", k, map[string]any{"message": "The provider recovered."})
		if got := r.json(t); r.status != 200 || got["status"] != "resolved" || got["resolvedAt"] == nil {
			t.Fatalf("resolve: %d %s", r.status, r.body)
		}
		r = e.req("POST", "/api/v1/incidents/"+id+"/updates", k, map[string]any{"status": "monitoring", "message": "Again?"})
		if p := pointers(t, r); !slices.Equal(p, []string{"/status"}) {
			t.Errorf("reopening by an update: %v", p)
		}
		r = e.req("POST", "/api/v1/incidents/"+id+"/updates", k, map[string]any{"status": "resolved", "message": "Post-mortem: …"})
		if got := r.json(t); r.status != http.StatusCreated || len(got["updates"].([]any)) != 4 {
			t.Fatalf("a note after resolving: %d %s", r.status, r.body)
		}
		if r = e.req("POST", "/api/v1/incidents/"+id+"/resolve", k, nil); r.status != 200 || len(r.json(t)["updates"].([]any)) != 4 {
			t.Errorf("resolving again: %d %s", r.status, r.body)
		}

		r = e.req("GET", "/api/v1/incidents/"+id, k, nil)
		if got := r.json(t); r.status != 200 || got["title"] != "Payments are slow" {
			t.Errorf("get: %d %s", r.status, r.body)
		}
		want := []string{incident.IncidentOpened, incident.IncidentUpdated, incident.IncidentUpdated,
			incident.IncidentAcknowledged, incident.IncidentResolved, incident.IncidentUpdated}
		if got := e.outbox(t); !slices.Equal(got, want) {
			t.Errorf("events: %v, want %v", got, want)
		}
	})
}

// A heartbeat that fails opens its incident, one that recovers resolves
// it; lists filter by status and subject, page newest first, and keep to
// the workspace.
func TestAutomaticIncidentsThroughTheAPI(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		e.clock.Set(hbT0)
		k := e.ownerKey()
		h := e.newHeartbeat(t, k, periodic("backup", 600, 60))
		id, pingURL := h["id"].(string), h["pingUrl"].(string)
		e.pingOK(t, pingURL, "")
		e.clock.Set(hbT0.Add(time.Minute))
		if r := e.ping(t, "GET", pingURL, "/fail", nil); r.status != 200 {
			t.Fatalf("fail ping: %d %s", r.status, r.body)
		}
		r := e.req("GET", "/api/v1/incidents?status=open&subject="+id, k, nil)
		list := r.json(t)["data"].([]any)
		if r.status != 200 || len(list) != 1 {
			t.Fatalf("open incidents of the failed job: %d %s", r.status, r.body)
		}
		inc := list[0].(map[string]any)
		if inc["origin"] != "automatic" || inc["title"] != "backup is down" || inc["subject"].(map[string]any)["id"] != id ||
			!strings.Contains(inc["cause"].(string), "fail") {
			t.Errorf("automatic incident: %v", inc)
		}
		e.clock.Set(hbT0.Add(2 * time.Minute))
		e.pingOK(t, pingURL, "")
		r = e.req("GET", "/api/v1/incidents/"+inc["id"].(string), k, nil)
		if got := r.json(t); got["status"] != "resolved" || got["resolvedAt"] == nil {
			t.Errorf("after the job recovered: %s", r.body)
		}

		manual := e.req("POST", "/api/v1/incidents", k, map[string]any{"title": "Planned", "message": "…"}).json(t)["id"].(string)
		r = e.req("GET", "/api/v1/incidents?limit=1", k, nil)
		page := r.json(t)
		if data := page["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != manual || page["nextCursor"] == nil {
			t.Fatalf("first page: %s", r.body)
		}
		r = e.req("GET", "/api/v1/incidents?limit=1&cursor="+page["nextCursor"].(string), k, nil)
		if data := r.json(t)["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != inc["id"] {
			t.Errorf("second page: %s", r.body)
		}
		if r = e.req("GET", "/api/v1/incidents?status=resolved", k, nil); len(r.json(t)["data"].([]any)) != 1 {
			t.Errorf("resolved ones: %s", r.body)
		}

		kB := e.key(e.ownerB, e.wsB.ID, false, account.Scopes...)
		if r = e.req("GET", "/api/v1/incidents/"+manual, kB, nil); r.status != http.StatusNotFound {
			t.Errorf("another workspace's incident: %d %s", r.status, r.body)
		}
		if r = e.req("GET", "/api/v1/incidents", kB, nil); len(r.json(t)["data"].([]any)) != 0 {
			t.Errorf("workspace B lists A's incidents: %s", r.body)
		}
		reader := e.key(e.members[account.RoleOwner], e.wsA.ID, false, account.ScopeIncidentsRead)
		if r = e.req("POST", "/api/v1/incidents/"+manual+"/resolve", reader, nil); r.status != http.StatusForbidden || r.code(t) != "insufficient_scope" {
			t.Errorf("resolving with incidents:read only: %d %s", r.status, r.body)
		}
	})
}

// Bad input gets one 422 that names every failing field.
func TestIncidentValidation(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		r := e.req("POST", "/api/v1/incidents", k, map[string]any{"title": " ", "status": "resolved", "message": "x",
			"affectedMonitors": []string{"mon_nope", "bogus"}})
		if p := pointers(t, r); !slices.Contains(p, "/title") || !slices.Contains(p, "/status") || !slices.Contains(p, "/affectedMonitors/1") {
			t.Errorf("pointers %v: %s", p, r.body)
		}
		r = e.req("POST", "/api/v1/incidents", k, map[string]any{"title": "t", "message": "m", "affectedMonitors": []string{"mon_nope"}})
		if p := pointers(t, r); !slices.Equal(p, []string{"/affectedMonitors/0"}) {
			t.Errorf("an unknown monitor: %v", p)
		}
		if r = e.req("GET", "/api/v1/incidents?status=bogus", k, nil); r.status != http.StatusUnprocessableEntity {
			t.Errorf("status=bogus: %d %s", r.status, r.body)
		}
		if r = e.req("GET", "/api/v1/incidents/inc_nope", k, nil); r.status != http.StatusNotFound || r.code(t) != "not_found" {
			t.Errorf("unknown incident: %d %s", r.status, r.body)
		}
	})
}
