package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/incident"
)

// Incidents are private unless published; a public one needs a monitor or
// heartbeat to show by, its public title is bounded, and every change of
// publication is an incident.updated.
func TestIncidentPublication(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		m := e.monitorIn(e.wsA)
		r := e.req("POST", "/api/v1/incidents", k, map[string]any{"title": "Checkout is slow", "message": "Looking."})
		if got := r.json(t); r.status != http.StatusCreated || got["public"] != false || got["publicTitle"] != "" {
			t.Fatalf("a private incident by default: %d %s", r.status, r.body)
		}

		// Bad publication: no subject to show by, blank or long titles.
		r = e.req("POST", "/api/v1/incidents", k, map[string]any{"title": "t", "message": "m", "public": true})
		if p := pointers(t, r); !slices.Equal(p, []string{"/public"}) {
			t.Errorf("public without affected monitors: %v %s", p, r.body)
		}
		r = e.req("POST", "/api/v1/incidents", k, map[string]any{"title": "t", "message": "m", "public": true,
			"affectedMonitors": []string{m}, "publicTitle": strings.Repeat("é", 201)})
		if p := pointers(t, r); !slices.Equal(p, []string{"/publicTitle"}) {
			t.Errorf("a public title of 201 characters: %v %s", p, r.body)
		}
		r = e.req("POST", "/api/v1/incidents", k, map[string]any{"title": "t", "message": "m", "publicTitle": "  "})
		if p := pointers(t, r); !slices.Equal(p, []string{"/publicTitle"}) {
			t.Errorf("a blank public title: %v %s", p, r.body)
		}
		r = e.req("POST", "/api/v1/incidents", k, map[string]any{"title": "t", "message": "m", "public": "yes"})
		if p := pointers(t, r); !slices.Equal(p, []string{"/public"}) {
			t.Errorf("public not a boolean: %v %s", p, r.body)
		}

		r = e.req("POST", "/api/v1/incidents", k, map[string]any{"title": "db-7 disk full", "message": "Payments fail.",
			"public": true, "publicTitle": " Payments are failing ", "affectedMonitors": []string{m}})
		inc := r.json(t)
		if r.status != http.StatusCreated || inc["public"] != true || inc["publicTitle"] != "Payments are failing" {
			t.Fatalf("a public incident: %d %s", r.status, r.body)
		}
		id := inc["id"].(string)
		if g := e.req("GET", "/api/v1/incidents/"+id, k, nil); g.json(t)["publicTitle"] != "Payments are failing" {
			t.Errorf("get: %s", g.body)
		}

		// Emptying the list of a public incident is refused, at the list;
		// so is publishing with an empty list, at public.
		r = e.req("PATCH", "/api/v1/incidents/"+id, k, map[string]any{"affectedMonitors": []string{}})
		if p := pointers(t, r); !slices.Equal(p, []string{"/affectedMonitors"}) {
			t.Errorf("emptying a public incident's monitors: %v %s", p, r.body)
		}
		r = e.req("PATCH", "/api/v1/incidents/"+id, k, map[string]any{"affectedMonitors": []string{}, "public": true})
		if p := pointers(t, r); !slices.Equal(p, []string{"/public"}) {
			t.Errorf("public with no monitors: %v %s", p, r.body)
		}
		r = e.req("PATCH", "/api/v1/incidents/"+id, k, map[string]any{"publicTitle": strings.Repeat("x", 201)})
		if p := pointers(t, r); !slices.Equal(p, []string{"/publicTitle"}) {
			t.Errorf("patching a long public title: %v %s", p, r.body)
		}
		before := len(e.outbox(t))
		r = e.req("PATCH", "/api/v1/incidents/"+id, k, map[string]any{"public": true, "publicTitle": "Payments are failing"})
		if r.status != 200 || len(e.outbox(t)) != before {
			t.Errorf("a patch that changes nothing: %d %s, events %d → %d", r.status, r.body, before, len(e.outbox(t)))
		}
		r = e.req("PATCH", "/api/v1/incidents/"+id, k, map[string]any{"public": false, "publicTitle": ""})
		if got := r.json(t); r.status != 200 || got["public"] != false || got["publicTitle"] != "" {
			t.Errorf("unpublished: %d %s", r.status, r.body)
		}
		// Private, it may lose its monitors; published again, it needs one.
		if r = e.req("PATCH", "/api/v1/incidents/"+id, k, map[string]any{"affectedMonitors": []string{}}); r.status != 200 {
			t.Errorf("a private incident without monitors: %d %s", r.status, r.body)
		}
		r = e.req("PATCH", "/api/v1/incidents/"+id, k, map[string]any{"public": true, "affectedMonitors": []string{m}})
		if got := r.json(t); r.status != 200 || got["public"] != true {
			t.Errorf("published again: %d %s", r.status, r.body)
		}
		out := e.outbox(t)
		want := []string{incident.IncidentUpdated, incident.IncidentUpdated, incident.IncidentUpdated}
		if got := out[before:]; !slices.Equal(got, want) {
			t.Errorf("events of the changes: %v, want %v", got, want)
		}

		// Another workspace's incident is not found, published or not.
		if r = e.req("PATCH", "/api/v1/incidents/"+id, e.key(e.ownerB, e.wsB.ID, false, account.Scopes...), map[string]any{"public": false}); r.status != http.StatusNotFound {
			t.Errorf("patch from another workspace: %d %s", r.status, r.body)
		}
	})
}

// Maintenance windows are private unless published; public is kept by
// patches that do not name it and reset by null.
func TestMaintenanceWindowPublication(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		m := e.monitorIn(e.wsA)
		start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
		body := map[string]any{"name": "upgrade", "startsAt": rfc3339(start), "endsAt": rfc3339(start.Add(time.Hour)),
			"monitorIds": []string{m}}
		r := e.req("POST", "/api/v1/maintenance-windows", k, body)
		if got := r.json(t); r.status != http.StatusCreated || got["public"] != false {
			t.Fatalf("private by default: %d %s", r.status, r.body)
		}
		body["public"] = true
		r = e.req("POST", "/api/v1/maintenance-windows", k, body)
		if got := r.json(t); r.status != http.StatusCreated || got["public"] != true {
			t.Fatalf("public: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)
		path := "/api/v1/maintenance-windows/" + id
		if r = e.req("PATCH", path, k, map[string]any{"name": "db upgrade"}); r.json(t)["public"] != true {
			t.Errorf("a patch of the name kept public? %d %s", r.status, r.body)
		}
		if r = e.req("PATCH", path, k, map[string]any{"public": false}); r.status != 200 || r.json(t)["public"] != false {
			t.Errorf("unpublished: %d %s", r.status, r.body)
		}
		if r = e.req("PATCH", path, k, map[string]any{"public": true}); r.status != 200 || r.json(t)["public"] != true {
			t.Errorf("published: %d %s", r.status, r.body)
		}
		if r = e.req("PATCH", path, k, map[string]any{"public": nil}); r.status != 200 || r.json(t)["public"] != false {
			t.Errorf("reset by null: %d %s", r.status, r.body)
		}
		r = e.req("PATCH", path, k, map[string]any{"public": "yes"})
		if p := pointers(t, r); !slices.Equal(p, []string{"/public"}) {
			t.Errorf("public not a boolean: %v %s", p, r.body)
		}
		if g := e.req("GET", path, k, nil); g.json(t)["public"] != false {
			t.Errorf("get: %s", g.body)
		}
	})
}
