package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tocsin/tocsin/internal/store/storetest"
)

// quotaEnv is the environment of a serve on an empty database of eng,
// with these settings added.
func quotaEnv(t *testing.T, eng storetest.Engine, settings map[string]string) map[string]string {
	t.Helper()
	env := engineEnv(t, eng)
	env["TOCSIN_RATE_LIMIT"] = "1000000"
	for k, v := range settings {
		env[k] = v
	}
	return env
}

// reply is an API answer: its status and error, if any.
type reply struct {
	status        int
	code, message string
}

// createMonitor posts a monitor checked every interval seconds.
func createMonitor(t *testing.T, base, key string, interval int) reply {
	t.Helper()
	body := fmt.Sprintf(`{"type":"http","name":"m","intervalSeconds":%d,"config":{"url":"https://a.example"}}`, interval)
	return post(t, base+"/api/v1/monitors", key, body)
}

func post(t *testing.T, url, key, body string) reply {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return reply{}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var e struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal(b, &e)
	return reply{res.StatusCode, e.Error.Code, e.Error.Message}
}

// wantQuotaExceeded: the spec's error for a quota, naming the limit and
// how the operator raises it.
func wantQuotaExceeded(t *testing.T, r reply, mentions ...string) {
	t.Helper()
	if r.status != http.StatusPaymentRequired || r.code != "quota_exceeded" {
		t.Fatalf("got %+v; want 402 quota_exceeded", r)
	}
	for _, m := range append(mentions, "tocsin workspace set-quota") {
		if !strings.Contains(r.message, m) {
			t.Errorf("message %q does not mention %q", r.message, m)
		}
	}
}

// regexpLine reports whether a line of out matches re.
func regexpLine(out, re string) bool {
	return regexp.MustCompile(`(?m)^` + re).MatchString(out)
}

// TestWorkspaceQuotas: the server's defaults come from its flags (here
// their environment variables); `tocsin workspace set-quota` overrides
// them for one workspace while the server runs, and "default" returns to
// the server's value; `workspace show` prints what applies and the usage.
func TestWorkspaceQuotas(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := quotaEnv(t, eng, map[string]string{"TOCSIN_MAX_MONITORS": "3", "TOCSIN_MIN_INTERVAL": "30s", "TOCSIN_MAX_HEARTBEATS": "1"})
			s := startServe(t, env)
			key := ownerKey(t, env, "monitors:write")
			heartbeat := func() reply {
				return post(t, s.url+"/api/v1/heartbeats", key, `{"name":"job","schedule":{"periodSeconds":3600}}`)
			}
			if r := heartbeat(); r.status != http.StatusCreated {
				t.Fatalf("first heartbeat: %+v", r)
			}
			wantQuotaExceeded(t, heartbeat(), "at most 1 heartbeats", "--heartbeats")
			wantQuotaExceeded(t, (createMonitor(t, s.url, key, 20)), "at least 30 seconds", "--min-interval")
			for range 3 {
				if r := createMonitor(t, s.url, key, 30); r.status != http.StatusCreated {
					t.Fatalf("create within the quota: %+v", r)
				}
			}
			wantQuotaExceeded(t, (createMonitor(t, s.url, key, 30)), "at most 3 monitors", "--monitors")

			out, errOut, err := cli(t, env, "workspace", "set-quota", "--workspace", "default", "--monitors", "4", "--min-interval", "15s")
			if err != nil {
				t.Fatalf("set-quota: %v\n%s", err, errOut)
			}
			if !strings.Contains(out, "monitors") || !regexpLine(out, `monitors\s+4\s+workspace`) {
				t.Errorf("set-quota output:\n%s", out)
			}
			if r := createMonitor(t, s.url, key, 20); r.status != http.StatusCreated {
				t.Fatalf("create after raising the quota and lowering the interval: %+v", r)
			}
			wantQuotaExceeded(t, (createMonitor(t, s.url, key, 30)), "at most 4 monitors")

			// Back to the server's default: 3, below the 4 held; those stay.
			if _, errOut, err := cli(t, env, "workspace", "set-quota", "--workspace", "default", "--monitors", "default"); err != nil {
				t.Fatalf("set-quota default: %v\n%s", err, errOut)
			}
			wantQuotaExceeded(t, (createMonitor(t, s.url, key, 30)), "at most 3 monitors")
			out, errOut, err = cli(t, env, "workspace", "show", "--workspace", "default")
			if err != nil {
				t.Fatalf("show: %v\n%s", err, errOut)
			}
			for _, re := range []string{`monitors\s+3\s+server default\s+4`, `min-interval\s+15s\s+workspace \(set-quota\)\s+shortest 20s`,
				`heartbeats\s+1\s+server default\s+1`, `channels\s+100\s+server default\s+0`, `maintenance-windows\s+100\s+server default\s+0`} {
				if !regexpLine(out, re) {
					t.Errorf("show has no line matching %q:\n%s", re, out)
				}
			}
		})
	}
}

