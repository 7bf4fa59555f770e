package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/clientaddr"
	"github.com/tocsin/tocsin/internal/httpapi"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// wireTime is the one format of a time on the wire; looksLikeTime finds
// every string that is meant to be one.
var (
	wireTime      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$`)
	looksLikeTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}`)
)

// walkTimes checks every string in v that looks like a time and returns
// how many it saw.
func walkTimes(t *testing.T, where string, v any) int {
	t.Helper()
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			n += walkTimes(t, where+"/"+k, x)
		}
	case []any:
		for i, x := range v {
			n += walkTimes(t, where+"/"+strconv.Itoa(i), x)
		}
	case string:
		if looksLikeTime.MatchString(v) {
			n++
			if !wireTime.MatchString(v) {
				t.Errorf("%s: %q is not UTC with six fractional digits", where, v)
			}
		}
	}
	return n
}

// TestTimesOnTheWire: every time the API answers with, and every time in
// an event a receiver gets, is UTC with exactly six fractional digits,
// whatever zone it was computed in.
func TestTimesOnTheWire(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		rc := newReceiver(t)
		ch := e.webhookChannel(t, k, rc, nil)
		runNotifier(t, e, "node-a")

		mon := e.monitorIn(e.wsA)
		hb := e.newHeartbeat(t, k, periodic("backup", 60, 30))
		hbID := hb["id"].(string)
		ack := e.pingOK(t, hb["pingUrl"].(string), "/start")
		seen := walkTimes(t, "ping ack", ack)
		seen += walkTimes(t, "ping ack", e.pingOK(t, hb["pingUrl"].(string), ""))

		// A recurring window in Berlin: its next start is computed there.
		r := e.req("POST", "/api/v1/maintenance-windows", k, map[string]any{"name": "Saturday night",
			"recurrence": map[string]any{"cron": "0 2 * * 6", "timezone": "Europe/Berlin", "durationMinutes": 90,
				"until": "2099-01-01T00:00:00+01:00"},
			"monitorIds": []string{mon}})
		if r.status != http.StatusCreated {
			t.Fatalf("create window: %d %s", r.status, r.body)
		}
		mw := r.json(t)
		if mw["nextStartAt"] == nil {
			t.Fatalf("no nextStartAt: %s", r.body)
		}
		seen += walkTimes(t, "created window", mw)

		inc := e.incidentStory(t, k, "database down")
		got := rc.waitFor(len(storyEvents))
		for _, g := range got {
			seen += walkTimes(t, "event "+g.event, g.body)
		}
		// The heartbeat's first ping is a state change too: wait for every
		// delivery to be done, so attempts and completions are listed.
		wait.For(t, 20*time.Second, "the deliveries to settle", func() bool {
			ds := e.deliveries(t, k, ch)
			return len(ds) >= len(storyEvents) && !slices.ContainsFunc(ds, func(d map[string]any) bool { return d["status"] == "pending" })
		})

		for _, path := range []string{
			"/api/v1/monitors", "/api/v1/monitors/" + mon, "/api/v1/monitors/" + mon + "/states", "/api/v1/monitors/" + mon + "/checks",
			"/api/v1/heartbeats", "/api/v1/heartbeats/" + hbID, "/api/v1/heartbeats/" + hbID + "/pings", "/api/v1/heartbeats/" + hbID + "/states",
			"/api/v1/maintenance-windows", "/api/v1/maintenance-windows/" + mw["id"].(string),
			"/api/v1/incidents", "/api/v1/incidents/" + inc,
			"/api/v1/notification-channels", "/api/v1/notification-channels/" + ch, "/api/v1/notification-channels/" + ch + "/deliveries",
		} {
			r := e.req("GET", path, k, nil)
			if r.status != 200 {
				t.Fatalf("GET %s: %d %s", path, r.status, r.body)
			}
			seen += walkTimes(t, path, r.json(t))
		}
		// Each resource has several; a walk that found few proves nothing.
		if seen < 60 {
			t.Errorf("checked only %d times", seen)
		}
	})
}

