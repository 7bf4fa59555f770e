package httpapi_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/netguard"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

func httpBody(cfg string) string {
	return `{"type":"http","name":"n","config":` + cfg + `}`
}

// TestValidation: each invalid field gives 422 validation_error naming that
// field by its JSON pointer, and nothing is created.
func TestValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		want []string // JSON pointers that must be listed
	}{
		{"missing type", `{"name":"n","config":{}}`, []string{"/type"}},
		{"unknown type", `{"type":"smtp","name":"n","config":{}}`, []string{"/type"}},
		{"missing name", `{"type":"http","config":{"url":"https://a.example"}}`, []string{"/name"}},
		{"empty name", `{"type":"http","name":"","config":{"url":"https://a.example"}}`, []string{"/name"}},
		{"blank name", `{"type":"http","name":"   ","config":{"url":"https://a.example"}}`, []string{"/name"}},
		{"long name", `{"type":"http","name":"` + strings.Repeat("x", 201) + `","config":{"url":"https://a.example"}}`, []string{"/name"}},
		{"missing config", `{"type":"http","name":"n"}`, []string{"/config"}},
		{"interval too short", `{"type":"http","name":"n","intervalSeconds":9,"config":{"url":"https://a.example"}}`, []string{"/intervalSeconds"}},
		{"interval too long", `{"type":"http","name":"n","intervalSeconds":86401,"config":{"url":"https://a.example"}}`, []string{"/intervalSeconds"}},
		{"interval not a number", `{"type":"http","name":"n","intervalSeconds":"60","config":{"url":"https://a.example"}}`, []string{"/intervalSeconds"}},
		{"unknown top-level field", `{"type":"http","name":"n","colour":"red","config":{"url":"https://a.example"}}`, []string{"/colour"}},
		{"unknown config field", httpBody(`{"url":"https://a.example","retries":3}`), []string{"/config/retries"}},
		{"http without url", httpBody(`{}`), []string{"/config/url"}},
		{"url not http", httpBody(`{"url":"ftp://a.example"}`), []string{"/config/url"}},
		{"relative url", httpBody(`{"url":"/health"}`), []string{"/config/url"}},
		{"url with credentials", httpBody(`{"url":"https://u:p@a.example"}`), []string{"/config/url"}},
		{"bad method", httpBody(`{"url":"https://a.example","method":"BREW"}`), []string{"/config/method"}},
		{"timeout too long", httpBody(`{"url":"https://a.example","timeoutSeconds":61}`), []string{"/config/timeoutSeconds"}},
		{"status code too low", httpBody(`{"url":"https://a.example","expectedStatusCodes":[99]}`), []string{"/config/expectedStatusCodes/0"}},
		{"status range backwards", httpBody(`{"url":"https://a.example","expectedStatusCodes":[200,"299-200"]}`), []string{"/config/expectedStatusCodes/1"}},
		{"status range garbage", httpBody(`{"url":"https://a.example","expectedStatusCodes":["2xx"]}`), []string{"/config/expectedStatusCodes/0"}},
		{"empty keyword", httpBody(`{"url":"https://a.example","keywordAssertions":[{"keyword":""}]}`), []string{"/config/keywordAssertions/0/keyword"}},
		{"json path missing", httpBody(`{"url":"https://a.example","jsonAssertions":[{"operator":"exists"}]}`), []string{"/config/jsonAssertions/0/path"}},
		{"json path not RFC 9535", httpBody(`{"url":"https://a.example","jsonAssertions":[{"path":"$.a[","operator":"exists"}]}`), []string{"/config/jsonAssertions/0/path"}},
		{"json path too long", httpBody(`{"url":"https://a.example","jsonAssertions":[{"path":"$.` + strings.Repeat("a", 300) + `","operator":"exists"}]}`), []string{"/config/jsonAssertions/0/path"}},
		{"json operator unknown", httpBody(`{"url":"https://a.example","jsonAssertions":[{"path":"$.a","operator":"matches","value":"x"}]}`), []string{"/config/jsonAssertions/0/operator"}},
		{"equals without value", httpBody(`{"url":"https://a.example","jsonAssertions":[{"path":"$.a","operator":"equals"}]}`), []string{"/config/jsonAssertions/0/value"}},
		{"contains without value", httpBody(`{"url":"https://a.example","jsonAssertions":[{"path":"$.a","operator":"contains"}]}`), []string{"/config/jsonAssertions/0/value"}},
		{"gt with a string", httpBody(`{"url":"https://a.example","jsonAssertions":[{"path":"$.a","operator":"gt","value":"5"}]}`), []string{"/config/jsonAssertions/0/value"}},
		{"lt without value", httpBody(`{"url":"https://a.example","jsonAssertions":[{"path":"$.a","operator":"lt"}]}`), []string{"/config/jsonAssertions/0/value"}},
		{"exists with a string", httpBody(`{"url":"https://a.example","jsonAssertions":[{"path":"$.a","operator":"exists","value":"yes"}]}`), []string{"/config/jsonAssertions/0/value"}},
		{"too many assertions", httpBody(`{"url":"https://a.example","jsonAssertions":[` + strings.TrimSuffix(strings.Repeat(`{"path":"$.a","operator":"exists"},`, 21), ",") + `]}`), []string{"/config/jsonAssertions"}},
		{"bad header name", httpBody(`{"url":"https://a.example","headers":{"Bad Header":"x"}}`), []string{"/config/headers/Bad Header"}},
		{"host header", httpBody(`{"url":"https://a.example","headers":{"Host":"x"}}`), []string{"/config/headers/Host"}},
		{"header value with newline", httpBody(`{"url":"https://a.example","headers":{"X-A":"a\r\nInjected: 1"}}`), []string{"/config/headers/X-A"}},
		{"degraded latency above timeout", httpBody(`{"url":"https://a.example","timeoutSeconds":2,"degradedLatencyMs":2001}`), []string{"/config/degradedLatencyMs"}},
		{"timeout above interval", `{"type":"http","name":"n","intervalSeconds":10,"config":{"url":"https://a.example","timeoutSeconds":11}}`, []string{"/config/timeoutSeconds"}},
		{"auth type unknown", httpBody(`{"url":"https://a.example","auth":{"type":"digest"}}`), []string{"/config/auth/type"}},
		{"basic auth without password", httpBody(`{"url":"https://a.example","auth":{"type":"basic","username":"u"}}`), []string{"/config/auth/password"}},
		{"bearer auth with a username", httpBody(`{"url":"https://a.example","auth":{"type":"bearer","token":"t","username":"u"}}`), []string{"/config/auth/username"}},
		{"header auth without name", httpBody(`{"url":"https://a.example","auth":{"type":"header","value":"v"}}`), []string{"/config/auth/header"}},
		{"http field on tcp", `{"type":"tcp","name":"n","config":{"host":"db","port":5432,"url":"https://a.example"}}`, []string{"/config/url"}},
		{"tcp without host and port", `{"type":"tcp","name":"n","config":{}}`, []string{"/config/host", "/config/port"}},
		{"tcp port out of range", `{"type":"tcp","name":"n","config":{"host":"db","port":70000}}`, []string{"/config/port"}},
		{"auth on tcp", `{"type":"tcp","name":"n","config":{"host":"db","port":1,"auth":{"type":"bearer","token":"t"}}}`, []string{"/config/auth"}},
		{"dns without name", `{"type":"dns","name":"n","config":{"recordType":"A"}}`, []string{"/config/recordName"}},
		{"dns bad record type", `{"type":"dns","name":"n","config":{"recordName":"a.example","recordType":"XYZ"}}`, []string{"/config/recordType"}},
		{"dns bad resolver", `{"type":"dns","name":"n","config":{"recordName":"a.example","resolver":"1.1.1.1"}}`, []string{"/config/resolver"}},
		{"tls thresholds crossed", `{"type":"tls","name":"n","config":{"host":"a.example","degradedExpiryDays":2,"downExpiryDays":5}}`, []string{"/config/degradedExpiryDays"}},
		{"several at once", `{"type":"http","name":"","intervalSeconds":1,"config":{"url":"ftp://x","method":"BREW","jsonAssertions":[{"path":"$[","operator":"gt","value":"x"}]}}`,
			[]string{"/name", "/intervalSeconds", "/config/url", "/config/method", "/config/jsonAssertions/0/path", "/config/jsonAssertions/0/value"}},
	}
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		for _, c := range cases {
			r := e.req("POST", "/api/v1/monitors", k, c.body)
			if r.status != 422 || r.code(t) != "validation_error" {
				t.Errorf("%s: %d %s", c.name, r.status, r.body)
				continue
			}
			var env struct {
				Error struct {
					Details []struct{ Pointer, Message string }
				}
			}
			if err := json.Unmarshal(r.body, &env); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range env.Error.Details {
				if d.Message == "" {
					t.Errorf("%s: detail without a message: %s", c.name, r.body)
				}
				got = append(got, d.Pointer)
			}
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("%s: details %v lack %s", c.name, got, w)
				}
			}
		}
		if n := e.countMonitors(); n != 0 {
			t.Errorf("%d monitors created by invalid requests", n)
		}
	})
}

