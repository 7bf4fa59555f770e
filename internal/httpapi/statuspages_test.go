package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/ids"
)

// pngLogo is enough of a PNG for the logo's type to be told from its
// first bytes.
var pngLogo = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, 100)...)

// statusPageRoutes are the status-page routes; {id} is a page showing the
// monitor monitorID.
func statusPageRoutes(monitorID string) []route {
	create := map[string]any{"slug": "matrix-page", "title": "Matrix", "groups": []any{map[string]any{"name": "",
		"components": []any{map[string]any{"monitorId": monitorID, "name": "API"}}}}}
	return []route{
		{"GET", "/api/v1/status-pages", account.ScopeStatusPagesRead, nil, 200},
		{"POST", "/api/v1/status-pages", account.ScopeStatusPagesWrite, create, 201},
		{"GET", "/api/v1/status-pages/{id}", account.ScopeStatusPagesRead, nil, 200},
		{"PATCH", "/api/v1/status-pages/{id}", account.ScopeStatusPagesWrite, map[string]any{"title": "renamed"}, 200},
		{"PUT", "/api/v1/status-pages/{id}/logo", account.ScopeStatusPagesWrite, pngLogo, 200},
		{"DELETE", "/api/v1/status-pages/{id}/logo", account.ScopeStatusPagesWrite, nil, 200},
		{"DELETE", "/api/v1/status-pages/{id}", account.ScopeStatusPagesWrite, nil, 204},
	}
}

// freshSlug is a slug no other test's page has.
func freshSlug() string {
	return "p-" + strings.ToLower(strings.TrimPrefix(ids.New("x", time.Now()), "x_"))
}

// pageIn creates a status page showing a monitor, as the workspace's
// owner would.
func (e *env) pageIn(ws account.Workspace, monitorID string) string {
	e.t.Helper()
	owner := app.Actor{WorkspaceID: ws.ID, Role: account.RoleOwner}
	p, err := e.app.CreateStatusPage(context.Background(), owner, app.StatusPageDraft{Slug: freshSlug(), Title: "seed",
		ShowUptime: true, Groups: []app.StatusPageGroupDraft{{Components: []app.StatusPageComponentDraft{{MonitorID: monitorID, Name: "seed"}}}}})
	if err != nil {
		e.t.Fatal(err)
	}
	return p.ID
}

// clearStatusPages deletes the workspace's pages, so tests that make many
// stay within the per-workspace limit and free their slugs.
func (e *env) clearStatusPages(ws account.Workspace) {
	e.t.Helper()
	ctx := context.Background()
	owner := app.Actor{WorkspaceID: ws.ID, Role: account.RoleOwner}
	for {
		p, err := e.app.ListStatusPages(ctx, owner, app.PageRequest{Limit: app.MaxPageLimit})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, sp := range p.Items {
			if err := e.app.DeleteStatusPage(ctx, owner, sp.ID); err != nil {
				e.t.Fatal(err)
			}
		}
		if p.NextCursor == "" {
			return
		}
	}
}

// component is a group's component in a response.
func components(t *testing.T, page map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, g := range page["groups"].([]any) {
		for _, c := range g.(map[string]any)["components"].([]any) {
			out = append(out, c.(map[string]any))
		}
	}
	return out
}

