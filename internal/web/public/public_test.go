package public_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/wait"
	"github.com/tocsin/tocsin/internal/web/public"
)

// page creates a status page in the workspace of key from body.
func (e *env) page(key string, body map[string]any) map[string]any {
	e.t.Helper()
	return e.api("POST", "/api/v1/status-pages", key, body, 201)
}

func component(subject, id, name, description string) map[string]any {
	c := map[string]any{subject: id, "name": name}
	if description != "" {
		c["description"] = description
	}
	return c
}

// componentIDs are the ids the API gave a page's components, by name.
func componentIDs(page map[string]any) map[string]string {
	out := map[string]string{}
	for _, g := range page["groups"].([]any) {
		for _, c := range g.(map[string]any)["components"].([]any) {
			c := c.(map[string]any)
			out[c["name"].(string)] = c["id"].(string)
		}
	}
	return out
}

// TestPublicPage: a page made through the API is served at /status/{slug}
// with its components in readers' words, and its summary, feed and badges
// beside it, with the security and cache headers of a public page.
func TestPublicPage(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		api := e.monitor(e.keyA, "api-prod", "http://127.0.0.1:9/health", nil)
		web := e.monitor(e.keyA, "web-prod", "http://127.0.0.1:9/", nil)
		fresh := e.monitor(e.keyA, "fresh", "http://127.0.0.1:9/new", nil)
		e.record(api, "refused", monitor.ResultUp, monitor.ResultUp)
		e.record(web, "refused", monitor.ResultDown, monitor.ResultDown, monitor.ResultDown)
		p := e.page(e.keyA, map[string]any{"slug": "acme", "title": "Acme status", "description": "How Acme is doing.",
			"groups": []any{
				map[string]any{"name": "Core", "components": []any{component("monitorId", api, "Public API", "The REST API."), component("monitorId", web, "Website", "")}},
				map[string]any{"name": "New", "components": []any{component("monitorId", fresh, "Reports", "")}},
			}})
		ids := componentIDs(p)

		r := e.get("/status/acme")
		if r.status != 200 {
			t.Fatalf("page: %d %s", r.status, r.body)
		}
		for _, want := range []string{"Acme status", "How Acme is doing.", "Public API", "The REST API.", "Website", "Reports", "Core"} {
			if !contains(r.body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		for h, want := range map[string]string{"Content-Type": "text/html; charset=utf-8", "X-Content-Type-Options": "nosniff",
			"Referrer-Policy": "no-referrer", "Cache-Control": "public, max-age=5"} {
			if got := r.header.Get(h); got != want {
				t.Errorf("%s: %q, want %q", h, got, want)
			}
		}
		csp := r.header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "style-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || contains(r.body, "<script") || contains(r.body, "style=") {
			t.Errorf("page needs inline script or style: CSP %q", csp)
		}
		if r.header.Get("X-RateLimit-Limit") != "" {
			t.Error("a public page answered with the API's rate-limit headers")
		}
		etag := r.header.Get("ETag")
		if etag == "" {
			t.Fatal("no ETag")
		}
		if again := e.get("/status/acme", "If-None-Match", etag); again.status != http.StatusNotModified {
			t.Errorf("If-None-Match: %d, want 304", again.status)
		}

		// summary.json: Statuspage's shape, our words for no data.
		s := e.get("/status/acme/summary.json")
		if s.status != 200 || s.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("summary: %d %v", s.status, s.header)
		}
		var sum struct {
			Page struct {
				Name string `json:"name"`
				URL  string `json:"url"`
			} `json:"page"`
			Status struct {
				Indicator string `json:"indicator"`
			} `json:"status"`
			Components []struct {
				ID, Name, Status string
				Group            bool `json:"group"`
			} `json:"components"`
		}
		if err := json.Unmarshal(s.body, &sum); err != nil {
			t.Fatalf("summary: %v: %s", err, s.body)
		}
		if sum.Page.Name != "Acme status" || !strings.HasSuffix(sum.Page.URL, "/status/acme") {
			t.Errorf("summary page: %+v", sum.Page)
		}
		statuses := map[string]string{}
		for _, c := range sum.Components {
			if !c.Group {
				statuses[c.Name] = c.Status
			}
		}
		if statuses["Public API"] != "operational" || statuses["Website"] != "major_outage" ||
			statuses["Reports"] == "operational" || statuses["Reports"] == "" {
			t.Errorf("summary statuses: %v", statuses)
		}

		// The feed is Atom.
		f := e.get("/status/acme/history.atom")
		var feed struct {
			XMLName xml.Name
			Title   string `xml:"title"`
		}
		if f.status != 200 || xml.Unmarshal(f.body, &feed) != nil || feed.XMLName.Local != "feed" || feed.Title == "" {
			t.Errorf("feed: %d %s", f.status, f.body)
		}

		// Badges, by component id.
		b := e.get("/status/acme/badge/" + ids["Website"] + ".svg")
		if b.status != 200 || b.header.Get("Content-Type") != "image/svg+xml" || !contains(b.body, "<svg") {
			t.Fatalf("badge: %d %s", b.status, b.body)
		}
		if u := e.get("/status/acme/badge/" + ids["Public API"] + ".svg?uptime=30d"); u.status != 200 || !contains(u.body, "%") {
			t.Errorf("uptime badge: %d %s", u.status, u.body)
		}
		for _, path := range []string{"/status/acme/badge/spc_nope.svg", "/status/acme/badge/" + ids["Website"] + ".svg?uptime=1y",
			"/status/nope", "/status/acme/nope", "/status/ACME", "/status/acme/history?month=1999-13"} {
			if r := e.get(path); r.status != http.StatusNotFound {
				t.Errorf("%s: %d, want 404", path, r.status)
			}
		}
		if h := e.get("/status/acme/history"); h.status != 200 {
			t.Errorf("history: %d", h.status)
		}
		req, _ := http.NewRequest("DELETE", e.srv.URL+"/status/acme", nil)
		if r := e.do(req); r.status != http.StatusMethodNotAllowed {
			t.Errorf("DELETE: %d", r.status)
		}
		// Another workspace's key cannot see or change the page.
		e.api("GET", "/api/v1/status-pages/"+p["id"].(string), e.keyB, nil, 404)
	})
}

