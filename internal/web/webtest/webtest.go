// Package webtest is the server the web's tests run against, as serve
// wires it: the API, the console and the public pages on one loopback
// listener over a real database (SQLite, and PostgreSQL when the tests
// are given one), with two workspaces and an owner's key for each, and
// the calls those tests make to it. Only tests import it.
//
//	webtest.ForEachEngine(t, public.Options{}, func(t *testing.T, e *webtest.Env) {
//		id := e.Monitor(e.KeyA, "shop", "https://shop.example.com", nil)
//		…
//	})
package webtest

import (
	"bytes"
	"context"
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
	"github.com/tocsin/tocsin/internal/scheduler/schedulertest"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/web/console"
	"github.com/tocsin/tocsin/internal/web/public"
)

// Clock is the test's settable time source; zero follows real time.
type Clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// Env is a server as serve wires it: the API, the console and the public
// pages on one loopback listener over a real database, with workspaces A
// and B, each with its owner's key.
type Env struct {
	T     *testing.T
	DB    *store.DB
	URL   string // the database's
	App   *app.App
	Pages *public.Pages
	Srv   *httptest.Server
	Clock *Clock
	WsA   account.Workspace
	WsB   account.Workspace
	KeyA  string
	KeyB  string
	seqs  map[string]int64 // monitors claimed by Record's writer
}

// ForEachEngine runs f on a fresh Env on every engine storetest offers,
// each in its own subtest.
func ForEachEngine(t *testing.T, opts public.Options, f func(t *testing.T, e *Env)) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) { f(t, New(t, eng, opts, app.Config{})) })
	}
}

// New starts an Env on eng, the public pages with opts (their base URL
// and clock are the Env's) and the app with cfg (its checker is the
// test's, for the monitor form's "Test now").
func New(t *testing.T, eng storetest.Engine, opts public.Options, cfg app.Config) *Env {
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
	c := &Clock{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Checker = probe.New(probe.Options{ProbeID: "test-probe", Region: "test"})
	a := app.New(db, kr, c.Now, log, cfg)
	e := &Env{T: t, DB: db, URL: url, App: a, Clock: c, seqs: map[string]int64{}}
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
			e.WsA, e.KeyA = u.Workspace, k.Secret
		} else {
			e.WsB, e.KeyB = u.Workspace, k.Secret
		}
	}
	schedulertest.RunPings(t, a)
	e.Srv = httptest.NewUnstartedServer(nil)
	base := "http://" + e.Srv.Listener.Addr().String()
	api := httpapi.New(a, log, httpapi.Options{BaseURL: base})
	opts.BaseURL, opts.Now = base, c.Now
	e.Pages = public.New(a, log, opts)
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.Handle(public.StatusPrefix, e.Pages)
	console.New(a, log, console.Options{BaseURL: base}).Mount(mux)
	e.Srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.Pages.ServeDomain(w, r) {
			return
		}
		mux.ServeHTTP(w, r)
	})
	e.Srv.Start()
	t.Cleanup(e.Srv.Close)
	return e
}

func scopeNames() []string {
	var s []string
	for _, sc := range account.Scopes {
		s = append(s, string(sc))
	}
	return s
}

// Response is an answer as the server sent it.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON is the body as a JSON object.
func (r Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// API calls the API with key and wants status.
func (e *Env) API(method, path, key string, body any, status int) map[string]any {
	e.T.Helper()
	r := e.APIReq(method, path, key, body)
	if r.Status != status {
		e.T.Fatalf("%s %s: %d, want %d: %s", method, path, r.Status, status, r.Body)
	}
	if len(r.Body) == 0 {
		return nil
	}
	return r.JSON(e.T)
}

// APIReq calls the API with key, and headers as name, value pairs.
func (e *Env) APIReq(method, path, key string, body any, headers ...string) Response {
	e.T.Helper()
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			e.T.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, e.Srv.URL+path, bytes.NewReader(raw))
	if err != nil {
		e.T.Fatal(err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.Do(req)
}

// Get fetches a URL path, with headers as name, value pairs ("Host"
// names the request's host).
func (e *Env) Get(path string, headers ...string) Response {
	e.T.Helper()
	req, err := http.NewRequest("GET", e.Srv.URL+path, nil)
	if err != nil {
		e.T.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.Do(req)
}

// noRedirects shows answers as the server sent them: no redirect followed,
// nothing inflated behind the test's back.
var noRedirects = &http.Client{Transport: &http.Transport{DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Do sends req and reads the answer, as the server sent it.
func (e *Env) Do(req *http.Request) Response {
	e.T.Helper()
	res, err := noRedirects.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.T.Fatal(err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Monitor creates an HTTP monitor in the workspace of key.
func (e *Env) Monitor(key, name, url string, headers map[string]string) string {
	e.T.Helper()
	cfg := map[string]any{"url": url}
	if headers != nil {
		cfg["headers"] = headers
	}
	m := e.API("POST", "/api/v1/monitors", key, map[string]any{"type": "http", "name": name, "config": cfg}, 201)
	return m["id"].(string)
}

// Record writes results of monitor id as the check engine's writer would,
// a second apart ending a minute from now (the clock moves there), each
// failure with reason.
func (e *Env) Record(id string, reason string, results ...monitor.Result) {
	e.T.Helper()
	ctx := context.Background()
	e.Clock.Advance(time.Minute)
	now := e.Clock.Now()
	claimed, err := e.DB.ClaimDue(ctx, "writer", now, now.Add(100*365*24*time.Hour), time.Hour, 10000)
	if err != nil {
		e.T.Fatal(err)
	}
	for _, c := range claimed { // leased to the writer until it records them
		e.seqs[c.Monitor.ID] = c.Seq
	}
	seq := e.seqs[id]
	if seq == 0 {
		e.T.Fatalf("monitor %s was not claimed", id)
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
	if _, err := e.App.RecordChecks(ctx, "writer", batch); err != nil {
		e.T.Fatal(err)
	}
}

// Exec runs SQL on the database directly, beside the store.
func (e *Env) Exec(query string) {
	e.T.Helper()
	storetest.Exec(e.T, e.URL, query)
}

// Contains reports whether b holds s.
func Contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
