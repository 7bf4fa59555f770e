package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/netguard"
)

func TestHTTPStatus(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		w.WriteHeader(code)
	}))
	defer srv.Close()
	p := New(Options{ProbeID: "node-a", Region: "eu"})
	cases := []struct {
		code   int
		ranges []monitor.StatusRange
		result monitor.Result
		reason string
	}{
		{200, nil, monitor.ResultUp, ""},
		{204, nil, monitor.ResultUp, ""},
		{503, nil, monitor.ResultDown, "status 503 not in 200-399"},
		{404, nil, monitor.ResultDown, "status 404 not in 200-399"},
		{418, []monitor.StatusRange{{From: 200, To: 204}, {From: 418, To: 418}}, monitor.ResultUp, ""},
		{205, []monitor.StatusRange{{From: 200, To: 204}, {From: 418, To: 418}}, monitor.ResultDown, "status 205 not in 200-204, 418"},
		{503, []monitor.StatusRange{{From: 500, To: 599}}, monitor.ResultUp, ""},
	}
	for _, c := range cases {
		obs := check(t, p, httpMon(fmt.Sprintf("%s/?code=%d", srv.URL, c.code), func(cfg *monitor.Config) {
			cfg.ExpectedStatusCodes = c.ranges
		}))
		want(t, obs, c.result, c.reason)
		if obs.StatusCode != c.code || obs.Probe != "node-a" || obs.Region != "eu" || obs.Latency <= 0 {
			t.Errorf("code %d: observation %+v", c.code, obs)
		}
		if len(obs.Assertions) != 1 || obs.Assertions[0].Kind != "status" || obs.Assertions[0].Passed != (c.result == monitor.ResultUp) {
			t.Errorf("code %d: assertions %+v", c.code, obs.Assertions)
		}
	}
}

func TestHTTPAssertions(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok","db":{"latency":12},"tags":["a","b"]}`)
	}))
	defer srv.Close()
	p := New(Options{})
	kw := func(k string, present bool) []monitor.KeywordAssertion {
		return []monitor.KeywordAssertion{{Keyword: k, Present: present}}
	}
	ja := func(path string, op monitor.Operator, val string) []monitor.JSONAssertion {
		a := monitor.JSONAssertion{Path: path, Operator: op}
		if val != "" {
			a.Value = json.RawMessage(val)
		}
		return []monitor.JSONAssertion{a}
	}
	cases := []struct {
		name   string
		kw     []monitor.KeywordAssertion
		json   []monitor.JSONAssertion
		result monitor.Result
		reason string
	}{
		{"keyword present", kw(`"OK"`, true), nil, monitor.ResultUp, ""},
		{"keyword missing", kw("maintenance", true), nil, monitor.ResultDown, `keyword "maintenance" not found in the body`},
		{"keyword absent passes", kw("error", false), nil, monitor.ResultUp, ""},
		{"keyword must be absent", kw("status", false), nil, monitor.ResultDown, "must be absent"},
		{"json equals", nil, ja("$.status", monitor.OpEquals, `"ok"`), monitor.ResultUp, ""},
		{"json equals fails", nil, ja("$.status", monitor.OpEquals, `"degraded"`), monitor.ResultDown, `$.status is "ok", expected "degraded"`},
		{"json lt", nil, ja("$.db.latency", monitor.OpLT, `100`), monitor.ResultUp, ""},
		{"json gt fails", nil, ja("$.db.latency", monitor.OpGT, `100`), monitor.ResultDown, "$.db.latency is 12, expected more than 100"},
		{"json contains", nil, ja("$.tags", monitor.OpContains, `"b"`), monitor.ResultUp, ""},
		{"json exists fails", nil, ja("$.missing", monitor.OpExists, ""), monitor.ResultDown, "$.missing selects nothing"},
	}
	for _, c := range cases {
		obs := check(t, p, httpMon(srv.URL, func(cfg *monitor.Config) {
			cfg.KeywordAssertions, cfg.JSONAssertions = c.kw, c.json
		}))
		if obs.Result != c.result || !strings.Contains(obs.Reason, c.reason) {
			t.Errorf("%s: got %s %q, want %s %q", c.name, obs.Result, obs.Reason, c.result, c.reason)
		}
		if len(obs.Assertions) != 2 {
			t.Errorf("%s: want status and one more outcome, got %+v", c.name, obs.Assertions)
		}
	}
}

