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
	"github.com/tocsin/tocsin/internal/web/webtest"
)

// statusPage creates a status page in the workspace of key from body.
func statusPage(e *env, key string, body map[string]any) map[string]any {
	e.T.Helper()
	return e.API("POST", "/api/v1/status-pages", key, body, 201)
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
		api := e.Monitor(e.KeyA, "api-prod", "http://127.0.0.1:9/health", nil)
		web := e.Monitor(e.KeyA, "web-prod", "http://127.0.0.1:9/", nil)
		fresh := e.Monitor(e.KeyA, "fresh", "http://127.0.0.1:9/new", nil)
		e.Record(api, "refused", monitor.ResultUp, monitor.ResultUp)
		e.Record(web, "refused", monitor.ResultDown, monitor.ResultDown, monitor.ResultDown)
		p := statusPage(e, e.KeyA, map[string]any{"slug": "acme", "title": "Acme status", "description": "How Acme is doing.",
			"groups": []any{
				map[string]any{"name": "Core", "components": []any{component("monitorId", api, "Public API", "The REST API."), component("monitorId", web, "Website", "")}},
				map[string]any{"name": "New", "components": []any{component("monitorId", fresh, "Reports", "")}},
			}})
		ids := componentIDs(p)

		r := e.Get("/status/acme")
		if r.Status != 200 {
			t.Fatalf("page: %d %s", r.Status, r.Body)
		}
		for _, want := range []string{"Acme status", "How Acme is doing.", "Public API", "The REST API.", "Website", "Reports", "Core"} {
			if !webtest.Contains(r.Body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		for h, want := range map[string]string{"Content-Type": "text/html; charset=utf-8", "X-Content-Type-Options": "nosniff",
			"Referrer-Policy": "no-referrer", "Cache-Control": "public, max-age=5"} {
			if got := r.Header.Get(h); got != want {
				t.Errorf("%s: %q, want %q", h, got, want)
			}
		}
		csp := r.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "style-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || webtest.Contains(r.Body, "<script") || webtest.Contains(r.Body, "style=") {
			t.Errorf("page needs inline script or style: CSP %q", csp)
		}
		if r.Header.Get("X-RateLimit-Limit") != "" {
			t.Error("a public page answered with the API's rate-limit headers")
		}
		etag := r.Header.Get("ETag")
		if etag == "" {
			t.Fatal("no ETag")
		}
		if again := e.Get("/status/acme", "If-None-Match", etag); again.Status != http.StatusNotModified {
			t.Errorf("If-None-Match: %d, want 304", again.Status)
		}

		// summary.json: Statuspage's shape, our words for no data.
		s := e.Get("/status/acme/summary.json")
		if s.Status != 200 || s.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("summary: %d %v", s.Status, s.Header)
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
		if err := json.Unmarshal(s.Body, &sum); err != nil {
			t.Fatalf("summary: %v: %s", err, s.Body)
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
		f := e.Get("/status/acme/history.atom")
		var feed struct {
			XMLName xml.Name
			Title   string `xml:"title"`
		}
		if f.Status != 200 || xml.Unmarshal(f.Body, &feed) != nil || feed.XMLName.Local != "feed" || feed.Title == "" {
			t.Errorf("feed: %d %s", f.Status, f.Body)
		}

		// Badges, by component id.
		b := e.Get("/status/acme/badge/" + ids["Website"] + ".svg")
		if b.Status != 200 || b.Header.Get("Content-Type") != "image/svg+xml" || !webtest.Contains(b.Body, "<svg") {
			t.Fatalf("badge: %d %s", b.Status, b.Body)
		}
		if u := e.Get("/status/acme/badge/" + ids["Public API"] + ".svg?uptime=30d"); u.Status != 200 || !webtest.Contains(u.Body, "%") {
			t.Errorf("uptime badge: %d %s", u.Status, u.Body)
		}
		for _, path := range []string{"/status/acme/badge/spc_nope.svg", "/status/acme/badge/" + ids["Website"] + ".svg?uptime=1y",
			"/status/nope", "/status/acme/nope", "/status/ACME", "/status/acme/history?month=1999-13"} {
			if r := e.Get(path); r.Status != http.StatusNotFound {
				t.Errorf("%s: %d, want 404", path, r.Status)
			}
		}
		if h := e.Get("/status/acme/history"); h.Status != 200 {
			t.Errorf("history: %d", h.Status)
		}
		req, _ := http.NewRequest("DELETE", e.Srv.URL+"/status/acme", nil)
		if r := e.Do(req); r.Status != http.StatusMethodNotAllowed {
			t.Errorf("DELETE: %d", r.Status)
		}
		// Another workspace's key cannot see or change the page.
		e.API("GET", "/api/v1/status-pages/"+p["id"].(string), e.KeyB, nil, 404)
	})
}

