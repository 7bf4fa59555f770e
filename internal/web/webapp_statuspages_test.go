package web_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web"
)

// apiPage makes a status page in workspace A over the API, showing the
// monitors (named by their ids) in one group "Core", and returns its id
// and its components' ids.
func (e *env) apiPage(slug string, monitors ...string) (string, []string) {
	e.t.Helper()
	var comps []any
	for i, m := range monitors {
		comps = append(comps, map[string]any{"monitorId": m, "name": "Component " + string(rune('A'+i))})
	}
	p := e.api("POST", "/api/v1/status-pages", e.keyA, map[string]any{"slug": slug, "title": "Page " + slug,
		"password": "a stored page password", "groups": []any{map[string]any{"name": "Core", "components": comps}}}, 201)
	var ids []string
	for _, g := range p["groups"].([]any) {
		for _, c := range g.(map[string]any)["components"].([]any) {
			ids = append(ids, c.(map[string]any)["id"].(string))
		}
	}
	return p["id"].(string), ids
}

// TestWebAppStatusPagesMatrix: every action of the status page pages, for
// every role, over HTTP: those whose role grants status_pages:write (as an
// API key of theirs would) change pages, the others read them, and a
// member of another workspace finds nothing.
func TestWebAppStatusPagesMatrix(t *testing.T) {
	forEachEngine(t, web.PublicOptions{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.wsA.ID
		m1 := e.monitor(e.keyA, "First", "https://one.example.com/", nil)
		m2 := e.monitor(e.keyA, "Second", "https://two.example.com/", nil)
		n := 0
		for _, role := range monitor.Roles {
			p := e.member(string(role)+"@a.test", role)
			write := role.Grants(monitor.ScopeStatusPagesWrite)
			id, comps := e.apiPage("page-"+string(role), m1)
			sp := ws + "/status-pages/" + id
			c := comps[0]
			n += judge(t, role, p, []action{
				{"list status pages", "GET", ws + "/status-pages", nil, true, 200},
				{"open the editor", "GET", sp, nil, true, 200},
				{"see the preview", "GET", sp + "/preview", nil, true, 200},
				{"create a page", "POST", ws + "/status-pages", form("title", "New "+string(role), "slug", "new-"+string(role)), write, 303},
				{"save settings", "POST", sp, form("title", "Renamed", "slug", "page-"+string(role), "visibility", "public", "show-uptime", "on"), write, 303},
				{"publish", "POST", sp + "/publish", form(), write, 303},
				{"unpublish", "POST", sp + "/unpublish", form(), write, 303},
				{"add a group", "POST", sp + "/groups", form("g-name", "Second"), write, 303},
				{"reorder", "POST", sp + "/order", form("order", "1:"+c), write, 303},
				{"add a component", "POST", sp + "/components", form("subject", "monitor:"+m2, "c-name", "Two", "group", "0"), write, 303},
				{"move a component", "POST", sp + "/components/" + c + "/move", form("dir", "up"), write, 303},
				{"move a group", "POST", sp + "/groups/1/move", form("dir", "up"), write, 303},
				{"remove a component", "POST", sp + "/components/" + c + "/remove", form(), write, 303},
				{"remove a group", "POST", sp + "/groups/1/remove", form(), write, 303},
				{"delete the page", "POST", sp + "/delete", form(), write, 303},
			})
			if !write {
				if got := e.api("GET", "/api/v1/status-pages/"+id, e.keyA, nil, 200); got["title"] != "Page page-"+string(role) {
					t.Errorf("%s changed the page: %v", role, got["title"])
				}
			}
		}
		// A member of another workspace: nothing is there.
		id, comps := e.apiPage("page-other", m1)
		if _, err := e.app.CreateUser(context.Background(), app.UserRequest{Email: "owner@b.test", Password: "a password for owner@b.test",
			Workspace: e.wsB.ID, Role: monitor.RoleOwner}); err != nil {
			t.Fatal(err)
		}
		other := e.browser("owner@b.test")
		other.signIn("a password for owner@b.test")
		sp := ws + "/status-pages/" + id
		for _, a := range []action{
			{"list", "GET", ws + "/status-pages", nil, false, 0},
			{"editor", "GET", sp, nil, false, 0},
			{"preview", "GET", sp + "/preview", nil, false, 0},
			{"its own workspace's editor of the page", "GET", "/w/" + e.wsB.ID + "/status-pages/" + id, nil, false, 0},
			{"its own workspace's preview of the page", "GET", "/w/" + e.wsB.ID + "/status-pages/" + id + "/preview", nil, false, 0},
			{"move", "POST", sp + "/components/" + comps[0] + "/move", form("dir", "down"), false, 0},
			{"delete", "POST", sp + "/delete", form(), false, 0},
		} {
			if r := other.do(a.method, a.path, a.form); r.status != http.StatusNotFound || strings.Contains(r.body, "Page page-other") {
				t.Errorf("another workspace's owner: %s: %d %.300s", a.name, r.status, r.body)
			}
		}
		// Signed out, the preview is a way to the sign-in page, no more.
		if r := e.browser("nobody").get(sp + "/preview"); r.status != http.StatusSeeOther || strings.Contains(r.body, "Component A") {
			t.Errorf("signed out preview: %d %.300s", r.status, r.body)
		}
		if n != 4*15 {
			t.Errorf("%d actions judged", n)
		}
	})
}

