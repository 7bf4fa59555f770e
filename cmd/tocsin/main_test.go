package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// syncBuffer is a bytes.Buffer safe to read while run writes to it.
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

// server is `tocsin serve` running in-process through run on port 0.
type server struct {
	url    string
	stdout *syncBuffer
	logs   *syncBuffer
	cancel context.CancelFunc // SIGTERM
	done   chan error
}

func startServe(t *testing.T, env map[string]string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &server{stdout: &syncBuffer{}, logs: &syncBuffer{}, cancel: cancel, done: make(chan error, 1)}
	getenv := func(k string) string { return env[k] }
	go func() {
		err := run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), getenv, strings.NewReader(""), s.stdout, pw)
		pw.Close()
		s.done <- err
	}()
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`msg=listening addr=(http://[0-9.:]+)`)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.logs.Write(append(sc.Bytes(), '\n'))
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case s.url = <-addr:
	case err := <-s.done:
		t.Fatalf("serve exited: %v\n%s", err, s.logs.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not start:\n%s", s.logs.String())
	}
	t.Cleanup(func() {
		s.cancel()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop")
		}
	})
	return s
}

// waitFor is wait.For that, when the wait fails, also shows what show
// returns: the server's log, or what the test saw last.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool, show func() string) {
	t.Helper()
	held := false
	defer func() {
		if !held {
			t.Log(show())
		}
	}()
	wait.For(t, timeout, what, cond)
	held = true
}

func cli(t *testing.T, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), err
}

// ownerKey creates, with `tocsin key create`, a key of the first owner in
// the default workspace with these scopes, and returns it.
func ownerKey(t *testing.T, env map[string]string, scopes ...string) string {
	t.Helper()
	args := []string{"key", "create", "--email", "owner@localhost", "--workspace", "default"}
	for _, s := range scopes {
		args = append(args, "--scope", s)
	}
	key, errOut, err := cli(t, env, args...)
	if err != nil {
		t.Fatalf("key create: %v\n%s", err, errOut)
	}
	return strings.TrimSpace(key)
}

// TestQuickStart is the README's walk-through, end to end through run, on
// each engine: serve on an empty database prints a one-time sign-in, `key
// create` prints only a key, and the key manages monitors.
func TestQuickStart(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := engineEnv(t, eng)
			dir := env["TOCSIN_DATA_DIR"]
			s := startServe(t, env)
			out := s.stdout.String()
			pw := regexp.MustCompile(`One-time password:\s+(\S+)`).FindStringSubmatch(out)
			if !strings.Contains(out, "owner@localhost") || pw == nil || len(pw[1]) < 16 {
				t.Fatalf("no one-time sign-in on first start:\n%s", out)
			}
			if strings.Contains(s.logs.String(), pw[1]) {
				t.Error("the one-time password was logged")
			}
			if env["TOCSIN_SECRET_KEYS"] != "" && strings.Contains(s.logs.String(), env["TOCSIN_SECRET_KEYS"][3:]) {
				t.Error("secret keys were logged")
			}
			if eng.Name == "sqlite" {
				fi, err := os.Stat(filepath.Join(dir, "secret.key"))
				if err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("key file: %v %v", fi, err)
				}
			}

			key, errOut, err := cli(t, env, "key", "create", "--email", "owner@localhost", "--workspace", "default",
				"--scope", "monitors:read", "--scope", "monitors:write")
			if err != nil {
				t.Fatalf("key create: %v\n%s", err, errOut)
			}
			if !regexp.MustCompile(`^tsk_[A-Za-z0-9_-]{43}\n$`).MatchString(key) {
				t.Fatalf("key create stdout must be the key alone, got %q", key)
			}
			key = strings.TrimSpace(key)

			body := `{"type":"http","name":"Example","config":{"url":"http://127.0.0.1:9/"}}`
			res := do(t, "POST", s.url+"/api/v1/monitors", key, body)
			if res.StatusCode != 201 {
				t.Fatalf("create: %d", res.StatusCode)
			}
			res = do(t, "GET", s.url+"/api/v1/monitors", key, "")
			var list struct {
				Data []struct{ Name, State string }
			}
			if err := json.NewDecoder(res.Body).Decode(&list); err != nil || len(list.Data) != 1 || list.Data[0].State != "PENDING" {
				t.Fatalf("list: %v %+v", err, list)
			}
			for _, p := range []string{"/healthz", "/readyz"} {
				if r := do(t, "GET", s.url+p, "", ""); r.StatusCode != 200 {
					t.Errorf("%s: %d", p, r.StatusCode)
				}
			}

			// A second start on the same database creates no second owner.
			s.cancel()
			if err := <-s.done; err != nil {
				t.Fatalf("serve stopped with %v", err)
			}
			s.done <- nil // for the cleanup
			s2 := startServe(t, env)
			if strings.Contains(s2.stdout.String(), "One-time password") {
				t.Error("second start bootstrapped again")
			}
		})
	}
}

