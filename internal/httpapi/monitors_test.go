package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestMonitorLifecycle(t *testing.T) {
	t.Parallel()
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

// TestPatchMonitor: PATCH merges into the stored config and validates the
// result as a whole; the credential is kept, replaced or removed.
func TestPatchMonitor(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		r := e.req("POST", "/api/v1/monitors", k, map[string]any{"type": "http", "name": "api", "config": map[string]any{
			"url": "https://api.example", "headers": map[string]any{"X-A": "1", "X-B": "2"},
			"auth": map[string]any{"type": "basic", "username": "ops", "password": "pw-one"}}})
		id := r.json(t)["id"].(string)
		path := "/api/v1/monitors/" + id
		cred := func() string {
			a, err := e.app.MonitorAuth(t.Context(), e.wsA.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			if a == nil {
				return ""
			}
			return a.Username + ":" + a.Password + a.Token
		}
		cases := []struct {
			name   string
			patch  string
			status int
			check  func(cfg map[string]any)
			cred   string
		}{
			{"merge a nested map", `{"config":{"headers":{"X-A":null,"X-C":"3"}}}`, 200, func(cfg map[string]any) {
				// Header values are write-only: the names are shown, the
				// stored values merged.
				if fmt.Sprint(cfg["headersSet"]) != "[X-B X-C]" || cfg["headers"] != nil {
					t.Errorf("headers %v, headersSet %v", cfg["headers"], cfg["headersSet"])
				}
				h, err := e.app.MonitorHeaders(t.Context(), e.wsA.ID, id)
				if err != nil || len(h) != 2 || h["X-B"] != "2" || h["X-C"] != "3" {
					t.Errorf("stored headers %v, %v", h, err)
				}
			}, "ops:pw-one"},
			{"set a field", `{"config":{"method":"POST"}}`, 200, func(cfg map[string]any) {
				if cfg["method"] != "POST" {
					t.Errorf("method %v", cfg["method"])
				}
			}, "ops:pw-one"},
			{"reset method", `{"config":{"method":null}}`, 200, func(cfg map[string]any) {
				if cfg["method"] != "GET" {
					t.Errorf("method %v", cfg["method"])
				}
			}, "ops:pw-one"},
			{"invalid merged result", `{"config":{"url":"ftp://x","timeoutSeconds":99}}`, 422, nil, "ops:pw-one"},
			{"field of another type", `{"config":{"port":80}}`, 422, nil, "ops:pw-one"},
			{"unknown field", `{"config":{"retries":3}}`, 422, nil, "ops:pw-one"},
			{"empty name", `{"name":""}`, 422, nil, "ops:pw-one"},
			{"interval out of range", `{"intervalSeconds":5}`, 422, nil, "ops:pw-one"},
			{"partial auth is rejected", `{"config":{"auth":{"type":"basic","username":"x"}}}`, 422, nil, "ops:pw-one"},
			{"replace auth", `{"config":{"auth":{"type":"bearer","token":"tok-two"}}}`, 200, func(cfg map[string]any) {
				a := cfg["auth"].(map[string]any)
				if a["type"] != "bearer" || a["tokenSet"] != true {
					t.Errorf("auth %v", a)
				}
			}, ":tok-two"},
			{"remove auth", `{"config":{"auth":null}}`, 200, func(cfg map[string]any) {
				if cfg["auth"] != nil {
					t.Errorf("auth %v", cfg["auth"])
				}
			}, ""},
		}
		for _, c := range cases {
			res := e.req("PATCH", path, k, c.patch)
			if res.status != c.status {
				t.Errorf("%s: %d %s", c.name, res.status, res.body)
				continue
			}
			if c.status == 422 && res.code(t) != "validation_error" {
				t.Errorf("%s: %s", c.name, res.body)
			}
			if c.check != nil {
				c.check(res.json(t)["config"].(map[string]any))
			}
			if got := cred(); got != c.cred {
				t.Errorf("%s: stored credential %q, want %q", c.name, got, c.cred)
			}
			if strings.Contains(string(res.body), "pw-one") || strings.Contains(string(res.body), "tok-two") {
				t.Errorf("%s: secret echoed: %s", c.name, res.body)
			}
		}
	})
}

// TestConcurrentPatchesLoseNothing: concurrent edits each either land or
// get 409 conflict; none is silently overwritten.
func TestConcurrentPatchesLoseNothing(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		id := e.req("POST", "/api/v1/monitors", k, httpBody(`{"url":"https://a.example"}`)).json(t)["id"].(string)
		var wg sync.WaitGroup
		results := make([]response, 8)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = e.send(t, "PATCH", "/api/v1/monitors/"+id, k, fmt.Sprintf(`{"config":{"headers":{"X-P%d":"v"}}}`, i))
			}()
		}
		wg.Wait()
		landed := map[string]bool{}
		for i, r := range results {
			switch r.status {
			case 200:
				landed[fmt.Sprintf("X-P%d", i)] = true
			case 409:
				if r.code(t) != "conflict" {
					t.Errorf("%s", r.body)
				}
			default:
				t.Errorf("%d %s", r.status, r.body)
			}
		}
		if len(landed) == 0 {
			t.Error("no concurrent edit landed")
		}
		names := e.req("GET", "/api/v1/monitors/"+id, k, nil).json(t)["config"].(map[string]any)["headersSet"].([]any)
		final, err := e.app.MonitorHeaders(t.Context(), e.wsA.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(final) != len(landed) || len(names) != len(landed) {
			t.Errorf("headers %v (shown: %v), but these edits were acknowledged: %v", final, names, landed)
		}
		for h := range landed {
			if final[h] != "v" {
				t.Errorf("acknowledged edit %s lost: %v", h, final)
			}
		}
		// A pause meanwhile is not undone by an edit made from an older read.
		e.req("POST", "/api/v1/monitors/"+id+"/pause", k, nil)
		r := e.req("PATCH", "/api/v1/monitors/"+id, k, `{"name":"after pause"}`)
		if m := r.json(t); m["paused"] != true || m["state"] != "PAUSED" {
			t.Errorf("edit after pause: %s", r.body)
		}
	})
}
