package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/httpapi"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// details returns the pointers and parameters an error names.
func details(t *testing.T, r response) []string {
	t.Helper()
	var env struct {
		Error struct {
			Details []struct{ Pointer, Parameter string }
		}
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	var out []string
	for _, d := range env.Error.Details {
		out = append(out, d.Pointer+d.Parameter)
	}
	return out
}

// TestEdgeIDs: a path id that cannot exist — odd bytes, another
// resource's prefix, a wrong shape — is not_found, exactly as an id of
// the right shape that exists nowhere.
func TestEdgeIDs(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		mon := e.monitorIn(e.wsA)
		absent := e.req("GET", "/api/v1/monitors/"+ids.New(ids.Monitor, time.Now()), k, nil)
		if absent.status != 404 || absent.code(t) != "not_found" {
			t.Fatalf("absent monitor: %d %s", absent.status, absent.body)
		}
		want := absent.json(t)["error"].(map[string]any)["message"]
		for _, id := range []string{"%00", "a%00", "%ff", "%c3%28", "mon_%ff", "hb_" + mon[4:], strings.ToLower(mon), mon + "0", strings.Repeat("A", 300)} {
			for _, rt := range []struct{ method, path string }{
				{"GET", "/api/v1/monitors/" + id},
				{"DELETE", "/api/v1/monitors/" + id},
				{"GET", "/api/v1/monitors/" + id + "/checks"},
				{"POST", "/api/v1/incidents/" + id + "/acknowledge"},
				{"GET", "/api/v1/deliveries/" + id},
			} {
				r := e.req(rt.method, rt.path, k, nil)
				if r.status != 404 || r.code(t) != "not_found" || r.json(t)["error"].(map[string]any)["message"] != want {
					t.Errorf("%s %s: %d %s", rt.method, rt.path, r.status, r.body)
				}
			}
		}
		if r := e.req("GET", "/api/v1/monitors/"+mon, k, nil); r.status != 200 {
			t.Errorf("a real monitor: %d %s", r.status, r.body)
		}
	})
}

// TestEdgeQuery: query names and values must be text; the answer names
// the parameter.
func TestEdgeQuery(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		mon := e.monitorIn(e.wsA)
		for _, c := range []struct{ query, where string }{
			{"subject=%00", "query.subject"},
			{"subject=mon_%ff", "query.subject"},
			{"subject=%c3%28", "query.subject"},
			{"limit=5&status=open&to=%00", "query.to"},
			{"cursor=%zz", "query.cursor"},
			{"%ff=1", "query"},
			{"unknown=%00", "query.unknown"},
		} {
			r := e.req("GET", "/api/v1/incidents?"+c.query, k, nil)
			if r.status != 400 || r.code(t) != "bad_request" || !slices.Equal(details(t, r), []string{c.where}) {
				t.Errorf("%s: %d %s", c.query, r.status, r.body)
			}
			if strings.Contains(string(r.body), `\u0000`) {
				t.Errorf("%s: the value is echoed: %s", c.query, r.body)
			}
		}
		if r := e.req("GET", "/api/v1/incidents?subject="+mon, k, nil); r.status != 200 {
			t.Errorf("valid query: %d %s", r.status, r.body)
		}
		// Valid text passes the edge: a parameter no operation takes is
		// then refused for what it is, not for its bytes.
		if r := e.req("GET", "/api/v1/incidents?subject="+mon+"&zz=%C3%A9t%C3%A9", k, nil); r.status != 400 ||
			!slices.Equal(details(t, r), []string{"query.zz"}) || !strings.Contains(string(r.body), "unknown parameter") {
			t.Errorf("valid text in an unknown parameter: %d %s", r.status, r.body)
		}
	})
}

// TestEdgeHeaders: the headers the API reads must be text; nothing is
// created when one is not.
func TestEdgeHeaders(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		body := `{"type":"http","name":"n","config":{"url":"https://a.example"}}`
		for _, c := range []struct{ name, value string }{
			{"X-Workspace-Id", "\xff"},
			{"X-Workspace-Id", e.wsA.ID + "\xc3\x28"},
			{"Idempotency-Key", "k\xff"},
		} {
			r := e.req("POST", "/api/v1/monitors", k, body, c.name, c.value)
			if r.status != 400 || r.code(t) != "bad_request" || !slices.Equal(details(t, r), []string{"header." + c.name}) {
				t.Errorf("%s %q: %d %s", c.name, c.value, r.status, r.body)
			}
		}
		if n := e.countMonitors(); n != 0 {
			t.Errorf("%d monitors created", n)
		}
		if r := e.req("POST", "/api/v1/monitors", k, body, "X-Workspace-Id", e.wsA.ID, "Idempotency-Key", "k-é"); r.status != 201 {
			t.Errorf("valid headers: %d %s", r.status, r.body)
		}
	})
}