func do(t *testing.T, method, url, key, body string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	validateAPI(t, req, res)
	return res
}

// validators holds a validator per document served: building one is
// most of a short test's time, and every server serves the same document
// but for its own address.
var validators sync.Map // document's hash → validator.Validator

// servedDocs remembers which document each server serves.
var servedDocs sync.Map // base URL → document's hash

// validateAPI checks an API response against the OpenAPI document the same
// server serves, as the API's own tests do for every response.
func validateAPI(t *testing.T, req *http.Request, res *http.Response) {
	t.Helper()
	if !strings.HasPrefix(req.URL.Path, "/api/v1/") || req.URL.Path == "/api/v1/openapi.json" {
		return
	}
	base := req.URL.Scheme + "://" + req.URL.Host
	key, ok := servedDocs.Load(base)
	if !ok {
		r, err := http.Get(base + "/api/v1/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		b = bytes.ReplaceAll(b, []byte(base), []byte("http://test.invalid"))
		key = sha256.Sum256(b)
		if _, ok := validators.Load(key); !ok {
			doc, err := libopenapi.NewDocument(b)
			if err != nil {
				t.Fatal(err)
			}
			nv, errs := validator.NewValidator(doc)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			validators.LoadOrStore(key, nv)
		}
		servedDocs.Store(base, key)
	}
	v, _ := validators.Load(key)
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	check := *res
	check.Body = io.NopCloser(bytes.NewReader(body))
	if ok, errs := v.(validator.Validator).ValidateHttpResponse(req, &check); !ok {
		for _, e := range errs {
			t.Errorf("%s %s → %d does not match the served OpenAPI document: %s: %s", req.Method, req.URL.Path, res.StatusCode, e.Message, e.Reason)
		}
	}
}

// TestGracefulShutdown: SIGTERM lets a request in flight finish, then serve
// returns cleanly.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOCSIN_DATA_DIR": t.TempDir()}
	s := startServe(t, env)
	key, _, err := cli(t, env, "key", "create", "--email", "owner@localhost", "--workspace", "default", "--scope", "monitors:write")
	if err != nil {
		t.Fatal(err)
	}
	// Loads the document for validateAPI while the server is up.
	if r := do(t, "GET", s.url+"/api/v1/monitors", strings.TrimSpace(key), ""); r.StatusCode != 403 {
		t.Fatalf("a key without monitors:read listed monitors: %d", r.StatusCode)
	}
	// A create whose body is still arriving when SIGTERM comes. It asks
	// to continue: the server says so once the handler reads the body,
	// and the client sends none before.
	pr, pw := io.Pipe()
	reading := make(chan struct{})
	trace := &httptrace.ClientTrace{Got100Continue: func() { close(reading) }}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", s.url+"/api/v1/monitors", pr)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(key))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ExpectContinueTimeout = time.Minute
	defer tr.CloseIdleConnections()
	got := make(chan *http.Response, 1)
	go func() {
		res, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Errorf("in-flight request failed: %v", err)
			got <- nil
			return
		}
		got <- res
	}()
	select {
	case <-reading: // the server is now reading the body
	case <-time.After(20 * time.Second):
		t.Fatal("the server never read the request's body")
	}
	io.WriteString(pw, `{"type":"http","name":"slow",`)
	s.cancel()
	// Shutdown begins by closing the listener, then waits for us.
	addr := strings.TrimPrefix(s.url, "http://")
	wait.For(t, 10*time.Second, "shutdown to close the listener", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	select {
	case err := <-s.done:
		t.Fatalf("serve returned before the in-flight request finished: %v", err)
	default:
	}
	io.WriteString(pw, `"config":{"url":"http://127.0.0.1:9/"}}`)
	pw.Close()
	res := <-got
	if res == nil || res.StatusCode != 201 {
		t.Fatalf("in-flight request: %+v", res)
	}
	validateAPI(t, req, res)
	res.Body.Close()
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
		s.done <- nil
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after draining")
	}
	if !strings.Contains(s.logs.String(), "stopped") {
		t.Errorf("no clean stop logged:\n%s", s.logs.String())
	}
}