// TestWholeAndPartialAnswers: a page is sent whole in one answer with its
// length, and ranges, HEAD and preconditions are answered as HTTP says.
func TestWholeAndPartialAnswers(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		api := e.Monitor(e.KeyA, "api-prod", "http://127.0.0.1:9/health", nil)
		statusPage(e, e.KeyA, map[string]any{"slug": "acme", "title": "Acme status",
			"groups": []any{map[string]any{"name": "Core", "components": []any{component("monitorId", api, "Public API", "")}}}})
		whole := e.Get("/status/acme")
		n := strconv.Itoa(len(whole.Body))
		if whole.Status != 200 || len(whole.Body) < 100 || whole.Header.Get("Content-Length") != n ||
			whole.Header.Get("Accept-Ranges") != "bytes" || whole.Header.Get("ETag") == "" {
			t.Fatalf("whole: %d, %d bytes, %v", whole.Status, len(whole.Body), whole.Header)
		}
		part := e.Get("/status/acme", "Range", "bytes=0-9")
		if part.Status != http.StatusPartialContent || string(part.Body) != string(whole.Body[:10]) ||
			part.Header.Get("Content-Range") != "bytes 0-9/"+n {
			t.Errorf("range: %d %q %v", part.Status, part.Body, part.Header)
		}
		req, err := http.NewRequest(http.MethodHead, e.Srv.URL+"/status/acme", nil)
		if err != nil {
			t.Fatal(err)
		}
		head := e.Do(req)
		if head.Status != 200 || len(head.Body) != 0 || head.Header.Get("Content-Length") != n {
			t.Errorf("HEAD: %d, %d bytes, Content-Length %q, want %s", head.Status, len(head.Body), head.Header.Get("Content-Length"), n)
		}
		if other := e.Get("/status/acme", "If-None-Match", `"other"`); other.Status != 200 || string(other.Body) != string(whole.Body) {
			t.Errorf("If-None-Match of another version: %d, %d bytes", other.Status, len(other.Body))
		}
		if same := e.Get("/status/acme", "If-None-Match", whole.Header.Get("ETag")); same.Status != http.StatusNotModified || len(same.Body) != 0 {
			t.Errorf("If-None-Match of this version: %d", same.Status)
		}
		if failed := e.Get("/status/acme", "If-Match", `"other"`); failed.Status != http.StatusPreconditionFailed {
			t.Errorf("If-Match of another version: %d, want 412", failed.Status)
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
		m := e.Monitor(e.KeyA, "api", "http://127.0.0.1:9/", nil)
		e.Record(m, "x", monitor.ResultUp)
		created := statusPage(e, e.KeyA, map[string]any{"slug": "flips", "title": "Flips",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})
		status := func() string {
			var sum struct{ Components []struct{ Status string } }
			if err := json.Unmarshal(e.Get("/status/flips/summary.json").Body, &sum); err != nil || len(sum.Components) != 1 {
				t.Fatalf("summary: %v %+v", err, sum)
			}
			return sum.Components[0].Status
		}
		if got := status(); got != "operational" {
			t.Fatalf("before: %s", got)
		}
		page := e.Get("/status/flips")
		if page.Status != 200 || webtest.Contains(page.Body, "Major outage") {
			t.Fatalf("page before: %d", page.Status)
		}
		badge := "/status/flips/badge/" + componentIDs(created)["API"] + ".svg"
		if b := e.Get(badge); b.Status != 200 || !webtest.Contains(b.Body, ">operational<") {
			t.Fatalf("badge before: %d %s", b.Status, b.Body)
		}
		e.Record(m, "x", monitor.ResultDown, monitor.ResultDown) // moves the clock a minute on
		if got := status(); got != "major_outage" {
			t.Errorf("the first read after a quiet spell: %s, want major_outage", got)
		}
		after := e.Get("/status/flips")
		if after.Status != 200 || !webtest.Contains(after.Body, "Major outage") || after.Header.Get("Age") != "0" {
			t.Errorf("page after: %d, Age %q", after.Status, after.Header.Get("Age"))
		}
		if b := e.Get(badge); b.Status != 200 || !webtest.Contains(b.Body, ">outage<") {
			t.Errorf("badge after: %d %s", b.Status, b.Body)
		}
		// Within the bound and with nothing changed, the same render (its
		// check, started by this read, may or may not have ended first).
		e.Clock.Advance(3 * time.Second)
		later := e.Get("/status/flips")
		if age := later.Header.Get("Age"); later.Status != 200 || later.Header.Get("ETag") != after.Header.Get("ETag") || (age != "3" && age != "0") {
			t.Errorf("a read 3 s later: %d, Age %q, ETag %s then %s", later.Status, age, after.Header.Get("ETag"), later.Header.Get("ETag"))
		}
	})
}