func TestStatusPageLifecycle(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		m1, m2, hb := e.monitorIn(e.wsA), e.monitorIn(e.wsA), e.heartbeatIn(e.wsA)
		slug := freshSlug()
		r := e.req("POST", "/api/v1/status-pages", k, map[string]any{"slug": slug, "title": "Acme status",
			"groups": []any{
				map[string]any{"name": "Web", "components": []any{
					map[string]any{"monitorId": m1, "name": "Website", "description": "The shop"},
					map[string]any{"monitorId": m2, "name": "API"}}},
				map[string]any{"name": "Jobs", "components": []any{map[string]any{"heartbeatId": hb, "name": "Nightly backup"}}},
			}})
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		p := r.json(t)
		id := p["id"].(string)
		if !strings.HasPrefix(id, "sp_") || r.header.Get("Location") != "/api/v1/status-pages/"+id {
			t.Errorf("id %s, Location %q", id, r.header.Get("Location"))
		}
		// Defaults.
		if p["visibility"] != "public" || p["passwordSet"] != false || p["customDomain"] != nil || p["showUptime"] != true ||
			p["uptimeDays"] != float64(90) || p["pausedComponents"] != "hide" || p["showIncidents"] != true ||
			p["showMaintenance"] != true || p["accent"] != "#1f6feb" || p["logo"] != nil || p["description"] != "" ||
			len(p["footerLinks"].([]any)) != 0 || p["slug"] != slug {
			t.Errorf("defaults: %s", r.body)
		}
		cs := components(t, p)
		if len(cs) != 3 || cs[0]["monitorId"] != m1 || cs[0]["name"] != "Website" || cs[0]["description"] != "The shop" ||
			cs[1]["monitorId"] != m2 || cs[2]["heartbeatId"] != hb || cs[2]["monitorId"] != nil {
			t.Fatalf("components: %s", r.body)
		}
		for _, c := range cs {
			if !strings.HasPrefix(c["id"].(string), "spc_") {
				t.Errorf("component id %v", c["id"])
			}
		}
		if g := e.req("GET", "/api/v1/status-pages/"+id, k, nil); g.status != 200 || string(g.body) != string(r.body) {
			t.Errorf("get differs from create:\n%s\n%s", g.body, r.body)
		}

		// PATCH: settings, a password, a domain; groups replaced whole, a
		// component keeping its id while its subject stays.
		const secret = "correct horse battery"
		pr := e.req("PATCH", "/api/v1/status-pages/"+id, k, map[string]any{
			"title": "Acme", "description": "All of Acme", "visibility": "password", "password": secret,
			"customDomain": "Status.Acme.Example", "showUptime": false, "uptimeDays": 30, "pausedComponents": "show",
			"showIncidents": false, "accent": "#AABBCC", "footerLinks": []any{map[string]any{"label": "Support", "url": "https://acme.example/help"}},
			"groups": []any{map[string]any{"name": "", "components": []any{
				map[string]any{"heartbeatId": hb, "name": "Backups"},
				map[string]any{"monitorId": m1, "name": "Shop", "id": "spc_ignored"}}}}})
		if pr.status != 200 {
			t.Fatalf("patch: %d %s", pr.status, pr.body)
		}
		if strings.Contains(string(pr.body), secret) || strings.Contains(string(pr.body), "argon2") {
			t.Errorf("the password shows: %s", pr.body)
		}
		pp := pr.json(t)
		if pp["title"] != "Acme" || pp["visibility"] != "password" || pp["passwordSet"] != true || pp["customDomain"] != "status.acme.example" ||
			pp["showUptime"] != false || pp["uptimeDays"] != float64(30) || pp["pausedComponents"] != "show" || pp["showIncidents"] != false ||
			pp["showMaintenance"] != true || pp["accent"] != "#aabbcc" || len(pp["footerLinks"].([]any)) != 1 || pp["updatedAt"] == p["updatedAt"] {
			t.Errorf("patched: %s", pr.body)
		}
		pcs := components(t, pp)
		if len(pcs) != 2 || pcs[0]["id"] != cs[2]["id"] || pcs[1]["id"] != cs[0]["id"] || pcs[1]["name"] != "Shop" {
			t.Errorf("component ids not kept: before %v, after %v", cs, pcs)
		}
		// m2 left the page; back, it gets a new id.
		pr = e.req("PATCH", "/api/v1/status-pages/"+id, k, map[string]any{"groups": []any{map[string]any{"components": []any{
			map[string]any{"monitorId": m2, "name": "API"}, map[string]any{"monitorId": m1, "name": "Shop"}}}}})
		pcs = components(t, pr.json(t))
		if pr.status != 200 || len(pcs) != 2 || pcs[0]["id"] == cs[1]["id"] || pcs[1]["id"] != cs[0]["id"] {
			t.Errorf("re-added component: %d %s", pr.status, pr.body)
		}
		// The password stays when other fields change; null on a public page
		// removes it; the domain goes with null.
		if r := e.req("PATCH", "/api/v1/status-pages/"+id, k, map[string]any{"title": "Acme Inc"}); r.json(t)["passwordSet"] != true {
			t.Errorf("password lost: %s", r.body)
		}
		if r := e.req("PATCH", "/api/v1/status-pages/"+id, k, map[string]any{"password": nil}); r.status != 422 ||
			!slices.Contains(pointers(t, r), "/password") {
			t.Errorf("remove the password of a protected page: %d %s", r.status, r.body)
		}
		r = e.req("PATCH", "/api/v1/status-pages/"+id, k, map[string]any{"password": nil, "visibility": "public", "customDomain": nil})
		if pp := r.json(t); r.status != 200 || pp["passwordSet"] != false || pp["visibility"] != "public" || pp["customDomain"] != nil {
			t.Errorf("back to public: %d %s", r.status, r.body)
		}

		// List, one per page.
		second := e.req("POST", "/api/v1/status-pages", k, map[string]any{"slug": freshSlug(), "title": "Two"}).json(t)["id"].(string)
		var seen []string
		cursor := ""
		for range 4 {
			path := "/api/v1/status-pages?limit=1"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			l := e.req("GET", path, k, nil).json(t)
			for _, x := range l["data"].([]any) {
				seen = append(seen, x.(map[string]any)["id"].(string))
			}
			if l["nextCursor"] == nil {
				break
			}
			cursor = l["nextCursor"].(string)
		}
		if !slices.Equal(seen, []string{id, second}) {
			t.Errorf("listed %v", seen)
		}

		// Deleting a monitor takes its component off the page.
		if d := e.req("DELETE", "/api/v1/monitors/"+m2, k, nil); d.status != 204 {
			t.Fatalf("delete monitor: %d", d.status)
		}
		if g := e.req("GET", "/api/v1/status-pages/"+id, k, nil).json(t); len(components(t, g)) != 1 {
			t.Errorf("page still shows the deleted monitor: %v", g)
		}

		if d := e.req("DELETE", "/api/v1/status-pages/"+id, k, nil); d.status != http.StatusNoContent {
			t.Errorf("delete: %d %s", d.status, d.body)
		}
		for _, method := range []string{"GET", "PATCH", "DELETE"} {
			var body any
			if method == "PATCH" {
				body = map[string]any{"title": "x"}
			}
			if g := e.req(method, "/api/v1/status-pages/"+id, k, body); g.status != 404 || g.code(t) != "not_found" {
				t.Errorf("%s after delete: %d %s", method, g.status, g.body)
			}
		}
		// Its slug is free again.
		if r := e.req("POST", "/api/v1/status-pages", k, map[string]any{"slug": slug, "title": "again"}); r.status != 201 {
			t.Errorf("reuse a deleted page's slug: %d %s", r.status, r.body)
		}
	})
}

