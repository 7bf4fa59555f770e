package httpapi_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/monitor"
)

// headerTarget is a real HTTP server that keeps the headers of every
// request it gets.
type headerTarget struct {
	*httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func newHeaderTarget(t *testing.T) *headerTarget {
	ht := &headerTarget{}
	ht.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ht.mu.Lock()
		ht.seen = append(ht.seen, r.Header.Clone())
		ht.mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(ht.Close)
	return ht
}

func (ht *headerTarget) requests() []http.Header {
	ht.mu.Lock()
	defer ht.mu.Unlock()
	return append([]http.Header(nil), ht.seen...)
}

// wantHeaders fails unless h carries every header of want with its value
// (a nil value: the header must be absent).
func wantHeaders(t *testing.T, what string, h http.Header, want map[string]*string) {
	t.Helper()
	for name, v := range want {
		switch got := h.Values(name); {
		case v == nil && len(got) != 0:
			t.Errorf("%s: %s = %q, want it absent", what, name, got)
		case v != nil && (len(got) != 1 || got[0] != *v):
			t.Errorf("%s: %s = %q, want %q", what, name, got, *v)
		}
	}
}

func strp(s string) *string { return &s }

// noPlaintextAtRest reads every column of every table directly, beside
// the store, and fails if any holds one of the secrets.
func noPlaintextAtRest(t *testing.T, e *env, secrets ...string) {
	t.Helper()
	db := e.rawDB(t)
	defer db.Close()
	q := `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`
	if e.db.Engine() == "sqlite" {
		q = `SELECT name FROM sqlite_master WHERE type = 'table'`
	}
	tables := queryStrings(t, db, q)
	if len(tables) < 10 {
		t.Fatalf("found only tables %v; the scan would prove little", tables)
	}
	cells := 0
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.RawBytes, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				cells++
				for _, s := range secrets {
					if bytes.Contains(v, []byte(s)) {
						t.Errorf("%s.%s holds %q in plaintext: %q", table, cols[i], s, v)
					}
				}
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if cells == 0 {
		t.Fatal("no cells read")
	}
}

func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s.String)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkNow runs the check engine over the env's database, with the
// monitor due now, until target has seen one more request; it returns
// that request's headers.
func (e *env) checkNow(t *testing.T, monitorID string, target *headerTarget) http.Header {
	t.Helper()
	before := len(target.requests())
	e.checkUntil(t, monitorID, "the engine to check the monitor", func() bool { return len(target.requests()) > before })
	got := target.requests()
	return got[len(got)-1]
}

