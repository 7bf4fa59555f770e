package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestMonitorLifecycle(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		body := map[string]any{"type": "http", "name": "API health", "config": map[string]any{
			"url": "https://example.com/health", "expectedStatusCodes": []any{200, "300-302"},
			"keywordAssertions": []any{map[string]any{"keyword": "ok"}},
			"jsonAssertions":    []any{map[string]any{"path": "$.status", "operator": "equals", "value": "ok"}},
			"auth":              map[string]any{"type": "bearer", "token": "s3cret-token"},
		}}
		r := e.req("POST", "/api/v1/monitors", k, body)
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		m := r.json(t)
		id := m["id"].(string)
		if m["state"] != "PENDING" || m["intervalSeconds"] != float64(60) || m["paused"] != false {
			t.Errorf("created monitor: %s", r.body)
		}
		if got := r.header.Get("Location"); got != "/api/v1/monitors/"+id {
			t.Errorf("Location = %q", got)
		}
		auth := m["config"].(map[string]any)["auth"].(map[string]any)
		if auth["tokenSet"] != true || auth["token"] != nil {
			t.Errorf("auth must say the token is set and never show it: %v", auth)
		}
		if strings.Contains(string(r.body), "s3cret-token") {
			t.Fatalf("secret echoed: %s", r.body)
		}
		g := e.req("GET", "/api/v1/monitors/"+id, k, nil)
		if g.status != 200 || string(g.body) != string(r.body) {
			t.Errorf("get differs from create:\n%s\n%s", g.body, r.body)
		}
		p := e.req("PATCH", "/api/v1/monitors/"+id, k, map[string]any{"name": "Renamed", "config": map[string]any{"timeoutSeconds": 5, "keywordAssertions": nil}})
		pm := p.json(t)
		cfg := pm["config"].(map[string]any)
		if p.status != 200 || pm["name"] != "Renamed" || cfg["timeoutSeconds"] != float64(5) || cfg["keywordAssertions"] != nil || cfg["auth"] == nil {
			t.Errorf("patch: %d %s", p.status, p.body)
		}
		cred, err := e.app.MonitorAuth(t.Context(), e.wsA.ID, id)
		if err != nil || cred == nil || cred.Token != "s3cret-token" {
			t.Errorf("stored credential after patch = %+v, %v", cred, err)
		}
		if ps := e.req("POST", "/api/v1/monitors/"+id+"/pause", k, nil).json(t); ps["state"] != "PAUSED" || ps["paused"] != true {
			t.Errorf("pause: %v", ps)
		}
		if rs := e.req("POST", "/api/v1/monitors/"+id+"/resume", k, nil).json(t); rs["state"] != "PENDING" || rs["paused"] != false {
			t.Errorf("resume: %v", rs)
		}
		if d := e.req("DELETE", "/api/v1/monitors/"+id, k, nil); d.status != http.StatusNoContent {
			t.Errorf("delete: %d %s", d.status, d.body)
		}
		if g := e.req("GET", "/api/v1/monitors/"+id, k, nil); g.status != 404 || g.code(t) != "not_found" {
			t.Errorf("get after delete: %d %s", g.status, g.body)
		}
	})
}