// TestStatusPageValidation: each bad field is named by its pointer, all at
// once; the password never comes back, not even in a 422.
func TestStatusPageValidation(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		mine, hb := e.monitorIn(e.wsA), e.heartbeatIn(e.wsA)
		theirMonitor, theirHeartbeat := e.monitorIn(e.wsB), e.heartbeatIn(e.wsB)
		// Workspace B holds a slug and a domain.
		bKey := e.key(e.ownerB, e.wsB.ID, false, account.ScopeStatusPagesWrite)
		takenSlug := freshSlug()
		if r := e.req("POST", "/api/v1/status-pages", bKey, map[string]any{"slug": takenSlug, "title": "B", "customDomain": "status.b.example"}); r.status != 201 {
			t.Fatalf("B's page: %d %s", r.status, r.body)
		}
		const secret = "hunter2-but-longer"
		comp := func(kind, id string) map[string]any { return map[string]any{kind: id, "name": "c"} }
		group := func(cs ...any) []any { return []any{map[string]any{"name": "g", "components": cs}} }
		many := func(n int, f func(i int) any) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = f(i)
			}
			return out
		}
		for _, c := range []struct {
			name string
			body map[string]any
			want []string
		}{
			{"taken slug", map[string]any{"slug": takenSlug, "title": "t"}, []string{"/slug"}},
			{"taken domain", map[string]any{"slug": freshSlug(), "title": "t", "customDomain": "STATUS.b.example"}, []string{"/customDomain"}},
			{"bad slugs and title", map[string]any{"slug": "-Bad--", "title": "  "}, []string{"/slug", "/title"}},
			{"reserved slug", map[string]any{"slug": "admin", "title": "t"}, []string{"/slug"}},
			{"one-letter slug", map[string]any{"slug": "a", "title": "t"}, []string{"/slug"}},
			{"long title and description", map[string]any{"slug": freshSlug(), "title": strings.Repeat("x", 101), "description": strings.Repeat("d", 1001)},
				[]string{"/title", "/description"}},
			{"missing title", map[string]any{"slug": freshSlug()}, []string{"/title"}},
			{"settings", map[string]any{"slug": freshSlug(), "title": "t", "visibility": "secret", "uptimeDays": 45,
				"pausedComponents": "grey", "accent": "blue"}, []string{"/visibility", "/uptimeDays", "/pausedComponents", "/accent"}},
			{"password page without a password", map[string]any{"slug": freshSlug(), "title": "t", "visibility": "password"}, []string{"/password"}},
			{"short password", map[string]any{"slug": freshSlug(), "title": "t", "visibility": "password", "password": "short"}, []string{"/password"}},
			{"domains", map[string]any{"slug": freshSlug(), "title": "t", "customDomain": "10.0.0.1"}, []string{"/customDomain"}},
			{"domain with port", map[string]any{"slug": freshSlug(), "title": "t", "customDomain": "status.example.com:8080"}, []string{"/customDomain"}},
			{"domain without a dot", map[string]any{"slug": freshSlug(), "title": "t", "customDomain": "localhost"}, []string{"/customDomain"}},
			{"footer links", map[string]any{"slug": freshSlug(), "title": "t", "footerLinks": []any{
				map[string]any{"label": "", "url": "https://ok.example"},
				map[string]any{"label": "js", "url": "javascript:alert(1)"},
				map[string]any{"label": "rel", "url": "/relative"}}},
				[]string{"/footerLinks/0/label", "/footerLinks/1/url", "/footerLinks/2/url"}},
			{"too many links", map[string]any{"slug": freshSlug(), "title": "t", "footerLinks": many(11, func(int) any {
				return map[string]any{"label": "l", "url": "https://ok.example"}
			})}, []string{"/footerLinks"}},
			{"foreign and unknown subjects", map[string]any{"slug": freshSlug(), "title": "t", "groups": group(
				comp("monitorId", mine), comp("monitorId", theirMonitor), comp("heartbeatId", theirHeartbeat),
				comp("monitorId", "mon_01JD5Z8Q3C4M6V9X2B7N1K0PQR"), comp("heartbeatId", hb))},
				[]string{"/groups/0/components/1/monitorId", "/groups/0/components/2/heartbeatId", "/groups/0/components/3/monitorId"}},
			{"component shapes", map[string]any{"slug": freshSlug(), "title": "t", "groups": group(
				map[string]any{"name": "both", "monitorId": mine, "heartbeatId": hb},
				map[string]any{"name": "neither"},
				map[string]any{"monitorId": mine, "name": ""},
				comp("monitorId", mine),
				map[string]any{"heartbeatId": hb, "name": "c", "description": strings.Repeat("d", 501)})},
				[]string{"/groups/0/components/0", "/groups/0/components/1", "/groups/0/components/2/name",
					"/groups/0/components/3/monitorId", "/groups/0/components/4/description"}},
			{"too many groups", map[string]any{"slug": freshSlug(), "title": "t", "groups": many(21, func(int) any {
				return map[string]any{"name": "g"}
			})}, []string{"/groups"}},
			{"too many components", map[string]any{"slug": freshSlug(), "title": "t", "groups": many(2, func(int) any {
				return map[string]any{"components": many(51, func(int) any { return comp("monitorId", mine) })}
			})}, []string{"/groups"}},
			{"unknown field", map[string]any{"slug": freshSlug(), "title": "t", "colour": "red"}, []string{"/colour"}},
		} {
			c.body["password"] = secret
			if c.name == "short password" {
				c.body["password"] = "short"
			}
			if c.name == "password page without a password" {
				delete(c.body, "password")
			}
			r := e.req("POST", "/api/v1/status-pages", k, c.body)
			got := pointers(t, r)
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("%s: details %v lack %s: %s", c.name, got, w, r.body)
				}
			}
			if strings.Contains(string(r.body), secret) {
				t.Errorf("%s: the password echoes: %s", c.name, r.body)
			}
			if strings.Contains(string(r.body), e.wsB.ID) || strings.Contains(string(r.body), "ws-b") {
				t.Errorf("%s: the other workspace shows: %s", c.name, r.body)
			}
		}
		// A PATCH may not take a slug or domain either, and names the fields.
		id := e.req("POST", "/api/v1/status-pages", k, map[string]any{"slug": freshSlug(), "title": "mine"}).json(t)["id"].(string)
		r := e.req("PATCH", "/api/v1/status-pages/"+id, k, map[string]any{"slug": takenSlug, "customDomain": "status.b.example", "password": secret})
		if got := pointers(t, r); !slices.Contains(got, "/slug") || !slices.Contains(got, "/customDomain") || strings.Contains(string(r.body), secret) {
			t.Errorf("patch to taken names: %v %s", got, r.body)
		}
		if got := pointers(t, e.req("PATCH", "/api/v1/status-pages/"+id, k, map[string]any{"password": "x"})); !slices.Equal(got, []string{"/password"}) {
			t.Errorf("short password in a patch: %v", got)
		}
		if r := e.req("PATCH", "/api/v1/status-pages/"+id, k, map[string]any{"slug": nil}); r.status != 422 {
			t.Errorf("remove the slug: %d %s", r.status, r.body)
		}
	})
}

