package console_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web/public"
	"github.com/tocsin/tocsin/internal/web/webtest"
)

// apiPage makes a status page in workspace A over the API, showing the
// monitors (named by their ids) in one group "Core", and returns its id
// and its components' ids.
func (e *env) apiPage(slug string, monitors ...string) (string, []string) {
	e.T.Helper()
	var comps []any
	for i, m := range monitors {
		comps = append(comps, map[string]any{"monitorId": m, "name": "Component " + string(rune('A'+i))})
	}
	p := e.API("POST", "/api/v1/status-pages", e.KeyA, map[string]any{"slug": slug, "title": "Page " + slug,
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
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.WsA.ID
		m1 := e.Monitor(e.KeyA, "First", "https://one.example.com/", nil)
		m2 := e.Monitor(e.KeyA, "Second", "https://two.example.com/", nil)
		n := 0
		for _, role := range account.Roles {
			p := e.member(string(role)+"@a.test", role)
			write := role.Grants(account.ScopeStatusPagesWrite)
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
				// A form without a file: the upload is tried, and refused at
				// its field.
				{"upload a logo", "POST", sp + "/logo", form("logo", "x"), write, 422},
				{"remove the logo", "POST", sp + "/logo/remove", form(), write, 303},
				{"delete the page", "POST", sp + "/delete", form(), write, 303},
			})
			if !write {
				if got := e.API("GET", "/api/v1/status-pages/"+id, e.KeyA, nil, 200); got["title"] != "Page page-"+string(role) {
					t.Errorf("%s changed the page: %v", role, got["title"])
				}
			}
		}
		// A member of another workspace: nothing is there.
		id, comps := e.apiPage("page-other", m1)
		if _, err := e.App.CreateUser(context.Background(), app.UserRequest{Email: "owner@b.test", Password: "a password for owner@b.test",
			Workspace: e.WsB.ID, Role: account.RoleOwner}); err != nil {
			t.Fatal(err)
		}
		other := e.browser("owner@b.test")
		other.signIn("a password for owner@b.test")
		sp := ws + "/status-pages/" + id
		for _, a := range []action{
			{"list", "GET", ws + "/status-pages", nil, false, 0},
			{"editor", "GET", sp, nil, false, 0},
			{"preview", "GET", sp + "/preview", nil, false, 0},
			{"its own workspace's editor of the page", "GET", "/w/" + e.WsB.ID + "/status-pages/" + id, nil, false, 0},
			{"its own workspace's preview of the page", "GET", "/w/" + e.WsB.ID + "/status-pages/" + id + "/preview", nil, false, 0},
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
		if n != 4*17 {
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
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.WsA.ID
		admin := e.member("admin@a.test", account.RoleAdmin)
		alpha := e.Monitor(e.KeyA, "alpha-internal", "https://alpha.example.com/", nil)
		beta := e.Monitor(e.KeyA, "beta-internal", "https://beta.example.com/", nil)
		e.Record(alpha, "", monitor.ResultUp)
		e.Record(beta, "", monitor.ResultUp)
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
		got := e.API("GET", "/api/v1/status-pages/"+id, e.KeyA, nil, 200)["groups"].([]any)
		if len(got) != 2 || got[1].(map[string]any)["name"] != "Europe" ||
			got[1].(map[string]any)["components"].([]any)[0].(map[string]any)["name"] != "Alpha service" {
			t.Errorf("stored groups: %v", got)
		}
		pub := e.Get("/status/shop")
		if pub.Status != 200 || !inOrder(string(pub.Body), "Beta service", "Europe", "Alpha service") || webtest.Contains(pub.Body, "alpha-internal") {
			t.Errorf("the public page: %d %.2000s", pub.Status, pub.Body)
		}
		if h := pub.Header; h.Get("X-Frame-Options") != "DENY" || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
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

// TestWebAppStatusPageHostileInput: what a form sends that no page may
// take — bytes that are not UTF-8, NUL, a slug or domain that is not one,
// a subject of another workspace, paths that name nothing — gets a
// message at its field or not found, never a server error; and the page's
// password is never shown.
func TestWebAppStatusPageHostileInput(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.WsA.ID
		owner := e.member("owner@a.test", account.RoleOwner)
		mine := e.Monitor(e.KeyA, "Mine", "https://mine.example.com/", nil)
		theirs := e.Monitor(e.KeyB, "Theirs", "https://theirs.example.com/", nil)
		id := editorPage(t, owner.post(ws+"/status-pages", form("title", "Acme", "slug", "acme")))
		sp := ws + "/status-pages/" + id
		for _, c := range []struct {
			path string
			form []string
			want []string // field id, message
		}{
			{ws + "/status-pages", []string{"title", "A\xff", "slug", "ok-slug"}, []string{"err-title", "Must be valid UTF-8 text without NUL."}},
			{ws + "/status-pages", []string{"title", "A", "slug", "a\x00b"}, []string{"err-slug", "Must be valid UTF-8 text without NUL."}},
			{ws + "/status-pages", []string{"title", "A", "slug", "Bad Slug!"}, []string{"err-slug", "must be 2 to 63 lower-case letters"}},
			{ws + "/status-pages", []string{"title", "A", "slug", "acme"}, []string{"err-slug", "is taken; choose another"}},
			{ws + "/status-pages", []string{"title", " ", "slug", "admin"}, []string{"err-title", "must not be blank"}},
			{sp, []string{"title", "Acme", "slug", "acme", "domain", "not a domain"}, []string{"err-domain", "must be a host name"}},
			{sp, []string{"title", "Acme", "slug", "acme", "domain", "127.0.0.1"}, []string{"err-domain", "not an IP address"}},
			{sp, []string{"title", "Acme", "slug", "acme", "domain", "st\xc3atus.example.com"}, []string{"err-domain", "Must be valid UTF-8"}},
			{sp, []string{"title", "Acme", "slug", "acme", "visibility", "password"}, []string{"err-password", "is required for a page whose visibility is password"}},
			{sp, []string{"title", "Acme", "slug", "acme", "password", "pass\x00word!"}, []string{"err-password", "Must be valid UTF-8"}},
			{sp, []string{"title", "Acme", "slug", "acme", "visibility", "secret"}, []string{"err-visibility", "must be public or password"}},
			{sp, []string{"title", "Acme", "slug", "acme", "description", strings.Repeat("x", 1001)}, []string{"err-description", "at most 1000"}},
			{sp + "/components", []string{"subject", "monitor:nope", "c-name", "X"}, []string{"err-c-subject", "Choose a monitor or a heartbeat"}},
			{sp + "/components", []string{"subject", "monitor:" + theirs, "c-name", "X"}, []string{"err-c-subject", "no such monitor in this workspace"}},
			{sp + "/components", []string{"subject", "monitor:" + mine, "c-name", " "}, []string{"err-c-name", "must not be blank"}},
			{sp + "/components", []string{"subject", "monitor:" + mine, "c-name", "\xfe"}, []string{"err-c-name", "Must be valid UTF-8"}},
			{sp + "/groups", []string{"g-name", "a\x00"}, []string{"err-g-name", "Must be valid UTF-8"}},
			{sp + "/groups", []string{"g-name", strings.Repeat("g", 101)}, []string{"err-g-name", "at most 100"}},
			{sp + "/unpublish", nil, []string{"err-password", "is required for a page whose visibility is password"}},
		} {
			r := owner.post(c.path, form(c.form...))
			if r.status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="`+c.want[0]+`">[^<]*`+regexp.QuoteMeta(c.want[1])).MatchString(r.body) {
				t.Errorf("%s %q: %d, want 422 with %s %q: %.3000s", c.path, c.form, r.status, c.want[0], c.want[1], r.body)
			}
		}
		if r := owner.post(sp+"/components", form("subject", "monitor:"+mine, "c-name", "Mine")); r.status != http.StatusSeeOther {
			t.Fatalf("add: %d %.600s", r.status, r.body)
		}
		for _, c := range []struct {
			path   string
			form   []string
			status int
		}{
			{ws + "/status-pages/nope", nil, 404},
			{ws + "/status-pages/sp_01JDQ7A0000000000000000000", nil, 404},
			{sp + "/components/spc_nope/move", []string{"dir", "up"}, 404},
			{sp + "/components/spc_nope/remove", nil, 404},
			{sp + "/groups/9/move", []string{"dir", "up"}, 404},
			{sp + "/groups/-1/remove", nil, 404},
			{sp + "/groups/x/remove", nil, 404},
			{sp + "/groups/0/move", []string{"dir", "sideways"}, 422},
			{sp + "/order", []string{"order", "0:\xff"}, 422},
			{sp + "/order", []string{"order", "7:x"}, 422},
		} {
			var r answer
			if c.form == nil && !strings.Contains(c.path, "/remove") {
				r = owner.get(c.path)
			} else {
				r = owner.post(c.path, form(c.form...))
			}
			if r.status != c.status {
				t.Errorf("%s %q: %d, want %d: %.400s", c.path, c.form, r.status, c.status, r.body)
			}
		}
		const secret = "a page password of ours"
		if r := owner.post(sp, form("title", "Acme", "slug", "acme", "visibility", "password", "password", secret)); r.status != http.StatusSeeOther {
			t.Fatalf("protect: %d %.600s", r.status, r.body)
		}
		r := owner.get(sp)
		if strings.Contains(r.body, secret) || strings.Contains(r.body, "argon2") || !strings.Contains(r.body, "A password is set; it is never shown.") {
			t.Errorf("the editor shows the password, or not that one is set")
		}
		if r := e.Get("/status/acme"); r.Status != http.StatusUnauthorized || webtest.Contains(r.Body, "Mine") {
			t.Errorf("the protected public page: %d", r.Status)
		}
		if r := owner.get(sp + "/preview"); r.status != 200 || !strings.Contains(r.body, "Mine") {
			t.Errorf("the preview of a protected page: %d %.600s", r.status, r.body)
		}
	})
}

// upload POSTs a multipart form with the file as its field "logo".
func (p *person) upload(path string, file []byte) answer {
	p.t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, err := mw.CreateFormFile("logo", "logo.png")
	if err != nil {
		p.t.Fatal(err)
	}
	_, _ = fw.Write(file)
	_ = mw.Close()
	req, err := http.NewRequest("POST", p.e.Srv.URL+path, &b)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := p.c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: string(body)}
}

// TestWebAppStatusPageLogo: an owner uploads a logo in the editor and the
// public page serves it; what is not an image, or too big, gets a message
// at the field; a viewer may not upload or remove one.
func TestWebAppStatusPageLogo(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.WsA.ID
		owner := e.member("owner@a.test", account.RoleOwner)
		viewer := e.member("viewer@a.test", account.RoleViewer)
		id := editorPage(t, owner.post(ws+"/status-pages", form("title", "Acme", "slug", "acme")))
		sp := ws + "/status-pages/" + id
		png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 100)...)
		if r := viewer.upload(sp+"/logo", png); r.status != http.StatusForbidden {
			t.Errorf("a viewer uploads: %d", r.status)
		}
		for _, c := range []struct {
			file []byte
			want string
		}{
			{[]byte("<svg onload=alert(1)>"), "the logo must be a PNG, JPEG, WebP or GIF image"},
			{nil, "the logo is empty"},
			{append(png, bytes.Repeat([]byte{1}, 128<<10)...), "the logo must be at most 128 KiB"},
			{append(png, bytes.Repeat([]byte{1}, 512<<10)...), "The logo must be at most 128 KiB."}, // beyond the form's bound
		} {
			r := owner.upload(sp+"/logo", c.file)
			if r.status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="err-logo">[^<]*`+regexp.QuoteMeta(c.want)).MatchString(r.body) {
				t.Errorf("upload of %d bytes: %d, want 422 with %q: %.1500s", len(c.file), r.status, c.want, r.body[max(strings.Index(r.body, `id="logo-h"`), 0):])
			}
		}
		if r := owner.upload(sp+"/logo", png); r.status != http.StatusSeeOther {
			t.Fatalf("upload: %d %.600s", r.status, r.body)
		}
		r := owner.get(sp)
		src := regexp.MustCompile(`<img src="(/status/acme/logo\?v=[0-9a-f]+)"`).FindStringSubmatch(r.body)
		if src == nil {
			t.Fatalf("the editor shows no logo: %.3000s", r.body)
		}
		if got := e.Get(src[1]); got.Status != 200 || !bytes.Equal(got.Body, png) {
			t.Errorf("the public logo: %d, %d bytes", got.Status, len(got.Body))
		}
		if r := viewer.post(sp+"/logo/remove", form()); r.status != http.StatusForbidden {
			t.Errorf("a viewer removes the logo: %d", r.status)
		}
		if r := owner.post(sp+"/logo/remove", form()); r.status != http.StatusSeeOther {
			t.Fatalf("remove: %d", r.status)
		}
		if r := owner.get(sp); strings.Contains(r.body, "/logo?v=") || !strings.Contains(r.body, "No logo") {
			t.Error("the logo is still shown")
		}
	})
}
