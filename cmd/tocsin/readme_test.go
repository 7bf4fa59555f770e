package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// readmeCLIEnv marks this test binary re-executed as `tocsin` for the
// README's commands (TestReadmeCLI).
const readmeCLIEnv = "TOCSIN_README_CLI"

// TestReadmeCLI is not a test: it is `go run ./cmd/tocsin` for the commands
// TestReadmeFirstSteps takes from README.md, run in their own process with
// the shell's environment, as a user runs them.
func TestReadmeCLI(t *testing.T) {
	if os.Getenv(readmeCLIEnv) == "" {
		t.Skip("the tocsin command of TestReadmeFirstSteps; runs only when it starts it")
	}
	err := run(context.Background(), flag.Args(), os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tocsin:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// readmeCommands returns the shell commands of README.md's section named
// heading: its indented code blocks, a command per line unless a line ends
// in a backslash or a single quote is still open.
func readmeCommands(t *testing.T, heading string) []string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start := strings.Index(text, "\n## "+heading+"\n")
	if start < 0 {
		t.Fatalf("README.md has no section %q", heading)
	}
	text = text[start+1:]
	if end := strings.Index(text[3:], "\n## "); end >= 0 {
		text = text[:end+3]
	}
	var cmds []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "    ") {
			if cur.Len() > 0 {
				t.Fatalf("a command of README.md's %q does not end: %s", heading, cur.String())
			}
			continue
		}
		cur.WriteString(strings.TrimPrefix(line, "    "))
		if strings.HasSuffix(line, `\`) || strings.Count(cur.String(), "'")%2 == 1 {
			cur.WriteString("\n")
			continue
		}
		cmds = append(cmds, cur.String())
		cur.Reset()
	}
	return cmds
}

// TestReadmeFirstSteps runs the commands of README.md's "First steps with
// the API", taken from README.md itself, on each engine: serve on port 0
// stands in for localhost:8080, a receiver that verifies signatures for
// the one on port 9000, and each placeholder is filled from the answer
// the README says it comes from. Every answer must be a success, and each
// step must do what the README says it does.
func TestReadmeFirstSteps(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("TOCSIN_TEST_POSTGRES_REQUIRED") != "" {
				t.Fatalf("the README's commands need %s, which is not installed", tool)
			}
			t.Skipf("the README's commands need %s; install it to run this test", tool)
		}
	}
	cmds := readmeCommands(t, "First steps with the API")
	if len(cmds) < 8 {
		t.Fatalf("README.md's first steps hold %d commands, fewer than expected", len(cmds))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := engineEnv(t, eng)
			s := startServe(t, env)

			// The `tocsin` of the commands: this binary, as TestReadmeCLI.
			bin := filepath.Join(t.TempDir(), "tocsin")
			script := fmt.Sprintf("#!/bin/sh\nexec env %s=1 %q -test.run='^TestReadmeCLI$' -- \"$@\"\n", readmeCLIEnv, self)
			if err := os.WriteFile(bin, []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			rcv := &readmeReceiver{}
			hook := httptest.NewServer(rcv)
			defer hook.Close()

			shellEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			for k, v := range env {
				shellEnv = append(shellEnv, k+"="+v)
			}
			state := filepath.Join(t.TempDir(), "state.sh")
			if err := os.WriteFile(state, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			fill := map[string]string{}
			answers := map[string]map[string]any{} // by the path the command called
			for i, cmd := range cmds {
				line := cmd
				line = strings.ReplaceAll(line, "go run ./cmd/tocsin", bin)
				line = strings.ReplaceAll(line, "http://localhost:8080", s.url)
				line = strings.ReplaceAll(line, "http://localhost:9000", hook.URL)
				for k, v := range fill {
					line = strings.ReplaceAll(line, k, v)
				}
				if m := regexp.MustCompile(`<[a-zA-Z][^>]*>`).FindString(line); m != "" {
					t.Fatalf("command %d has a placeholder %s that no earlier answer filled:\n%s", i+1, m, cmd)
				}
				c := exec.Command("bash", "-c", "set -eo pipefail\n. "+state+"\n"+line+"\ndeclare -p KEY > "+state+" 2>/dev/null || true")
				c.Env = shellEnv
				out, err := c.Output()
				if err != nil {
					stderr := ""
					if ee, ok := err.(*exec.ExitError); ok {
						stderr = string(ee.Stderr)
					}
					t.Fatalf("command %d failed: %v\n%s\n%s%s", i+1, err, cmd, out, stderr)
				}
				if !strings.Contains(line, "curl") {
					continue
				}
				path := regexp.MustCompile(regexp.QuoteMeta(s.url) + `(/[^"' ]*)`).FindStringSubmatch(line)
				if path == nil {
					continue
				}
				var answer map[string]any
				if err := json.Unmarshal(out, &answer); err != nil {
					if strings.HasPrefix(path[1], "/api/") {
						t.Fatalf("command %d did not answer JSON: %v\n%s\n%s", i+1, err, cmd, out)
					}
					continue
				}
				if _, bad := answer["error"]; bad {
					t.Fatalf("command %d answered an error:\n%s\n%s", i+1, cmd, out)
				}
				answers[path[1]] = answer
				switch path[1] {
				case "/api/v1/heartbeats":
					fill["<pingUrl>"], _ = answer["pingUrl"].(string)
				case "/api/v1/notification-channels":
					fill["<channel id>"], _ = answer["id"].(string)
					secret, _ := answer["signingSecret"].(string)
					rcv.setSecret(secret)
				}
			}
			key := readmeKey(t, state)
			url := s.url

			// Every command above answered a success, so the first key had
			// every scope they use.
			// The test run fails, and says why.
			tested := answers["/api/v1/monitors/test"]
			if tested == nil || tested["result"] != "down" || !strings.Contains(fmt.Sprint(tested["reason"]), "200") {
				t.Errorf("the README's test run should fail naming the status: %v", tested)
			}
			// The first monitor's example passes against the target it names.
			created := answers["/api/v1/monitors"]
			if created == nil || created["state"] != "PENDING" {
				t.Fatalf("the README's monitor was not created: %v", created)
			}
			cfg, _ := json.Marshal(map[string]any{"type": created["type"], "name": created["name"], "config": created["config"]})
			res := do(t, "POST", url+"/api/v1/monitors/test", key, string(cfg))
			var run struct{ Result, Reason string }
			if err := json.NewDecoder(res.Body).Decode(&run); err != nil || res.StatusCode != 200 || run.Result != "up" {
				t.Errorf("the README's monitor does not pass against its target: %d %v %+v", res.StatusCode, err, run)
			}
			// The metrics listing answered for the monitor the README made.
			if m := answers["/api/v1/metrics?window=24h"]; m == nil || !strings.Contains(fmt.Sprint(m["data"]), created["id"].(string)) {
				t.Errorf("the README's metrics listing does not hold its monitor: %v", m)
			}
			// The ping reached the heartbeat.
			hbID, _ := answers["/api/v1/heartbeats"]["id"].(string)
			if hb := answersOf(t, url, key, "/api/v1/heartbeats/"+hbID); hb["lastPingAt"] == nil {
				t.Errorf("the README's ping did not reach its heartbeat: %v", hb)
			}
			// The test event reached the receiver, signed. (The monitor's
			// first state change may come too: the channel gets every event.)
			wait.For(t, 20*time.Second, "the test event to reach the receiver", func() bool { return rcv.tests() > 0 })
			if rcv.tests() != 1 || rcv.refused() != 0 {
				t.Errorf("receiver: %d test events verified, %d deliveries refused; want the test event once, verified", rcv.tests(), rcv.refused())
			}
			if _, ok := answers["/api/v1/incidents"]["data"]; !ok {
				t.Errorf("the README's incident list: %v", answers["/api/v1/incidents"])
			}
		})
	}
}