// TestSecretsNeverEchoed: an invalid request carrying a credential gets an
// error that does not repeat it.
func TestSecretsNeverEchoed(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		for _, body := range []string{
			httpBody(`{"url":"ftp://x","auth":{"type":"basic","username":"u","password":"hunter2-secret"}}`),
			httpBody(`{"url":"https://a.example","auth":{"type":"bearer","token":"hunter2-secret","password":"hunter2-secret"}}`),
			httpBody(`{"url":"https://a.example","auth":{"type":"header","header":"X-Key","value":"hunter2-secret\n"}}`),
			httpBody(`{"url":"https://a.example","auth":{"type":"basic","username":"u","password":"hunter2-secret","extra":"hunter2-secret"}}`),
		} {
			r := e.req("POST", "/api/v1/monitors", k, body)
			if r.status != 422 || strings.Contains(string(r.body), "hunter2") {
				t.Errorf("%d %s", r.status, r.body)
			}
		}
	})
}

// TestMalformedRequests: broken JSON, wrong media types and oversize bodies
// get the envelope with the right status.
func TestMalformedRequests(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		cases := []struct {
			name   string
			body   string
			hdr    []string
			status int
			code   string
		}{
			{"truncated JSON", `{"type":`, nil, 400, "bad_request"},
			{"not JSON", `type=http`, nil, 400, "bad_request"},
			{"array body", `[1,2]`, nil, 422, "validation_error"},
			{"form content type", `{"type":"http"}`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"},
			{"oversize body", `{"type":"http","name":"` + strings.Repeat("x", 300<<10) + `","config":{}}`, nil, 413, "payload_too_large"},
			{"oversize body with Idempotency-Key", `{"type":"http","name":"` + strings.Repeat("x", 300<<10) + `","config":{}}`, []string{"Idempotency-Key", "big"}, 413, "payload_too_large"},
		}
		for _, c := range cases {
			r := e.req("POST", "/api/v1/monitors", k, c.body, c.hdr...)
			if r.status != c.status || r.code(t) != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
			}
		}
		routes := []struct {
			method, path string
			status       int
			code         string
		}{
			{"GET", "/api/v1/nothing-here", 404, "not_found"},
			{"GET", "/elsewhere", 404, "not_found"},
			{"PUT", "/api/v1/monitors", 405, "method_not_allowed"},
			{"POST", "/api/v1/monitors/mon_x", 405, "method_not_allowed"},
		}
		for _, rt := range routes {
			r := e.req(rt.method, rt.path, k, nil)
			if r.status != rt.status || r.code(t) != rt.code || r.header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s: %d %s", rt.method, rt.path, r.status, r.body)
			}
			if rt.status == 405 && r.header.Get("Allow") == "" {
				t.Errorf("%s %s: 405 without Allow", rt.method, rt.path)
			}
		}
		if n := e.countMonitors(); n != 0 {
			t.Errorf("%d monitors created", n)
		}
	})
}

