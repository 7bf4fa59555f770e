package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
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

	"github.com/danielgtaylor/huma/v2"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/httpapi"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/probe"
	"github.com/tocsin/tocsin/internal/scheduler/schedulertest"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// clock is the test's settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time // zero: real time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t.IsZero() {
		return time.Now()
	}
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// env is a real server on loopback over a real database, seeded with two
// workspaces: A, where a user of every role is a member, and B, where only
// its own owner is.
type env struct {
	t     *testing.T
	db    *store.DB
	url   string // the database, for a second server on it
	kr    *secrets.Keyring
	app   *app.App
	api   *httpapi.Server
	srv   *httptest.Server
	clock *clock
	wsA   account.Workspace
	wsB   account.Workspace
	// emails of A's members by role; ownerB owns B.
	members map[account.Role]string
	ownerB  string
	check   validator.Validator
	// checked holds the responses check passed, by digest: the same
	// answer to the same operation is checked once.
	checked *sync.Map
}

func forEachEngine(t *testing.T, f func(t *testing.T, e *env)) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) { f(t, newEnv(t, eng)) })
	}
}

func newEnv(t *testing.T, eng storetest.Engine) *env {
	t.Helper()
	return newEnvWith(t, eng, app.Config{})
}

func newEnvWith(t *testing.T, eng storetest.Engine, cfg app.Config) *env {
	t.Helper()
	ctx := context.Background()
	url := storetest.URL(t, eng)
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
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
	if cfg.Checker == nil {
		cfg.Checker = probe.New(probe.Options{ProbeID: "test-probe", Region: "test", Policy: cfg.Outbound})
	}
	a := app.New(db, kr, c.Now, log, cfg)
	e := &env{t: t, db: db, url: url, kr: kr, app: a, clock: c, members: map[account.Role]string{}, checked: &sync.Map{}}
	e.wsA = seedWorkspace(t, db, c.Now(), "ws-a")
	for _, r := range account.Roles {
		email := string(r) + "@a.test"
		seedMember(t, db, c.Now(), e.wsA, email, r)
		e.members[r] = email
	}
	e.wsB, e.ownerB = seedWorkspace(t, db, c.Now(), "ws-b"), "owner@b.test"
	seedMember(t, db, c.Now(), e.wsB, e.ownerB, account.RoleOwner)

	schedulertest.RunPings(t, a)
	// The API must be reachable at the URL its document names.
	mux := http.NewServeMux()
	e.srv = httptest.NewUnstartedServer(nil)
	e.api = httpapi.New(a, log, httpapi.Options{BaseURL: "http://" + e.srv.Listener.Addr().String()})
	mux.Handle("/", e.api)
	e.srv.Config.Handler = httpapi.Observe(log, mux)
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	e.check = e.validator()
	return e
}

