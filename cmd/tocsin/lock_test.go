package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/store/storetest"
)

// TestOneServePerSQLiteFile: a second `tocsin serve` on a data dir that a
// running serve (a real process) holds exits at once, naming the database
// and the first one's pid; once the first is killed with SIGKILL, the
// kernel has released its lock and a new serve starts.
func TestOneServePerSQLiteFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := startCrashChild(t, "--data-dir", dir)
	pid := first.cmd.Process.Pid

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, logs syncBuffer
	start := time.Now()
	err := run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir},
		func(string) string { return "" }, strings.NewReader(""), &out, &logs)
	took := time.Since(start)
	if err == nil {
		t.Fatalf("a second serve on %s ran and stopped without error:\n%s", dir, logs.String())
	}
	msg := err.Error()
	t.Logf("the second serve: %s", msg)
	for _, want := range []string{filepath.Join(dir, "tocsin.db"), "tocsin serve", "pid " + strconv.Itoa(pid), "PostgreSQL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not name %q: %s", want, msg)
		}
	}
	if took > 10*time.Second || strings.Contains(logs.String(), "msg=listening") {
		t.Errorf("the second serve did not exit at once (%s):\n%s", took, logs.String())
	}
	if strings.Contains(out.String(), "One-time password") {
		t.Error("the refused serve bootstrapped an account")
	}

	// A crash releases the lock: the file still names the dead process,
	// and the next serve takes the database all the same.
	first.kill()
	s := startServe(t, map[string]string{"TOCSIN_DATA_DIR": dir})
	if r := do(t, "GET", s.url+"/readyz", "", ""); r.StatusCode != http.StatusOK {
		t.Fatalf("readyz after taking over: %d", r.StatusCode)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tocsin.db.lock"))
	if err != nil || !strings.Contains(string(b), "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("the lock file does not name the new holder (pid %d): %q %v", os.Getpid(), b, err)
	}
}

// TestServesShareOnePostgres: the lock is SQLite's; several serves on
// one PostgreSQL database all run.
func TestServesShareOnePostgres(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		if eng.Name != "postgres" {
			continue
		}
		env := map[string]string{"TOCSIN_DATA_DIR": t.TempDir(), "TOCSIN_DATABASE_URL": storetest.EmptyURL(t, eng)}
		keys, _, err := cli(t, env, "secret-key")
		if err != nil {
			t.Fatal(err)
		}
		env["TOCSIN_SECRET_KEYS"] = strings.TrimSpace(keys)
		a, b := startServe(t, env), startServe(t, env)
		for _, s := range []*server{a, b} {
			if r := do(t, "GET", s.url+"/readyz", "", ""); r.StatusCode != http.StatusOK {
				t.Errorf("%s readyz: %d", s.url, r.StatusCode)
			}
		}
	}
}