// TestConfigProblemsListedTogether: serve refuses a bad configuration and
// names every problem at once, without echoing secrets.
func TestConfigProblemsListedTogether(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"TOCSIN_DATABASE_URL": "postgres://u:pa55word@127.0.0.1:1/x",
		"TOCSIN_LOG_LEVEL":    "loud",
		"TOCSIN_BASE_URL":     "ftp://x",
	}
	_, _, err := cli(t, env, "serve", "--listen", "nope", "--shutdown-timeout", "-1s")
	if err == nil {
		t.Fatal("serve accepted a bad configuration")
	}
	for _, want := range []string{"listen", "log-level", "base-url", "secret-keys", "shutdown-timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "pa55word") {
		t.Errorf("error leaks the database password: %v", err)
	}
}

func TestKeyCreateErrors(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOCSIN_DATA_DIR": t.TempDir()}
	startServe(t, env) // bootstraps the owner
	for _, args := range [][]string{
		{"key", "create", "--email", "owner@localhost", "--workspace", "default", "--scope", "monitors:admin"},
		{"key", "create", "--email", "owner@localhost", "--workspace", "default"},
		{"key", "create", "--email", "nobody@localhost", "--workspace", "default", "--scope", "monitors:read"},
		{"key", "create", "--email", "owner@localhost", "--scope", "monitors:read"},
	} {
		out, _, err := cli(t, env, args...)
		if err == nil || out != "" {
			t.Errorf("%v: err %v, stdout %q", args, err, out)
		}
	}
	out, _, err := cli(t, env, "key", "create", "--email", "owner@localhost", "--account-wide", "--scope", "monitors:read")
	if err != nil || !strings.HasPrefix(out, "tsk_") {
		t.Errorf("account-wide key: %v %q", err, out)
	}
	if _, _, err := cli(t, env, "user", "create", "--email", "viewer@example.com", "--workspace", "default", "--role", "viewer"); err != nil {
		t.Errorf("user create: %v", err)
	}
	if _, _, err := cli(t, env, "user", "create", "--email", "viewer@example.com", "--workspace", "default", "--role", "viewer"); err == nil {
		t.Error("duplicate user accepted")
	}
	// The web app's rule: a viewer's key reads, and asking for more is
	// refused with the reason.
	if out, _, err := cli(t, env, "key", "create", "--email", "viewer@example.com", "--workspace", "default", "--scope", "monitors:read"); err != nil || !strings.HasPrefix(out, "tsk_") {
		t.Errorf("viewer's read key: %v %q", err, out)
	}
	out, _, err = cli(t, env, "key", "create", "--email", "viewer@example.com", "--workspace", "default", "--scope", "monitors:read", "--scope", "monitors:write")
	if err == nil || out != "" || !strings.Contains(err.Error(), "viewer") || !strings.Contains(err.Error(), "monitors:write") {
		t.Errorf("viewer's write key: err %v, stdout %q", err, out)
	}
}