// seedWorkspace stores a workspace named and slugged name, as
// app.CreateUser makes one for a slug it does not know.
func seedWorkspace(t *testing.T, db *store.DB, now time.Time, name string) account.Workspace {
	t.Helper()
	ws := account.Workspace{ID: ids.New(ids.Workspace, now), Name: name, Slug: name, CreatedAt: now}
	if err := db.CreateWorkspace(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	return ws
}

// seedMember stores a user with a one-time password and makes them a
// member of ws, as app.CreateUser does, but with one password hash for
// every user of the package: argon2id is slow on purpose, hashing a
// password per user was a third of these tests' time, and they act
// through API keys only.
func seedMember(t *testing.T, db *store.DB, now time.Time, ws account.Workspace, email string, role account.Role) {
	t.Helper()
	ctx := context.Background()
	u := account.User{ID: ids.New(ids.User, now), Email: email, PasswordHash: oneTimeHash(t),
		MustChangePassword: true, CreatedAt: now}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := db.PutMembership(ctx, account.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: role, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

// oneTimeHash is the hash of a one-time password no one knows, made once.
func oneTimeHash(t *testing.T) string {
	t.Helper()
	h, err := oneTimeHashOnce()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

var oneTimeHashOnce = sync.OnceValues(func() (string, error) { return secrets.HashPassword(secrets.GeneratePassword()) })

// twin is a second server process, as far as the API can tell: its own
// database handle, app and HTTP server on the same database and clock. On
// SQLite, which serves one node (one process receives its pings), it
// shares the first's database handle.
func (e *env) twin() *env {
	e.t.Helper()
	db := e.db
	if db.Engine() != store.EngineSQLite {
		var err error
		if db, err = store.Open(context.Background(), e.url); err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(func() { db.Close() })
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	t2 := *e
	t2.db = db
	t2.app = app.New(db, e.kr, e.clock.Now, log, e.app.Config()) // configured as the first node
	schedulertest.RunPings(e.t, t2.app)
	t2.srv = httptest.NewUnstartedServer(nil)
	t2.api = httpapi.New(t2.app, log, httpapi.Options{BaseURL: "http://" + t2.srv.Listener.Addr().String()})
	t2.srv.Config.Handler = httpapi.Observe(log, t2.api)
	t2.srv.Start()
	e.t.Cleanup(t2.srv.Close)
	// The document names no server address (its server URL is relative),
	// so the first server's validator serves: fetching it again would
	// count against the address's budget at whatever time the test's
	// clock shows.
	t2.check = e.check
	return &t2
}

// validator checks responses against the document the server serves.
func (e *env) validator() validator.Validator {
	e.t.Helper()
	resp, err := http.Get(e.srv.URL + "/api/v1/openapi.json")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// Every server serves one document but for its own address; building
	// a validator is most of an env's cost under -race, so servers share
	// one per document.
	b = bytes.ReplaceAll(b, []byte(e.srv.URL), []byte("http://test.invalid"))
	key := sha256.Sum256(b)
	validators.Lock()
	defer validators.Unlock()
	if v, ok := validators.m[key]; ok {
		return v
	}
	doc, err := libopenapi.NewDocument(b)
	if err != nil {
		e.t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		e.t.Fatalf("openapi document: %v", errs)
	}
	if validators.m == nil {
		validators.m = map[[32]byte]validator.Validator{}
	}
	validators.m[key] = v
	return v
}

// validators are the response validators built so far, by document.
var validators struct {
	sync.Mutex
	m map[[32]byte]validator.Validator
}

// key creates an API key for a user through the operator path.
func (e *env) key(email, ws string, accountWide bool, scopes ...account.Scope) string {
	e.t.Helper()
	var s []string
	for _, sc := range scopes {
		s = append(s, string(sc))
	}
	k, err := e.app.CreateKeyForUser(context.Background(), app.OperatorKeyRequest{Email: email, Workspace: ws, AccountWide: accountWide, Scopes: s})
	if err != nil {
		e.t.Fatal(err)
	}
	return k.Secret
}

// ownerKey is a full-powered key bound to workspace A.
func (e *env) ownerKey() string {
	return e.key(e.members[account.RoleOwner], e.wsA.ID, false, account.Scopes...)
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
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// code returns error.code, failing the test when the body is not the
// spec's error envelope with a requestId.
func (r response) code(t testing.TB) string {
	t.Helper()
	m := r.json(t)
	eo, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("status %d body is not an error envelope: %s", r.status, r.body)
	}
	if eo["message"] == "" || eo["requestId"] == nil || eo["requestId"] != r.header.Get("X-Request-Id") {
		t.Fatalf("error envelope lacks message or matching requestId: %s (X-Request-Id %q)", r.body, r.header.Get("X-Request-Id"))
	}
	c, _ := eo["code"].(string)
	return c
}

// req is one request; headers are name, value pairs.
func (e *env) req(method, path, key string, body any, headers ...string) response {
	e.t.Helper()
	return e.send(e.t, method, path, key, body, headers...)
}

func (e *env) send(t testing.TB, method, path, key string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	e.validate(t, req, raw, resp, b)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// validate checks every response the tests see against the served document.
func (e *env) validate(t testing.TB, req *http.Request, reqBody []byte, resp *http.Response, body []byte) {
	t.Helper()
	if !strings.HasPrefix(req.URL.Path, httpapi.Prefix+"/") || req.URL.Path == httpapi.Prefix+"/openapi.json" {
		return
	}
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		if _, _, found := e.findOperation(req); !found {
			return // an unknown route: nothing in the document to check against
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s %s %d %q\n", req.Method, req.URL.Path, resp.StatusCode, resp.Header.Get("Content-Type"))
	h.Write(body)
	digest := [32]byte(h.Sum(nil))
	if _, ok := e.checked.Load(digest); ok {
		return
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	if ok, errs := e.check.ValidateHttpResponse(req, resp); ok {
		e.checked.Store(digest, true)
	} else {
		var msgs []string
		for _, ve := range errs {
			msgs = append(msgs, ve.Message+": "+ve.Reason)
			for _, se := range ve.SchemaValidationErrors {
				msgs = append(msgs, "  "+se.FieldPath+": "+se.Reason)
			}
		}
		t.Errorf("%s %s → %d does not match the OpenAPI document:\n%s\nbody: %s", req.Method, req.URL.Path, resp.StatusCode, strings.Join(msgs, "\n"), body)
	}
}

func (e *env) findOperation(req *http.Request) (string, string, bool) {
	for path, item := range e.api.OpenAPI().Paths {
		if !matchPath(path, req.URL.Path) {
			continue
		}
		ops := map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PATCH": item.Patch, "DELETE": item.Delete, "PUT": item.Put}
		if ops[req.Method] != nil {
			return path, req.Method, true
		}
	}
	return "", "", false
}

func matchPath(tmpl, path string) bool {
	a, b := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.HasPrefix(a[i], "{") {
			continue
		}
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The response check must be able to fail, or it proves nothing.
func TestResponseValidatorRejectsMismatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Engines(t)[0])
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/monitors/mon_x", nil)
	for _, tc := range []struct {
		status int
		body   string
	}{
		{200, `{"id": 5}`},
		{404, `{"message": "not the envelope"}`},
	} {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(tc.body)), Request: req}
		if ok, _ := e.check.ValidateHttpResponse(req, resp); ok {
			t.Errorf("%d %s passed validation", tc.status, tc.body)
		}
	}
}

// rawBlobs runs query on the database directly, beside the store, and
// returns the first column of every row: for tests of what is at rest.
func (e *env) rawBlobs(t *testing.T, query string) [][]byte {
	t.Helper()
	db := e.rawDB(t)
	defer db.Close()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no rows; the check would prove nothing", query)
	}
	return out
}

// rawDB opens the database directly, beside the store.
func (e *env) rawDB(t *testing.T) *sql.DB {
	t.Helper()
	driver, dsn := "pgx", e.url
	if rest, ok := strings.CutPrefix(e.url, "sqlite:"); ok {
		driver, dsn = "sqlite", strings.TrimPrefix(rest, "//")
	} else if rest, ok := strings.CutPrefix(e.url, "file:"); ok {
		driver, dsn = "sqlite", strings.TrimPrefix(rest, "//")
	}
	if driver == "sqlite" {
		// Wait for the server's writer (an apply of the ping journal may
		// be running) rather than fail at once.
		dsn += "?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// lockPings holds a lock that keeps pings from being written until
// release is called: a stuck database, as far as the ping writer can tell.
func (e *env) lockPings(t *testing.T) (release func()) {
	t.Helper()
	if e.db.Engine() == "sqlite" {
		// Its pings go to the journal file, not through the database's
		// write lock: the journal is what is held.
		return e.db.HoldPings()
	}
	ctx := context.Background()
	db := e.rawDB(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"BEGIN", "LOCK TABLE ping_blocks IN EXCLUSIVE MODE"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	return func() {
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Error(err)
		}
		conn.Close()
		db.Close()
	}
}
