package httpapi_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/heartbeat"
)

// One tenant's bytes never stop another's pings: workspace A's pings carry
// keys, run ids, bodies and user agents that are not valid UTF-8 or hold
// NUL, sent beside workspace B's ordinary pings. Every ping of both is
// acknowledged and stored, A's cleaned, and A's odd keys still tell a
// retry from a new ping.
func TestHostilePingsCostOthersNothing(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		e.clock.Set(hbT0)
		kA, kB := e.ownerKey(), e.key(e.ownerB, e.wsB.ID, false, account.Scopes...)
		const bHeartbeats, bPings = 4, 90 // within a heartbeat's burst of 100
		var bIDs, bURLs []string
		for i := range bHeartbeats {
			h := e.newHeartbeat(t, kB, periodic(fmt.Sprint("b", i), 3600, 300))
			bIDs, bURLs = append(bIDs, h["id"].(string)), append(bURLs, h["pingUrl"].(string))
		}
		hA := e.newHeartbeat(t, kA, periodic("poisoned", 3600, 300))
		aID, aURL := hA["id"].(string), hA["pingUrl"].(string)

		type hostile struct {
			method, suffix, body, agent string
		}
		poisoned := []hostile{
			{"GET", "?key=%ff", "", ""},
			{"GET", "?key=%00", "", ""},
			{"GET", "?key=%c3%28", "", ""},
			{"GET", "?key=a%00b", "", ""},
			{"GET", "/fail?rid=%ff%00", "", ""},
			{"GET", "/start?rid=%c3%28", "", ""},
			{"POST", "/0", "log\x00line \xff\xfe end", ""},
			{"POST", "?key=%fe", "\xc3\x28\x00", ""},
			{"POST", "/3", strings.Repeat("\xffa", heartbeat.MaxPingBody/2+10), ""},
			{"GET", "", "", "curl/8 \xff\xfe"},
			{"GET", "/0", "", "\xc3\x28" + strings.Repeat("x", 400)},
		}
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			failures []string
		)
		fail := func(format string, args ...any) {
			mu.Lock()
			failures = append(failures, fmt.Sprintf(format, args...))
			mu.Unlock()
		}
		for i, u := range bURLs {
			wg.Go(func() {
				for n := range bPings {
					suffix := fmt.Sprintf("?key=b%d-%d&rid=r%d", i, n, n)
					if r := e.ping(t, "POST", u, suffix, fmt.Sprintf("run %d done\n", n)); r.status != http.StatusOK {
						fail("B's ping %d of heartbeat %d: %d %s", n, i, r.status, r.body)
					}
				}
			})
		}
		for range 3 { // each hostile ping a few times, beside B's
			for _, p := range poisoned {
				wg.Go(func() {
					headers := []string{"Content-Type", "text/plain"}
					if p.agent != "" {
						headers = append(headers, "User-Agent", p.agent)
					}
					var body any
					if p.method == "POST" {
						body = p.body
					}
					if r := e.send(t, p.method, pingPath(t, e, aURL)+p.suffix, "", body, headers...); r.status != http.StatusOK {
						fail("A's ping %s %q: %d %s", p.method, p.suffix, r.status, r.body)
					}
				})
			}
		}
		wg.Wait()
		for _, f := range failures {
			t.Error(f)
		}

		for i, id := range bIDs {
			if n := len(e.pingsOf(t, kB, id, "?limit=100")); n != bPings {
				t.Errorf("B's heartbeat %d: %d pings stored, want %d", i, n, bPings)
			}
		}
		// A's: the keyed ones once each (retries within the burst were
		// replayed), the others every time.
		keyed := 0
		for _, p := range poisoned {
			if strings.Contains(p.suffix, "key=") {
				keyed++
			}
		}
		pings := e.pingsOf(t, kA, aID, "?limit=100")
		if want := keyed + 3*(len(poisoned)-keyed); len(pings) != want {
			t.Errorf("A: %d pings stored, want %d", len(pings), want)
		}
		keys := map[string]bool{}
		for _, p := range pings {
			for _, f := range []string{"key", "runId", "userAgent", "body"} {
				if s, ok := p[f].(string); ok && (!clean.Valid(s) || f == "body" && len(s) > heartbeat.MaxPingBody) {
					t.Errorf("A's ping %v: %s %q is not clean", p["id"], f, s)
				}
			}
			if k, ok := p["key"].(string); ok {
				keys[k] = true
			}
		}
		for _, raw := range []string{"\xff", "\x00", "\xc3\x28", "a\x00b", "\xfe"} {
			if !keys[heartbeat.Label(raw)] {
				t.Errorf("no ping with the key %q stored as %q; keys: %v", raw, heartbeat.Label(raw), keys)
			}
		}
		// At rest, every block is valid UTF-8 with no NUL, not even escaped.
		for _, b := range e.rawBlobs(t, "SELECT pings FROM ping_blocks") {
			if !utf8.Valid(b) || strings.Contains(string(b), `\u0000`) {
				t.Errorf("a block holds NUL or invalid UTF-8: %.200q", b)
			}
		}

		// Odd keys replay: the same raw key is a retry, a different one a
		// new ping, even where the two would clean to the same text.
		retry := e.ping(t, "GET", aURL, "?key=%ff", nil)
		if retry.status != 200 || retry.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry with ?key=%%ff: %d %v %s", retry.status, retry.header, retry.body)
		}
		for _, suffix := range []string{"?key=%fd", "?key=%EF%BF%BD%28"} { // a key %c3%28 cleans to
			if r := e.ping(t, "GET", aURL, suffix, nil); r.status != 200 || r.header.Get("Idempotent-Replayed") != "" {
				t.Errorf("a new key %s: %d %v %s, want a new ping", suffix, r.status, r.header, r.body)
			}
		}
		// Odd run ids pair only with the very same id.
		e.pingOK(t, aURL, "/start?rid=%fe%00")
		if a := e.pingOK(t, aURL, "?rid=%fd%00"); a["durationMs"] != nil {
			t.Errorf("a completion with another odd run id paired: %v", a)
		}
		if a := e.pingOK(t, aURL, "?rid=%fe%00"); a["durationMs"] != 0.0 {
			t.Errorf("the completion with the same odd run id: %v, want paired", a)
		}
	})
}