// TestUnknownQueryParameters: every operation refuses a query parameter
// it does not declare, naming it; declared ones pass, and ping URLs take
// anything.
func TestUnknownQueryParameters(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		n := 0
		for path, item := range e.api.OpenAPI().Paths {
			if item.Get == nil || !strings.HasPrefix(path, httpapi.Prefix) {
				continue
			}
			n++
			// Path ids are judged after the query, so any will do.
			target := regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "x")
			r := e.req("GET", target+"?bogus=1&limit=10", k, nil)
			if r.status != http.StatusBadRequest || r.code(t) != "bad_request" {
				t.Errorf("GET %s?bogus=1: %d %s", target, r.status, r.body)
				continue
			}
			var params []string
			for _, d := range r.json(t)["error"].(map[string]any)["details"].([]any) {
				params = append(params, d.(map[string]any)["parameter"].(string))
			}
			declaresLimit := slices.ContainsFunc(item.Get.Parameters, func(p *huma.Param) bool { return p.In == "query" && p.Name == "limit" })
			want := []string{"query.bogus"}
			if !declaresLimit {
				want = []string{"query.bogus", "query.limit"}
			}
			if !slices.Equal(params, want) {
				t.Errorf("GET %s: details name %v, want %v", target, params, want)
			}
		}
		if n < 10 {
			t.Fatalf("only %d GET operations", n)
		}
		if r := e.req("GET", "/api/v1/monitors?limit=1", k, nil); r.status != 200 {
			t.Errorf("a declared parameter: %d %s", r.status, r.body)
		}
		// Without a key the answer is 401 whatever the query says.
		if r := e.req("GET", "/api/v1/monitors?bogus=1", "", nil); r.status != 401 {
			t.Errorf("no key: %d", r.status)
		}
		hb := e.newHeartbeat(t, k, periodic("lenient", 60, 30))
		if r := e.ping(t, "GET", hb["pingUrl"].(string), "?bogus=1&utm_source=cron", nil); r.status != 200 {
			t.Errorf("ping with an unknown parameter: %d %s", r.status, r.body)
		}
	})
}

// TestRateHeadersEverywhere: answers without a valid key, to no route,
// the document and pings all say which budget they counted against.
func TestRateHeadersEverywhere(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		// A minute on: every bucket the env's setup touched is full again.
		e.clock.Set(time.Now().Add(time.Minute))
		want := func(what string, r response, status int, limit, remaining string) {
			t.Helper()
			if r.status != status {
				t.Errorf("%s: status %d, want %d: %s", what, r.status, status, r.body)
			}
			if r.header.Get("X-RateLimit-Limit") != limit || r.header.Get("X-RateLimit-Remaining") != remaining || r.header.Get("X-RateLimit-Reset") == "" {
				t.Errorf("%s: X-RateLimit-Limit %q Remaining %q Reset %q, want %s, %s", what, r.header.Get("X-RateLimit-Limit"),
					r.header.Get("X-RateLimit-Remaining"), r.header.Get("X-RateLimit-Reset"), limit, remaining)
			}
		}
		want("no key", e.req("GET", "/api/v1/monitors", "", nil), 401, "600", "599")
		want("a bad key", e.req("GET", "/api/v1/monitors", "tsk_"+strings.Repeat("x", 43), nil), 401, "600", "598")
		want("no route", e.req("GET", "/api/v1/nothing-here", "", nil), 404, "600", "597")
		want("the document", e.req("GET", "/api/v1/openapi.json", "", nil), 200, "600", "599") // a budget of its own
		k := e.ownerKey()
		want("a valid key", e.req("GET", "/api/v1/monitors", k, nil), 200, "600", "599")
		hb := e.newHeartbeat(t, k, periodic("counted", 60, 30))
		want("a ping", e.ping(t, "GET", hb["pingUrl"].(string), "", nil), 200, "600", "99")
		want("another ping", e.ping(t, "POST", hb["pingUrl"].(string), "/start", "log"), 200, "600", "98")
		want("a ping to no heartbeat", e.req("GET", "/ping/"+strings.Repeat("n", 22), "", nil), 404, "60", "59")
	})
}