// TestPageFollowsConfigChanges: a change made through this process
// (components added) shows on the very next request; one made by another
// node, which this process cannot hear of, shows on the first request
// once the bound has passed.
func TestPageFollowsConfigChanges(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		api := e.Monitor(e.KeyA, "api", "http://127.0.0.1:9/", nil)
		queue := e.Monitor(e.KeyA, "queue", "http://127.0.0.1:9/q", nil)
		e.Record(api, "x", monitor.ResultUp)
		e.Record(queue, "x", monitor.ResultDown, monitor.ResultDown)
		p := statusPage(e, e.KeyA, map[string]any{"slug": "grows", "title": "Grows",
			"groups": []any{map[string]any{"components": []any{component("monitorId", api, "Public API", "")}}}})
		if r := e.Get("/status/grows"); r.Status != 200 || !webtest.Contains(r.Body, "Public API") || webtest.Contains(r.Body, "Job queue") {
			t.Fatalf("before: %d", r.Status)
		}
		e.API("PATCH", "/api/v1/status-pages/"+p["id"].(string), e.KeyA, map[string]any{"groups": []any{
			map[string]any{"components": []any{component("monitorId", api, "Public API", ""), component("monitorId", queue, "Job queue", "")}}}}, 200)
		if r := e.Get("/status/grows"); r.Status != 200 || !webtest.Contains(r.Body, "Job queue") || !webtest.Contains(r.Body, "Partial outage") {
			t.Errorf("the next request after components were added: %d", r.Status)
		}
		// Another node renames the page behind this one's back.
		e.Exec(`UPDATE status_pages SET title = 'Grown', updated_at = updated_at + 1 WHERE slug = 'grows'`)
		e.Clock.Advance(6 * time.Second)
		if r := e.Get("/status/grows"); r.Status != 200 || !webtest.Contains(r.Body, "Grown") {
			t.Errorf("the first request past the bound after another node's change: %d", r.Status)
		}
	})
}