// answersOf GETs path with key and decodes the JSON object it answers.
func answersOf(t *testing.T, base, key, path string) map[string]any {
	t.Helper()
	res := do(t, "GET", base+path, key, "")
	defer res.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v %v", path, res.StatusCode, err, v)
	}
	return v
}

// readmeKey reads KEY as the README's first command left it in the shell.
func readmeKey(t *testing.T, state string) string {
	t.Helper()
	raw, _ := os.ReadFile(state)
	m := regexp.MustCompile(`KEY="(tsk_[A-Za-z0-9_-]+)"`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("the README's first command left no key in KEY: %q", raw)
	}
	return string(m[1])
}

// readmeReceiver stands in for the receiver of docs/webhooks.md: it
// verifies each delivery's signature with the channel's secret.
type readmeReceiver struct {
	mu     sync.Mutex
	secret string
	byType map[string]int // verified deliveries by event type
	bad    int
}

func (r *readmeReceiver) setSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = s
}

func (r *readmeReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.URL.Path != "/tocsin" || r.secret == "" ||
		notify.Verify(req.Header.Get(notify.HeaderSignature), body, r.secret, time.Now(), notify.DefaultTolerance) != nil {
		r.bad++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev struct{ Type string }
	_ = json.Unmarshal(body, &ev)
	if r.byType == nil {
		r.byType = map[string]int{}
	}
	r.byType[ev.Type]++
	w.WriteHeader(http.StatusNoContent)
}

// tests counts the verified deliveries of test events.
func (r *readmeReceiver) tests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byType["test"]
}

func (r *readmeReceiver) refused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad
}