// TestUnknownPathsAnswerJSON: the API's root and any path under it that
// is no route answer 404 in the error envelope, never HTML or text.
func TestUnknownPathsAnswerJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Engines(t)[0])
	for _, p := range []string{"/api/v1", "/api/v1/", "/api/v1/nope", "/api/v1/monitors/mon_x/nope/deeper", "/api/v1/openapi.yaml.bak", "/api/v2/monitors"} {
		for _, key := range []string{"", e.ownerKey()} {
			r := e.req("GET", p, key, nil)
			if r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || r.code(t) != "not_found" {
				t.Errorf("GET %s: %d %s %s", p, r.status, r.header.Get("Content-Type"), r.body)
			}
		}
	}
}

// TestTrustedProxies: behind a trusted proxy the address its forwarding
// header names is the client, for every per-address limit; from anyone
// else the header is ignored.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		e.clock.Set(time.Now())
		trust, err := clientaddr.Parse("127.0.0.0/8,::1")
		if err != nil {
			t.Fatal(err)
		}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		proxied := httptest.NewServer(httpapi.Observe(log, httpapi.New(e.app, log, httpapi.Options{BaseURL: "http://tocsin.test", TrustedProxies: trust})))
		t.Cleanup(proxied.Close)
		badKey := "tsk_" + strings.Repeat("x", 43)
		call := func(base, path, key, xff string) int {
			t.Helper()
			req, _ := http.NewRequest("GET", base+path, nil)
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			if xff != "" {
				req.Header.Set("X-Forwarded-For", xff)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode
		}
		const a, b = "198.51.100.1", "198.51.100.2"
		for i := 1; i <= 600; i++ {
			if s := call(proxied.URL, "/api/v1/monitors", badKey, a); s != 401 {
				t.Fatalf("client A, bad key %d: %d", i, s)
			}
		}
		if s := call(proxied.URL, "/api/v1/monitors", badKey, a); s != 429 {
			t.Errorf("client A past its budget: %d", s)
		}
		if s := call(proxied.URL, "/api/v1/monitors", badKey, b); s != 401 {
			t.Errorf("client B, behind the same proxy: %d, want its own budget (401)", s)
		}
		// A client that writes its own header cannot pass for another:
		// only the right-most hop the trusted proxy appended counts.
		if s := call(proxied.URL, "/api/v1/monitors", badKey, b+", "+a); s != 429 {
			t.Errorf("A claiming to be forwarded for B: %d, want 429", s)
		}
		if s := call(proxied.URL, "/api/v1/monitors", badKey, a+", 127.0.0.9"); s != 429 {
			t.Errorf("A through two trusted proxies: %d, want 429", s)
		}
		if s := call(proxied.URL, "/api/v1/monitors", badKey, "garbage, "+b); s != 401 {
			t.Errorf("B after a garbage hop: %d, want 401", s)
		}

		// Pings to unknown URLs are counted per forwarded address too.
		for i := 1; i <= 60; i++ {
			if s := call(proxied.URL, "/ping/"+strings.Repeat("u", 20)+strconv.Itoa(i), "", a); s != 404 {
				t.Fatalf("client A, unknown ping %d: %d", i, s)
			}
		}
		if s := call(proxied.URL, "/ping/"+strings.Repeat("u", 24), "", a); s != 429 {
			t.Errorf("client A past its unknown-ping budget: %d", s)
		}
		if s := call(proxied.URL, "/ping/"+strings.Repeat("u", 24), "", b); s != 404 {
			t.Errorf("client B's unknown ping: %d, want 404", s)
		}

		// Without trust the header is ignored: every request is
		// 127.0.0.1's, whatever it claims.
		for i := 1; i <= 600; i++ {
			if s := call(e.srv.URL, "/api/v1/monitors", badKey, a); s != 401 {
				t.Fatalf("untrusted, bad key %d: %d", i, s)
			}
		}
		if s := call(e.srv.URL, "/api/v1/monitors", badKey, b); s != 429 {
			t.Errorf("untrusted: a different X-Forwarded-For escaped the limit: %d", s)
		}
	})
}