// editorPage is the id in the editor's address a create redirected to.
func editorPage(t *testing.T, r answer) string {
	t.Helper()
	m := regexp.MustCompile(`/status-pages/(sp_[0-9A-Za-z]+)$`).FindStringSubmatch(r.header.Get("Location"))
	if r.status != http.StatusSeeOther || m == nil {
		t.Fatalf("create: %d to %q: %.600s", r.status, r.header.Get("Location"), r.body)
	}
	return m[1]
}

// inOrder reports whether the texts appear in body in this order.
func inOrder(body string, texts ...string) bool {
	at := -1
	for _, s := range texts {
		i := strings.Index(body, s)
		if i < 0 || i < at {
			return false
		}
		at = i
	}
	return true
}

// TestWebAppStatusPageReorder: an admin builds a page in the editor with
// plain forms — components added, moved up with the buttons, moved into
// another group — and readers of the public page, signed out, see it in
// that order, as the preview showed it.
func TestWebAppStatusPageReorder(t *testing.T) {
	forEachEngine(t, web.PublicOptions{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.wsA.ID
		admin := e.member("admin@a.test", monitor.RoleAdmin)
		alpha := e.monitor(e.keyA, "alpha-internal", "https://alpha.example.com/", nil)
		beta := e.monitor(e.keyA, "beta-internal", "https://beta.example.com/", nil)
		e.record(alpha, "", monitor.ResultUp)
		e.record(beta, "", monitor.ResultUp)
		id := editorPage(t, admin.post(ws+"/status-pages", form("title", "Shop status", "slug", "shop")))
		sp := ws + "/status-pages/" + id
		for _, c := range [][2]string{{alpha, "Alpha service"}, {beta, "Beta service"}} {
			if r := admin.post(sp+"/components", form("subject", "monitor:"+c[0], "c-name", c[1])); r.status != http.StatusSeeOther {
				t.Fatalf("add %s: %d %.600s", c[1], r.status, r.body)
			}
		}
		r := admin.get(sp)
		if r.status != 200 || !inOrder(r.body, "Alpha service", "Beta service") || !strings.Contains(r.body, "monitor alpha-internal") {
			t.Fatalf("the editor: %d %.1500s", r.status, r.body)
		}
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("the editor's policy: %s", csp)
		}
		beta1 := regexp.MustCompile(`data-component="(spc_[0-9A-Za-z]+)"[^>]*>\s*<span class="sp-name">Beta service`).FindStringSubmatch(r.body)
		if beta1 == nil {
			t.Fatalf("no component for Beta in %.2000s", r.body)
		}
		if r := admin.post(sp+"/components/"+beta1[1]+"/move", form("dir", "up")); r.status != http.StatusSeeOther ||
			r.header.Get("Location") != sp+"#components-h" {
			t.Fatalf("move up: %d %q", r.status, r.header.Get("Location"))
		}
		r = admin.get(sp)
		if !inOrder(r.body, "Beta service", "Alpha service") || !strings.Contains(r.body, "The status page is saved.") {
			t.Errorf("after moving Beta up, the editor: %.2000s", r.body)
		}
		pv := admin.get(sp + "/preview")
		if pv.status != 200 || !inOrder(pv.body, "Shop status", "Beta service", "Alpha service") || strings.Contains(pv.body, "alpha-internal") {
			t.Errorf("the preview: %d %.1500s", pv.status, pv.body)
		}
		if h := pv.header; !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'self'") || h.Get("X-Frame-Options") != "SAMEORIGIN" {
			t.Errorf("the preview's framing: %v", h)
		}
		// A second group, and Alpha moved down into it.
		if r := admin.post(sp+"/groups", form("g-name", "Europe")); r.status != http.StatusSeeOther {
			t.Fatalf("add group: %d %.600s", r.status, r.body)
		}
		alpha1 := regexp.MustCompile(`data-component="(spc_[0-9A-Za-z]+)"[^>]*>\s*<span class="sp-name">Alpha service`).FindStringSubmatch(admin.get(sp).body)
		if r := admin.post(sp+"/components/"+alpha1[1]+"/move", form("dir", "down")); r.status != http.StatusSeeOther {
			t.Fatalf("move down: %d %.600s", r.status, r.body)
		}
		got := e.api("GET", "/api/v1/status-pages/"+id, e.keyA, nil, 200)["groups"].([]any)
		if len(got) != 2 || got[1].(map[string]any)["name"] != "Europe" ||
			got[1].(map[string]any)["components"].([]any)[0].(map[string]any)["name"] != "Alpha service" {
			t.Errorf("stored groups: %v", got)
		}
		pub := e.get("/status/shop")
		if pub.status != 200 || !inOrder(string(pub.body), "Beta service", "Europe", "Alpha service") || contains(pub.body, "alpha-internal") {
			t.Errorf("the public page: %d %.2000s", pub.status, pub.body)
		}
		if h := pub.header; h.Get("X-Frame-Options") != "DENY" || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("the public page's headers changed: %v", h)
		}
		// The drag and drop's form: every component once, in order.
		if r := admin.post(sp+"/order", form("order", "0:"+alpha1[1], "order", "0:"+beta1[1])); r.status != http.StatusSeeOther {
			t.Fatalf("order: %d %.600s", r.status, r.body)
		}
		if r := admin.get(sp + "/preview"); !inOrder(r.body, "Alpha service", "Beta service") {
			t.Errorf("after the new order, the preview: %.1500s", r.body)
		}
		if r := admin.post(sp+"/order", form("order", "0:"+alpha1[1])); r.status != http.StatusUnprocessableEntity ||
			!strings.Contains(r.body, "does not name each component once") {
			t.Errorf("an order missing a component: %d", r.status)
		}
	})
}