// TestPasswordPage: a protected page shows nothing but its password form
// until the reader signs in; the session cookie is scoped to the page and
// ends when the password changes; guesses are rate-limited.
func TestPasswordPage(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		m := e.Monitor(e.KeyA, "db", "http://127.0.0.1:9/", nil)
		e.Record(m, "x", monitor.ResultUp)
		p := statusPage(e, e.KeyA, map[string]any{"slug": "inner", "title": "Inner status", "visibility": "password", "password": "correct horse",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "Ledger", "Private ledger")}}}})
		if _, set := p["password"]; set || p["passwordSet"] != true {
			t.Fatalf("password in response: %v", p)
		}
		r := e.Get("/status/inner")
		if r.Status != http.StatusUnauthorized || !webtest.Contains(r.Body, "Inner status") || webtest.Contains(r.Body, "Ledger") {
			t.Fatalf("protected page: %d %s", r.Status, r.Body)
		}
		for _, path := range []string{"/status/inner/summary.json", "/status/inner/history.atom", "/status/inner/history"} {
			if r := e.Get(path); r.Status != http.StatusUnauthorized || webtest.Contains(r.Body, "Ledger") {
				t.Errorf("%s: %d %s", path, r.Status, r.Body)
			}
		}
		signIn := func(password string) webtest.Response {
			req, _ := http.NewRequest("POST", e.Srv.URL+"/status/inner/password", strings.NewReader(url.Values{"password": {password}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return e.Do(req)
		}
		if r := signIn("wrong horse"); r.Status != http.StatusUnauthorized || len(r.Header.Values("Set-Cookie")) != 0 {
			t.Fatalf("wrong password: %d %v", r.Status, r.Header)
		}
		r = signIn("correct horse")
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/status/inner/" {
			t.Fatalf("sign in: %d %v", r.Status, r.Header)
		}
		cookie := r.Header.Get("Set-Cookie")
		for _, want := range []string{"Path=/status/inner", "HttpOnly", "SameSite=Lax"} {
			if !strings.Contains(cookie, want) {
				t.Errorf("cookie %q lacks %s", cookie, want)
			}
		}
		value := strings.SplitN(cookie, ";", 2)[0]
		in := e.Get("/status/inner", "Cookie", value)
		if in.Status != 200 || !webtest.Contains(in.Body, "Ledger") || in.Header.Get("Cache-Control") != "private, no-cache" {
			t.Fatalf("signed in: %d %v", in.Status, in.Header)
		}
		if s := e.Get("/status/inner/summary.json", "Cookie", value); s.Status != 200 || s.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("signed-in summary: %d %v", s.Status, s.Header)
		}
		// Badges need no cookie: their URL names an unguessable component.
		if b := e.Get("/status/inner/badge/" + componentIDs(p)["Ledger"] + ".svg"); b.Status != 200 {
			t.Errorf("badge of a protected page: %d", b.Status)
		}
		// A cookie of another page, or a forged one, does not open it.
		if r := e.Get("/status/inner", "Cookie", "tocsin_status=99999999999.abcdef"); r.Status != http.StatusUnauthorized {
			t.Errorf("forged cookie: %d", r.Status)
		}
		// A new password ends the session.
		e.API("PATCH", "/api/v1/status-pages/"+p["id"].(string), e.KeyA, map[string]any{"password": "battery staple"}, 200)
		if r := e.Get("/status/inner", "Cookie", value); r.Status != http.StatusUnauthorized || webtest.Contains(r.Body, "Ledger") {
			t.Errorf("the next request after a new password: %d", r.Status)
		}
		// Guessing is bounded per address.
		limited := false
		for range 12 {
			if r := signIn("guess"); r.Status == http.StatusTooManyRequests {
				limited = r.Header.Get("Retry-After") != ""
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
		m := e.Monitor(e.KeyA, "api", "http://127.0.0.1:9/", nil)
		e.Record(m, "x", monitor.ResultUp)
		sturdy := statusPage(e, e.KeyA, map[string]any{"slug": "sturdy", "title": "Sturdy",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})["id"].(string)
		first := e.Get("/status/sturdy")
		if first.Status != 200 {
			t.Fatalf("page: %d", first.Status)
		}
		e.Exec(`ALTER TABLE status_pages RENAME TO status_pages_away`)
		e.Exec(`ALTER TABLE monitor_runtime RENAME TO monitor_runtime_away`)
		defer e.Exec(`ALTER TABLE status_pages_away RENAME TO status_pages`)
		defer e.Exec(`ALTER TABLE monitor_runtime_away RENAME TO monitor_runtime`)
		e.Clock.Advance(time.Minute)
		for range 3 { // each starts a render that fails
			r := e.Get("/status/sturdy")
			if r.Status != 200 || string(r.Body) != string(first.Body) {
				t.Fatalf("with the database gone: %d", r.Status)
			}
			if r.Header.Get("Age") == "" || r.Header.Get("Age") == "0" {
				t.Errorf("Age: %q", r.Header.Get("Age"))
			}
			wait.For(t, 10*time.Second, "the failed check to end", func() bool { return !e.Pages.Checking(sturdy) })
		}
		if r := e.Get("/status/never-rendered"); r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Errorf("a page never rendered, database gone: %d", r.Status)
		}
	})
}

