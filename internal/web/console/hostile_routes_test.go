package console_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/web/console"
	"github.com/tocsin/tocsin/internal/web/public"
)

// TestWebAppHostileRoutes walks the web app's route table and sends every
// route hostile ids in each of its path's parameters (NUL, invalid UTF-8,
// an overlong one, a wrong prefix, another workspace's id, nonsense), a
// query and a form with every field the pages name set to hostile bytes,
// and then every form the pages of real resources show, one field hostile
// at a time. No answer may be a 5xx, and the app must still serve the
// person after each route. Both engines.
func TestWebAppHostileRoutes(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			webHostileRoutes(t, newEnvWith(t, eng, public.Options{}, app.Config{RatePerMinute: 1_000_000, DefaultMaxStatusPages: 1000, DefaultMaxChannels: 1000, DefaultMaxMaintenanceWindows: 1000}))
		})
	}
}

func webHostileRoutes(t *testing.T, e *env) {
	{
		p := e.member("hostile@a.test", account.RoleOwner)
		h := &webHostile{e: e, p: p, password: "a password for hostile@a.test", fields: templateFields(t)}
		h.theirs = e.resources(e.KeyB, e.WsB.ID, e.actorB())
		routes := console.AppRoutes()
		if len(routes) < 70 {
			t.Fatalf("the route table lists only %d routes", len(routes))
		}
		for _, rt := range routes {
			h.route(t, rt)
		}
		h.forms(t)
		t.Logf("%d routes, %d forms, %d requests", len(routes), h.forms_, h.sent)
	}
}

// webHostile is the pass's state: the person, and what it has sent.
type webHostile struct {
	e        *env
	p        *person
	password string
	fields   []string  // every form field a template names
	theirs   resources // workspace B's
	ours     resources // workspace A's, for reading
	sent     int
	forms_   int
}

// resources are one workspace's real ids, by the route parameter or the
// resource segment that names them.
type resources map[string]string

// actorB is workspace B's owner.
func (e *env) actorB() app.Actor {
	return app.Actor{UserID: e.userID("owner@ws-b.test"), WorkspaceID: e.WsB.ID, Role: account.RoleOwner}
}

// resources makes one of everything in workspace ws with key: what a
// route's parameters name.
func (e *env) resources(key, ws string, owner app.Actor) resources {
	e.T.Helper()
	ctx := context.Background()
	r := resources{"ws": ws, "name": "app.css", "group": "0"}
	r["monitors"] = e.Monitor(key, "m", "http://127.0.0.1:1/", nil)
	r["heartbeats"] = e.API("POST", "/api/v1/heartbeats", key, map[string]any{"name": "h", "schedule": map[string]any{"periodSeconds": 3600}}, 201)["id"].(string)
	r["incidents"] = e.API("POST", "/api/v1/incidents", key, map[string]any{"title": "t", "message": "m"}, 201)["id"].(string)
	r["channels"] = e.API("POST", "/api/v1/notification-channels", key, map[string]any{"name": "c", "kind": "webhook",
		"config": map[string]any{"url": "http://127.0.0.1:1/hook"}}, 201)["id"].(string)
	r["deliveries"] = e.API("POST", "/api/v1/notification-channels/"+r["channels"]+"/test", key, nil, 202)["id"].(string)
	start := e.Clock.Now().Add(time.Hour).UTC()
	r["maintenance"] = e.API("POST", "/api/v1/maintenance-windows", key, map[string]any{"name": "w", "monitorIds": []string{r["monitors"]},
		"startsAt": start.Format(time.RFC3339), "endsAt": start.Add(time.Hour).Format(time.RFC3339)}, 201)["id"].(string)
	sp := e.API("POST", "/api/v1/status-pages", key, map[string]any{"slug": strings.ToLower(strings.ReplaceAll(r["monitors"], "_", "-")), "title": "p",
		"groups": []any{map[string]any{"name": "g", "components": []any{map[string]any{"monitorId": r["monitors"], "name": "c"}}}}}, 201)
	r["status-pages"] = sp["id"].(string)
	r["component"] = sp["groups"].([]any)[0].(map[string]any)["components"].([]any)[0].(map[string]any)["id"].(string)
	k, err := e.App.CreateKey(ctx, owner, app.KeyRequest{Name: "k", WorkspaceID: ws, Scopes: []account.Scope{account.ScopeMonitorsRead}})
	if err != nil {
		e.T.Fatal(err)
	}
	r["key"] = k.Key.ID
	inv, err := e.App.Invite(ctx, owner, "viewer")
	if err != nil {
		e.T.Fatal(err)
	}
	r["invite"], r["token"] = inv.Invite.ID, inv.Token
	email := strings.ToLower(r["monitors"]) + "@member.test"
	u, err := e.App.CreateUser(ctx, app.UserRequest{Email: email, Password: "a member's password", Workspace: ws, Role: account.RoleViewer})
	if err != nil {
		e.T.Fatal(err)
	}
	r["user"] = u.User.ID
	return r
}