// TestQuotas: a workspace's plan bounds monitor count and interval.
func TestQuotas(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		if err := e.db.SetWorkspaceQuota(context.Background(), e.wsA.ID, 2, 30); err != nil {
			t.Fatal(err)
		}
		k := e.ownerKey()
		ok := `{"type":"http","name":"n","intervalSeconds":30,"config":{"url":"https://a.example"}}`
		if r := e.req("POST", "/api/v1/monitors", k, `{"type":"http","name":"n","intervalSeconds":20,"config":{"url":"https://a.example"}}`); r.status != 402 || r.code(t) != "quota_exceeded" {
			t.Errorf("interval below the plan's minimum: %d %s", r.status, r.body)
		}
		for range 2 {
			if r := e.req("POST", "/api/v1/monitors", k, ok); r.status != 201 {
				t.Fatalf("%d %s", r.status, r.body)
			}
		}
		r := e.req("POST", "/api/v1/monitors", k, ok)
		if r.status != 402 || r.code(t) != "quota_exceeded" || !strings.Contains(string(r.body), "2") {
			t.Errorf("third monitor: %d %s", r.status, r.body)
		}
	})
}

// TestOutboundPolicy: with private targets blocked, a monitor aimed at an
// address the policy refuses is a validation error naming the field; the
// default self-hosted policy accepts it.
func TestOutboundPolicy(t *testing.T) {
	t.Parallel()
	eng := storetest.Engines(t)[0]
	blocked := newEnvWith(t, eng, app.Config{Outbound: netguard.Policy{BlockPrivate: true}})
	open := newEnv(t, eng)
	cases := []struct{ body, ptr string }{
		{httpBody(`{"url":"http://127.0.0.1:8080/health"}`), "/config/url"},
		{httpBody(`{"url":"http://[::1]/"}`), "/config/url"},
		{httpBody(`{"url":"http://localhost/"}`), "/config/url"},
		{httpBody(`{"url":"http://169.254.169.254/latest/meta-data/"}`), "/config/url"},
		{`{"type":"tcp","name":"n","config":{"host":"10.0.0.5","port":5432}}`, "/config/host"},
		{`{"type":"dns","name":"n","config":{"recordName":"a.example","resolver":"192.168.1.1:53"}}`, "/config/resolver"},
	}
	for _, c := range cases {
		r := blocked.req("POST", "/api/v1/monitors", blocked.ownerKey(), c.body)
		if r.status != 422 || !strings.Contains(string(r.body), `"pointer":"`+c.ptr+`"`) || !strings.Contains(string(r.body), "outbound policy") {
			t.Errorf("blocked policy, %s: %d %s", c.body, r.status, r.body)
		}
		if r := open.req("POST", "/api/v1/monitors", open.ownerKey(), c.body); r.status != 201 {
			t.Errorf("default policy, %s: %d %s", c.body, r.status, r.body)
		}
	}
	if r := blocked.req("POST", "/api/v1/monitors", blocked.ownerKey(), httpBody(`{"url":"https://example.com/"}`)); r.status != 201 {
		t.Errorf("public target refused: %d %s", r.status, r.body)
	}
}