// TestHeaderValuesWriteOnly: header values are credentials like auth's:
// sealed at rest, never shown (not to viewers, read-only keys, replays or
// test runs), merged by PATCH into the stored values, and sent by checks.
func TestHeaderValuesWriteOnly(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		target := newHeaderTarget(t)
		k := e.ownerKey()
		secrets := []string{"Bearer hdr-token-1", "hdr-password-2", "hdr-new-3", "hdr-test-4", "hdr-token-5"}
		create := map[string]any{"type": "http", "name": "with headers", "config": map[string]any{
			"url": target.URL, "headers": map[string]any{"Authorization": "Bearer hdr-token-1", "X-Api-Password": "hdr-password-2", "Accept": "text/plain"}}}
		r := e.req("POST", "/api/v1/monitors", k, create, "Idempotency-Key", "create-with-headers")
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)
		path := "/api/v1/monitors/" + id
		replay := e.req("POST", "/api/v1/monitors", k, create, "Idempotency-Key", "create-with-headers")
		if replay.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(replay.body, r.body) {
			t.Fatalf("replay: %d %v %s", replay.status, replay.header, replay.body)
		}

		// Whoever reads the monitor sees the names, never a value.
		viewer := e.key(e.members[account.RoleViewer], e.wsA.ID, false, account.ScopeMonitorsRead)
		readOnly := e.key(e.members[account.RoleOwner], e.wsA.ID, false, account.ScopeMonitorsRead)
		shown := func(what string, body []byte, cfg map[string]any, want ...string) {
			t.Helper()
			for _, s := range secrets {
				if bytes.Contains(body, []byte(s)) {
					t.Errorf("%s shows the value %q: %s", what, s, body)
				}
			}
			if cfg["headers"] != nil {
				t.Errorf("%s has headers: %v", what, cfg["headers"])
			}
			var names []string
			if list, ok := cfg["headersSet"].([]any); ok {
				for _, n := range list {
					names = append(names, n.(string))
				}
			}
			if !reflect.DeepEqual(names, want) {
				t.Errorf("%s: headersSet %v, want %v", what, names, want)
			}
		}
		cfgOf := func(r response) map[string]any { return r.json(t)["config"].(map[string]any) }
		all := []string{"Accept", "Authorization", "X-Api-Password"}
		shown("create", r.body, cfgOf(r), all...)
		shown("replay", replay.body, cfgOf(replay), all...)
		for who, key := range map[string]string{"owner": k, "viewer": viewer, "read-only key": readOnly} {
			g := e.req("GET", path, key, nil)
			if g.status != 200 {
				t.Fatalf("%s GET: %d %s", who, g.status, g.body)
			}
			shown(who+" GET", g.body, cfgOf(g), all...)
			l := e.req("GET", "/api/v1/monitors", key, nil)
			shown(who+" list", l.body, l.json(t)["data"].([]any)[0].(map[string]any)["config"].(map[string]any), all...)
		}
		noPlaintextAtRest(t, e, secrets...)

		// A check sends every value, opened for it.
		got := e.checkNow(t, id, target)
		wantHeaders(t, "check after create", got, map[string]*string{
			"Authorization": strp("Bearer hdr-token-1"), "X-Api-Password": strp("hdr-password-2"), "Accept": strp("text/plain")})

		stored := func() map[string]string {
			t.Helper()
			h, err := e.app.MonitorHeaders(t.Context(), e.wsA.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		steps := []struct {
			name   string
			patch  any
			status int
			want   map[string]string // stored afterwards
		}{
			{"a PATCH without headers keeps them", `{"name":"renamed","config":{"timeoutSeconds":5}}`, 200,
				map[string]string{"Authorization": "Bearer hdr-token-1", "X-Api-Password": "hdr-password-2", "Accept": "text/plain"}},
			{"a PATCH of what GET returned changes nothing", `GET`, 200,
				map[string]string{"Authorization": "Bearer hdr-token-1", "X-Api-Password": "hdr-password-2", "Accept": "text/plain"}},
			{"null removes one, the rest kept", `{"config":{"headers":{"X-Api-Password":null}}}`, 200,
				map[string]string{"Authorization": "Bearer hdr-token-1", "Accept": "text/plain"}},
			{"a value sets one, a new name adds one", `{"config":{"headers":{"accept":"application/json","X-New":"hdr-new-3"}}}`, 200,
				map[string]string{"Authorization": "Bearer hdr-token-1", "accept": "application/json", "X-New": "hdr-new-3"}},
			{"a value that is not a string", `{"config":{"headers":{"X-A":5}}}`, 422, nil},
			{"headers that are not an object", `{"config":{"headers":"x"}}`, 422, nil},
			{"a header the probe sets", `{"config":{"headers":{"Host":"evil.example"}}}`, 422, nil},
			{"too many in the merged result", `{"config":{"headers":{` + manyHeaders(48) + `}}}`, 422, nil},
		}
		for _, s := range steps {
			before := stored()
			if s.want == nil {
				s.want = before
			}
			body := s.patch
			if s.patch == `GET` {
				g := e.req("GET", path, k, nil).json(t)
				body = map[string]any{"name": g["name"], "intervalSeconds": g["intervalSeconds"], "config": g["config"]}
			}
			res := e.req("PATCH", path, k, body)
			if res.status != s.status {
				t.Errorf("%s: %d %s", s.name, res.status, res.body)
				continue
			}
			if s.status == 422 && res.code(t) != "validation_error" {
				t.Errorf("%s: %s", s.name, res.body)
			}
			if got := stored(); !reflect.DeepEqual(got, s.want) {
				t.Errorf("%s: stored %v, want %v", s.name, got, s.want)
			}
			if s.status == 200 {
				shown(s.name, res.body, cfgOf(res), monitor.HeaderNames(s.want)...)
			}
		}
		noPlaintextAtRest(t, e, secrets...)
		got = e.checkNow(t, id, target)
		wantHeaders(t, "check after the PATCHes", got, map[string]*string{
			"Authorization": strp("Bearer hdr-token-1"), "X-Api-Password": nil, "Accept": strp("application/json"), "X-New": strp("hdr-new-3")})

		// headers null removes them all, sealed value included.
		res := e.req("PATCH", path, k, `{"config":{"headers":null}}`)
		if res.status != 200 {
			t.Fatalf("headers null: %d %s", res.status, res.body)
		}
		shown("headers null", res.body, cfgOf(res))
		if h := stored(); h != nil {
			t.Errorf("after headers null: %v", h)
		}
		for _, b := range e.rawBlobs(t, `SELECT COALESCE(headers_sealed, 'none') FROM monitors`) {
			if string(b) != "none" {
				t.Errorf("headers_sealed after headers null: %q", b)
			}
		}
		got = e.checkNow(t, id, target)
		wantHeaders(t, "check after headers null", got, map[string]*string{"Authorization": nil, "X-New": nil})

		// A test run sends the draft's headers and answers without them.
		tr := e.req("POST", "/api/v1/monitors/test", k, map[string]any{"type": "http", "name": "try", "config": map[string]any{
			"url": target.URL, "headers": map[string]any{"X-Api-Token": "hdr-test-4"}, "auth": map[string]any{"type": "bearer", "token": "hdr-token-5"}}})
		if tr.status != 200 || tr.json(t)["result"] != "up" {
			t.Fatalf("test run: %d %s", tr.status, tr.body)
		}
		reqs := target.requests()
		wantHeaders(t, "test run", reqs[len(reqs)-1], map[string]*string{"X-Api-Token": strp("hdr-test-4"), "Authorization": strp("Bearer hdr-token-5")})
		for _, s := range secrets {
			if bytes.Contains(tr.body, []byte(s)) {
				t.Errorf("test run answer shows %q: %s", s, tr.body)
			}
		}
		noPlaintextAtRest(t, e, secrets...)
	})
}

