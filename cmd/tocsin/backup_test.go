package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/store/storetest"
)

// docBlock is the code between <!-- name:begin --> and <!-- name:end --> in
// docs/operations.md.
func docBlock(t *testing.T, name string) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- "+name+":begin -->\n```sh\n")
	code, _, ok2 := strings.Cut(rest, "```\n<!-- "+name+":end -->")
	if !ok || !ok2 {
		t.Fatalf("docs/operations.md has no %s block between its markers", name)
	}
	return code
}

// hookRecorder is a webhook receiver that keeps what it is sent.
type hookRecorder struct {
	got chan hookDelivery
}

type hookDelivery struct {
	event, signature string
	body             []byte
}

func (h *hookRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	select {
	case h.got <- hookDelivery{r.Header.Get("X-Service-Event"), r.Header.Get("X-Service-Signature"), body}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

// signedWith tells whether an X-Service-Signature carries a v1= made
// with secret over t.body.
func signedWith(header string, body []byte, secret string) bool {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		if k == "t" {
			ts = v
		} else if k == "v1" {
			sigs = append(sigs, v)
		}
	}
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%s.", ts)
	m.Write(body)
	want := m.Sum(nil)
	for _, s := range sigs {
		if got, err := hex.DecodeString(s); err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// TestBackupRestore follows docs/operations.md, "Backup and restore", on
// a running server: on SQLite its backup script as written (the ping
// journal, VACUUM INTO, secret.key), on PostgreSQL pg_dump -Fc and
// pg_restore. A server started on the restored copy has every ping
// acknowledged before the backup began, the API key, and the channel's
// signing secret, which it can still decrypt: its test event is signed
// with the secret the channel was created with.
func TestBackupRestore(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs two servers and the backup tools")
	}
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			tools := []string{"sh", "sqlite3"}
			if eng.Name == "postgres" {
				tools = []string{"pg_dump", "pg_restore"}
			}
			for _, tool := range tools {
				if _, err := exec.LookPath(tool); err != nil {
					t.Skipf("%s is not installed: the documented backup of %s needs it", tool, eng.Name)
				}
			}
			hooks := &hookRecorder{got: make(chan hookDelivery, 64)}
			recv := httptest.NewServer(hooks)
			defer recv.Close()

			env, args := childSetup(t, eng)
			s := startServe(t, env, args...)
			key := ownerKey(t, env, "monitors:read", "monitors:write", "notifications:read", "notifications:write")

			var ch struct{ ID, SigningSecret string }
			res := do(t, http.MethodPost, s.url+"/api/v1/notification-channels", key,
				`{"name": "ops", "kind": "webhook", "config": {"url": "`+recv.URL+`/hook"}}`)
			if err := json.NewDecoder(res.Body).Decode(&ch); err != nil || res.StatusCode != http.StatusCreated || ch.SigningSecret == "" {
				t.Fatalf("creating the channel: %d %v %+v", res.StatusCode, err, ch)
			}
			var hb struct{ ID, PingURL string }
			res = do(t, http.MethodPost, s.url+"/api/v1/heartbeats", key,
				`{"name": "nightly", "schedule": {"periodSeconds": 3600}}`)
			if err := json.NewDecoder(res.Body).Decode(&hb); err != nil || res.StatusCode != http.StatusCreated {
				t.Fatalf("creating the heartbeat: %d %v", res.StatusCode, err)
			}
			pingURL := s.url + "/ping/" + path.Base(hb.PingURL)
			const pings = 40
			for i := range pings {
				res, err := http.Get(fmt.Sprintf("%s?key=p%d", pingURL, i))
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					t.Fatalf("ping %d: %d", i, res.StatusCode)
				}
			}

			// The backup, beside the running server.
			bk := filepath.Join(t.TempDir(), "backup")
			env2 := map[string]string{"TOCSIN_DATA_DIR": t.TempDir()}
			args2 := []string{"--data-dir", env2["TOCSIN_DATA_DIR"], "--rate-limit", "1000000"}
			if eng.Name == "sqlite" {
				data := env["TOCSIN_DATA_DIR"]
				journals, _ := filepath.Glob(filepath.Join(data, "tocsin.db-pings-*.journal"))
				t.Logf("journal files before the backup: %d", len(journals))
				script := filepath.Join(t.TempDir(), "tocsin-backup.sh")
				if err := os.WriteFile(script, []byte(docBlock(t, "sqlite-backup")), 0o600); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("sh", script, data, bk).CombinedOutput(); err != nil {
					t.Fatalf("the backup script: %v\n%s", err, out)
				}
				// The restore: the backup's files into an empty data dir.
				if out, err := exec.Command("sh", "-c", `cp "$1"/* "$2"/`, "sh", bk, env2["TOCSIN_DATA_DIR"]).CombinedOutput(); err != nil {
					t.Fatalf("restoring: %v\n%s", err, out)
				}
			} else {
				dbURL := env["TOCSIN_DATABASE_URL"]
				if out, err := exec.Command("pg_dump", "-Fc", "-d", dbURL, "-f", bk).CombinedOutput(); err != nil {
					t.Fatalf("pg_dump: %v\n%s", err, out)
				}
				restored := storetest.EmptyURL(t, eng)
				if out, err := exec.Command("pg_restore", "--no-owner", "--exit-on-error", "-d", restored, bk).CombinedOutput(); err != nil {
					t.Fatalf("pg_restore: %v\n%s", err, out)
				}
				env2["TOCSIN_DATABASE_URL"] = restored
				keys := args[len(args)-1] // childSetup's --secret-keys value
				args2 = append(args2, "--database-url", restored, "--secret-keys", keys)
			}

			s2 := startServe(t, env2, args2...)
			got := listAllPings(t, false, s2.url, key, hb.ID)
			have := map[string]bool{}
			for _, p := range got {
				have[p.Key] = true
			}
			for i := range pings {
				if k := fmt.Sprintf("p%d", i); !have[k] {
					t.Errorf("ping %s, acknowledged before the backup, is not in the restored copy (%d pings there)", k, len(got))
				}
			}

			res = do(t, http.MethodPost, s2.url+"/api/v1/notification-channels/"+ch.ID+"/test", key, "")
			if res.StatusCode != http.StatusAccepted {
				t.Fatalf("test event on the restored server: %d", res.StatusCode)
			}
			deadline := time.After(30 * time.Second)
			for {
				select {
				case d := <-hooks.got:
					if d.event != "test" {
						continue
					}
					if !signedWith(d.signature, d.body, ch.SigningSecret) {
						t.Errorf("the restored server signed its test event with another secret: %s", d.signature)
					}
					return
				case <-deadline:
					t.Fatal("the restored server did not deliver the channel's test event")
				}
			}
		})
	}
}