// TestWholeAndPartialAnswers: a page is sent whole in one answer with its
// length, and ranges, HEAD and preconditions are answered as HTTP says.
func TestWholeAndPartialAnswers(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		api := e.monitor(e.keyA, "api-prod", "http://127.0.0.1:9/health", nil)
		e.page(e.keyA, map[string]any{"slug": "acme", "title": "Acme status",
			"groups": []any{map[string]any{"name": "Core", "components": []any{component("monitorId", api, "Public API", "")}}}})
		whole := e.get("/status/acme")
		n := strconv.Itoa(len(whole.body))
		if whole.status != 200 || len(whole.body) < 100 || whole.header.Get("Content-Length") != n ||
			whole.header.Get("Accept-Ranges") != "bytes" || whole.header.Get("ETag") == "" {
			t.Fatalf("whole: %d, %d bytes, %v", whole.status, len(whole.body), whole.header)
		}
		part := e.get("/status/acme", "Range", "bytes=0-9")
		if part.status != http.StatusPartialContent || string(part.body) != string(whole.body[:10]) ||
			part.header.Get("Content-Range") != "bytes 0-9/"+n {
			t.Errorf("range: %d %q %v", part.status, part.body, part.header)
		}
		req, err := http.NewRequest(http.MethodHead, e.srv.URL+"/status/acme", nil)
		if err != nil {
			t.Fatal(err)
		}
		head := e.do(req)
		if head.status != 200 || len(head.body) != 0 || head.header.Get("Content-Length") != n {
			t.Errorf("HEAD: %d, %d bytes, Content-Length %q, want %s", head.status, len(head.body), head.header.Get("Content-Length"), n)
		}
		if other := e.get("/status/acme", "If-None-Match", `"other"`); other.status != 200 || string(other.body) != string(whole.body) {
			t.Errorf("If-None-Match of another version: %d, %d bytes", other.status, len(other.body))
		}
		if same := e.get("/status/acme", "If-None-Match", whole.header.Get("ETag")); same.status != http.StatusNotModified || len(same.body) != 0 {
			t.Errorf("If-None-Match of this version: %d", same.status)
		}
		if failed := e.get("/status/acme", "If-Match", `"other"`); failed.status != http.StatusPreconditionFailed {
			t.Errorf("If-Match of another version: %d, want 412", failed.status)
		}
	})
}