// manyHeaders is n distinct header entries for a JSON object.
func manyHeaders(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"X-Many-%d":"v"`, i)
	}
	return strings.Join(parts, ",")
}

// TestSealPlaintextHeadersKeepsSealed: plaintext values that an older node
// wrote beside values already sealed are merged into them (the plaintext,
// written last, wins), and a second run has nothing to do.
func TestSealPlaintextHeadersKeepsSealed(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		r := e.req("POST", "/api/v1/monitors", k, map[string]any{"type": "http", "name": "mixed", "config": map[string]any{
			"url": "https://a.example", "headers": map[string]any{"X-A": "sealed-a", "X-B": "sealed-b"}}})
		id := r.json(t)["id"].(string)
		db := e.rawDB(t)
		defer db.Close()
		var config string
		if err := db.QueryRow(`SELECT config FROM monitors WHERE id = $1`, id).Scan(&config); err != nil {
			t.Fatal(err)
		}
		old := strings.Replace(config, `"headersSet"`, `"headers":{"x-b":"plain-b","X-C":"plain-c"},"headersSet"`, 1)
		if old == config {
			t.Fatalf("config without headersSet: %s", config)
		}
		if _, err := db.Exec(`UPDATE monitors SET config = $1 WHERE id = $2`, old, id); err != nil {
			t.Fatal(err)
		}
		for run, want := range []int{1, 0} {
			n, err := e.app.SealPlaintextHeaders(t.Context())
			if err != nil || n != want {
				t.Fatalf("run %d: sealed %d, %v; want %d", run, n, err, want)
			}
		}
		h, err := e.app.MonitorHeaders(t.Context(), e.wsA.ID, id)
		if want := map[string]string{"X-A": "sealed-a", "x-b": "plain-b", "X-C": "plain-c"}; err != nil || !reflect.DeepEqual(h, want) {
			t.Errorf("headers %v, %v; want %v", h, err, want)
		}
		g := e.req("GET", "/api/v1/monitors/"+id, k, nil)
		if names := fmt.Sprint(g.json(t)["config"].(map[string]any)["headersSet"]); names != "[X-A X-C x-b]" {
			t.Errorf("headersSet %s", names)
		}
		noPlaintextAtRest(t, e, "sealed-a", "plain-b", "plain-c")
	})
}
