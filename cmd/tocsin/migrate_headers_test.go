package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// oldHTTPConfig is a monitor's config as versions before headers_sealed
// stored it: the header values in plaintext inside the JSON.
func oldHTTPConfig(url string, headers map[string]string) string {
	h, _ := json.Marshal(headers)
	return `{"url":"` + url + `","method":"GET","headers":` + string(h) +
		`,"followRedirects":true,"expectedStatusCodes":[{"from":200,"to":399}],"timeoutSeconds":10,"confirmations":2,"recoveries":1}`
}

// rawOpen opens the database directly, beside the commands under test.
func rawOpen(t *testing.T, url string) *sql.DB {
	t.Helper()
	driver, dsn := "pgx", url
	if rest, ok := strings.CutPrefix(url, "sqlite:"); ok {
		driver, dsn = "sqlite", rest+"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// monitorRows is every column of every monitor, as text, by id. It reads
// on a connection of its own: a pooled one would keep the statement's
// plan from before the columns changed.
func monitorRows(t *testing.T, url string) map[string]string {
	t.Helper()
	db := rawOpen(t, url)
	defer db.Close()
	rows, err := db.Query(`SELECT * FROM monitors`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := map[string]string{}
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, v := range vals {
			fmt.Fprintf(&b, "%s=%q ", cols[i], v)
		}
		out[string(vals[0])] = b.String()
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMigrateSealsPlaintextHeaders: a database where an earlier version
// kept header values in plaintext is sealed by `migrate` (in batches,
// idempotently, on both engines), and `serve` then checks with the right
// headers and shows only their names.
func TestMigrateSealsPlaintextHeaders(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]http.Header{} // the latest request's, by path
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Clone()
		mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(target.Close)

	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			u := storetest.EmptyURL(t, eng)
			env := map[string]string{"TOCSIN_DATABASE_URL": u, "TOCSIN_DATA_DIR": t.TempDir(), "TOCSIN_NODE_NAME": "headers-" + eng.Name}
			if _, errOut, err := cli(t, env, "migrate"); err != nil {
				t.Fatalf("migrate: %v\n%s", err, errOut)
			}
			if _, errOut, err := cli(t, env, "user", "create", "--email", "owner@headers.test", "--workspace", "default", "--role", "owner"); err != nil {
				t.Fatalf("user create: %v\n%s", err, errOut)
			}

			// Back to the schema before headers_sealed, with monitors as
			// that version wrote them.
			raw := rawOpen(t, u)
			version := map[string]int{store.EngineSQLite: 10, store.EnginePostgres: 12}[eng.Name]
			for _, q := range []string{`ALTER TABLE monitors DROP COLUMN headers_sealed`, fmt.Sprintf(`DELETE FROM schema_migrations WHERE version = %d`, version)} {
				if _, err := raw.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			var wsID string
			if err := raw.QueryRow(`SELECT id FROM workspaces WHERE slug = 'default'`).Scan(&wsID); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			insert := func(id, config string, due int64) {
				t.Helper()
				_, err := raw.Exec(`INSERT INTO monitors (id, workspace_id, type, name, config, interval_seconds, paused, created_at, updated_at)
					VALUES ($1, $2, 'http', $3, $4, 60, $5, $6, $6)`, id, wsID, "m "+id, config, false, now.UnixMicro())
				if err != nil {
					t.Fatal(err)
				}
				_, err = raw.Exec(`INSERT INTO monitor_runtime (monitor_id, interval_us, next_due_at, state, state_since)
					VALUES ($1, 60000000, $2, 'PENDING', $3)`, id, due, now.UnixMicro())
				if err != nil {
					t.Fatal(err)
				}
			}
			checked := ids.New(ids.Monitor, now)
			insert(checked, oldHTTPConfig(target.URL+"/"+eng.Name, map[string]string{
				"Authorization": "Bearer old-token-1", "X-Api-Password": "old-password-2", "Accept": "text/plain"}), now.UnixMicro())
			// More than one batch of them, never due in this test.
			secretsAtRest := []string{"old-token-1", "old-password-2"}
			for i := range 120 {
				secret := fmt.Sprintf("old-many-%03d", i)
				secretsAtRest = append(secretsAtRest, secret)
				insert(ids.New(ids.Monitor, now), oldHTTPConfig(target.URL, map[string]string{"X-Key": secret}), math.MaxInt64)
			}
			// Configs without headers, one of which only looks as if it had.
			lookalike := ids.New(ids.Monitor, now)
			insert(lookalike, `{"url":"`+target.URL+`","method":"GET","jsonAssertions":[{"path":"$.a","operator":"equals","value":{"headers":{"X":"1"}}}],"timeoutSeconds":10}`, math.MaxInt64)
			plain := ids.New(ids.Monitor, now)
			insert(plain, `{"url":"`+target.URL+`","method":"GET","timeoutSeconds":10}`, math.MaxInt64)
			before := monitorRows(t, u)

			// Without the keys serve uses nothing can be sealed (migrate
			// never makes up a key), and nothing is changed: migrate says why.
			if _, errOut, err := cli(t, env, "migrate"); err == nil || !strings.Contains(err.Error()+errOut, "secret-keys") {
				t.Fatalf("migrate without keys: %v\n%s", err, errOut)
			}
			for id, row := range monitorRows(t, u) {
				if want := before[id] + `headers_sealed="" `; row != want {
					t.Errorf("migrate without keys changed %s:\n%s\n%s", id, before[id], row)
				}
			}
			// The keys: PostgreSQL needs them given; a SQLite node uses
			// the key file serve made on its first start.
			if eng.Name == store.EnginePostgres {
				keys, err := secrets.GenerateKeySpec("k1")
				if err != nil {
					t.Fatal(err)
				}
				env["TOCSIN_SECRET_KEYS"] = keys
			} else if _, _, err := secrets.LoadOrCreateKeyFile(filepath.Join(env["TOCSIN_DATA_DIR"], "secret.key")); err != nil {
				t.Fatal(err)
			}
			out, errOut, err := cli(t, env, "migrate")
			if err != nil || !strings.Contains(out, "up to date") || !strings.Contains(errOut, "monitors=121") {
				t.Fatalf("migrate: %v\n%s\n%s", err, out, errOut)
			}
			after := monitorRows(t, u)
			if len(after) != len(before) {
				t.Fatalf("%d monitors after, %d before", len(after), len(before))
			}
			for id, row := range after {
				for _, s := range secretsAtRest {
					if strings.Contains(row, s) {
						t.Errorf("%s still holds %q in plaintext: %s", id, s, row)
					}
				}
				if id != lookalike && strings.Contains(row, `\"headers\":`) {
					t.Errorf("%s config still has headers: %s", id, row)
				}
			}
			for _, id := range []string{lookalike, plain} {
				// Only the new (empty) column differs.
				if want := before[id] + `headers_sealed="" `; after[id] != want {
					t.Errorf("a monitor without headers changed:\n%s\n%s", before[id], after[id])
				}
			}
			if !strings.Contains(after[checked], `headersSet\":[\"Accept\",\"Authorization\",\"X-Api-Password\"]`) {
				t.Errorf("the names are not kept: %s", after[checked])
			}
			var n int
			if err := raw.QueryRow(`SELECT COUNT(*) FROM monitors WHERE headers_sealed IS NOT NULL`).Scan(&n); err != nil || n != 121 {
				t.Errorf("%d monitors have sealed headers (%v), want 121", n, err)
			}

			// Idempotent: a second run finds nothing to do.
			if _, errOut, err := cli(t, env, "migrate"); err != nil || strings.Contains(errOut, "sealed header values") {
				t.Fatalf("second migrate: %v\n%s", err, errOut)
			}
			if again := monitorRows(t, u); fmt.Sprint(again) != fmt.Sprint(after) {
				t.Error("a second migrate changed the monitors")
			}

			// serve runs the step too (before it listens), and checks with
			// the sealed values and shows their names only.
			late := ids.New(ids.Monitor, now)
			insert(late, oldHTTPConfig(target.URL, map[string]string{"X-Late": "old-late-9"}), math.MaxInt64)
			secretsAtRest = append(secretsAtRest, "old-late-9")
			s := startServe(t, env)
			if row := monitorRows(t, u)[late]; strings.Contains(row, "old-late-9") || strings.Contains(row, `headers_sealed=""`) {
				t.Errorf("serve did not seal the plaintext headers: %s", row)
			}
			var got http.Header
			waitFor(t, 20*time.Second, "the monitor to be checked", func() bool {
				mu.Lock()
				defer mu.Unlock()
				got = seen["/"+eng.Name]
				return got != nil
			}, s.logs.String)
			for name, want := range map[string]string{"Authorization": "Bearer old-token-1", "X-Api-Password": "old-password-2", "Accept": "text/plain"} {
				if got.Get(name) != want {
					t.Errorf("check sent %s = %q, want %q", name, got.Get(name), want)
				}
			}
			key, errOut, err := cli(t, env, "key", "create", "--email", "owner@headers.test", "--workspace", "default", "--scope", "monitors:read")
			if err != nil {
				t.Fatalf("key create: %v\n%s", err, errOut)
			}
			res := do(t, "GET", s.url+"/api/v1/monitors/"+checked, strings.TrimSpace(key), "")
			var body bytes.Buffer
			_, _ = body.ReadFrom(res.Body)
			if res.StatusCode != 200 || !strings.Contains(body.String(), `"headersSet":["Accept","Authorization","X-Api-Password"]`) ||
				strings.Contains(body.String(), "old-") {
				t.Errorf("GET: %d %s", res.StatusCode, body.String())
			}
			for _, sec := range secretsAtRest {
				if strings.Contains(s.logs.String(), sec) {
					t.Errorf("the logs hold %q", sec)
				}
			}
		})
	}
}