// pingPath is the path of a ping URL the API handed out.
func pingPath(t *testing.T, e *env, pingURL string) string {
	t.Helper()
	path, ok := strings.CutPrefix(pingURL, e.srv.URL)
	if !ok {
		t.Fatalf("ping URL %q is not under %s", pingURL, e.srv.URL)
	}
	return path
}

// A refused ping says how long to wait in the words and in Retry-After
// alike: whole seconds, rounded up, at least one.
func TestPingRateLimitSaysRetryAfter(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		e.clock.Set(hbT0)
		h := e.newHeartbeat(t, e.ownerKey(), periodic("busy", 600, 60))
		for range app.PingBurst {
			e.pingOK(t, h["pingUrl"].(string), "")
		}
		r := e.ping(t, "GET", h["pingUrl"].(string), "", nil)
		if r.status != http.StatusTooManyRequests || r.code(t) != "rate_limited" {
			t.Fatalf("ping past the burst: %d %s", r.status, r.body)
		}
		header, err := strconv.Atoi(r.header.Get("Retry-After"))
		m := regexp.MustCompile(`retry in (\d+)s$`).FindStringSubmatch(r.json(t)["error"].(map[string]any)["message"].(string))
		if err != nil || m == nil || m[1] != strconv.Itoa(header) || header < 1 {
			t.Errorf("Retry-After %q and message %s disagree, or say less than a second", r.header.Get("Retry-After"), r.body)
		}
	})
}
