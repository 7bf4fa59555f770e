package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/web/public"
)

// httpForm is a filled-in form for an HTTP monitor of url.
func httpForm(name, target string, kv ...string) url.Values {
	f := form("mode", "new", "type", "http", "name", name, "url", target, "method", "GET", "follow-redirects", "on",
		"keyword-0", "", "keyword-1", "", "keyword-2", "",
		"assertion-0-path", "", "assertion-0-operator", "equals", "assertion-0-value", "",
		"assertion-1-path", "", "assertion-1-operator", "equals", "assertion-1-value", "",
		"assertion-2-path", "", "assertion-2-operator", "equals", "assertion-2-value", "",
		"auth-type", "", "record-type", "A")
	for i := 0; i+1 < len(kv); i += 2 {
		f.Set(kv[i], kv[i+1])
	}
	return f
}

var monitorLocation = regexp.MustCompile(`^/w/ws_[0-9A-Za-z]+/monitors/(mon_[0-9A-Za-z]+)$`)

// TestMonitorFormCreates: a monitor made with the form is the monitor the
// API shows, with every field the form offers.
func TestMonitorFormCreates(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		p := e.member("editor@a.test", account.RoleEditor)
		ws := "/w/" + e.WsA.ID
		page := p.get(ws + "/monitors/new")
		if page.status != http.StatusOK || !strings.Contains(page.body, `action="`+ws+`/monitors"`) ||
			!strings.Contains(page.body, `formaction="`+ws+`/monitors/test"`) {
			t.Fatalf("new monitor page: %d %.500s", page.status, page.body)
		}
		r := p.post(ws+"/monitors", httpForm("Checkout API", "https://shop.a.test/health",
			"method", "post", "interval", " 30 ", "timeout", "5", "status-codes", "200-299, 304", "body", `{"ping":true}`,
			"headers", "X-Api-Key: header-secret\r\nAccept: application/json", "keyword-1", "ok", "keyword-1-nocase", "on",
			"assertion-1-path", "$.status", "assertion-1-value", "up", "assertion-2-path", "$.queue", "assertion-2-operator", "lt", "assertion-2-value", "100",
			"auth-type", "basic", "auth-username", "probe", "auth-password", "the-password", "auth-token", "typed before choosing basic",
			"slo-target", "99.9", "slo-period", "30", "confirmations", "3"))
		m := monitorLocation.FindStringSubmatch(r.header.Get("Location"))
		if r.status != http.StatusSeeOther || m == nil {
			t.Fatalf("create: %d %q %.800s", r.status, r.header.Get("Location"), r.body)
		}
		got := e.API("GET", "/api/v1/monitors/"+m[1], e.KeyA, nil, 200)
		cfg := got["config"].(map[string]any)
		for path, want := range map[string]any{"name": "Checkout API", "type": "http", "intervalSeconds": 30.0} {
			if got[path] != want {
				t.Errorf("%s = %v, want %v", path, got[path], want)
			}
		}
		for path, want := range map[string]any{"url": "https://shop.a.test/health", "method": "POST", "timeoutSeconds": 5.0,
			"body": `{"ping":true}`, "confirmations": 3.0, "followRedirects": true} {
			if cfg[path] != want {
				t.Errorf("config.%s = %v, want %v", path, cfg[path], want)
			}
		}
		if s := jsonOf(t, cfg["expectedStatusCodes"]); s != `["200-299",304]` {
			t.Errorf("expectedStatusCodes %s", s)
		}
		if s := jsonOf(t, cfg["keywordAssertions"]); s != `[{"caseSensitive":false,"keyword":"ok","present":true}]` {
			t.Errorf("keywordAssertions %s", s)
		}
		if s := jsonOf(t, cfg["jsonAssertions"]); s != `[{"operator":"equals","path":"$.status","value":"up"},{"operator":"lt","path":"$.queue","value":100}]` {
			t.Errorf("jsonAssertions %s", s)
		}
		if s := jsonOf(t, cfg["headersSet"]); s != `["Accept","X-Api-Key"]` {
			t.Errorf("headersSet %s", s)
		}
		if s := jsonOf(t, cfg["auth"]); s != `{"passwordSet":true,"type":"basic","username":"probe"}` {
			t.Errorf("auth %s", s)
		}
		if s := jsonOf(t, got["slo"]); s != `{"periodDays":30,"target":0.999}` {
			t.Errorf("slo %s", s)
		}
		auth, err := e.App.MonitorAuth(context.Background(), e.WsA.ID, m[1])
		if err != nil || auth == nil || auth.Password != "the-password" || auth.Token != "" {
			t.Errorf("stored auth %+v, %v", auth, err)
		}

		// Every other type, with only its own fields read.
		for _, c := range []struct {
			typ string
			kv  []string
			cfg string
		}{
			{"tcp", []string{"tcp-host", "mail.a.test", "tcp-port", "25", "expect", "220", "tls-host", "ignored.a.test"}, `{"confirmations":2,"expect":"220","host":"mail.a.test","port":25,"recoveries":1,"timeoutSeconds":10}`},
			{"dns", []string{"record-name", "a.test", "record-type", "mx", "expected-values", "mx1.a.test\r\n\r\n mx2.a.test ", "resolver", "127.0.0.1:53"},
				`{"confirmations":2,"expectedValues":["mx1.a.test","mx2.a.test"],"recordName":"a.test","recordType":"MX","recoveries":1,"resolver":"127.0.0.1:53","timeoutSeconds":10}`},
			{"tls", []string{"tls-host", "shop.a.test", "down-expiry", "5", "degraded-expiry", "20", "server-name", "www.a.test"},
				`{"confirmations":2,"degradedExpiryDays":20,"downExpiryDays":5,"host":"shop.a.test","port":443,"recoveries":1,"serverName":"www.a.test","timeoutSeconds":10}`},
		} {
			r := p.post(ws+"/monitors", httpForm(c.typ+" one", "https://ignored.a.test/", append([]string{"type", c.typ}, c.kv...)...))
			m := monitorLocation.FindStringSubmatch(r.header.Get("Location"))
			if r.status != http.StatusSeeOther || m == nil {
				t.Fatalf("create %s: %d %.800s", c.typ, r.status, r.body)
			}
			got := e.API("GET", "/api/v1/monitors/"+m[1], e.KeyA, nil, 200)
			if s := jsonOf(t, got["config"]); got["type"] != c.typ || s != c.cfg {
				t.Errorf("%s: type %v config %s, want %s", c.typ, got["type"], s, c.cfg)
			}
		}
	})
}