func TestStatusPageRules(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		t.Run("isolation", func(t *testing.T) {
			theirs := e.pageIn(e.wsB, e.monitorIn(e.wsB))
			for _, c := range []struct {
				method, path string
				body         any
			}{{"GET", "", nil}, {"PATCH", "", map[string]any{"title": "mine now"}}, {"DELETE", "", nil},
				{"PUT", "/logo", pngLogo}, {"DELETE", "/logo", nil}} {
				if r := e.send(t, c.method, "/api/v1/status-pages/"+theirs+c.path, k, c.body); r.status != 404 || r.code(t) != "not_found" {
					t.Errorf("%s %s on workspace B's page: %d %s", c.method, c.path, r.status, r.body)
				}
			}
			if l := e.send(t, "GET", "/api/v1/status-pages", k, nil); strings.Contains(string(l.body), theirs) {
				t.Errorf("A's list shows B's page: %s", l.body)
			}
			bKey := e.key(e.ownerB, e.wsB.ID, false, account.ScopeStatusPagesRead)
			if g := e.send(t, "GET", "/api/v1/status-pages/"+theirs, bKey, nil); g.status != 200 || g.json(t)["title"] != "seed" {
				t.Errorf("B's own page: %d %s", g.status, g.body)
			}
		})
		t.Run("idempotent create", func(t *testing.T) {
			body := map[string]any{"slug": freshSlug(), "title": "once", "password": "a long password", "visibility": "password"}
			first := e.send(t, "POST", "/api/v1/status-pages", k, body, "Idempotency-Key", "sp-1")
			again := e.send(t, "POST", "/api/v1/status-pages", k, body, "Idempotency-Key", "sp-1")
			if first.status != 201 || again.status != 201 || string(first.body) != string(again.body) || again.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d %s / %d %s", first.status, first.body, again.status, again.body)
			}
			body["title"] = "twice"
			if r := e.send(t, "POST", "/api/v1/status-pages", k, body, "Idempotency-Key", "sp-1"); r.status != 409 || r.code(t) != "idempotency_conflict" {
				t.Errorf("same key, other body: %d %s", r.status, r.body)
			}
		})
		t.Run("quota", func(t *testing.T) {
			e.clearStatusPages(e.wsA)
			for i := range app.MaxStatusPages {
				if r := e.send(t, "POST", "/api/v1/status-pages", k, map[string]any{"slug": freshSlug(), "title": "p"}); r.status != 201 {
					t.Fatalf("page %d: %d %s", i, r.status, r.body)
				}
			}
			r := e.send(t, "POST", "/api/v1/status-pages", k, map[string]any{"slug": freshSlug(), "title": "p"})
			if r.status != 402 || r.code(t) != "quota_exceeded" || !strings.Contains(string(r.body), "20") {
				t.Errorf("page 21: %d %s", r.status, r.body)
			}
			e.clearStatusPages(e.wsA)
		})
	})
}