// TestCustomDomain: a page with a custom domain is served at that host's
// root; other hosts are not taken for it.
func TestCustomDomain(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		m := e.Monitor(e.KeyA, "api", "http://127.0.0.1:9/", nil)
		e.Record(m, "x", monitor.ResultUp)
		statusPage(e, e.KeyA, map[string]any{"slug": "dom", "title": "Domain page", "customDomain": "status.acme.test",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})
		r := e.Get("/", "Host", "status.acme.test")
		if r.Status != 200 || !webtest.Contains(r.Body, "Domain page") || webtest.Contains(r.Body, "/status/dom") {
			t.Fatalf("custom domain: %d %s", r.Status, r.Body)
		}
		if s := e.Get("/summary.json", "Host", "Status.Acme.Test:443"); s.Status != 200 {
			t.Errorf("custom domain summary: %d", s.Status)
		}
		// Another host gets the service's own root: the web app, which
		// sends a stranger to sign in.
		if r := e.Get("/", "Host", "other.acme.test"); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/sign-in" ||
			webtest.Contains(r.Body, "Domain page") {
			t.Errorf("another host: %d %q", r.Status, r.Header.Get("Location"))
		}
		// The API still answers on the service's own host.
		e.API("GET", "/api/v1/status-pages", e.KeyA, nil, 200)
	})
}

// TestPublicRateLimit: the public routes have their own per-address limit,
// apart from the API's keys.
func TestPublicRateLimit(t *testing.T) {
	forEachEngine(t, public.Options{PerMinute: 60, Burst: 5}, func(t *testing.T, e *env) {
		m := e.Monitor(e.KeyA, "api", "http://127.0.0.1:9/", nil)
		statusPage(e, e.KeyA, map[string]any{"slug": "busy", "title": "Busy",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})
		var last webtest.Response
		for range 10 {
			if last = e.Get("/status/busy"); last.Status == http.StatusTooManyRequests {
				break
			}
		}
		if last.Status != http.StatusTooManyRequests || last.Header.Get("Retry-After") == "" {
			t.Fatalf("no 429 after a burst: %d", last.Status)
		}
		e.API("GET", "/api/v1/status-pages", e.KeyA, nil, 200)
	})
}