// TestPageFollowsStateChanges: a page left unread for longer than the
// bound after a state change shows the new state to its very next reader,
// and so do its summary and badge; a page read again within the bound
// with nothing changed is served from the cache (its Age says how long
// ago it was known current).
func TestPageFollowsStateChanges(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		m := e.monitor(e.keyA, "api", "http://127.0.0.1:9/", nil)
		e.record(m, "x", monitor.ResultUp)
		created := e.page(e.keyA, map[string]any{"slug": "flips", "title": "Flips",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})
		status := func() string {
			var sum struct{ Components []struct{ Status string } }
			if err := json.Unmarshal(e.get("/status/flips/summary.json").body, &sum); err != nil || len(sum.Components) != 1 {
				t.Fatalf("summary: %v %+v", err, sum)
			}
			return sum.Components[0].Status
		}
		if got := status(); got != "operational" {
			t.Fatalf("before: %s", got)
		}
		page := e.get("/status/flips")
		if page.status != 200 || contains(page.body, "Major outage") {
			t.Fatalf("page before: %d", page.status)
		}
		badge := "/status/flips/badge/" + componentIDs(created)["API"] + ".svg"
		if b := e.get(badge); b.status != 200 || !contains(b.body, ">operational<") {
			t.Fatalf("badge before: %d %s", b.status, b.body)
		}
		e.record(m, "x", monitor.ResultDown, monitor.ResultDown) // moves the clock a minute on
		if got := status(); got != "major_outage" {
			t.Errorf("the first read after a quiet spell: %s, want major_outage", got)
		}
		after := e.get("/status/flips")
		if after.status != 200 || !contains(after.body, "Major outage") || after.header.Get("Age") != "0" {
			t.Errorf("page after: %d, Age %q", after.status, after.header.Get("Age"))
		}
		if b := e.get(badge); b.status != 200 || !contains(b.body, ">outage<") {
			t.Errorf("badge after: %d %s", b.status, b.body)
		}
		// Within the bound and with nothing changed, the same render (its
		// check, started by this read, may or may not have ended first).
		e.clock.Advance(3 * time.Second)
		later := e.get("/status/flips")
		if age := later.header.Get("Age"); later.status != 200 || later.header.Get("ETag") != after.header.Get("ETag") || (age != "3" && age != "0") {
			t.Errorf("a read 3 s later: %d, Age %q, ETag %s then %s", later.status, age, after.header.Get("ETag"), later.header.Get("ETag"))
		}
	})
}

// TestPageFollowsConfigChanges: a change made through this process
// (components added) shows on the very next request; one made by another
// node, which this process cannot hear of, shows on the first request
// once the bound has passed.
func TestPageFollowsConfigChanges(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		api := e.monitor(e.keyA, "api", "http://127.0.0.1:9/", nil)
		queue := e.monitor(e.keyA, "queue", "http://127.0.0.1:9/q", nil)
		e.record(api, "x", monitor.ResultUp)
		e.record(queue, "x", monitor.ResultDown, monitor.ResultDown)
		p := e.page(e.keyA, map[string]any{"slug": "grows", "title": "Grows",
			"groups": []any{map[string]any{"components": []any{component("monitorId", api, "Public API", "")}}}})
		if r := e.get("/status/grows"); r.status != 200 || !contains(r.body, "Public API") || contains(r.body, "Job queue") {
			t.Fatalf("before: %d", r.status)
		}
		e.api("PATCH", "/api/v1/status-pages/"+p["id"].(string), e.keyA, map[string]any{"groups": []any{
			map[string]any{"components": []any{component("monitorId", api, "Public API", ""), component("monitorId", queue, "Job queue", "")}}}}, 200)
		if r := e.get("/status/grows"); r.status != 200 || !contains(r.body, "Job queue") || !contains(r.body, "Partial outage") {
			t.Errorf("the next request after components were added: %d", r.status)
		}
		// Another node renames the page behind this one's back.
		e.exec(`UPDATE status_pages SET title = 'Grown', updated_at = updated_at + 1 WHERE slug = 'grows'`)
		e.clock.Advance(6 * time.Second)
		if r := e.get("/status/grows"); r.status != 200 || !contains(r.body, "Grown") {
			t.Errorf("the first request past the bound after another node's change: %d", r.status)
		}
	})
}