// TestAdminBesideBusyServe: user create, key create, key list and migrate
// all succeed beside a serve (a real process) kept busy writing: monitors
// created and deleted and heartbeats pinged through the API from several
// clients for a few seconds. Every command must succeed.
func TestAdminBesideBusyServe(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("loads a server for seconds; not in -short")
	}
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env, args := childSetup(t, eng)
			child := startCrashChild(t, args...)
			key := ownerKey(t, env, "monitors:read", "monitors:write")

			// At least 4 s, and then until the server has taken 50 writes
			// and 12 commands have run beside them (a loaded machine is
			// slower), but never more than 40 s.
			ctx, stop := context.WithTimeout(context.Background(), 40*time.Second)
			defer stop()
			var written atomic.Int64
			writes := writeLoad(t, ctx, child.url, key, 32, &written)

			// Four at a time, as an operator's script might.
			var commands, failed atomic.Int64
			go func() {
				time.Sleep(4 * time.Second)
				for ctx.Err() == nil && (written.Load() < 50 || commands.Load() < 12) {
					time.Sleep(50 * time.Millisecond)
				}
				stop()
			}()
			var admins sync.WaitGroup
			for a := range 4 {
				admins.Go(func() {
					for i := 0; ctx.Err() == nil; i++ {
						email := fmt.Sprintf("admin-%d-%d@example.com", a, i)
						ws := fmt.Sprintf("ws-%d-%d", a, i)
						steps := [][]string{
							{"user", "create", "--email", email, "--workspace", ws, "--role", "owner"},
							{"key", "create", "--email", email, "--workspace", ws, "--scope", "monitors:read"},
							{"key", "list", "--email", email},
						}
						if i%3 == a%3 {
							steps = append(steps, []string{"migrate"})
						}
						for _, s := range steps {
							out, errOut, err := cli(t, env, s...)
							commands.Add(1)
							if err != nil {
								failed.Add(1)
								t.Errorf("%s beside the busy server: %v\n%s", strings.Join(s[:2], " "), err, errOut)
							} else if s[0] == "migrate" && !strings.Contains(out, "up to date") {
								t.Errorf("migrate: %q", out)
							}
						}
					}
				})
			}
			admins.Wait()
			n := writes()
			t.Logf("%s: %d admin commands (%d failed) beside %d API writes", eng.Name, commands.Load(), failed.Load(), n)
			if n < 50 {
				t.Errorf("only %d API writes: the server was not busy\n%s", n, child.logs.String())
			}
			if commands.Load() < 12 {
				t.Errorf("only %d admin commands ran", commands.Load())
			}
		})
	}
}

// writeLoad keeps the server at url writing from clients goroutines until
// ctx ends: each creates a heartbeat, pings it and deletes it, or creates
// and deletes an HTTP monitor. The returned func waits for them and
// reports how many writes succeeded, which n counts as they happen; a
// write that fails is an error.
func writeLoad(t *testing.T, ctx context.Context, url, key string, clients int, n *atomic.Int64) func() int64 {
	t.Helper()
	var wg sync.WaitGroup
	call := func(method, path, body string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, method, url+path, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		return http.DefaultClient.Do(req)
	}
	for c := range clients {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				var err error
				if c%2 == 0 {
					err = heartbeatRound(call, fmt.Sprintf("load %d-%d", c, i))
				} else {
					err = monitorRound(call, fmt.Sprintf("load %d-%d", c, i))
				}
				if err != nil && ctx.Err() == nil {
					t.Errorf("API write under load: %v", err)
					return
				}
				if err == nil {
					n.Add(1)
				}
			}
		})
	}
	return func() int64 {
		wg.Wait()
		return n.Load()
	}
}

type caller func(method, path, body string) (*http.Response, error)

func heartbeatRound(call caller, name string) error {
	var hb struct{ ID, PingURL string }
	if err := created(call("POST", "/api/v1/heartbeats", `{"name":"`+name+`","schedule":{"periodSeconds":3600}}`))(&hb); err != nil {
		return err
	}
	_, token, _ := strings.Cut(hb.PingURL, "/ping/")
	for range 20 {
		res, err := call("POST", "/ping/"+token, "done")
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("ping: %s", res.Status)
		}
	}
	return deleted(call("DELETE", "/api/v1/heartbeats/"+hb.ID, ""))
}

func monitorRound(call caller, name string) error {
	var m struct{ ID string }
	body := `{"type":"http","name":"` + name + `","intervalSeconds":60,"config":{"url":"http://127.0.0.1:9/"}}`
	if err := created(call("POST", "/api/v1/monitors", body))(&m); err != nil {
		return err
	}
	return deleted(call("DELETE", "/api/v1/monitors/"+m.ID, ""))
}

// created decodes a 201's body into v.
func created(res *http.Response, err error) func(v any) error {
	return func(v any) error {
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			return fmt.Errorf("%s %s: %s", res.Request.Method, res.Request.URL.Path, res.Status)
		}
		return json.NewDecoder(res.Body).Decode(v)
	}
}

func deleted(res *http.Response, err error) error {
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		return fmt.Errorf("%s %s: %s", res.Request.Method, res.Request.URL.Path, res.Status)
	}
	return nil
}