// TestMonitorFormErrors: every mistake is shown at its field, in one
// answer, with what was typed kept.
func TestMonitorFormErrors(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		p := e.member("editor@a.test", account.RoleEditor)
		ws := "/w/" + e.WsA.ID
		for _, c := range []struct {
			name string
			form url.Values
			want map[string]string // field → part of its message
		}{
			{"three bad fields", httpForm("", "ftp://shop.a.test/", "interval", "soon"),
				map[string]string{"name": "must not be empty", "url": "absolute http or https URL", "interval": "whole number"}},
			{"app's rules only", httpForm("", "ftp://shop.a.test/", "interval", "5"),
				map[string]string{"name": "must not be empty", "url": "absolute http or https URL", "interval": "between 10 and 86400"}},
			{"rows", httpForm("rows", "https://shop.a.test/", "assertion-1-path", "$[", "assertion-1-value", "1",
				"assertion-2-path", "$.n", "assertion-2-operator", "gt", "assertion-2-value", "many", "status-codes", "200, 2xx", "slo-target", "99.9"),
				map[string]string{"assertion-1-path": "JSONPath", "assertion-2-value": "must be a number", "status-codes": `"200-299"`, "slo-period": "1 to 90"}},
			{"tcp", httpForm("tcp", "", "type", "tcp", "tcp-port", "99999", "timeout", "x"),
				map[string]string{"tcp-host": "is required", "tcp-port": "between 1 and 65535", "timeout": "whole number"}},
			{"auth", httpForm("auth", "https://shop.a.test/", "auth-type", "header", "auth-header", "Bad Name"),
				map[string]string{"auth-header": "not a valid header name", "auth-value": "is required"}},
		} {
			r := p.post(ws+"/monitors", c.form)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("%s: %d, want 422: %.500s", c.name, r.status, r.body)
			}
			if n := strings.Count(r.body, `<p class="error" id="err-`); n != len(c.want) {
				t.Errorf("%s: %d messages, want %d: %v", c.name, n, len(c.want), regexp.MustCompile(`id="err-[^"]+">[^<]*`).FindAllString(r.body, -1))
			}
			for field, msg := range c.want {
				re := regexp.MustCompile(`id="f-` + regexp.QuoteMeta(field) + `"[^>]*aria-describedby="[^"]*err-` + regexp.QuoteMeta(field) +
					`"[^>]*aria-invalid="true">(?:\s*</textarea>)?\s*<p class="error" id="err-` + regexp.QuoteMeta(field) + `">[^<]*` + regexp.QuoteMeta(htmlText(msg)))
				if !re.MatchString(r.body) {
					t.Errorf("%s: no %q right at field %s", c.name, msg, field)
				}
				if !strings.Contains(r.body, `href="#f-`+field+`"`) {
					t.Errorf("%s: the summary does not link to %s", c.name, field)
				}
			}
			if c.name == "three bad fields" && (!strings.Contains(r.body, `value="soon"`) || !strings.Contains(r.body, `value="ftp://shop.a.test/"`)) {
				t.Errorf("the form lost what was typed")
			}
		}
		if got := e.API("GET", "/api/v1/monitors", e.KeyA, nil, 200); len(got["data"].([]any)) != 0 {
			t.Errorf("a bad form made a monitor: %v", got["data"])
		}
	})
}