// TestPasswordPage: a protected page shows nothing but its password form
// until the reader signs in; the session cookie is scoped to the page and
// ends when the password changes; guesses are rate-limited.
func TestPasswordPage(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		m := e.monitor(e.keyA, "db", "http://127.0.0.1:9/", nil)
		e.record(m, "x", monitor.ResultUp)
		p := e.page(e.keyA, map[string]any{"slug": "inner", "title": "Inner status", "visibility": "password", "password": "correct horse",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "Ledger", "Private ledger")}}}})
		if _, set := p["password"]; set || p["passwordSet"] != true {
			t.Fatalf("password in response: %v", p)
		}
		r := e.get("/status/inner")
		if r.status != http.StatusUnauthorized || !contains(r.body, "Inner status") || contains(r.body, "Ledger") {
			t.Fatalf("protected page: %d %s", r.status, r.body)
		}
		for _, path := range []string{"/status/inner/summary.json", "/status/inner/history.atom", "/status/inner/history"} {
			if r := e.get(path); r.status != http.StatusUnauthorized || contains(r.body, "Ledger") {
				t.Errorf("%s: %d %s", path, r.status, r.body)
			}
		}
		signIn := func(password string) response {
			req, _ := http.NewRequest("POST", e.srv.URL+"/status/inner/password", strings.NewReader(url.Values{"password": {password}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return e.do(req)
		}
		if r := signIn("wrong horse"); r.status != http.StatusUnauthorized || len(r.header.Values("Set-Cookie")) != 0 {
			t.Fatalf("wrong password: %d %v", r.status, r.header)
		}
		r = signIn("correct horse")
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/status/inner/" {
			t.Fatalf("sign in: %d %v", r.status, r.header)
		}
		cookie := r.header.Get("Set-Cookie")
		for _, want := range []string{"Path=/status/inner", "HttpOnly", "SameSite=Lax"} {
			if !strings.Contains(cookie, want) {
				t.Errorf("cookie %q lacks %s", cookie, want)
			}
		}
		value := strings.SplitN(cookie, ";", 2)[0]
		in := e.get("/status/inner", "Cookie", value)
		if in.status != 200 || !contains(in.body, "Ledger") || in.header.Get("Cache-Control") != "private, no-cache" {
			t.Fatalf("signed in: %d %v", in.status, in.header)
		}
		if s := e.get("/status/inner/summary.json", "Cookie", value); s.status != 200 || s.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("signed-in summary: %d %v", s.status, s.header)
		}
		// Badges need no cookie: their URL names an unguessable component.
		if b := e.get("/status/inner/badge/" + componentIDs(p)["Ledger"] + ".svg"); b.status != 200 {
			t.Errorf("badge of a protected page: %d", b.status)
		}
		// A cookie of another page, or a forged one, does not open it.
		if r := e.get("/status/inner", "Cookie", "tocsin_status=99999999999.abcdef"); r.status != http.StatusUnauthorized {
			t.Errorf("forged cookie: %d", r.status)
		}
		// A new password ends the session.
		e.api("PATCH", "/api/v1/status-pages/"+p["id"].(string), e.keyA, map[string]any{"password": "battery staple"}, 200)
		if r := e.get("/status/inner", "Cookie", value); r.status != http.StatusUnauthorized || contains(r.body, "Ledger") {
			t.Errorf("the next request after a new password: %d", r.status)
		}
		// Guessing is bounded per address.
		limited := false
		for range 12 {
			if r := signIn("guess"); r.status == http.StatusTooManyRequests {
				limited = r.header.Get("Retry-After") != ""
				break
			}
		}
		if !limited {
			t.Error("password guesses were never limited")
		}
	})
}

