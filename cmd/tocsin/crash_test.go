package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// An acknowledged ping is on disk: `tocsin serve` is killed with SIGKILL
// during a burst of pings, and after a restart every ping it answered 200
// is there, exactly once.
//
// SIGKILL cannot be sent to run in this process, so the server under
// test is this test binary re-executed (TestCrashChild) with its serve
// arguments in crashChildEnv.

// crashChildEnv holds, in the child, the JSON array of arguments of serve.
const crashChildEnv = "TOCSIN_CRASH_CHILD"

// TestCrashChild is not a test: it is the server the crash test kills.
func TestCrashChild(t *testing.T) {
	raw := os.Getenv(crashChildEnv)
	if raw == "" {
		t.Skip("the server process of TestKilledServerKeepsAcknowledgedPings; runs only when it starts it")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	// The parent holds our stdin open; EOF means it is gone, so no child
	// outlives a test binary that died or timed out.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	// No environment: the arguments are the whole configuration, whatever
	// TOCSIN_* variables the developer's shell has.
	err := run(ctx, append([]string{"serve"}, args...), func(string) string { return "" }, strings.NewReader(""), os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child: serve:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// crashChild is the server in its own process.
type crashChild struct {
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
	done chan struct{} // closed once the process has been waited for
}

// childSetup is the environment of the CLI and the arguments of a serve
// child on a fresh data dir, or on a fresh PostgreSQL database with its
// keys for eng, with the rate limit raised out of the way.
func childSetup(t *testing.T, eng storetest.Engine) (env map[string]string, args []string) {
	t.Helper()
	dir := t.TempDir()
	env = map[string]string{"TOCSIN_DATA_DIR": dir}
	args = []string{"--data-dir", dir, "--rate-limit", "1000000"}
	if eng.Name == "postgres" {
		dbURL := storetest.EmptyURL(t, eng)
		keys, _, err := cli(t, env, "secret-key")
		if err != nil {
			t.Fatal(err)
		}
		env["TOCSIN_DATABASE_URL"] = dbURL
		args = append(args, "--database-url", dbURL, "--secret-keys", strings.TrimSpace(keys))
	}
	return env, args
}

func startCrashChild(t *testing.T, serveArgs ...string) *crashChild {
	t.Helper()
	raw, _ := json.Marshal(append([]string{"--listen", "127.0.0.1:0"}, serveArgs...))
	// -test.timeout=0: the child lives until killed; its stdin ties it to us.
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.timeout=0")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+string(raw))
	c := &crashChild{cmd: cmd, logs: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout = c.logs
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		re := regexp.MustCompile(`msg=listening addr=(http://[0-9.:]+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			c.logs.Write(append(sc.Bytes(), '\n'))
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	go func() {
		<-scanned // Wait closes the pipe; read it all first
		_ = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		stdin.Close()
		c.kill()
	})
	select {
	case c.url = <-addr:
	case <-c.done:
		t.Fatalf("server exited before listening:\n%s", c.logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start:\n%s", c.logs.String())
	}
	return c
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *crashChild) kill() {
	_ = c.cmd.Process.Kill()
	<-c.done
}

// sentPing is one ping the burst sent.
type sentPing struct {
	hb     int    // index of its heartbeat
	suffix string // "", "/fail" or "/0"
	body   string // POST body; "" for a GET
	acked  bool   // answered 200 with an acknowledgement
}

// burstResult is what the senders saw.
type burstResult struct {
	sent     map[string]*sentPing // by key
	acked    int
	failed   int            // no answer: in flight at the kill, or refused after it
	statuses map[int]int    // answers other than 200
	bad      []string       // 200s whose body was no acknowledgement
	inFlight int64          // requests in flight at the moment of the kill
	elapsed  time.Duration  // from the first ping to the kill
	perSec   float64        // acknowledged per second before the kill
	errs     map[string]int // transport errors, by kind
}

// burst pings the tokens from senders goroutines over keep-alive
// connections, each ping with a unique ?key=, until d has passed or
// enough pings are acknowledged, then kills the server while pings are
// in flight. Enough is most of the heartbeats' rate-limit bursts, so that
// the kill interrupts pings being stored, not pings being refused.
func burst(t *testing.T, c *crashChild, tokens []string, senders int, d time.Duration) burstResult {
	t.Helper()
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConnsPerHost: senders,
		MaxConnsPerHost:     senders,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var (
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		inFlight atomic.Int64
		acked    atomic.Int64
		enough   = int64(len(tokens) * app.PingBurst * 8 / 10)
		parts    = make([]burstResult, senders)
	)
	start := time.Now()
	for g := range senders {
		wg.Go(func() {
			r := &parts[g]
			r.sent, r.statuses, r.errs = map[string]*sentPing{}, map[int]int{}, map[string]int{}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("g%d-%d", g, i)
				p := &sentPing{hb: (g + i) % len(tokens)}
				switch i % 16 {
				case 5:
					p.suffix = "/fail"
				case 9:
					p.suffix = "/0"
				}
				method := http.MethodGet
				var body io.Reader
				if i%4 == 2 {
					// A share sends the run's log, naming the key.
					method, p.body = http.MethodPost, "log of run "+key+"\n"
					body = strings.NewReader(p.body)
				}
				r.sent[key] = p
				req, err := http.NewRequest(method, c.url+"/ping/"+tokens[p.hb]+p.suffix+"?key="+url.QueryEscape(key), body)
				if err != nil {
					t.Error(err)
					return
				}
				inFlight.Add(1)
				res, err := client.Do(req)
				var b []byte
				if err == nil {
					b, err = io.ReadAll(res.Body)
					res.Body.Close()
				}
				inFlight.Add(-1)
				switch {
				case err != nil:
					r.failed++
					r.errs[errKind(err)]++
				case res.StatusCode != http.StatusOK:
					r.statuses[res.StatusCode]++
				default:
					var ack struct {
						OK       bool
						Signal   string
						Replayed bool
					}
					if err := json.Unmarshal(b, &ack); err != nil || !ack.OK || ack.Replayed || ack.Signal != signalOf(p.suffix) {
						r.bad = append(r.bad, fmt.Sprintf("%s: %s", key, b))
						continue
					}
					p.acked = true
					r.acked++
					acked.Add(1)
				}
			}
		})
	}
	tick := time.NewTicker(2 * time.Millisecond)
	for time.Since(start) < d && acked.Load() < enough {
		<-tick.C
	}
	tick.Stop()
	res := burstResult{sent: map[string]*sentPing{}, statuses: map[int]int{}, errs: map[string]int{}}
	res.inFlight = inFlight.Load()
	c.kill()
	res.elapsed = time.Since(start)
	close(stop)
	wg.Wait()
	for _, p := range parts {
		for k, v := range p.sent {
			res.sent[k] = v
		}
		res.acked += p.acked
		res.failed += p.failed
		res.bad = append(res.bad, p.bad...)
		for k, v := range p.statuses {
			res.statuses[k] += v
		}
		for k, v := range p.errs {
			res.errs[k] += v
		}
	}
	res.perSec = float64(res.acked) / res.elapsed.Seconds()
	return res
}

func signalOf(suffix string) string {
	if suffix == "/fail" {
		return "fail"
	}
	return "success"
}

// errKind names a transport error without its addresses, to count them.
func errKind(err error) string {
	s := err.Error()
	for _, k := range []string{"connection refused", "connection reset", "EOF", "broken pipe", "timeout"} {
		if strings.Contains(s, k) {
			return k
		}
	}
	return s
}

// apiCall is do, with the check against the API document only when
// validate is set.
func apiCall(t *testing.T, validate bool, method, url, key, body string) *http.Response {
	t.Helper()
	if validate {
		return do(t, method, url, key, body)
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// storedPing is a ping as the API lists it.
type storedPing struct {
	Signal   string
	ExitCode *int
	Method   string
	Key      string
	Body     string
}

// listAllPings pages through a heartbeat's pings.
// The first page of the first heartbeat is checked against the API
// document; checking every page would make the test slow under -race.
func listAllPings(t *testing.T, validate bool, base, key, id string) []storedPing {
	t.Helper()
	var all []storedPing
	cursor := ""
	for page := 0; ; page++ {
		u := base + "/api/v1/heartbeats/" + id + "/pings?limit=100"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		res := apiCall(t, validate && page == 0, http.MethodGet, u, key, "")
		var list struct {
			Data       []storedPing
			NextCursor *string
		}
		err := json.NewDecoder(res.Body).Decode(&list)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("listing pings of %s: %d %v", id, res.StatusCode, err)
		}
		all = append(all, list.Data...)
		if list.NextCursor == nil {
			return all
		}
		cursor = *list.NextCursor
	}
}

// TestKilledServerKeepsAcknowledgedPings: pings are acknowledged only once
// committed, so a server killed with SIGKILL in the middle of a burst
// loses none it acknowledged, and stores none twice; pings that were in
// flight when it died may or may not be there.
func TestKilledServerKeepsAcknowledgedPings(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a server in the middle of a burst; not in -short")
	}
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			env, args := childSetup(t, eng)
			child := startCrashChild(t, args...)
			key := ownerKey(t, env, "monitors:read", "monitors:write")

			// Enough heartbeats that their rate-limit bursts (app.PingBurst
			// each) hold the whole burst: the kill must interrupt pings
			// being stored, not pings being refused.
			const heartbeats = 100
			ids, tokens := make([]string, heartbeats), make([]string, heartbeats)
			for i := range heartbeats {
				res := apiCall(t, i == 0, http.MethodPost, child.url+"/api/v1/heartbeats", key,
					fmt.Sprintf(`{"name":"job %d","schedule":{"periodSeconds":3600}}`, i))
				var hb struct{ ID, PingURL string }
				if err := json.NewDecoder(res.Body).Decode(&hb); err != nil || res.StatusCode != http.StatusCreated {
					t.Fatalf("creating a heartbeat: %d %v", res.StatusCode, err)
				}
				_, token, ok := strings.Cut(hb.PingURL, "/ping/")
				if !ok {
					t.Fatalf("ping URL %q", hb.PingURL)
				}
				ids[i], tokens[i] = hb.ID, token
			}

			b := burst(t, child, tokens, 16, 1500*time.Millisecond)
			t.Logf("%s: sent %d pings in %s, %d acknowledged (%.0f/s), %d without an answer (%d in flight at the kill; %v), other answers %v",
				eng.Name, len(b.sent), b.elapsed.Round(time.Millisecond), b.acked, b.perSec, b.failed, b.inFlight, b.errs, b.statuses)
			for _, s := range b.bad {
				t.Errorf("a 200 that is no acknowledgement: %s", s)
			}
			if b.acked < 100 {
				t.Fatalf("only %d pings acknowledged before the kill; the test proves nothing\n%s", b.acked, child.logs.String())
			}
			if b.failed == 0 {
				t.Log("no request was in flight at the kill: this run did not test an interrupted batch")
			}

			// The same database, a new process. startServe runs serve in
			// this process and stops it cleanly when the test ends.
			s := startServe(t, map[string]string{}, args...)
			seen := map[string]int{}
			var stored, notAcked int
			for i, id := range ids {
				for _, p := range listAllPings(t, i == 0, s.url, key, id) {
					stored++
					seen[p.Key]++
					sp := b.sent[p.Key]
					switch {
					case sp == nil:
						t.Errorf("heartbeat %d has a ping no one sent: %+v", i, p)
						continue
					case sp.hb != i:
						t.Errorf("ping %s, sent to heartbeat %d, is stored under %d", p.Key, sp.hb, i)
					case p.Body != sp.body || p.Signal != signalOf(sp.suffix) || (sp.suffix == "/0") != (p.ExitCode != nil):
						t.Errorf("ping %s stored as %+v; sent %+v", p.Key, p, *sp)
					}
					if !sp.acked {
						notAcked++
					}
				}
			}
			var lost, dup int
			for k, n := range seen {
				if n > 1 {
					dup++
					if dup <= 10 {
						t.Errorf("ping %s stored %d times", k, n)
					}
				}
			}
			for k, p := range b.sent {
				if p.acked && seen[k] == 0 {
					lost++
					if lost <= 10 {
						t.Errorf("acknowledged ping %s (heartbeat %d) is not stored", k, p.hb)
					}
				}
			}
			t.Logf("%s: after the restart %d pings stored: %d of the %d acknowledged (%d lost), %d duplicated, and %d unacknowledged ones that were in flight at the kill",
				eng.Name, stored, b.acked-lost, b.acked, lost, dup, notAcked)
		})
	}
}