// param is the real value of a path's parameter name in pattern: {id}
// takes the kind of the segment before it.
func (r resources) param(segs []string, i int) string {
	name := strings.Trim(segs[i], "{}")
	if name == "id" {
		return r[segs[i-1]]
	}
	return r[name]
}

var paramRE = regexp.MustCompile(`^\{[a-z]+\}$`)

// hostileIDs are what a path parameter gets instead of an id, escaped as
// they go on the wire, besides the other workspace's id and an id of
// another kind.
func hostileIDs() []string {
	return []string{"%00", "%ff", "%C0%AF", "mon_%00", "x%00y", strings.Repeat("A", 4000), "mon_" + strings.Repeat("Z", 26),
		"mon_7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "-1", "99999999999999999999999", "..", "%2e%2e%2fadmin", "%E2%80%AE", "'%3B--"}
}

// hostileValues are what a form field or a query parameter gets.
var hostileValues = []string{"nul\x00byte", "bad \xff\xfe utf-8", strings.Repeat("long ", 2000), "-99999999999999999999", "<script>x</script>"}

// route sends one route its hostile variants.
func (h *webHostile) route(t *testing.T, pattern string) {
	t.Helper()
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "GET", pattern
	}
	path = strings.TrimSuffix(path, "{$}")
	if path == "/" && pattern == "/" { // the catch-all
		path = "/no/such/page"
	}
	ours := h.ours
	segs := strings.Split(path, "/")
	build := func(ours resources, bad int, value string) string {
		out := make([]string, len(segs))
		for i, s := range segs {
			switch {
			case i == bad:
				out[i] = value
			case paramRE.MatchString(s):
				out[i] = url.PathEscape(ours.param(segs, i))
			default:
				out[i] = s
			}
		}
		return strings.Join(out, "/")
	}
	fresh := func() resources {
		if ours == nil {
			ours = h.e.resources(h.e.KeyA, h.e.WsA.ID, h.ownerA())
		}
		return ours
	}
	if h.ours == nil {
		h.ours = fresh()
	}
	send := func(path string, form url.Values) {
		t.Helper()
		status, body := h.send(t, method, path, form)
		if status >= 500 {
			t.Errorf("%s %s (form %.200q): %d: %.300s", method, path, form.Encode(), status, body)
		}
	}
	emptyForm := func() url.Values {
		if method == "POST" {
			return url.Values{}
		}
		return nil
	}
	for i, s := range segs {
		if !paramRE.MatchString(s) {
			continue
		}
		values := hostileIDs()
		// another workspace's id of the same kind, and one of another kind
		values = append(values, url.PathEscape(h.theirs.param(segs, i)), url.PathEscape(fresh()["incidents"]),
			url.PathEscape(fresh()["monitors"]))
		for _, v := range values {
			send(build(fresh(), i, v), emptyForm())
		}
	}
	// Every field a page names, hostile, in the query or the form, on the
	// route with real ids (a fresh set for a form, which may delete them).
	if method == "POST" && strings.Contains(path, "{") {
		ours = nil
	}
	real := build(fresh(), -1, "")
	for _, v := range hostileValues {
		all := url.Values{}
		for _, f := range h.fields {
			all.Set(f, v)
		}
		if method == "POST" {
			send(real, all)
		} else {
			send(real+"?"+all.Encode(), nil)
		}
	}
	h.control(t, pattern)
}