// TestPageSurvivesTheDatabase: once rendered, a page goes on being served,
// with its age, while the tables it is read from are gone.
func TestPageSurvivesTheDatabase(t *testing.T) {
	forEachEngine(t, public.Options{Timeout: 2 * time.Second}, func(t *testing.T, e *env) {
		m := e.monitor(e.keyA, "api", "http://127.0.0.1:9/", nil)
		e.record(m, "x", monitor.ResultUp)
		sturdy := e.page(e.keyA, map[string]any{"slug": "sturdy", "title": "Sturdy",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})["id"].(string)
		first := e.get("/status/sturdy")
		if first.status != 200 {
			t.Fatalf("page: %d", first.status)
		}
		e.exec(`ALTER TABLE status_pages RENAME TO status_pages_away`)
		e.exec(`ALTER TABLE monitor_runtime RENAME TO monitor_runtime_away`)
		defer e.exec(`ALTER TABLE status_pages_away RENAME TO status_pages`)
		defer e.exec(`ALTER TABLE monitor_runtime_away RENAME TO monitor_runtime`)
		e.clock.Advance(time.Minute)
		for range 3 { // each starts a render that fails
			r := e.get("/status/sturdy")
			if r.status != 200 || string(r.body) != string(first.body) {
				t.Fatalf("with the database gone: %d", r.status)
			}
			if r.header.Get("Age") == "" || r.header.Get("Age") == "0" {
				t.Errorf("Age: %q", r.header.Get("Age"))
			}
			wait.For(t, 10*time.Second, "the failed check to end", func() bool { return !e.pages.Checking(sturdy) })
		}
		if r := e.get("/status/never-rendered"); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Errorf("a page never rendered, database gone: %d", r.status)
		}
	})
}

// TestCustomDomain: a page with a custom domain is served at that host's
// root; other hosts are not taken for it.
func TestCustomDomain(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		m := e.monitor(e.keyA, "api", "http://127.0.0.1:9/", nil)
		e.record(m, "x", monitor.ResultUp)
		e.page(e.keyA, map[string]any{"slug": "dom", "title": "Domain page", "customDomain": "status.acme.test",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})
		r := e.get("/", "Host", "status.acme.test")
		if r.status != 200 || !contains(r.body, "Domain page") || contains(r.body, "/status/dom") {
			t.Fatalf("custom domain: %d %s", r.status, r.body)
		}
		if s := e.get("/summary.json", "Host", "Status.Acme.Test:443"); s.status != 200 {
			t.Errorf("custom domain summary: %d", s.status)
		}
		// Another host gets the service's own root: the web app, which
		// sends a stranger to sign in.
		if r := e.get("/", "Host", "other.acme.test"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/sign-in" ||
			contains(r.body, "Domain page") {
			t.Errorf("another host: %d %q", r.status, r.header.Get("Location"))
		}
		// The API still answers on the service's own host.
		e.api("GET", "/api/v1/status-pages", e.keyA, nil, 200)
	})
}

// TestPublicRateLimit: the public routes have their own per-address limit,
// apart from the API's keys.
func TestPublicRateLimit(t *testing.T) {
	forEachEngine(t, public.Options{PerMinute: 60, Burst: 5}, func(t *testing.T, e *env) {
		m := e.monitor(e.keyA, "api", "http://127.0.0.1:9/", nil)
		e.page(e.keyA, map[string]any{"slug": "busy", "title": "Busy",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})
		var last response
		for range 10 {
			if last = e.get("/status/busy"); last.status == http.StatusTooManyRequests {
				break
			}
		}
		if last.status != http.StatusTooManyRequests || last.header.Get("Retry-After") == "" {
			t.Fatalf("no 429 after a burst: %d", last.status)
		}
		e.api("GET", "/api/v1/status-pages", e.keyA, nil, 200)
	})
}