// TestStatusPageLogo: a logo is an image told by its bytes, bounded in
// size, stored and served from here.
func TestStatusPageLogo(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		id := e.pageIn(e.wsA, e.monitorIn(e.wsA))
		put := func(body []byte, ct string) response {
			return e.req("PUT", "/api/v1/status-pages/"+id+"/logo", k, body, "Content-Type", ct)
		}
		r := put(pngLogo, "image/png")
		if r.status != 200 {
			t.Fatalf("put: %d %s", r.status, r.body)
		}
		logo, _ := r.json(t)["logo"].(map[string]any)
		if logo == nil || logo["contentType"] != "image/png" || logo["sizeBytes"] != float64(len(pngLogo)) || logo["updatedAt"] == nil {
			t.Fatalf("logo: %s", r.body)
		}
		if g := e.req("GET", "/api/v1/status-pages/"+id, k, nil); string(g.body) != string(r.body) {
			t.Errorf("get differs from put:\n%s\n%s", g.body, r.body)
		}
		ct, data, v1, err := e.app.PublicStatusPageLogo(context.Background(), id)
		if err != nil || ct != "image/png" || !bytes.Equal(data, pngLogo) || v1 == "" {
			t.Fatalf("stored logo: %s %d bytes %q %v", ct, len(data), v1, err)
		}

		// The type comes from the bytes, not the header.
		gif := append([]byte("GIF89a"), bytes.Repeat([]byte{1}, 50)...)
		if r := put(gif, "image/png"); r.status != 200 || r.json(t)["logo"].(map[string]any)["contentType"] != "image/gif" {
			t.Errorf("gif: %d %s", r.status, r.body)
		}
		for _, c := range []struct {
			name string
			body []byte
			ct   string
			want int
			code string
		}{
			{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), "image/svg+xml", 415, "unsupported_media_type"},
			{"svg named png", []byte(`<?xml version="1.0"?><svg/>`), "image/png", 415, "unsupported_media_type"},
			{"text", []byte("hello"), "text/plain", 415, "unsupported_media_type"},
			{"too large", append(pngLogo[:8:8], make([]byte, app.MaxStatusPageLogo)...), "image/png", 413, "payload_too_large"},
			{"empty", nil, "image/png", 400, "bad_request"},
		} {
			r := put(c.body, c.ct)
			if r.status != c.want || r.code(t) != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.want, c.code)
			}
		}
		// Exactly the limit is fine.
		if r := put(append(pngLogo[:8:8], make([]byte, app.MaxStatusPageLogo-8)...), "image/png"); r.status != 200 {
			t.Errorf("at the limit: %d %s", r.status, r.body)
		}
		_, _, v2, _ := e.app.PublicStatusPageLogo(context.Background(), id)
		if v2 == v1 {
			t.Errorf("the logo's version did not change with its bytes")
		}
		// Reading keys may not upload.
		ro := e.key(e.members[account.RoleOwner], e.wsA.ID, false, account.ScopeStatusPagesRead)
		if r := e.req("PUT", "/api/v1/status-pages/"+id+"/logo", ro, pngLogo, "Content-Type", "image/png"); r.status != 403 || r.code(t) != "insufficient_scope" {
			t.Errorf("read-only key: %d %s", r.status, r.body)
		}

		if r := e.req("DELETE", "/api/v1/status-pages/"+id+"/logo", k, nil); r.status != 200 || r.json(t)["logo"] != nil {
			t.Errorf("delete logo: %d %s", r.status, r.body)
		}
		if _, _, _, err := e.app.PublicStatusPageLogo(context.Background(), id); err == nil {
			t.Errorf("the deleted logo is still served")
		}
	})
}