func TestHTTPBodyCutAt128KiB(t *testing.T) {
	t.Parallel()
	// A JSON document of 200 KiB whose marker keyword is near the start.
	body := `{"marker":"here","pad":"` + strings.Repeat("x", 200<<10) + `","tail":"end"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, body)
	}))
	defer srv.Close()
	p := New(Options{})

	obs := check(t, p, httpMon(srv.URL, func(c *monitor.Config) {
		c.KeywordAssertions = []monitor.KeywordAssertion{{Keyword: "marker", Present: true}}
	}))
	want(t, obs, monitor.ResultUp, "")

	obs = check(t, p, httpMon(srv.URL, func(c *monitor.Config) {
		c.KeywordAssertions = []monitor.KeywordAssertion{{Keyword: "marker", Present: true}}
		c.JSONAssertions = []monitor.JSONAssertion{{Path: "$.marker", Operator: monitor.OpExists}}
	}))
	want(t, obs, monitor.ResultDown, "cut at 128 KiB")
	if len(obs.Assertions) != 3 || !obs.Assertions[1].Passed || obs.Assertions[2].Passed {
		t.Fatalf("want keyword passed and JSON failed: %+v", obs.Assertions)
	}

	// An endless body: the check reads what it asserts on and stops.
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "marker ")
		chunk := []byte(strings.Repeat("y", 32<<10))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer endless.Close()
	obs = check(t, p, httpMon(endless.URL, func(c *monitor.Config) {
		c.TimeoutSeconds = 2
		c.KeywordAssertions = []monitor.KeywordAssertion{{Keyword: "marker", Present: true}}
	}))
	want(t, obs, monitor.ResultUp, "")

	// A keyword beyond the first 128 KiB is not seen, and the reason says why.
	obs = check(t, p, httpMon(srv.URL, func(c *monitor.Config) {
		c.KeywordAssertions = []monitor.KeywordAssertion{{Keyword: `"tail"`, Present: true}}
	}))
	want(t, obs, monitor.ResultDown, "not found in the first 128 KiB")
}

func TestHTTPRedirects(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "arrived") })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	// /chain/n redirects n more times before /ok.
	mux.HandleFunc("/chain/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			http.Redirect(w, r, "/ok", http.StatusFound)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/chain/%d", n-1), http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	p := New(Options{})
	no := false

	obs := check(t, p, httpMon(srv.URL+"/moved", func(c *monitor.Config) {
		c.KeywordAssertions = []monitor.KeywordAssertion{{Keyword: "arrived", Present: true}}
	}))
	want(t, obs, monitor.ResultUp, "")
	if obs.StatusCode != 200 {
		t.Fatalf("followed redirect: status %d", obs.StatusCode)
	}

	obs = check(t, p, httpMon(srv.URL+"/moved", func(c *monitor.Config) { c.FollowRedirects = &no }))
	want(t, obs, monitor.ResultUp, "") // 302 is within the default 200-399
	if obs.StatusCode != 302 {
		t.Fatalf("not followed: status %d", obs.StatusCode)
	}
	obs = check(t, p, httpMon(srv.URL+"/moved", func(c *monitor.Config) {
		c.FollowRedirects = &no
		c.ExpectedStatusCodes = []monitor.StatusRange{{From: 200, To: 299}}
	}))
	want(t, obs, monitor.ResultDown, "status 302 not in 200-299")

	want(t, check(t, p, httpMon(srv.URL+"/loop", nil)), monitor.ResultDown, "too many redirects")
	// Ten redirects are allowed, eleven are not.
	want(t, check(t, p, httpMon(srv.URL+"/chain/9", nil)), monitor.ResultUp, "")
	want(t, check(t, p, httpMon(srv.URL+"/chain/10", nil)), monitor.ResultDown, "too many redirects (more than 10)")
}

func TestHTTPTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs

	obs := check(t, New(Options{RootCAs: pool}), httpMon(srv.URL, nil))
	want(t, obs, monitor.ResultUp, "")
	if obs.Phases.TLS <= 0 || obs.Phases.Connect <= 0 || obs.Phases.FirstByte < obs.Phases.TLS {
		t.Fatalf("phases %+v", obs.Phases)
	}
	obs = check(t, New(Options{}), httpMon(srv.URL, nil))
	want(t, obs, monitor.ResultDown, "TLS: certificate signed by an unknown authority")
}

func TestHTTPTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	p := New(Options{})
	start := time.Now()
	obs := check(t, p, httpMon(srv.URL, func(c *monitor.Config) { c.TimeoutSeconds = 1 }))
	want(t, obs, monitor.ResultDown, "timed out after 1s waiting for the response headers from "+srv.Listener.Addr().String())
	if d := time.Since(start); d < time.Second || d > 3*time.Second {
		t.Fatalf("the check took %s with a 1s timeout", d)
	}
	obs = check(t, p, httpMon(srv.URL+"/body", func(c *monitor.Config) { c.TimeoutSeconds = 1 }))
	want(t, obs, monitor.ResultDown, "timed out after 1s reading the body from "+srv.Listener.Addr().String())
	if obs.StatusCode != 200 {
		t.Fatalf("status %d", obs.StatusCode)
	}
}

func TestHTTPDegradedLatency(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
	}))
	defer srv.Close()
	p := New(Options{})
	obs := check(t, p, httpMon(srv.URL, func(c *monitor.Config) { c.DegradedLatencyMs = 50 }))
	want(t, obs, monitor.ResultDegraded, "above the degraded threshold of 50 ms")
	obs = check(t, p, httpMon(srv.URL, func(c *monitor.Config) { c.DegradedLatencyMs = 3000 }))
	want(t, obs, monitor.ResultUp, "")
}

func TestHTTPAuth(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized) // so the failure path runs too
	}))
	defer srv.Close()
	p := New(Options{})
	cases := []struct {
		auth   monitor.Auth
		header string
		value  string
	}{
		{monitor.Auth{Type: monitor.AuthBasic, Username: "ops", Password: "s3cret-pass"}, "Authorization", "Basic b3BzOnMzY3JldC1wYXNz"},
		{monitor.Auth{Type: monitor.AuthBearer, Token: "tok-123456"}, "Authorization", "Bearer tok-123456"},
		{monitor.Auth{Type: monitor.AuthHeader, Header: "X-Api-Key", Value: "key-abcdef"}, "X-Api-Key", "key-abcdef"},
	}
	for _, c := range cases {
		obs := check(t, p, httpMon(srv.URL, func(cfg *monitor.Config) { cfg.Auth = &c.auth }))
		want(t, obs, monitor.ResultDown, "status 401")
		mu.Lock()
		got := seen.Get(c.header)
		mu.Unlock()
		if got != c.value {
			t.Errorf("%s: server saw %s %q, want %q", c.auth.Type, c.header, got, c.value)
		}
		for _, secret := range []string{c.auth.Password, c.auth.Token, c.auth.Value} {
			if secret != "" && strings.Contains(fmt.Sprintf("%+v", obs), secret) {
				t.Errorf("%s: the observation holds the secret: %+v", c.auth.Type, obs)
			}
		}
	}
	if r := redact("failed near tok-123456", monitor.Config{Auth: &cases[1].auth}); strings.Contains(r, "tok-123456") {
		t.Errorf("redact left the token: %q", r)
	}
	if r := redact("failed near hdr-secret-9", monitor.Config{Headers: map[string]string{"X-Api-Password": "hdr-secret-9"}}); strings.Contains(r, "hdr-secret-9") {
		t.Errorf("redact left a header value: %q", r)
	}
}

func TestHTTPRequestSent(t *testing.T) {
	t.Parallel()
	type got struct {
		method, body, ua, custom, ctype string
	}
	ch := make(chan got, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- got{r.Method, string(b), r.UserAgent(), r.Header.Get("X-Test"), r.Header.Get("Content-Type")}
	}))
	defer srv.Close()
	p := New(Options{})
	obs := check(t, p, httpMon(srv.URL, func(c *monitor.Config) {
		c.Method = "POST"
		c.Body = `{"ping":1}`
		c.Headers = map[string]string{"X-Test": "yes", "Content-Type": "application/json"}
	}))
	want(t, obs, monitor.ResultUp, "")
	g := <-ch
	if g != (got{"POST", `{"ping":1}`, UserAgent, "yes", "application/json"}) {
		t.Fatalf("server saw %+v", g)
	}
	// A monitor's own User-Agent wins; the default method is GET.
	check(t, p, httpMon(srv.URL, func(c *monitor.Config) { c.Headers = map[string]string{"User-Agent": "custom/2"} }))
	if g := <-ch; g.method != "GET" || g.ua != "custom/2" || g.body != "" {
		t.Fatalf("server saw %+v", g)
	}
}

func TestHTTPPhasesOnNewConnections(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	_, port := splitAddr(t, srv.Listener.Addr().String())
	p := New(Options{})
	for i := range 2 {
		// A name, so the check resolves it (from /etc/hosts).
		obs := check(t, p, httpMon(fmt.Sprintf("http://localhost:%d/", port), nil))
		want(t, obs, monitor.ResultUp, "")
		ph := obs.Phases
		if ph.DNS <= 0 || ph.Connect <= 0 || ph.FirstByte <= 0 || ph.TLS != 0 || obs.Latency < ph.FirstByte {
			t.Fatalf("check %d: phases %+v, latency %s", i, ph, obs.Latency)
		}
		if ph.FirstByte < 5*time.Millisecond {
			t.Fatalf("check %d: first byte at %s, before the handler could answer", i, ph.FirstByte)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections for 2 checks, want one each", n)
	}
}

func TestHTTPBlockedByPolicy(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, port := splitAddr(t, srv.Listener.Addr().String())
	blocked := New(Options{Policy: netguard.Policy{BlockPrivate: true}})
	for _, u := range []string{srv.URL, fmt.Sprintf("http://localhost:%d/", port)} {
		obs := check(t, blocked, httpMon(u, nil))
		want(t, obs, monitor.ResultDown, ReasonBlocked)
	}
	// The same target under the default policy is fine: the policy refused it.
	open := New(Options{})
	want(t, check(t, open, httpMon(srv.URL, nil)), monitor.ResultUp, "")
}

func TestHTTPRefused(t *testing.T) {
	t.Parallel()
	addr := closedPort(t)
	obs := check(t, New(Options{}), httpMon("http://"+addr+"/", nil))
	want(t, obs, monitor.ResultDown, "connection refused to "+addr)
	// A name says which address it resolved to.
	_, port := splitAddr(t, addr)
	named := fmt.Sprintf("localhost:%d", port)
	obs = check(t, New(Options{}), httpMon("http://"+named+"/", nil))
	if obs.Result != monitor.ResultDown || (obs.Reason != "connection refused to "+named+" (127.0.0.1)" &&
		obs.Reason != "connection refused to "+named+" (::1)") {
		t.Fatalf("got %s %q, want down, connection refused to %s (its address)", obs.Result, obs.Reason, named)
	}
}

func BenchmarkHTTPCheck(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	p := New(Options{})
	m := httpMon(srv.URL, func(c *monitor.Config) {
		c.ExpectedStatusCodes = []monitor.StatusRange{{From: 200, To: 200}}
	})
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if obs := p.Check(ctx, m); obs.Result != monitor.ResultUp {
			b.Fatalf("%s %s", obs.Result, obs.Reason)
		}
	}
}