// TestEdgeBody: NUL in any string of a body is a validation error naming
// every such field; a body that is not UTF-8 is not JSON.
func TestEdgeBody(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		mon := e.monitorIn(e.wsA)
		cases := []struct {
			method, path, body string
			want               []string
		}{
			{"POST", "/api/v1/monitors", `{"type":"http","name":"a\u0000","config":{"url":"https://a.example","headers":{"X-\u0000":"v"},"expectedValues":["ok","\u0000"]}}`,
				[]string{"/name", "/config/headers/X-\x00", "/config/expectedValues/1"}},
			{"PATCH", "/api/v1/monitors/" + mon, `{"config":{"url":"https://a.example/\u0000"}}`, []string{"/config/url"}},
			{"POST", "/api/v1/incidents", `{"title":"t","message":"\u0000","affectedMonitors":["` + mon + `\u0000"]}`, []string{"/message", "/affectedMonitors/0"}},
			{"POST", "/api/v1/maintenance-windows", `{"name":"w","description":"\u0000","monitorIds":["` + mon + `"],"recurrence":{"cron":"0 2 * * *","timezone":"UTC\u0000","durationMinutes":60}}`,
				[]string{"/description", "/recurrence/timezone"}},
			{"POST", "/api/v1/notification-channels", `{"name":"c\u0000","kind":"webhook","config":{"url":"https://h.example/"}}`, []string{"/name"}},
			{"POST", "/api/v1/heartbeats", `{"name":"h","schedule":{"cron":"0 3 * * *","timezone":"\u0000"}}`, []string{"/schedule/timezone"}},
		}
		for _, c := range cases {
			r := e.req(c.method, c.path, k, c.body)
			if got := pointers(t, r); !slices.Equal(got, c.want) {
				t.Errorf("%s %s: pointers %q, want %q", c.method, c.path, got, c.want)
			}
		}
		for _, body := range []string{
			"{\"type\":\"http\",\"name\":\"a\xff\",\"config\":{\"url\":\"https://a.example\"}}",
			"{\"type\":\"http\",\"name\":\"\xc3\x28\",\"config\":{\"url\":\"https://a.example\"}}",
		} {
			r := e.req("POST", "/api/v1/monitors", k, body)
			if r.status != 400 || r.code(t) != "bad_request" || !strings.Contains(string(r.body), "UTF-8") {
				t.Errorf("%q: %d %s", body, r.status, r.body)
			}
		}
		if n := e.countMonitors(); n != 1 {
			t.Errorf("%d monitors, want the one seeded", n)
		}
		// A backslash before u0000 is text, and an escaped lone surrogate
		// is U+FFFD, as in any JSON decoder: both are kept.
		r := e.req("POST", "/api/v1/monitors", k, `{"type":"http","name":"\\u0000 \ud800","config":{"url":"https://a.example"}}`)
		if r.status != 201 || r.json(t)["name"] != `\u0000 `+"\uFFFD" {
			t.Errorf("escaped text: %d %s", r.status, r.body)
		}
	})
}

// TestEdgeContentType: a body must be sent as application/json (415
// otherwise); an optional body may be omitted without a media type.
func TestEdgeContentType(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		body := `{"type":"http","name":"n","config":{"url":"https://a.example"}}`
		for _, c := range []struct {
			ct     string
			status int
		}{
			{"", 415},
			{"text/plain", 415},
			{"application/json; charset=iso-8859-1", 415},
			{"application/merge-patch+json", 415},
			{"application/vnd.api+json", 415},
			{"application/json", 201},
			{"application/json; charset=utf-8", 201},
			{"Application/JSON; charset=UTF-8", 201},
		} {
			hdr := []string{"Content-Type", c.ct}
			r := e.rawReq("POST", "/api/v1/monitors", k, []byte(body), hdr...)
			if r.status != c.status || (c.status == 415 && r.code(t) != "unsupported_media_type") {
				t.Errorf("Content-Type %q: %d %s", c.ct, r.status, r.body)
			}
		}
		if n := e.countMonitors(); n != 3 {
			t.Errorf("%d monitors, want 3", n)
		}
		mon := e.monitorIn(e.wsA)
		if r := e.rawReq("PATCH", "/api/v1/monitors/"+mon, k, []byte(`{"name":"m"}`), "Content-Type", ""); r.status != 415 {
			t.Errorf("PATCH without a media type: %d %s", r.status, r.body)
		}
		if r := e.rawReq("PATCH", "/api/v1/monitors/"+mon, k, []byte(`{"name":"m"}`), "Content-Type", "application/merge-patch+json"); r.status != 200 {
			t.Errorf("PATCH as application/merge-patch+json: %d %s", r.status, r.body)
		}
		inc := e.req("POST", "/api/v1/incidents", k, map[string]any{"title": "t", "message": "m"}).json(t)["id"].(string)
		if r := e.rawReq("POST", "/api/v1/incidents/"+inc+"/resolve", k, nil); r.status != 200 {
			t.Errorf("an optional body omitted: %d %s", r.status, r.body)
		}
		if r := e.rawReq("POST", "/api/v1/monitors", k, nil); r.status != 400 || r.code(t) != "bad_request" {
			t.Errorf("a required body omitted: %d %s", r.status, r.body)
		}
	})
}