func htmlText(s string) string { return strings.ReplaceAll(s, `"`, "&#34;") }

// TestMonitorFormTestNow: "Test now" checks the draft against a real
// server and shows each assertion's verdict in words, saving nothing.
func TestMonitorFormTestNow(t *testing.T) {
	seen := make(chan string, 4)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"status":"up","detail":"database unreachable"}`))
	}))
	t.Cleanup(target.Close)
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		p := e.member("editor@a.test", account.RoleEditor)
		ws := "/w/" + e.WsA.ID
		r := p.post(ws+"/monitors/test", httpForm("Trial", target.URL+"/health", "status-codes", "200",
			"keyword-0", "unreachable", "keyword-0-absent", "on", "assertion-0-path", "$.status", "assertion-0-value", `"up"`,
			"auth-type", "bearer", "auth-token", "typed-token-secret"))
		if r.status != http.StatusOK {
			t.Fatalf("test now: %d %.800s", r.status, r.body)
		}
		for _, want := range []string{"Test result:", `<span class="badge result">down</span>`,
			"✗ Failed:</strong> Status code is 200 — status 500 is not among the expected codes",
			"✗ Failed:</strong> Keyword “unreachable” absent — keyword &#34;unreachable&#34; found in the body, but must be absent",
			"✓ Passed:</strong> JSON $.status equals &#34;up&#34;", "Status code</dt><dd>500</dd>", "Nothing was saved.",
			`value="Trial"`, `value="` + target.URL + `/health"`, `name="keyword-0-absent" value="on" checked`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("test result lacks %q", want)
			}
		}
		// The token was used, and is not sent back.
		if strings.Contains(r.body, "typed-token-secret") || !strings.Contains(r.body, "Type it again to save it") {
			t.Errorf("the answer shows the token, or does not say to type it again")
		}
		if got := <-seen; got != "Bearer typed-token-secret" {
			t.Errorf("the check sent Authorization %q", got)
		}
		if got := e.API("GET", "/api/v1/monitors", e.KeyA, nil, 200); len(got["data"].([]any)) != 0 {
			t.Errorf("a test made a monitor: %v", got["data"])
		}
	})
}

// TestMonitorFormEditKeepsSecrets: an edit that leaves the secret fields
// empty keeps the stored credential and headers, and no page shows them.
func TestMonitorFormEditKeepsSecrets(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		p := e.member("editor@a.test", account.RoleEditor)
		ws := "/w/" + e.WsA.ID
		created := e.API("POST", "/api/v1/monitors", e.KeyA, map[string]any{"type": "http", "name": "Shop", "config": map[string]any{
			"url": "https://shop.a.test/", "headers": map[string]string{"X-Api-Key": "stored-header-secret", "X-Trace": "1"},
			"auth":           map[string]any{"type": "basic", "username": "probe", "password": "stored-password-secret"},
			"jsonAssertions": []any{map[string]any{"path": "$.ok", "operator": "equals", "value": true}}}}, 201)
		id := created["id"].(string)
		edit := ws + "/monitors/" + id + "/edit"
		page := p.get(edit)
		if page.status != http.StatusOK || !strings.Contains(page.body, "set — leave empty to keep") || !strings.Contains(page.body, `value="probe"`) ||
			!strings.Contains(page.body, `name="header-remove" value="X-Api-Key"`) || !strings.Contains(page.body, `name="assertion-0-path" value="$.ok"`) {
			t.Fatalf("edit page: %d %.1500s", page.status, page.body)
		}
		for _, secret := range []string{"stored-header-secret", "stored-password-secret"} {
			if strings.Contains(page.body, secret) {
				t.Errorf("the edit page shows %s", secret)
			}
		}
		f := httpForm("Shop renamed", "https://shop.a.test/v2", "mode", "edit", "id", id, "auth-type", "basic", "auth-username", "probe",
			"header-remove", "X-Trace", "assertion-0-path", "$.ok", "assertion-0-value", "true")
		f.Del("paused")
		r := p.post(edit, f)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != ws+"/monitors/"+id {
			t.Fatalf("update: %d %q %.800s", r.status, r.header.Get("Location"), r.body)
		}
		got := e.API("GET", "/api/v1/monitors/"+id, e.KeyA, nil, 200)
		cfg := got["config"].(map[string]any)
		if got["name"] != "Shop renamed" || cfg["url"] != "https://shop.a.test/v2" || jsonOf(t, cfg["headersSet"]) != `["X-Api-Key"]` {
			t.Errorf("after the edit: %v", got)
		}
		auth, err := e.App.MonitorAuth(ctx, e.WsA.ID, id)
		if err != nil || auth == nil || auth.Password != "stored-password-secret" || auth.Username != "probe" {
			t.Errorf("stored auth after the edit: %+v, %v", auth, err)
		}
		headers, err := e.App.MonitorHeaders(ctx, e.WsA.ID, id)
		if err != nil || len(headers) != 1 || headers["X-Api-Key"] != "stored-header-secret" {
			t.Errorf("stored headers after the edit: %v, %v", headers, err)
		}

		// A changed user name needs the password again; a bad field keeps
		// the stored secrets out of the answer too.
		r = p.post(edit, httpForm("Shop", "https://shop.a.test/", "mode", "edit", "id", id, "auth-type", "basic", "auth-username", "someone", "interval", "x"))
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="err-interval"`) || strings.Contains(r.body, "stored-password-secret") {
			t.Errorf("bad edit: %d %.800s", r.status, r.body)
		}
		r = p.post(edit, httpForm("Shop", "https://shop.a.test/", "mode", "edit", "id", id, "auth-type", "basic", "auth-username", "someone"))
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="err-auth-password"`) {
			t.Errorf("a new user name without the password: %d %.800s", r.status, r.body)
		}

		// Credentials "none" removes the stored one.
		r = p.post(edit, httpForm("Shop", "https://shop.a.test/", "mode", "edit", "id", id))
		if r.status != http.StatusSeeOther {
			t.Fatalf("remove auth: %d %.800s", r.status, r.body)
		}
		if auth, err := e.App.MonitorAuth(ctx, e.WsA.ID, id); err != nil || auth != nil {
			t.Errorf("auth after choosing none: %+v, %v", auth, err)
		}
	})
}

// TestMonitorFormViewer: a viewer may not see the form nor send it.
func TestMonitorFormViewer(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		p := e.member("viewer@a.test", account.RoleViewer)
		ws := "/w/" + e.WsA.ID
		id := e.Monitor(e.KeyA, "Shop", "https://shop.a.test/", nil)
		for _, r := range []answer{
			p.get(ws + "/monitors/new"),
			p.post(ws+"/monitors", httpForm("Mine", "https://shop.a.test/")),
			p.post(ws+"/monitors/test", httpForm("Mine", "https://shop.a.test/")),
			p.get(ws + "/monitors/" + id + "/edit"),
			p.post(ws+"/monitors/"+id+"/edit", httpForm("Renamed", "https://shop.a.test/")),
		} {
			if r.status != http.StatusForbidden {
				t.Errorf("%d, want 403: %.300s", r.status, r.body)
			}
		}
		if got := e.API("GET", "/api/v1/monitors", e.KeyA, nil, 200); len(got["data"].([]any)) != 1 {
			t.Errorf("monitors after a viewer's tries: %v", got["data"])
		}
		if got := e.API("GET", "/api/v1/monitors/"+id, e.KeyA, nil, 200); got["name"] != "Shop" {
			t.Errorf("a viewer renamed the monitor: %v", got["name"])
		}
	})
}

// jsonOf is v as compact JSON with sorted keys.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