// send is one request of the person's; a live stream that opens is
// closed at once, its status being all there is to judge.
func (h *webHostile) send(t *testing.T, method, path string, form url.Values) (int, string) {
	t.Helper()
	h.sent++
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, h.e.Srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	res, err := h.p.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return res.StatusCode, ""
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// ownerA is the person's actor in workspace A.
func (h *webHostile) ownerA() app.Actor {
	return app.Actor{UserID: h.e.userID("hostile@a.test"), WorkspaceID: h.e.WsA.ID, Role: account.RoleOwner}
}

// control checks the app still serves the person, signing in again when
// the route signed them out.
func (h *webHostile) control(t *testing.T, after string) {
	t.Helper()
	r := h.p.get("/w/" + h.e.WsA.ID + "/monitors")
	if r.status == http.StatusSeeOther && strings.HasPrefix(r.header.Get("Location"), "/sign-in") {
		h.p.signIn(h.password)
		r = h.p.get("/w/" + h.e.WsA.ID + "/monitors")
	}
	if r.status != http.StatusOK {
		t.Fatalf("after %s, the monitor list: %d: %.300s", after, r.status, r.body)
	}
}

// forms fetches every page of real resources, and sends each form on it
// as a browser would, one field at a time hostile.
func (h *webHostile) forms(t *testing.T) {
	ours := h.e.resources(h.e.KeyA, h.e.WsA.ID, h.ownerA())
	ws := "/w/" + h.e.WsA.ID
	pages := []string{"/account", "/account/password", "/account/two-factor/setup", "/workspaces", ws + "/", ws + "/keys", ws + "/members",
		ws + "/monitors", ws + "/monitors/new", ws + "/monitors/" + ours["monitors"], ws + "/monitors/" + ours["monitors"] + "/edit",
		ws + "/channels", ws + "/channels/new", ws + "/channels/" + ours["channels"],
		ws + "/heartbeats", ws + "/heartbeats/new", ws + "/heartbeats/" + ours["heartbeats"], ws + "/heartbeats/" + ours["heartbeats"] + "/edit",
		ws + "/incidents", ws + "/incidents/" + ours["incidents"], ws + "/maintenance", ws + "/maintenance/" + ours["maintenance"] + "/edit",
		ws + "/status-pages", ws + "/status-pages/" + ours["status-pages"], "/invite/" + ours["token"]}
	seen := map[string]bool{}
	type found struct {
		action string
		fields url.Values
	}
	var all []found
	for _, pg := range pages {
		r := h.p.get(pg)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d: %.300s", pg, r.status, r.body)
		}
		for _, f := range pageForms(t, r.body) {
			if !strings.HasPrefix(f.action, "/") {
				f.action = pg
			}
			key := f.action + " " + strings.Join(sortedKeys(f.fields), ",")
			if seen[key] || len(f.fields) == 0 || sessionEnding(f.action) {
				continue
			}
			seen[key] = true
			all = append(all, found{f.action, f.fields})
		}
	}
	if len(all) < 25 {
		t.Fatalf("the pages show only %d forms", len(all))
	}
	for _, f := range all {
		h.forms_++
		for name := range f.fields {
			for _, v := range hostileValues {
				form := url.Values{}
				for k, vs := range f.fields {
					form[k] = slices.Clone(vs)
				}
				form.Set(name, v)
				status, body := h.send(t, "POST", f.action, form)
				if status >= 500 {
					t.Errorf("POST %s with %s=%.40q: %d: %.300s", f.action, name, v, status, body)
				}
			}
		}
		h.control(t, f.action)
	}
}

func sortedKeys(v url.Values) []string {
	var out []string
	for k := range v {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sessionEnding are the forms that end the person's session; the route
// pass covers them.
func sessionEnding(action string) bool {
	return action == "/sign-out" || action == "/account/sign-out-everywhere" || strings.HasSuffix(action, "/remove") && strings.Contains(action, "/members/")
}

// pageForm is a POST form a page shows: where it goes and what a browser
// sends by default.
type pageForm struct {
	action string
	fields url.Values
}

// pageForms reads the POST forms of an HTML page.
func pageForms(t *testing.T, body string) []pageForm {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	attr := func(n *html.Node, name string) string {
		for _, a := range n.Attr {
			if a.Key == name {
				return a.Val
			}
		}
		return ""
	}
	var out []pageForm
	var walk func(n *html.Node, f *pageForm)
	walk = func(n *html.Node, f *pageForm) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "form":
				if strings.EqualFold(attr(n, "method"), "post") {
					out = append(out, pageForm{action: attr(n, "action"), fields: url.Values{}})
					f = &out[len(out)-1]
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						walk(c, f)
					}
					out[len(out)-1] = *f
					return
				}
			case "input", "textarea", "select", "button":
				if name := attr(n, "name"); f != nil && name != "" {
					typ := attr(n, "type")
					switch {
					case (typ == "checkbox" || typ == "radio") && !hasAttr(n, "checked"):
					case typ == "file":
					default:
						f.fields.Add(name, attr(n, "value"))
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, f)
		}
	}
	walk(doc, nil)
	return out
}

func hasAttr(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}

var fieldRE = regexp.MustCompile(`name="([A-Za-z0-9_.\-\[\]]+)"`)

// templateFields are the form fields the web app's templates name.
func templateFields(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("templates/*.html")
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates: %v", err)
	}
	set := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fieldRE.FindAllStringSubmatch(string(b), -1) {
			set[m[1]] = true
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	if len(out) < 30 {
		t.Fatalf("the templates name only %d fields", len(out))
	}
	return out
}