// rawReq sends body as it is; a header given as "" is left out.
func (e *env) rawReq(method, path, key string, body []byte, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	e.validate(e.t, req, body, resp, b)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestTimeZoneErrorsDoNotEcho: a refused time zone is named by its field,
// never repeated back.
func TestTimeZoneErrorsDoNotEcho(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		mon := e.monitorIn(e.wsA)
		const zone = "Secret/Zone-4f1c"
		for _, c := range []struct{ path, body, ptr string }{
			{"/api/v1/heartbeats", `{"name":"h","schedule":{"cron":"0 3 * * *","timezone":"` + zone + `"}}`, "/schedule/timezone"},
			{"/api/v1/maintenance-windows", `{"name":"w","monitorIds":["` + mon + `"],"recurrence":{"cron":"0 2 * * *","timezone":"` + zone + `","durationMinutes":60}}`, "/recurrence/timezone"},
			{"/api/v1/maintenance-windows", `{"name":"w","monitorIds":["` + mon + `"],"recurrence":{"rrule":"FREQ=DAILY","timezone":"` + zone + `","durationMinutes":60}}`, "/recurrence/timezone"},
		} {
			r := e.req("POST", c.path, k, c.body)
			if got := pointers(t, r); !slices.Contains(got, c.ptr) || strings.Contains(string(r.body), "Secret") {
				t.Errorf("%s: %d %s", c.path, r.status, r.body)
			}
		}
	})
}

// syncBuffer is a log sink for a server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFailedAuthFlood: requests refused before a key is known — odd
// headers beside a well-formed unknown key, unknown keys — count against
// the client address: a flood meets 429s, every answer is a 4xx, and each
// writes at most its one access line, never an ERROR. A valid key from
// the same address is not held back.
func TestFailedAuthFlood(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			const limit = 5
			e := newEnvWith(t, eng, app.Config{RatePerMinute: limit})
			logs := &syncBuffer{}
			log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			// A server of its own, to read its log.
			e.srv = httptest.NewUnstartedServer(nil)
			e.api = httpapi.New(e.app, log, httpapi.Options{BaseURL: "http://" + e.srv.Listener.Addr().String()})
			e.srv.Config.Handler = httpapi.Observe(log, e.api)
			e.srv.Start()
			t.Cleanup(e.srv.Close)
			e.check = e.validator()
			good := e.ownerKey()
			logs.mu.Lock()
			logs.b.Reset()
			logs.mu.Unlock()

			unknown := app.KeyPrefix + strings.Repeat("0", 43)
			const n = 3 * limit
			codes := map[int]int{}
			for i := range n {
				hdr := []string{"X-Workspace-Id", "\xff"}
				if i%3 == 2 {
					hdr = []string{"X-Workspace-Id", e.wsA.ID}
				}
				r := e.req("GET", "/api/v1/monitors", unknown, nil, hdr...)
				codes[r.status]++
				if r.status < 400 || r.status >= 500 {
					t.Fatalf("request %d: %d %s", i, r.status, r.body)
				}
				if r.status == 429 && (r.code(t) != "rate_limited" || r.header.Get("Retry-After") == "") {
					t.Errorf("request %d: 429 without rate_limited and Retry-After: %v %s", i, r.header, r.body)
				}
			}
			if codes[429] < n-limit-1 || codes[400] == 0 {
				t.Errorf("answers by status %v: want 400s, then 429s past %d", codes, limit)
			}
			if r := e.req("GET", "/api/v1/monitors", good, nil); r.status != 200 {
				t.Errorf("a valid key from the flooding address: %d %s", r.status, r.body)
			}
			out := logs.String()
			if strings.Contains(out, "level=ERROR") || strings.Count(out, "\n") > n+1 {
				t.Errorf("log of %d requests:\n%s", n+1, out)
			}
		})
	}
}