// TestWorkspaceCommandErrors: what the operator mistypes is refused by
// name and changes nothing.
func TestWorkspaceCommandErrors(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOCSIN_DATA_DIR": t.TempDir()}
	if _, _, err := cli(t, env, "migrate"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cli(t, env, "user", "create", "--email", "a@example.com", "--workspace", "acme"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"set-quota", "--workspace", "acme", "--monitors", "0"}, "must be a whole number from 1 to"},
		{[]string{"set-quota", "--workspace", "acme", "--monitors", "lots"}, "must be a whole number"},
		{[]string{"set-quota", "--workspace", "acme", "--channels", "10000001"}, "must be a whole number"},
		{[]string{"set-quota", "--workspace", "acme", "--min-interval", "30"}, "whole seconds"},
		{[]string{"set-quota", "--workspace", "acme", "--min-interval", "5s"}, "--min-interval: must be from 10s"},
		{[]string{"set-quota", "--workspace", "acme"}, "nothing to change"},
		{[]string{"set-quota", "--monitors", "5"}, "--workspace: required"},
		{[]string{"set-quota", "--workspace", "nope", "--monitors", "5"}, "not found"},
		{[]string{"show", "--workspace", "nope"}, "not found"},
		{[]string{"show", "--workspace", "acme", "--max-monitors", "0"}, "max-monitors"},
		{[]string{"rename"}, "usage"},
	} {
		out, errOut, err := cli(t, env, append([]string{"workspace"}, c.args...)...)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()+errOut), strings.ToLower(c.want)) {
			t.Errorf("%q: %v %s; want an error mentioning %q", c.args, err, errOut, c.want)
		}
		if out != "" {
			t.Errorf("%q printed %q", c.args, out)
		}
	}
	out, _, err := cli(t, env, "workspace", "show", "--workspace", "acme")
	if err != nil || !regexpLine(out, `monitors\s+1000\s+server default\s+0`) || !regexpLine(out, `min-interval\s+10s\s+server default`) {
		t.Errorf("after the refusals: %v\n%s", err, out)
	}
}

// TestThousandAndFirstMonitor: at the default of 1,000 the next monitor
// is refused; after `set-quota --monitors 1001` it is admitted, and the
// one after refused. The 1,000 are created through the API too.
func TestThousandAndFirstMonitor(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := quotaEnv(t, eng, nil)
			s := startServe(t, env)
			key := ownerKey(t, env, "monitors:write")
			if n := createConcurrently(t, s.url, key, 1000, 16); n != 1000 {
				t.Fatalf("%d of 1000 creates admitted under the default quota", n)
			}
			wantQuotaExceeded(t, (createMonitor(t, s.url, key, 30)), "at most 1000 monitors")
			if _, errOut, err := cli(t, env, "workspace", "set-quota", "--workspace", "default", "--monitors", "1001"); err != nil {
				t.Fatalf("set-quota: %v\n%s", err, errOut)
			}
			if r := createMonitor(t, s.url, key, 30); r.status != http.StatusCreated {
				t.Fatalf("the 1,001st monitor: %+v", r)
			}
			wantQuotaExceeded(t, (createMonitor(t, s.url, key, 30)), "at most 1001 monitors")
		})
	}
}

// TestConcurrentCreatesAtTheLimit: with one monitor left under the quota,
// many creates at once admit exactly one.
func TestConcurrentCreatesAtTheLimit(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := quotaEnv(t, eng, map[string]string{"TOCSIN_MAX_MONITORS": "5"})
			s := startServe(t, env)
			key := ownerKey(t, env, "monitors:write")
			if n := createConcurrently(t, s.url, key, 4, 1); n != 4 {
				t.Fatalf("%d of 4 admitted", n)
			}
			if n := createConcurrently(t, s.url, key, 20, 20); n != 1 {
				t.Fatalf("%d of 20 concurrent creates admitted with one monitor left; want 1", n)
			}
		})
	}
}

// createConcurrently posts n monitors from workers clients and counts the
// admitted; every refusal must be quota_exceeded.
func createConcurrently(t *testing.T, base, key string, n, workers int) int {
	t.Helper()
	var mu sync.Mutex
	admitted := 0
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range jobs {
				r := createMonitor(t, base, key, 30)
				switch {
				case r.status == http.StatusCreated:
					mu.Lock()
					admitted++
					mu.Unlock()
				case r.code != "quota_exceeded":
					t.Errorf("create: %+v", r)
				}
			}
		})
	}
	wg.Wait()
	return admitted
}