// TestPublicPagesNeverLeak: a page whose monitor has a secret URL, headers
// and failure reasons, beside private and public incidents and windows,
// shows in its HTML, summary, feed, history and badges only the names and
// text written for readers: none of the private strings, no workspace id
// and no monitor or heartbeat id.
func TestPublicPagesNeverLeak(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		k := e.KeyA
		m := e.Monitor(k, "internal-db-primary-7q", "http://secret-host-7f3a.internal:8443/private-path-9k",
			map[string]string{"X-Secret-Header": "hunter2-value-5d"})
		other := e.Monitor(k, "billing-worker-internal-2w", "http://10.1.2.3:7000/", nil)
		hb := e.API("POST", "/api/v1/heartbeats", k, map[string]any{"name": "nightly-backup-hb3",
			"schedule": map[string]any{"periodSeconds": 3600}}, 201)["id"].(string)
		e.Record(m, "reason-secret-9x from secret-host-7f3a", monitor.ResultDown, monitor.ResultDown, monitor.ResultDown)
		e.Record(other, "reason-other-4r", monitor.ResultUp)
		// The automatic incident opened for m, made public without a public title.
		var auto string
		for _, inc := range e.API("GET", "/api/v1/incidents", k, nil, 200)["data"].([]any) {
			if inc := inc.(map[string]any); inc["origin"] == "automatic" {
				auto = inc["id"].(string)
			}
		}
		if auto == "" {
			t.Fatal("no automatic incident opened")
		}
		e.API("PATCH", "/api/v1/incidents/"+auto, k, map[string]any{"public": true}, 200)
		e.API("POST", "/api/v1/incidents/"+auto+"/updates", k, map[string]any{"status": "identified", "message": "written for readers ab3"}, 201)
		private := e.API("POST", "/api/v1/incidents", k, map[string]any{"title": "Private incident zq1", "message": "private message zq2",
			"affectedMonitors": []string{m}}, 201)["id"].(string)
		e.API("POST", "/api/v1/incidents", k, map[string]any{"title": "Public incident pk1", "message": "public message pk2",
			"affectedMonitors": []string{other}, "public": true}, 201)
		start := e.Clock.Now().Add(time.Hour).UTC()
		window := func(name string, public bool) {
			e.API("POST", "/api/v1/maintenance-windows", k, map[string]any{"name": name, "description": name + " text",
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
			p := statusPage(e, k, body)
			base := "/status/leaky-" + vis
			var cookie string
			if vis == "password" {
				req, _ := http.NewRequest("POST", e.Srv.URL+base+"/password", strings.NewReader("password=open+sesame+1"))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				r := e.Do(req)
				cookie = strings.SplitN(r.Header.Get("Set-Cookie"), ";", 2)[0]
				if r.Status != http.StatusSeeOther || cookie == "" {
					t.Fatalf("sign in: %d", r.Status)
				}
			}
			paths := []string{base, base + "/summary.json", base + "/history.atom", base + "/history", base + "/password"}
			for _, id := range componentIDs(p) {
				paths = append(paths, base+"/badge/"+id+".svg", base+"/badge/"+id+".svg?uptime=7d")
			}
			var all []byte
			for _, path := range paths {
				r := e.Get(path, "Cookie", cookie)
				if r.Status != 200 && !(strings.HasSuffix(path, "/password") && r.Status == http.StatusMethodNotAllowed) {
					t.Fatalf("%s: %d %s", path, r.Status, r.Body)
				}
				all = append(all, r.Body...)
				all = append(all, []byte(fmt.Sprint(r.Header))...)
			}
			for _, secret := range []string{"internal-db-primary-7q", "billing-worker-internal-2w", "nightly-backup-hb3",
				"secret-host-7f3a", "private-path-9k", "10.1.2.3", "hunter2-value-5d", "X-Secret-Header", "reason-secret-9x", "reason-other-4r",
				"Private incident zq1", "private message zq2", private, "private window mw7",
				e.WsA.ID, e.WsB.ID, "ws_", "mon_", "hb_", p["id"].(string)} {
				if webtest.Contains(all, secret) {
					t.Errorf("%s: the public outputs show %q", vis, secret)
				}
			}
			for _, want := range []string{"Database", "Stores things", "Billing", "Backups", "Public incident pk1", "public message pk2",
				"public window mw8", "Database outage", "written for readers ab3"} {
				if !webtest.Contains(all, want) {
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
		m := e.Monitor(e.KeyA, "api", "http://127.0.0.1:9/", nil)
		p := statusPage(e, e.KeyA, map[string]any{"slug": "logoed", "title": "Logoed",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})
		if r := e.Get("/status/logoed/logo"); r.Status != http.StatusNotFound {
			t.Errorf("logo before upload: %d", r.Status)
		}
		var img bytes.Buffer
		if err := png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("PUT", e.Srv.URL+"/api/v1/status-pages/"+p["id"].(string)+"/logo", bytes.NewReader(img.Bytes()))
		req.Header.Set("Authorization", "Bearer "+e.KeyA)
		req.Header.Set("Content-Type", "image/png")
		if r := e.Do(req); r.Status != 200 {
			t.Fatalf("upload: %d %s", r.Status, r.Body)
		}
		e.Clock.Advance(time.Minute) // the cached configuration is read again
		var src string
		wait.For(t, 20*time.Second, "the page to name its logo", func() bool {
			b := e.Get("/status/logoed").Body
			i := strings.Index(string(b), "/status/logoed/logo?v=")
			if i < 0 {
				return false
			}
			src = string(b[i:])
			src = src[:strings.IndexByte(src, '"')]
			return true
		})
		r := e.Get(strings.ReplaceAll(src, "&amp;", "&"))
		if r.Status != 200 || !bytes.Equal(r.Body, img.Bytes()) || r.Header.Get("Content-Type") != "image/png" ||
			!strings.Contains(r.Header.Get("Cache-Control"), "immutable") || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("logo: %d %v", r.Status, r.Header)
		}
	})
}

// TestCompressedAnswers: a reader that takes gzip gets the page gzipped,
// with its own ETag, and the same page once inflated; one that does not
// gets it as it is; both are told the answer varies by Accept-Encoding.
func TestCompressedAnswers(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		m := e.Monitor(e.KeyA, "api", "http://127.0.0.1:9/", nil)
		e.Record(m, "x", monitor.ResultUp)
		statusPage(e, e.KeyA, map[string]any{"slug": "zipped", "title": "Zipped",
			"groups": []any{map[string]any{"components": []any{component("monitorId", m, "API", "")}}}})
		plainPage := e.Get("/status/zipped")
		zipped := e.Get("/status/zipped", "Accept-Encoding", "br;q=1.0, gzip;q=0.8")
		if zipped.Status != 200 || zipped.Header.Get("Content-Encoding") != "gzip" || zipped.Header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("gzip: %d %v", zipped.Status, zipped.Header)
		}
		zr, err := gzip.NewReader(bytes.NewReader(zipped.Body))
		if err != nil {
			t.Fatal(err)
		}
		inflated, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if plainPage.Header.Get("Content-Encoding") != "" || plainPage.Header.Get("Vary") != "Accept-Encoding" ||
			!bytes.Equal(inflated, plainPage.Body) || len(zipped.Body) >= len(plainPage.Body) {
			t.Fatalf("identity %d bytes %v; gzip %d bytes inflating to %d", len(plainPage.Body), plainPage.Header, len(zipped.Body), len(inflated))
		}
		if zipped.Header.Get("ETag") == plainPage.Header.Get("ETag") {
			t.Error("the gzipped and identity answers share an ETag")
		}
		if r := e.Get("/status/zipped", "Accept-Encoding", "gzip", "If-None-Match", zipped.Header.Get("ETag")); r.Status != http.StatusNotModified {
			t.Errorf("If-None-Match on the gzipped answer: %d", r.Status)
		}
		if r := e.Get("/status/zipped", "Accept-Encoding", "gzip;q=0, identity"); r.Header.Get("Content-Encoding") != "" {
			t.Errorf("gzip;q=0 got %q", r.Header.Get("Content-Encoding"))
		}
	})
}