// TestKeyRevoke: an operator lists keys and revokes one; it stops working
// on the next request.
func TestKeyRevoke(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOCSIN_DATA_DIR": t.TempDir()}
	s := startServe(t, env)
	key, _, err := cli(t, env, "key", "create", "--email", "owner@localhost", "--workspace", "default", "--scope", "monitors:read")
	if err != nil {
		t.Fatal(err)
	}
	key = strings.TrimSpace(key)
	if r := do(t, "GET", s.url+"/api/v1/monitors", key, ""); r.StatusCode != 200 {
		t.Fatalf("before revoke: %d", r.StatusCode)
	}
	list, _, err := cli(t, env, "key", "list", "--email", "owner@localhost")
	id := regexp.MustCompile(`key_[0-9A-Z]{26}`).FindString(list)
	if err != nil || id == "" || !strings.Contains(list, key[:10]) || strings.Contains(list, key) {
		t.Fatalf("key list (must show the prefix, never the key): %v\n%s", err, list)
	}
	if _, _, err := cli(t, env, "key", "revoke", "--id", id); err != nil {
		t.Fatal(err)
	}
	if r := do(t, "GET", s.url+"/api/v1/monitors", key, ""); r.StatusCode != 401 {
		t.Errorf("after revoke: %d", r.StatusCode)
	}
	if _, _, err := cli(t, env, "key", "revoke", "--id", "key_nope"); err == nil {
		t.Error("revoking an unknown key succeeded")
	}
	list, _, _ = cli(t, env, "key", "list", "--email", "owner@localhost")
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[0] == id {
			if _, err := time.Parse(time.RFC3339, f[4]); err != nil {
				t.Errorf("revoked key listed without its revocation time: %q", line)
			}
			if _, err := time.Parse(time.RFC3339, f[3]); err != nil {
				t.Errorf("used key listed without its last-used time: %q", line)
			}
			return
		}
	}
	t.Errorf("revoked key missing from the list:\n%s", list)
}

// TestServeChecksMonitors: `tocsin serve` runs the check engine: a monitor
// created through the API is checked, its observation listed, and the
// engine's figures are on /metrics.
func TestServeChecksMonitors(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "healthy")
	}))
	defer target.Close()
	env := map[string]string{"TOCSIN_DATA_DIR": t.TempDir(), "TOCSIN_NODE_NAME": "e2e-node"}
	s := startServe(t, env)
	key := ownerKey(t, env, "monitors:read", "monitors:write")
	res := do(t, "POST", s.url+"/api/v1/monitors", key,
		`{"type":"http","name":"local","intervalSeconds":10,"config":{"url":"`+target.URL+`","keywordAssertions":[{"keyword":"healthy"}]}}`)
	var m struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil || res.StatusCode != 201 {
		t.Fatalf("create: %d %v", res.StatusCode, err)
	}
	// The first check comes within one interval (its slot) and the state
	// follows.
	var got struct {
		State, LastResult string
	}
	waitFor(t, 30*time.Second, "the monitor to be checked and UP", func() bool {
		r := do(t, "GET", s.url+"/api/v1/monitors/"+m.ID, key, "")
		_ = json.NewDecoder(r.Body).Decode(&got)
		return got.State == "UP" && got.LastResult == "up"
	}, func() string { return fmt.Sprintf("monitor not checked: %+v\n%s", got, s.logs.String()) })
	var checks struct {
		Data []struct{ Result, Probe, Region string }
	}
	r := do(t, "GET", s.url+"/api/v1/monitors/"+m.ID+"/checks", key, "")
	if err := json.NewDecoder(r.Body).Decode(&checks); err != nil || len(checks.Data) == 0 ||
		checks.Data[0].Result != "up" || checks.Data[0].Probe != "e2e-node" || checks.Data[0].Region != "local" {
		t.Fatalf("checks: %v %+v", err, checks)
	}
	mr := do(t, "GET", s.url+"/metrics", "", "")
	b, _ := io.ReadAll(mr.Body)
	for _, want := range []string{`tocsin_checks_total{result="up"}`, "tocsin_check_lag_seconds_bucket", "tocsin_observations_written_total"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
