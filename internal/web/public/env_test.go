package public_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/httpapi"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/probe"
	"github.com/tocsin/tocsin/internal/scheduler"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/web/console"
	"github.com/tocsin/tocsin/internal/web/public"
)

// clock is the test's settable time source; zero follows real time.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// env is a server as serve wires it: the API and the public pages on one
// loopback listener over a real database, with workspaces A and B.
type env struct {
	t     *testing.T
	db    *store.DB
	url   string
	app   *app.App
	pages *public.Pages
	srv   *httptest.Server
	clock *clock
	wsA   account.Workspace
	wsB   account.Workspace
	keyA  string
	keyB  string
	seqs  map[string]int64 // monitors claimed by record's writer
}

func forEachEngine(t *testing.T, opts public.Options, f func(t *testing.T, e *env)) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) { f(t, newEnv(t, eng, opts)) })
	}
}

func newEnv(t *testing.T, eng storetest.Engine, opts public.Options) *env {
	t.Helper()
	return newEnvWith(t, eng, opts, app.Config{})
}

// newEnvWith is newEnv with the app's config (its checker is the test's).
func newEnvWith(t *testing.T, eng storetest.Engine, opts public.Options, cfg app.Config) *env {
	t.Helper()
	ctx := context.Background()
	url := storetest.URL(t, eng)
	db := storetest.Open(t, url)
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// A checker, for the monitor form's "Test now".
	cfg.Checker = probe.New(probe.Options{ProbeID: "test-probe", Region: "test"})
	a := app.New(db, kr, c.Now, log, cfg)
	e := &env{t: t, db: db, url: url, app: a, clock: c, seqs: map[string]int64{}}
	for _, ws := range []string{"ws-a", "ws-b"} {
		u, err := a.CreateUser(ctx, app.UserRequest{Email: "owner@" + ws + ".test", Workspace: ws, Role: account.RoleOwner})
		if err != nil {
			t.Fatal(err)
		}
		k, err := a.CreateKeyForUser(ctx, app.OperatorKeyRequest{Email: "owner@" + ws + ".test", Workspace: u.Workspace.ID, Scopes: scopeNames()})
		if err != nil {
			t.Fatal(err)
		}
		if ws == "ws-a" {
			e.wsA, e.keyA = u.Workspace, k.Secret
		} else {
			e.wsB, e.keyB = u.Workspace, k.Secret
		}
	}
	runPings(t, a)
	e.srv = httptest.NewUnstartedServer(nil)
	base := "http://" + e.srv.Listener.Addr().String()
	api := httpapi.New(a, log, httpapi.Options{BaseURL: base})
	opts.BaseURL, opts.Now = base, c.Now
	e.pages = public.New(a, log, opts)
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.Handle(public.StatusPrefix, e.pages)
	console.New(a, log, console.Options{BaseURL: base}).Mount(mux)
	e.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.pages.ServeDomain(w, r) {
			return
		}
		mux.ServeHTTP(w, r)
	})
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

func scopeNames() []string {
	var s []string
	for _, sc := range account.Scopes {
		s = append(s, string(sc))
	}
	return s
}

// runPings runs a's ping writers until the test ends.
func runPings(t *testing.T, a *app.App) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&scheduler.Pings{App: a}).Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// api calls the API with key and wants status.
func (e *env) api(method, path, key string, body any, status int) map[string]any {
	e.t.Helper()
	r := e.apiReq(method, path, key, body)
	if r.status != status {
		e.t.Fatalf("%s %s: %d, want %d: %s", method, path, r.status, status, r.body)
	}
	if len(r.body) == 0 {
		return nil
	}
	return r.json(e.t)
}

// apiReq calls the API with key.
func (e *env) apiReq(method, path, key string, body any, headers ...string) response {
	e.t.Helper()
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			e.t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(raw))
	if err != nil {
		e.t.Fatal(err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.do(req)
}

// get fetches a public URL path, with headers as name, value pairs.
func (e *env) get(path string, headers ...string) response {
	e.t.Helper()
	req, err := http.NewRequest("GET", e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.do(req)
}

// noRedirects shows answers as the server sent them: no redirect followed,
// nothing inflated behind the test's back.
var noRedirects = &http.Client{Transport: &http.Transport{DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (e *env) do(req *http.Request) response {
	e.t.Helper()
	res, err := noRedirects.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// monitor creates an HTTP monitor in the workspace of key.
func (e *env) monitor(key, name, url string, headers map[string]string) string {
	e.t.Helper()
	cfg := map[string]any{"url": url}
	if headers != nil {
		cfg["headers"] = headers
	}
	m := e.api("POST", "/api/v1/monitors", key, map[string]any{"type": "http", "name": name, "config": cfg}, 201)
	return m["id"].(string)
}

// record writes results of monitor id as the check engine's writer would,
// a second apart ending a minute from now (the clock moves there), each
// failure with reason.
func (e *env) record(id string, reason string, results ...monitor.Result) {
	e.t.Helper()
	ctx := context.Background()
	e.clock.Advance(time.Minute)
	now := e.clock.Now()
	claimed, err := e.db.ClaimDue(ctx, "writer", now, now.Add(100*365*24*time.Hour), time.Hour, 10000)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range claimed { // leased to the writer until it records them
		e.seqs[c.Monitor.ID] = c.Seq
	}
	seq := e.seqs[id]
	if seq == 0 {
		e.t.Fatalf("monitor %s was not claimed", id)
	}
	var batch []monitor.Completed
	for i, res := range results {
		at := now.Add(time.Duration(i-len(results)) * time.Second)
		o := monitor.Observation{MonitorID: id, StartedAt: at, Due: at.Add(-time.Millisecond), Result: res,
			Latency: 42 * time.Millisecond, StatusCode: 200, Probe: "node-1", Region: "eu"}
		if res != monitor.ResultUp {
			o.Reason, o.StatusCode = fmt.Sprintf("%s (%d)", reason, i), 503
		}
		batch = append(batch, monitor.Completed{Seq: seq, Observation: o})
	}
	if _, err := e.app.RecordChecks(ctx, "writer", batch); err != nil {
		e.t.Fatal(err)
	}
}

// exec runs SQL on the database directly, beside the store.
func (e *env) exec(query string) {
	e.t.Helper()
	driver, dsn := "pgx", e.url
	if rest, ok := strings.CutPrefix(e.url, "sqlite:"); ok {
		driver, dsn = "sqlite", strings.TrimPrefix(rest, "//")+"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query); err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