// TestPublicPagesNeverLeak: a page whose monitor has a secret URL, headers
// and failure reasons, beside private and public incidents and windows,
// shows in its HTML, summary, feed, history and badges only the names and
// text written for readers: none of the private strings, no workspace id
// and no monitor or heartbeat id.
func TestPublicPagesNeverLeak(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		k := e.keyA
		m := e.monitor(k, "internal-db-primary-7q", "http://secret-host-7f3a.internal:8443/private-path-9k",
			map[string]string{"X-Secret-Header": "hunter2-value-5d"})
		other := e.monitor(k, "billing-worker-internal-2w", "http://10.1.2.3:7000/", nil)
		hb := e.api("POST", "/api/v1/heartbeats", k, map[string]any{"name": "nightly-backup-hb3",
			"schedule": map[string]any{"periodSeconds": 3600}}, 201)["id"].(string)
		e.record(m, "reason-secret-9x from secret-host-7f3a", monitor.ResultDown, monitor.ResultDown, monitor.ResultDown)
		e.record(other, "reason-other-4r", monitor.ResultUp)
		// The automatic incident opened for m, made public without a public title.
		var auto string
		for _, inc := range e.api("GET", "/api/v1/incidents", k, nil, 200)["data"].([]any) {
			if inc := inc.(map[string]any); inc["origin"] == "automatic" {
				auto = inc["id"].(string)
			}
		}
		if auto == "" {
			t.Fatal("no automatic incident opened")
		}
		e.api("PATCH", "/api/v1/incidents/"+auto, k, map[string]any{"public": true}, 200)
		e.api("POST", "/api/v1/incidents/"+auto+"/updates", k, map[string]any{"status": "identified", "message": "written for readers ab3"}, 201)
		private := e.api("POST", "/api/v1/incidents", k, map[string]any{"title": "Private incident zq1", "message": "private message zq2",
			"affectedMonitors": []string{m}}, 201)["id"].(string)
		e.api("POST", "/api/v1/incidents", k, map[string]any{"title": "Public incident pk1", "message": "public message pk2",
			"affectedMonitors": []string{other}, "public": true}, 201)
		start := e.clock.Now().Add(time.Hour).UTC()
		window := func(name string, public bool) {
			e.api("POST", "/api/v1/maintenance-windows", k, map[string]any{"name": name, "description": name + " text",
				"startsAt": start.Format(time.RFC3339), "endsAt": start.Add(time.Hour).Format(time.RFC3339),
				"monitorIds": []string{m}, "public": public}, 201)
		}
		window("private window mw7", false)
		window("public window mw8", true)
		for _, vis := range []string{"public", "password"} {
			body := map[string]any{"slug": "leaky-" + vis, "title": "Leaky " + vis, "groups": []any{
				map[string]any{"name": "Data", "components": []any{
					component("monitorId", m, "Database", "Stores things"),
					component("monitorId", other, "Billing", ""),
					component("heartbeatId", hb, "Backups", "")}}}}
			if vis == "password" {
				body["visibility"], body["password"] = "password", "open sesame 1"
			}
			p := e.page(k, body)
			base := "/status/leaky-" + vis
			var cookie string
			if vis == "password" {
				req, _ := http.NewRequest("POST", e.srv.URL+base+"/password", strings.NewReader("password=open+sesame+1"))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				r := e.do(req)
				cookie = strings.SplitN(r.header.Get("Set-Cookie"), ";", 2)[0]
				if r.status != http.StatusSeeOther || cookie == "" {
					t.Fatalf("sign in: %d", r.status)
				}
			}
			paths := []string{base, base + "/summary.json", base + "/history.atom", base + "/history", base + "/password"}
			for _, id := range componentIDs(p) {
				paths = append(paths, base+"/badge/"+id+".svg", base+"/badge/"+id+".svg?uptime=7d")
			}
			var all []byte
			for _, path := range paths {
				r := e.get(path, "Cookie", cookie)
				if r.status != 200 && !(strings.HasSuffix(path, "/password") && r.status == http.StatusMethodNotAllowed) {
					t.Fatalf("%s: %d %s", path, r.status, r.body)
				}
				all = append(all, r.body...)
				all = append(all, []byte(fmt.Sprint(r.header))...)
			}
			for _, secret := range []string{"internal-db-primary-7q", "billing-worker-internal-2w", "nightly-backup-hb3",
				"secret-host-7f3a", "private-path-9k", "10.1.2.3", "hunter2-value-5d", "X-Secret-Header", "reason-secret-9x", "reason-other-4r",
				"Private incident zq1", "private message zq2", private, "private window mw7",
				e.wsA.ID, e.wsB.ID, "ws_", "mon_", "hb_", p["id"].(string)} {
				if contains(all, secret) {
					t.Errorf("%s: the public outputs show %q", vis, secret)
				}
			}
			for _, want := range []string{"Database", "Stores things", "Billing", "Backups", "Public incident pk1", "public message pk2",
				"public window mw8", "Database outage", "written for readers ab3"} {
				if !contains(all, want) {
					t.Errorf("%s: the public outputs lack %q", vis, want)
				}
			}
		}
	})
}

// TestPageLogo: an uploaded logo is served from the page's path with its
// type, cached forever under its version, and the page names it.
func TestPageLogo(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		m := e.monitor(e.keyA, "api", "http://127.0.0.1:9/", nil)
		p := e.page(e.keyA, map[string]any{"slug": "logoed", "title": "Logoed",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})
		if r := e.get("/status/logoed/logo"); r.status != http.StatusNotFound {
			t.Errorf("logo before upload: %d", r.status)
		}
		var img bytes.Buffer
		if err := png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("PUT", e.srv.URL+"/api/v1/status-pages/"+p["id"].(string)+"/logo", bytes.NewReader(img.Bytes()))
		req.Header.Set("Authorization", "Bearer "+e.keyA)
		req.Header.Set("Content-Type", "image/png")
		if r := e.do(req); r.status != 200 {
			t.Fatalf("upload: %d %s", r.status, r.body)
		}
		e.clock.Advance(time.Minute) // the cached configuration is read again
		var src string
		wait.For(t, 20*time.Second, "the page to name its logo", func() bool {
			b := e.get("/status/logoed").body
			i := strings.Index(string(b), "/status/logoed/logo?v=")
			if i < 0 {
				return false
			}
			src = string(b[i:])
			src = src[:strings.IndexByte(src, '"')]
			return true
		})
		r := e.get(strings.ReplaceAll(src, "&amp;", "&"))
		if r.status != 200 || !bytes.Equal(r.body, img.Bytes()) || r.header.Get("Content-Type") != "image/png" ||
			!strings.Contains(r.header.Get("Cache-Control"), "immutable") || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("logo: %d %v", r.status, r.header)
		}
	})
}

// TestCompressedAnswers: a reader that takes gzip gets the page gzipped,
// with its own ETag, and the same page once inflated; one that does not
// gets it as it is; both are told the answer varies by Accept-Encoding.
func TestCompressedAnswers(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		m := e.monitor(e.keyA, "api", "http://127.0.0.1:9/", nil)
		e.record(m, "x", monitor.ResultUp)
		e.page(e.keyA, map[string]any{"slug": "zipped", "title": "Zipped",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})
		plainPage := e.get("/status/zipped")
		zipped := e.get("/status/zipped", "Accept-Encoding", "br;q=1.0, gzip;q=0.8")
		if zipped.status != 200 || zipped.header.Get("Content-Encoding") != "gzip" || zipped.header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("gzip: %d %v", zipped.status, zipped.header)
		}
		zr, err := gzip.NewReader(bytes.NewReader(zipped.body))
		if err != nil {
			t.Fatal(err)
		}
		inflated, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if plainPage.header.Get("Content-Encoding") != "" || plainPage.header.Get("Vary") != "Accept-Encoding" ||
			!bytes.Equal(inflated, plainPage.body) || len(zipped.body) >= len(plainPage.body) {
			t.Fatalf("identity %d bytes %v; gzip %d bytes inflating to %d", len(plainPage.body), plainPage.header, len(zipped.body), len(inflated))
		}
		if zipped.header.Get("ETag") == plainPage.header.Get("ETag") {
			t.Error("the gzipped and identity answers share an ETag")
		}
		if r := e.get("/status/zipped", "Accept-Encoding", "gzip", "If-None-Match", zipped.header.Get("ETag")); r.status != http.StatusNotModified {
			t.Errorf("If-None-Match on the gzipped answer: %d", r.status)
		}
		if r := e.get("/status/zipped", "Accept-Encoding", "gzip;q=0, identity"); r.header.Get("Content-Encoding") != "" {
			t.Errorf("gzip;q=0 got %q", r.header.Get("Content-Encoding"))
		}
	})
}
