package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// Heartbeats end to end: the resource through /api/v1, pings through the
// ping URL the API hands out, and deadlines judged by a node's sweeper
// driven on the test clock.

// hbT0 is when the first scenario of a test starts; the daylight-saving
// nights of 2026 come after all of them.
var hbT0 = time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)

// scenario is one heartbeat test on a shared env: k is a new owner key of
// workspace A, and t0 the clock when it starts.
type scenario struct {
	name string
	run  func(t *testing.T, e *env, k string, t0 time.Time)
}

// runScenarios runs scenarios in order on one env per engine (an env
// takes seconds to build), each with workspace A emptied of heartbeats and
// on its own stretch of the clock three days after the last: the clock
// only moves forward, for a key's rate-limit bucket and the service's
// record of receiving pings live on it.
func runScenarios(t *testing.T, scenarios ...scenario) {
	forEachEngine(t, func(t *testing.T, e *env) {
		for i, s := range scenarios {
			t0 := hbT0.Add(time.Duration(i) * 72 * time.Hour)
			t.Run(s.name, func(t *testing.T) {
				e.clock.Set(t0)
				k := e.ownerKey()
				r := e.send(t, "GET", "/api/v1/heartbeats?limit=100", k, nil)
				for _, h := range r.json(t)["data"].([]any) {
					id := h.(map[string]any)["id"].(string)
					if d := e.send(t, "DELETE", "/api/v1/heartbeats/"+id, k, nil); d.status != http.StatusNoContent {
						t.Fatalf("delete %s: %d %s", id, d.status, d.body)
					}
				}
				s.run(t, e, k, t0)
			})
		}
	})
}

// TestHeartbeatResource: the heartbeat resource through /api/v1.
func TestHeartbeatResource(t *testing.T) {
	t.Parallel()
	runScenarios(t,
		scenario{"lifecycle", heartbeatLifecycle},
		scenario{"validation", heartbeatValidation},
		scenario{"access", heartbeatAccess},
		scenario{"rotate token", heartbeatRotateToken},
		scenario{"pings list", heartbeatPingsList},
	)
}

// TestHeartbeatPings: the ping endpoint, through the URL the API hands out.
func TestHeartbeatPings(t *testing.T) {
	t.Parallel()
	runScenarios(t,
		scenario{"signals", pingSignals},
		scenario{"idempotency key", pingIdempotencyKey},
		scenario{"run pairing", pingRunPairing},
		scenario{"body", pingBody},
		scenario{"paused", pingPaused},
		scenario{"rate limits", pingRateLimits},
	)
}

// TestHeartbeatDeadlines: what the sweeper makes of missed deadlines,
// overruns and failures, of its own outages, and of clock changes.
func TestHeartbeatDeadlines(t *testing.T) {
	t.Parallel()
	runScenarios(t,
		scenario{"late, overrun, failure, recovery", heartbeatDeadlines},
		scenario{"outage is unknown", heartbeatOutageIsUnknown},
		scenario{"outage before a cron run", heartbeatOutageBeforeCronRun},
		scenario{"outage notifies nobody", heartbeatOutageNotifiesNobody},
		scenario{"two nodes", heartbeatTwoNodes},
		scenario{"daylight saving", heartbeatDaylightSaving},
	)
}

// periodic is a create body of a heartbeat expected every period seconds.
func periodic(name string, period, grace int) map[string]any {
	return map[string]any{"name": name, "schedule": map[string]any{"periodSeconds": period, "graceSeconds": grace}}
}

// newHeartbeat creates a heartbeat through the API.
func (e *env) newHeartbeat(t *testing.T, key string, body any) map[string]any {
	t.Helper()
	r := e.send(t, "POST", "/api/v1/heartbeats", key, body)
	if r.status != http.StatusCreated {
		t.Fatalf("create heartbeat: %d %s", r.status, r.body)
	}
	return r.json(t)
}

// getHeartbeat reads a heartbeat through the API.
func (e *env) getHeartbeat(t *testing.T, key, id string) map[string]any {
	t.Helper()
	r := e.send(t, "GET", "/api/v1/heartbeats/"+id, key, nil)
	if r.status != http.StatusOK {
		t.Fatalf("get heartbeat %s: %d %s", id, r.status, r.body)
	}
	return r.json(t)
}

// wantHeartbeat checks a heartbeat's state and next deadline (zero: null)
// through the API, and returns it.
func (e *env) wantHeartbeat(t *testing.T, key, id string, state monitor.State, deadline time.Time) map[string]any {
	t.Helper()
	h := e.getHeartbeat(t, key, id)
	if h["state"] != string(state) {
		t.Errorf("state %v, want %s: %v", h["state"], state, h)
	}
	if got := instant(t, h["nextDeadline"]); !got.Equal(deadline) {
		want := "null"
		if !deadline.IsZero() {
			want = rfc3339(deadline)
		}
		t.Errorf("nextDeadline %v, want %s", h["nextDeadline"], want)
	}
	return h
}

// ping calls a ping URL exactly as the API returned it, followed by
// suffix, such as "/start" or "/1?rid=r1".
func (e *env) ping(t *testing.T, method, pingURL, suffix string, body any) response {
	t.Helper()
	token, ok := strings.CutPrefix(pingURL, e.srv.URL+"/ping/")
	if !ok {
		t.Fatalf("ping URL %q is not under %s/ping/", pingURL, e.srv.URL)
	}
	return e.send(t, method, "/ping/"+token+suffix, "", body, "Content-Type", "text/plain")
}

// pingOK pings by GET and returns the acknowledgement.
func (e *env) pingOK(t *testing.T, pingURL, suffix string) map[string]any {
	t.Helper()
	r := e.ping(t, "GET", pingURL, suffix, nil)
	if r.status != http.StatusOK {
		t.Fatalf("ping %s: %d %s", suffix, r.status, r.body)
	}
	return r.json(t)
}

// pingsOf lists a heartbeat's pings, newest first, from one page.
func (e *env) pingsOf(t *testing.T, key, id, query string) []map[string]any {
	t.Helper()
	r := e.send(t, "GET", "/api/v1/heartbeats/"+id+"/pings"+query, key, nil)
	if r.status != http.StatusOK {
		t.Fatalf("pings of %s: %d %s", id, r.status, r.body)
	}
	var out []map[string]any
	for _, p := range r.json(t)["data"].([]any) {
		out = append(out, p.(map[string]any))
	}
	return out
}

// instant reads a JSON time; null is the zero time.
func instant(t *testing.T, v any) time.Time {
	t.Helper()
	if v == nil {
		return time.Time{}
	}
	s, ok := v.(string)
	if !ok {
		t.Fatalf("not a time: %#v", v)
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// history is a heartbeat's state history in workspace A, oldest first.
func (e *env) history(t *testing.T, id string) []monitor.Transition {
	t.Helper()
	h, err := e.db.ListStateChanges(context.Background(), e.wsA.ID, id, time.Time{}, 100)
	if err != nil {
		t.Errorf("state history of heartbeat %s: %v", id, err)
		return nil
	}
	slices.Reverse(h)
	return h
}

// change is an expected state change: cause is a prefix, a zero at
// matches any time.
type change struct {
	to    monitor.State
	at    time.Time
	cause string
}

// wantHistory checks a heartbeat's whole state history.
func (e *env) wantHistory(t *testing.T, id string, want ...change) {
	t.Helper()
	got := e.history(t, id)
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		w := want[i]
		ok = got[i].To == w.to && (w.at.IsZero() || got[i].At.Equal(w.at)) && strings.HasPrefix(got[i].Cause, w.cause)
	}
	if !ok {
		var b strings.Builder
		for _, tr := range got {
			fmt.Fprintf(&b, "\n  %s → %s at %s: %s", tr.From, tr.To, tr.At.Format(time.RFC3339), tr.Cause)
		}
		b.WriteString("\nwant:")
		for _, w := range want {
			fmt.Fprintf(&b, "\n  → %s at %s: %s…", w.to, w.at.Format(time.RFC3339), w.cause)
		}
		t.Errorf("state history of %s:%s", id, b.String())
	}
}

// node is one server process's heartbeat sweeper, run on the test clock.
type node struct {
	t   *testing.T
	e   *env
	s   *app.HeartbeatSweeper
	now time.Time // the clock at the last tick
}

func (e *env) node(t *testing.T, name string) *node {
	return &node{t: t, e: e, s: e.app.NewHeartbeatSweeper(name)}
}

// tick sets the clock to at and runs one sweep there.
func (n *node) tick(at time.Time) {
	n.t.Helper()
	if at.Before(n.now) {
		n.t.Fatalf("tick at %v goes back from %v", at, n.now)
	}
	n.e.clock.Set(at)
	n.now = at
	if _, err := n.s.Tick(context.Background()); err != nil {
		n.t.Fatalf("tick at %v: %v", at, err)
	}
}

// run keeps the node up until to, ticking every step of clock time.
func (n *node) run(to time.Time, step time.Duration) {
	n.t.Helper()
	for at := n.now.Add(step); at.Before(to); at = at.Add(step) {
		n.tick(at)
	}
	n.tick(to)
}

// heartbeatLifecycle: create, read, list, edit and delete through the
// API, with the fields the issue lists.
func heartbeatLifecycle(t *testing.T, e *env, k string, t0 time.Time) {
	r := e.send(t, "POST", "/api/v1/heartbeats", k, map[string]any{"name": "backup", "schedule": map[string]any{"periodSeconds": 3600}})
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	h := r.json(t)
	id, _ := h["id"].(string)
	if !strings.HasPrefix(id, "hb_") || r.header.Get("Location") != "/api/v1/heartbeats/"+id {
		t.Errorf("id %q, Location %q", id, r.header.Get("Location"))
	}
	pingURL, _ := h["pingUrl"].(string)
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(e.srv.URL) + `/ping/[A-Za-z0-9_-]{43}$`).MatchString(pingURL) {
		t.Errorf("pingUrl %q is not the base URL's /ping/{43-character token}", pingURL)
	}
	sched := h["schedule"].(map[string]any)
	if len(sched) != 2 || sched["periodSeconds"] != float64(3600) || sched["graceSeconds"] != float64(300) {
		t.Errorf("schedule with the default grace: %v", sched)
	}
	if h["name"] != "backup" || h["maxRuntimeSeconds"] != float64(0) || h["paused"] != false || h["state"] != "PENDING" ||
		h["lastPingAt"] != nil || h["lastStartAt"] != nil || h["lastDurationMs"] != nil || h["nextDeadline"] != nil ||
		h["createdAt"] != rfc3339(t0) {
		t.Errorf("new heartbeat: %s", r.body)
	}
	if g := e.send(t, "GET", "/api/v1/heartbeats/"+id, k, nil); g.status != 200 || string(g.body) != string(r.body) {
		t.Errorf("get differs from create:\n%s\n%s", g.body, r.body)
	}

	// A cron schedule is read in UTC unless it names a zone.
	c := e.newHeartbeat(t, k, map[string]any{"name": "report", "maxRuntimeSeconds": 1800,
		"schedule": map[string]any{"cron": "0 6 * * 1-5", "graceSeconds": 600}})
	cs := c["schedule"].(map[string]any)
	if len(cs) != 3 || cs["cron"] != "0 6 * * 1-5" || cs["timezone"] != "UTC" || cs["graceSeconds"] != float64(600) ||
		c["maxRuntimeSeconds"] != float64(1800) || c["pingUrl"] == pingURL {
		t.Errorf("cron heartbeat: %v", c)
	}
	cid := c["id"].(string)

	// A retried create with the same Idempotency-Key makes one heartbeat.
	body := periodic("retried", 600, 60)
	r1 := e.send(t, "POST", "/api/v1/heartbeats", k, body, "Idempotency-Key", "create-hb-1")
	r2 := e.send(t, "POST", "/api/v1/heartbeats", k, body, "Idempotency-Key", "create-hb-1")
	if r1.status != 201 || r2.status != 201 || string(r2.body) != string(r1.body) || r2.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("retried create: %d %s, then %d %v %s", r1.status, r1.body, r2.status, r2.header, r2.body)
	}
	// The stored response holds the ping URL; it is sealed at rest.
	token := r1.json(t)["pingUrl"].(string)
	token = token[strings.LastIndex(token, "/")+1:]
	for _, b := range e.rawBlobs(t, "SELECT body FROM idempotency_keys") {
		if strings.Contains(string(b), token) || strings.Contains(string(b), "retried") {
			t.Errorf("an idempotency record keeps the response in the clear: %.80q", b)
		}
	}
	if d := e.send(t, "DELETE", "/api/v1/heartbeats/"+r1.json(t)["id"].(string), k, nil); d.status != http.StatusNoContent {
		t.Errorf("delete the retried one: %d %s", d.status, d.body)
	}

	// List, one per page, in creation order.
	var seen []string
	cursor := ""
	for range 4 {
		path := "/api/v1/heartbeats?limit=1"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		l := e.send(t, "GET", path, k, nil).json(t)
		for _, x := range l["data"].([]any) {
			seen = append(seen, x.(map[string]any)["id"].(string))
		}
		if l["total"] != float64(2) {
			t.Errorf("total %v", l["total"])
		}
		next, _ := l["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if !slices.Equal(seen, []string{id, cid}) {
		t.Errorf("listed %v, want %v", seen, []string{id, cid})
	}

	// PATCH: rename, then a new schedule replaces the whole schedule and
	// moves the deadline to what it expects after the last ping.
	e.clock.Set(t0.Add(time.Minute))
	e.pingOK(t, pingURL, "")
	e.wantHeartbeat(t, k, id, monitor.StateUp, t0.Add(time.Minute+time.Hour+5*time.Minute))
	p := e.send(t, "PATCH", "/api/v1/heartbeats/"+id, k, map[string]any{"name": "nightly backup"})
	if pw := p.json(t); p.status != 200 || pw["name"] != "nightly backup" || pw["pingUrl"] != pingURL ||
		pw["updatedAt"] != rfc3339(t0.Add(time.Minute)) || pw["createdAt"] != rfc3339(t0) {
		t.Errorf("rename: %d %s", p.status, p.body)
	}
	p = e.send(t, "PATCH", "/api/v1/heartbeats/"+id, k, map[string]any{"maxRuntimeSeconds": 600,
		"schedule": map[string]any{"cron": "15 3 * * *", "timezone": "Europe/Berlin", "graceSeconds": 900}})
	pw := p.json(t)
	ps, _ := pw["schedule"].(map[string]any)
	if p.status != 200 || len(ps) != 3 || ps["cron"] != "15 3 * * *" || ps["timezone"] != "Europe/Berlin" ||
		ps["graceSeconds"] != float64(900) || pw["maxRuntimeSeconds"] != float64(600) || pw["name"] != "nightly backup" {
		t.Errorf("new schedule: %d %s", p.status, p.body)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	y, mo, d := t0.Add(24 * time.Hour).In(berlin).Date()
	if want := time.Date(y, mo, d, 3, 15, 0, 0, berlin).Add(900 * time.Second); pw["nextDeadline"] != rfc3339(want) || pw["state"] != "UP" {
		t.Errorf("after a new schedule: state %v, nextDeadline %v, want UP, %s", pw["state"], pw["nextDeadline"], rfc3339(want))
	}
	if g := e.getHeartbeat(t, k, id); fmt.Sprint(g) != fmt.Sprint(pw) {
		t.Errorf("get differs from the patch's answer:\n%v\n%v", g, pw)
	}

	// DELETE: gone, and so is its ping URL.
	if d := e.send(t, "DELETE", "/api/v1/heartbeats/"+cid, k, nil); d.status != http.StatusNoContent {
		t.Errorf("delete: %d %s", d.status, d.body)
	}
	if g := e.send(t, "GET", "/api/v1/heartbeats/"+cid, k, nil); g.status != 404 || g.code(t) != "not_found" {
		t.Errorf("get deleted: %d %s", g.status, g.body)
	}
	if d := e.send(t, "DELETE", "/api/v1/heartbeats/"+cid, k, nil); d.status != 404 || d.code(t) != "not_found" {
		t.Errorf("delete again: %d %s", d.status, d.body)
	}
	if pr := e.ping(t, "GET", c["pingUrl"].(string), "", nil); pr.status != 404 || pr.code(t) != "not_found" {
		t.Errorf("ping of a deleted heartbeat: %d %s", pr.status, pr.body)
	}
	if l := e.send(t, "GET", "/api/v1/heartbeats", k, nil).json(t); l["total"] != float64(1) {
		t.Errorf("after delete: %v", l)
	}
}

// invalidHeartbeats are create bodies and the fields each must name.
var invalidHeartbeats = []struct {
	name string
	body string
	want []string
}{
	{"missing name", `{"schedule":{"periodSeconds":60}}`, []string{"/name"}},
	{"empty name", `{"name":"","schedule":{"periodSeconds":60}}`, []string{"/name"}},
	{"blank name", `{"name":"   ","schedule":{"periodSeconds":60}}`, []string{"/name"}},
	{"long name", `{"name":"` + strings.Repeat("x", 201) + `","schedule":{"periodSeconds":60}}`, []string{"/name"}},
	{"missing schedule", `{"name":"n"}`, []string{"/schedule"}},
	{"empty schedule", `{"name":"n","schedule":{}}`, []string{"/schedule"}},
	{"period and cron", `{"name":"n","schedule":{"periodSeconds":60,"cron":"* * * * *"}}`, []string{"/schedule"}},
	{"period too short", `{"name":"n","schedule":{"periodSeconds":59}}`, []string{"/schedule/periodSeconds"}},
	{"period too long", `{"name":"n","schedule":{"periodSeconds":31536001}}`, []string{"/schedule/periodSeconds"}},
	{"bad cron", `{"name":"n","schedule":{"cron":"61 * * * *"}}`, []string{"/schedule/cron"}},
	{"cron of four fields", `{"name":"n","schedule":{"cron":"0 * * *"}}`, []string{"/schedule/cron"}},
	{"unknown time zone", `{"name":"n","schedule":{"cron":"0 3 * * *","timezone":"Mars/Olympus"}}`, []string{"/schedule/timezone"}},
	{"Local is no zone", `{"name":"n","schedule":{"cron":"0 3 * * *","timezone":"Local"}}`, []string{"/schedule/timezone"}},
	{"time zone without cron", `{"name":"n","schedule":{"periodSeconds":60,"timezone":"UTC"}}`, []string{"/schedule/timezone"}},
	{"negative grace", `{"name":"n","schedule":{"periodSeconds":60,"graceSeconds":-1}}`, []string{"/schedule/graceSeconds"}},
	{"negative max runtime", `{"name":"n","schedule":{"periodSeconds":60},"maxRuntimeSeconds":-1}`, []string{"/maxRuntimeSeconds"}},
	{"max runtime over 7 days", `{"name":"n","schedule":{"periodSeconds":60},"maxRuntimeSeconds":604801}`, []string{"/maxRuntimeSeconds"}},
	{"unknown field", `{"name":"n","schedule":{"periodSeconds":60},"colour":"red"}`, []string{"/colour"}},
	{"unknown schedule field", `{"name":"n","schedule":{"periodSeconds":60,"jitter":5}}`, []string{"/schedule/jitter"}},
	{"domain rules only, all at once", `{"name":"  ","schedule":{"cron":"bad","timezone":"Mars/Olympus"}}`,
		[]string{"/name", "/schedule/cron", "/schedule/timezone"}},
	{"schema and domain rules at once", `{"name":"","schedule":{"cron":"bad","timezone":"Mars/Olympus"},"maxRuntimeSeconds":-1}`,
		[]string{"/name", "/schedule/cron", "/schedule/timezone", "/maxRuntimeSeconds"}},
}

// heartbeatValidation: an invalid heartbeat is refused with 422 naming
// every failing field by its JSON pointer, whichever layer (schema or
// domain rules) finds it; nothing is created, and a refused PATCH changes
// nothing.
func heartbeatValidation(t *testing.T, e *env, k string, t0 time.Time) {
	for _, c := range invalidHeartbeats {
		t.Run(c.name, func(t *testing.T) {
			r := e.send(t, "POST", "/api/v1/heartbeats", k, c.body)
			if r.status != 422 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			got := pointers(t, r)
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("details %v lack %s: %s", got, w, r.body)
				}
			}
		})
	}
	if l := e.send(t, "GET", "/api/v1/heartbeats", k, nil).json(t); l["total"] != float64(0) {
		t.Errorf("refused creates stored heartbeats: %v", l)
	}

	// PATCH validates the merged result; a refused one changes nothing.
	id := e.newHeartbeat(t, k, periodic("n", 3600, 60))["id"].(string)
	before := e.send(t, "GET", "/api/v1/heartbeats/"+id, k, nil)
	for _, c := range []struct {
		patch string
		want  []string
	}{
		{`{"name":" "}`, []string{"/name"}},
		{`{"schedule":{"periodSeconds":60,"cron":"* * * * *"}}`, []string{"/schedule"}},
		{`{"schedule":{"timezone":"Europe/Berlin"}}`, []string{"/schedule"}},
		{`{"schedule":{"cron":"0 3 * * *","timezone":"Mars/Olympus"}}`, []string{"/schedule/timezone"}},
		{`{"maxRuntimeSeconds":604801}`, []string{"/maxRuntimeSeconds"}},
		{`{"name":"","schedule":{"cron":"bad"}}`, []string{"/name", "/schedule/cron"}},
	} {
		got := pointers(t, e.send(t, "PATCH", "/api/v1/heartbeats/"+id, k, c.patch))
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("PATCH %s: details %v lack %s", c.patch, got, w)
			}
		}
	}
	if after := e.send(t, "GET", "/api/v1/heartbeats/"+id, k, nil); string(after.body) != string(before.body) {
		t.Errorf("a refused patch changed the heartbeat:\n%s\n%s", before.body, after.body)
	}
}

// pingSignals: every form of ping URL, and what each says.
func pingSignals(t *testing.T, e *env, k string, t0 time.Time) {
	h := e.newHeartbeat(t, k, periodic("job", 3600, 300))
	id, pingURL := h["id"].(string), h["pingUrl"].(string)
	at := t0
	for _, c := range []struct {
		method, suffix string
		signal         string
		exitCode       any // nil: none
		state          monitor.State
	}{
		{"GET", "/start", "start", nil, monitor.StatePending},
		{"GET", "", "success", nil, monitor.StateUp},
		{"POST", "/fail", "fail", nil, monitor.StateDown},
		{"HEAD", "/0", "success", float64(0), monitor.StateUp},
		{"POST", "/1", "fail", float64(1), monitor.StateDown},
		{"GET", "/0", "success", float64(0), monitor.StateUp},
		{"GET", "/255", "fail", float64(255), monitor.StateDown},
		{"POST", "", "success", nil, monitor.StateUp},
		{"GET", "/start?rid=x", "start", nil, monitor.StateUp},
	} {
		at = at.Add(time.Minute)
		e.clock.Set(at)
		name := c.method + " " + c.suffix
		r := e.ping(t, c.method, pingURL, c.suffix, nil)
		if r.status != http.StatusOK || r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d %v %s", name, r.status, r.header, r.body)
			continue
		}
		if c.method != "HEAD" {
			a := r.json(t)
			if a["ok"] != true || a["signal"] != c.signal || a["exitCode"] != c.exitCode || a["receivedAt"] != rfc3339(at) ||
				a["replayed"] != nil || a["ignored"] != nil {
				t.Errorf("%s: acknowledgement %s", name, r.body)
			}
		}
		g := e.getHeartbeat(t, k, id)
		if g["state"] != string(c.state) || g["lastPingAt"] != rfc3339(at) {
			t.Errorf("%s: state %v, last ping %v; want %s at %s", name, g["state"], g["lastPingAt"], c.state, rfc3339(at))
		}
		if c.signal != "start" && (g["lastResult"] != c.signal || g["lastExitCode"] != c.exitCode) {
			t.Errorf("%s: last result %v, exit code %v", name, g["lastResult"], g["lastExitCode"])
		}
	}
	if g := e.getHeartbeat(t, k, id); g["lastStartAt"] != rfc3339(at) {
		t.Errorf("lastStartAt %v, want %s", g["lastStartAt"], rfc3339(at))
	}
	e.wantHistory(t, id,
		change{monitor.StateUp, t0.Add(2 * time.Minute), "the job reported success"},
		change{monitor.StateDown, t0.Add(3 * time.Minute), "failure: the job reported failure"},
		change{monitor.StateUp, t0.Add(4 * time.Minute), "the job reported success"},
		change{monitor.StateDown, t0.Add(5 * time.Minute), "failure: the job reported exit code 1"},
		change{monitor.StateUp, t0.Add(6 * time.Minute), ""},
		change{monitor.StateDown, t0.Add(7 * time.Minute), "failure: the job reported exit code 255"},
		change{monitor.StateUp, t0.Add(8 * time.Minute), ""},
	)
	pings := e.pingsOf(t, k, id, "?limit=100")
	if len(pings) != 9 || pings[0]["signal"] != "start" || pings[0]["runId"] != "x" || pings[5]["method"] != "GET" ||
		pings[5]["exitCode"] != float64(0) || pings[2]["exitCode"] != float64(255) || pings[6]["method"] != "POST" {
		t.Errorf("pings: %v", pings)
	}

	// Not pings: each refused in the error envelope, and none recorded.
	token := strings.TrimPrefix(pingURL, e.srv.URL)
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", token + "/256", 400, "bad_request"},
		{"GET", token + "/abc", 400, "bad_request"},
		{"GET", token + "/01", 400, "bad_request"},
		{"GET", token + "/-1", 400, "bad_request"},
		{"GET", token + "/start/fail", 400, "bad_request"},
		{"GET", token + "?key=" + strings.Repeat("k", 129), 400, "bad_request"},
		{"GET", token + "/start?rid=" + strings.Repeat("r", 129), 400, "bad_request"},
		{"PUT", token, 405, "method_not_allowed"},
		{"DELETE", token, 405, "method_not_allowed"},
		{"GET", "/ping/" + strings.Repeat("A", 43), 404, "not_found"},
		{"POST", "/ping/" + strings.Repeat("A", 43) + "/fail", 404, "not_found"},
		{"GET", "/ping/short", 404, "not_found"},
		{"GET", "/ping/", 404, "not_found"},
		{"GET", "/ping/not%20a%20token%20at%20all!", 404, "not_found"},
	} {
		r := e.send(t, c.method, c.path, "", nil)
		if r.status != c.status || r.code(t) != c.code {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, r.status, r.body, c.status, c.code)
		}
		if c.status == 405 && r.header.Get("Allow") != "GET, HEAD, POST" {
			t.Errorf("%s: Allow %q", c.method, r.header.Get("Allow"))
		}
	}
	if n := len(e.pingsOf(t, k, id, "?limit=100")); n != 9 {
		t.Errorf("refused pings were recorded: %d pings", n)
	}
}

// pingIdempotencyKey: a ping retried with the same ?key= within 24
// hours is answered as the first was and recorded once.
func pingIdempotencyKey(t *testing.T, e *env, k string, t0 time.Time) {
	h := e.newHeartbeat(t, k, periodic("job", 3600, 300))
	id, pingURL := h["id"].(string), h["pingUrl"].(string)
	other := e.newHeartbeat(t, k, periodic("other", 3600, 300))

	first := e.ping(t, "GET", pingURL, "?key=run-42", nil)
	if first.status != 200 || first.header.Get("Idempotent-Replayed") != "" || first.json(t)["replayed"] != nil {
		t.Fatalf("first: %d %v %s", first.status, first.header, first.body)
	}
	e.clock.Set(t0.Add(time.Minute))
	for _, suffix := range []string{"?key=run-42", "/fail?key=run-42"} {
		again := e.ping(t, "POST", pingURL, suffix, "log")
		a := again.json(t)
		if again.status != 200 || again.header.Get("Idempotent-Replayed") != "true" || a["replayed"] != true {
			t.Errorf("retry %s: %d %v %s", suffix, again.status, again.header, again.body)
		}
		delete(a, "replayed")
		if want := first.json(t); fmt.Sprint(a) != fmt.Sprint(want) {
			t.Errorf("retry %s answered %v, first answer %v", suffix, a, want)
		}
	}
	pings := e.pingsOf(t, k, id, "")
	if len(pings) != 1 || pings[0]["key"] != "run-42" || pings[0]["receivedAt"] != rfc3339(t0) || pings[0]["body"] != nil {
		t.Errorf("pings after two retries: %v", pings)
	}
	e.wantHeartbeat(t, k, id, monitor.StateUp, t0.Add(time.Hour+5*time.Minute))

	// The key is the heartbeat's: another heartbeat's first use records.
	if r := e.pingOK(t, other["pingUrl"].(string), "?key=run-42"); r["replayed"] != nil {
		t.Errorf("same key on another heartbeat: %v", r)
	}
	// Another key records; the same key after 24 hours records again.
	e.pingOK(t, pingURL, "?key=run-43")
	e.clock.Set(t0.Add(24*time.Hour + time.Second))
	if r := e.pingOK(t, pingURL, "?key=run-42"); r["replayed"] != nil || r["receivedAt"] != rfc3339(t0.Add(24*time.Hour+time.Second)) {
		t.Errorf("key after 24 hours: %v", r)
	}
	if n := len(e.pingsOf(t, k, id, "")); n != 3 {
		t.Errorf("%d pings, want 3", n)
	}
}

// pingRunPairing: ?rid= pairs a start with its completion; without it
// a completion ends the latest open start.
func pingRunPairing(t *testing.T, e *env, k string, t0 time.Time) {
	h := e.newHeartbeat(t, k, periodic("workers", 3600, 300))
	id, pingURL := h["id"].(string), h["pingUrl"].(string)
	step := func(offset time.Duration, suffix string, wantMs any) {
		t.Helper()
		e.clock.Set(t0.Add(offset))
		a := e.pingOK(t, pingURL, suffix)
		if a["durationMs"] != wantMs {
			t.Errorf("%s at +%v: durationMs %v, want %v", suffix, offset, a["durationMs"], wantMs)
		}
		if g := e.getHeartbeat(t, k, id); a["signal"] != "start" && g["lastDurationMs"] != wantMs {
			t.Errorf("%s at +%v: lastDurationMs %v, want %v", suffix, offset, g["lastDurationMs"], wantMs)
		}
	}
	step(0, "/start?rid=r1", nil)
	step(10*time.Second, "/start?rid=r2", nil)
	step(25*time.Second, "?rid=r1", float64(25_000))    // r1's own start, not the latest
	step(40*time.Second, "/0", float64(30_000))         // the latest open start: r2's
	step(50*time.Second, "/fail?rid=r1", nil)           // r1 has ended: nothing to pair
	step(100*time.Second, "/start", nil)                // two starts without a run id
	step(110*time.Second, "/start", nil)                //
	step(130*time.Second, "", float64(20_000))          // the latest: +110s
	step(190*time.Second, "/3", float64(90_000))        // then the one before: +100s
	step(200*time.Second, "?rid=never-started", nil)    // no start: no duration
	step(201*time.Second+500*time.Millisecond, "", nil) // nothing open
	if g := e.getHeartbeat(t, k, id); g["lastStartAt"] != rfc3339(t0.Add(110*time.Second)) {
		t.Errorf("lastStartAt %v", g["lastStartAt"])
	}
	pings := e.pingsOf(t, k, id, "?limit=100")
	if len(pings) != 11 || pings[8]["runId"] != "r1" || pings[8]["durationMs"] != float64(25_000) || pings[10]["runId"] != "r1" ||
		pings[9]["runId"] != "r2" || pings[7]["durationMs"] != float64(30_000) || pings[1]["runId"] != "never-started" ||
		pings[1]["durationMs"] != nil {
		t.Errorf("pings: %v", pings)
	}
}

// pingBody: a POST body up to 10 KiB is kept as the run's log; a
// longer one is cut at 10 KiB and says so.
func pingBody(t *testing.T, e *env, k string, t0 time.Time) {
	h := e.newHeartbeat(t, k, periodic("job", 3600, 300))
	id, pingURL := h["id"].(string), h["pingUrl"].(string)
	log := func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "line %d: copied %d files\n", i, i*7)
		}
		return b.String()[:n]
	}
	for i, c := range []struct {
		name      string
		body      string
		kept      string
		truncated any
	}{
		{"small", "backup done\n", "backup done\n", nil},
		{"exactly 10 KiB", log(10 << 10), log(10 << 10), nil},
		{"one byte over", log(10<<10 + 1), log(10 << 10), true},
		{"300 KiB", log(300 << 10), log(10 << 10), true},
		{"not UTF-8", "ok \xff\xfe\n", "ok \uFFFD\n", nil},
	} {
		e.clock.Set(t0.Add(time.Duration(i+1) * time.Minute))
		r := e.ping(t, "POST", pingURL, "/0", c.body)
		if r.status != 200 || r.json(t)["bodyTruncated"] != c.truncated {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
		p := e.pingsOf(t, k, id, "?limit=1")
		if len(p) != 1 || p[0]["body"] != c.kept || p[0]["bodyTruncated"] != c.truncated || p[0]["method"] != "POST" {
			got := fmt.Sprint(p)
			t.Errorf("%s: listed %.300s…", c.name, got)
		}
	}
	// A GET has no body.
	e.pingOK(t, pingURL, "")
	if p := e.pingsOf(t, k, id, "?limit=1"); p[0]["body"] != nil || p[0]["method"] != "GET" {
		t.Errorf("GET ping: %v", p[0])
	}
}

// pingPaused: a paused heartbeat acknowledges pings as ignored, keeps
// them, and changes nothing; resumed, it is PENDING and, having pinged
// before, due by its next run.
func pingPaused(t *testing.T, e *env, k string, t0 time.Time) {
	h := e.newHeartbeat(t, k, periodic("job", 600, 60))
	id, pingURL := h["id"].(string), h["pingUrl"].(string)
	e.pingOK(t, pingURL, "")
	e.wantHeartbeat(t, k, id, monitor.StateUp, t0.Add(11*time.Minute))

	e.clock.Set(t0.Add(time.Minute))
	r := e.send(t, "POST", "/api/v1/heartbeats/"+id+"/pause", k, nil)
	if p := r.json(t); r.status != 200 || p["state"] != "PAUSED" || p["paused"] != true || p["nextDeadline"] != nil {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	if r := e.send(t, "POST", "/api/v1/heartbeats/"+id+"/pause", k, nil); r.status != 200 || r.json(t)["state"] != "PAUSED" {
		t.Errorf("pause again: %d %s", r.status, r.body)
	}
	for i, suffix := range []string{"", "/fail", "/start", "/2"} {
		e.clock.Set(t0.Add(time.Duration(2+i) * time.Minute))
		a := e.pingOK(t, pingURL, suffix)
		if a["ignored"] != true || a["ok"] != true {
			t.Errorf("ping %q while paused: %v", suffix, a)
		}
	}
	g := e.wantHeartbeat(t, k, id, monitor.StatePaused, time.Time{})
	if g["lastPingAt"] != rfc3339(t0) || g["lastStartAt"] != nil || g["lastResult"] != "success" {
		t.Errorf("ignored pings moved the heartbeat: %v", g)
	}
	pings := e.pingsOf(t, k, id, "")
	if len(pings) != 5 || pings[4]["ignored"] != nil {
		t.Fatalf("pings: %v", pings)
	}
	for _, p := range pings[:4] {
		if p["ignored"] != true {
			t.Errorf("ping while paused not marked ignored: %v", p)
		}
	}
	// Nothing is due while paused, however long.
	n := e.node(t, "node-a")
	n.tick(t0.Add(6 * time.Minute))
	n.run(t0.Add(20*time.Minute), 5*time.Second)
	e.wantHeartbeat(t, k, id, monitor.StatePaused, time.Time{})

	resumed := t0.Add(21 * time.Minute)
	e.clock.Set(resumed)
	r = e.send(t, "POST", "/api/v1/heartbeats/"+id+"/resume", k, nil)
	if p := r.json(t); r.status != 200 || p["state"] != "PENDING" || p["paused"] != false ||
		p["nextDeadline"] != rfc3339(resumed.Add(11*time.Minute)) {
		t.Errorf("resume: %d %s", r.status, r.body)
	}
	e.wantHistory(t, id,
		change{monitor.StateUp, t0, "the job reported success"},
		change{monitor.StatePaused, t0.Add(time.Minute), "paused"},
		change{monitor.StatePending, resumed, "resumed"})

	// A heartbeat that never pinged waits for its first ping again.
	never := e.newHeartbeat(t, k, map[string]any{"name": "new", "paused": true, "schedule": map[string]any{"periodSeconds": 600}})
	if never["state"] != "PAUSED" || never["paused"] != true {
		t.Errorf("created paused: %v", never)
	}
	r = e.send(t, "POST", "/api/v1/heartbeats/"+never["id"].(string)+"/resume", k, nil)
	if p := r.json(t); r.status != 200 || p["state"] != "PENDING" || p["nextDeadline"] != nil {
		t.Errorf("resume one that never pinged: %d %s", r.status, r.body)
	}
}

// heartbeatRotateToken: a new ping URL works at once, the old one no
// longer does.
func heartbeatRotateToken(t *testing.T, e *env, k string, t0 time.Time) {
	h := e.newHeartbeat(t, k, periodic("job", 3600, 300))
	id, old := h["id"].(string), h["pingUrl"].(string)
	e.pingOK(t, old, "")
	r := e.send(t, "POST", "/api/v1/heartbeats/"+id+"/rotate-token", k, nil)
	rotated := r.json(t)
	fresh, _ := rotated["pingUrl"].(string)
	if r.status != 200 || rotated["id"] != id || fresh == old || !strings.HasPrefix(fresh, e.srv.URL+"/ping/") {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	if g := e.getHeartbeat(t, k, id); g["pingUrl"] != fresh || g["state"] != "UP" {
		t.Errorf("after rotation: %v", g)
	}
	for _, suffix := range []string{"", "/start", "/fail"} {
		if p := e.ping(t, "GET", old, suffix, nil); p.status != 404 || p.code(t) != "not_found" {
			t.Errorf("old URL%s: %d %s", suffix, p.status, p.body)
		}
	}
	e.clock.Set(t0.Add(time.Minute))
	e.pingOK(t, fresh, "/fail")
	e.wantHeartbeat(t, k, id, monitor.StateDown, t0.Add(time.Minute+time.Hour+5*time.Minute))
	if n := len(e.pingsOf(t, k, id, "")); n != 2 {
		t.Errorf("%d pings, want 2", n)
	}
}

// heartbeatDeadlines: late, overrun and failure take a heartbeat DOWN
// with their cause; a good ping brings it back UP.
func heartbeatDeadlines(t *testing.T, e *env, k string, t0 time.Time) {
	n := e.node(t, "node-a")
	n.tick(t0)

	late := e.newHeartbeat(t, k, periodic("late", 60, 30))
	overrun := e.newHeartbeat(t, k, map[string]any{"name": "overrun", "maxRuntimeSeconds": 120,
		"schedule": map[string]any{"periodSeconds": 3600, "graceSeconds": 300}})
	failing := e.newHeartbeat(t, k, periodic("failing", 3600, 300))
	lateID, overrunID, failingID := late["id"].(string), overrun["id"].(string), failing["id"].(string)

	e.pingOK(t, late["pingUrl"].(string), "")
	e.pingOK(t, overrun["pingUrl"].(string), "")
	e.wantHeartbeat(t, k, lateID, monitor.StateUp, t0.Add(90*time.Second))

	// Late: nothing by the deadline (+90 s). Judged only once a ping
	// acknowledged before it could no longer be waiting to be stored.
	n.run(t0.Add(90*time.Second), 5*time.Second)
	e.wantHeartbeat(t, k, lateID, monitor.StateUp, t0.Add(90*time.Second))
	n.run(t0.Add(95*time.Second), 5*time.Second)
	e.wantHeartbeat(t, k, lateID, monitor.StateDown, time.Time{})

	// Overrun: a start with no end within 120 s.
	started := t0.Add(100 * time.Second)
	n.tick(started)
	e.pingOK(t, overrun["pingUrl"].(string), "/start")
	e.wantHeartbeat(t, k, overrunID, monitor.StateUp, started.Add(2*time.Minute))
	n.run(started.Add(2*time.Minute+app.PingWait-time.Second), 5*time.Second)
	e.wantHeartbeat(t, k, overrunID, monitor.StateUp, started.Add(2*time.Minute))
	n.run(started.Add(2*time.Minute+app.PingWait), 5*time.Second)
	// The overrun is reported once; the run's deadline stays.
	e.wantHeartbeat(t, k, overrunID, monitor.StateDown, t0.Add(65*time.Minute))

	// Failure: /fail, then a non-zero exit code.
	e.pingOK(t, failing["pingUrl"].(string), "/fail")
	e.wantHeartbeat(t, k, failingID, monitor.StateDown, n.now.Add(65*time.Minute))
	n.run(n.now.Add(10*time.Second), 5*time.Second)
	e.pingOK(t, failing["pingUrl"].(string), "/0")
	n.run(n.now.Add(10*time.Second), 5*time.Second)
	e.pingOK(t, failing["pingUrl"].(string), "/2")
	failedAt := n.now

	// Recovery: a good ping, and each is due again.
	n.run(n.now.Add(time.Minute), 5*time.Second)
	recovered := n.now
	e.pingOK(t, late["pingUrl"].(string), "")
	e.pingOK(t, overrun["pingUrl"].(string), "?rid=") // ends the overrun run
	e.pingOK(t, failing["pingUrl"].(string), "")
	e.wantHeartbeat(t, k, lateID, monitor.StateUp, recovered.Add(90*time.Second))
	o := e.wantHeartbeat(t, k, overrunID, monitor.StateUp, recovered.Add(65*time.Minute))
	if o["lastDurationMs"] != float64(recovered.Sub(started).Milliseconds()) {
		t.Errorf("overrun run's duration %v, want %v ms", o["lastDurationMs"], recovered.Sub(started).Milliseconds())
	}
	e.wantHeartbeat(t, k, failingID, monitor.StateUp, recovered.Add(65*time.Minute))

	e.wantHistory(t, lateID,
		change{monitor.StateUp, t0, "the job reported success"},
		change{monitor.StateDown, t0.Add(90 * time.Second), "late: no ping since " + t0.Format(time.RFC3339)},
		change{monitor.StateUp, recovered, "the job reported success"})
	e.wantHistory(t, overrunID,
		change{monitor.StateUp, t0, ""},
		change{monitor.StateDown, started.Add(2 * time.Minute), "overrun: the run started at " + started.Format(time.RFC3339)},
		change{monitor.StateUp, recovered, ""})
	e.wantHistory(t, failingID,
		change{monitor.StateDown, failedAt.Add(-20 * time.Second), "failure: the job reported failure"},
		change{monitor.StateUp, failedAt.Add(-10 * time.Second), ""},
		change{monitor.StateDown, failedAt, "failure: the job reported exit code 2"},
		change{monitor.StateUp, recovered, ""})
}

// heartbeatOutageIsUnknown: while this service was not receiving pings a
// heartbeat is UNKNOWN, from the start of the outage, and a deadline that
// passed in it is not DOWN: the ping may have been sent and lost. Once
// the service has been up for a whole run, a missing ping is late again.
func heartbeatOutageIsUnknown(t *testing.T, e *env, k string, t0 time.Time) {
	n := e.node(t, "node-a")

	// The contrast: a node up throughout sees the deadline pass. Expected
	// every 60 s, late 30 s after: the deadline is +90 s.
	up := e.newHeartbeat(t, k, periodic("contrast", 60, 30))
	upID := up["id"].(string)
	n.tick(t0)
	e.pingOK(t, up["pingUrl"].(string), "")
	n.run(t0.Add(95*time.Second), 5*time.Second)
	e.wantHeartbeat(t, k, upID, monitor.StateDown, time.Time{})
	e.wantHistory(t, upID, change{monitor.StateUp, t0, ""},
		change{monitor.StateDown, t0.Add(90 * time.Second), "late: "})

	// The outage: pinged at t1, the node ticks until t1+30s, and is
	// back at t1+120s, 30 s after the deadline (t1+90s): UNKNOWN from
	// t1+30s, when the node was last seen receiving pings.
	t1 := t0.Add(time.Hour)
	n.tick(t1)
	hb := e.newHeartbeat(t, k, periodic("sees the outage", 60, 30))
	id, pingURL := hb["id"].(string), hb["pingUrl"].(string)
	e.pingOK(t, pingURL, "")
	n.run(t1.Add(30*time.Second), 5*time.Second)
	n.tick(t1.Add(120 * time.Second)) // the process was down in between
	e.wantHeartbeat(t, k, id, monitor.StateUnknown, t1.Add(150*time.Second))
	e.wantHistory(t, id, change{monitor.StateUp, t1, ""},
		change{monitor.StateUnknown, t1.Add(30 * time.Second), "unknown: this service was not receiving pings from " +
			t1.Add(30*time.Second).Format(time.RFC3339) + " to " + t1.Add(120*time.Second).Format(time.RFC3339)})

	// Up again and ticking. A ping for the run due by t1+150s counts
	// from t1+90s on, while the service was still down (and on a period
	// schedule a ping then would have moved the deadline past t1+150s):
	// that deadline is UNKNOWN too. The run due by t1+210s is watched from t1+150s,
	// all of it covered: it is late.
	n.run(t1.Add(150*time.Second+app.PingWait), 5*time.Second)
	e.wantHeartbeat(t, k, id, monitor.StateUnknown, t1.Add(210*time.Second))
	n.run(t1.Add(210*time.Second+app.PingWait-time.Second), 5*time.Second)
	e.wantHeartbeat(t, k, id, monitor.StateUnknown, t1.Add(210*time.Second))
	n.run(t1.Add(210*time.Second+app.PingWait), 5*time.Second)
	e.wantHeartbeat(t, k, id, monitor.StateDown, time.Time{})
	e.wantHistory(t, id, change{monitor.StateUp, t1, ""},
		change{monitor.StateUnknown, t1.Add(30 * time.Second), "unknown: this service was not receiving pings"},
		change{monitor.StateDown, t1.Add(210 * time.Second), "late: "})

	// And a ping brings it back.
	e.pingOK(t, pingURL, "")
	e.wantHeartbeat(t, k, id, monitor.StateUp, n.now.Add(90*time.Second))
}

// heartbeatOutageNotifiesNobody: the service stopped for 65 s. A
// heartbeat UP is UNKNOWN from the stop, not from its next deadline, and
// the first ping after the restart brings it back UP; one DOWN is UNKNOWN
// from the stop too, and DOWN again, its incident open, when the first
// run after the restart is missed. None of it goes to the outbox or to a
// channel: only the changes the jobs made before and after do.
func heartbeatOutageNotifiesNobody(t *testing.T, e *env, k string, t0 time.Time) {
	rc := newReceiver(t)
	ch := e.webhookChannel(t, k, rc, nil)
	events, err := e.db.ListEvents(context.Background(), e.wsA.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var after int64
	if len(events) > 0 {
		after = events[len(events)-1].Seq
	}
	delivered := len(e.deliveries(t, k, ch))

	n := e.node(t, "node-a")
	n.tick(t0)
	nightly := e.newHeartbeat(t, k, periodic("nightly", 600, 60))
	dead := e.newHeartbeat(t, k, periodic("dead", 60, 30))
	nightlyID, deadID := nightly["id"].(string), dead["id"].(string)
	e.pingOK(t, nightly["pingUrl"].(string), "")
	e.pingOK(t, dead["pingUrl"].(string), "")
	stop := t0.Add(100 * time.Second)
	n.run(stop, 5*time.Second)
	e.wantHeartbeat(t, k, deadID, monitor.StateDown, time.Time{})

	restart := stop.Add(65 * time.Second)
	n.tick(restart)
	outage := "unknown: this service was not receiving pings from " + stop.Format(time.RFC3339) + " to " + restart.Format(time.RFC3339)
	e.wantHeartbeat(t, k, nightlyID, monitor.StateUnknown, t0.Add(660*time.Second))
	e.wantHeartbeat(t, k, deadID, monitor.StateUnknown, restart.Add(90*time.Second))
	n.tick(restart.Add(5 * time.Second))
	e.pingOK(t, nightly["pingUrl"].(string), "")
	n.run(restart.Add(90*time.Second+app.PingWait), 5*time.Second)
	e.wantHeartbeat(t, k, nightlyID, monitor.StateUp, restart.Add(665*time.Second))
	e.wantHeartbeat(t, k, deadID, monitor.StateDown, time.Time{})
	e.wantHistory(t, nightlyID, change{monitor.StateUp, t0, ""},
		change{monitor.StateUnknown, stop, outage},
		change{monitor.StateUp, restart.Add(5 * time.Second), "the job reported success"})
	e.wantHistory(t, deadID, change{monitor.StateUp, t0, ""},
		change{monitor.StateDown, t0.Add(90 * time.Second), "late: "},
		change{monitor.StateUnknown, stop, outage},
		change{monitor.StateDown, restart.Add(90 * time.Second), "late: "})

	// A real change after the outage is news.
	e.pingOK(t, nightly["pingUrl"].(string), "/fail")
	events, err = e.db.ListEvents(context.Background(), e.wsA.ID, after, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var heard []string
	for _, ev := range events {
		var m struct {
			Data struct {
				Subject  struct{ Name string }
				From, To string
				Incident struct{ Subject struct{ Name string } }
			}
		}
		if err := json.Unmarshal(ev.Payload, &m); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "heartbeat.state_changed" {
			heard = append(heard, m.Data.Subject.Name+": "+m.Data.From+" → "+m.Data.To)
		} else {
			heard = append(heard, m.Data.Incident.Subject.Name+": "+ev.Type)
		}
	}
	want := []string{"nightly: PENDING → UP", "dead: PENDING → UP", "dead: UP → DOWN", "dead: incident.opened",
		"nightly: UP → DOWN", "nightly: incident.opened"}
	if !slices.Equal(heard, want) {
		t.Errorf("the outbox holds\n  %s\nwant\n  %s", strings.Join(heard, "\n  "), strings.Join(want, "\n  "))
	}
	if ds := e.deliveries(t, k, ch); len(ds)-delivered != len(want) {
		t.Errorf("%d deliveries to the channel, want one per event, %d", len(ds)-delivered, len(want))
	}
}

func utc2026(mo time.Month, d, h, mi int) time.Time {
	return time.Date(2026, mo, d, h, mi, 0, 0, time.UTC)
}

// daylightSavingNights are the nights a daily job at 02:30 (New York
// fall back: 01:30) meets a clock change, with grace 300 s. Instants are
// UTC; the comments of the cases read them on the local clock.
var daylightSavingNights = []struct {
	name, cron, zone string
	last             time.Time // the job's last report before the night
	expected         time.Time // when recur expects that night's run
	onTime           time.Time // when a daemon runs it, at the latest
	reading          string    // onTime on the local clock
	deadline         time.Time // the latest run plus grace
	next             time.Time // the next night's deadline
}{
	// In date order: the clock only moves forward.
	{"New York spring forward", "30 2 * * *", "America/New_York", utc2026(3, 8, 6, 30),
		utc2026(3, 8, 7, 0), utc2026(3, 8, 7, 30), "03:30 EDT", utc2026(3, 8, 8, 5), utc2026(3, 9, 6, 35)},
	{"Berlin spring forward", "30 2 * * *", "Europe/Berlin", utc2026(3, 29, 0, 30),
		utc2026(3, 29, 1, 0), utc2026(3, 29, 1, 30), "03:30 CEST", utc2026(3, 29, 2, 5), utc2026(3, 30, 0, 35)},
	{"Berlin fall back", "30 2 * * *", "Europe/Berlin", utc2026(10, 24, 23, 30),
		utc2026(10, 25, 0, 30), utc2026(10, 25, 1, 30), "02:30 CET", utc2026(10, 25, 1, 35), utc2026(10, 26, 1, 35)},
	{"New York fall back", "30 1 * * *", "America/New_York", utc2026(11, 1, 4, 30),
		utc2026(11, 1, 5, 30), utc2026(11, 1, 6, 30), "01:30 EST", utc2026(11, 1, 6, 35), utc2026(11, 2, 6, 35)},
}

// heartbeatOutageBeforeCronRun: on a cron schedule a ping counts for the
// run it follows (Plan.Next of a ping before the expected instant is that
// same run), so only the service's outages between the expected instant
// and the deadline can hide a ping that would have kept the heartbeat UP.
// An outage that ended before the run was expected hides nothing: the
// missed run is late, DOWN, as the issue asks of the deadline after an
// outage (the outage itself is UNKNOWN until then, as always). A period
// schedule counts from the ping, so there an outage at any time since the
// last ping could have hidden one: UNKNOWN.
func heartbeatOutageBeforeCronRun(t *testing.T, e *env, k string, t0 time.Time) {
	n := e.node(t, "node-a")

	// A restart between runs: every 10 minutes, grace 60 s; the run of
	// t1 reports at t1+30s, the next is expected at t1+10m, due by
	// t1+11m; the service is down from t1+2m to t1+3m.
	t1 := t0.Add(time.Hour).Truncate(time.Hour)
	n.tick(t1)
	cron := e.newHeartbeat(t, k, map[string]any{"name": "cron", "schedule": map[string]any{"cron": "*/10 * * * *", "graceSeconds": 60}})
	period := e.newHeartbeat(t, k, periodic("period", 600, 60))
	n.run(t1.Add(30*time.Second), 5*time.Second)
	e.pingOK(t, cron["pingUrl"].(string), "")
	e.pingOK(t, period["pingUrl"].(string), "")
	e.wantHeartbeat(t, k, cron["id"].(string), monitor.StateUp, t1.Add(11*time.Minute))
	n.run(t1.Add(2*time.Minute), 5*time.Second)
	n.tick(t1.Add(3 * time.Minute))
	n.run(t1.Add(11*time.Minute+app.PingWait), 5*time.Second)
	e.wantHeartbeat(t, k, cron["id"].(string), monitor.StateDown, time.Time{})
	e.wantHistory(t, cron["id"].(string), change{monitor.StateUp, t1.Add(30 * time.Second), ""},
		change{monitor.StateUnknown, t1.Add(2 * time.Minute), "unknown: this service was not receiving pings"},
		change{monitor.StateDown, t1.Add(11 * time.Minute), "late: "})
	n.run(t1.Add(11*time.Minute+30*time.Second+app.PingWait), 5*time.Second)
	e.wantHeartbeat(t, k, period["id"].(string), monitor.StateUnknown, t1.Add(21*time.Minute+30*time.Second))

	// An outage across a deadline: every minute, grace 30 s. Down from
	// t2+30s to t2+100s, across the deadline of t2+90s: UNKNOWN from
	// t2+30s. The next run is expected at t2+120s, after the service was
	// back: missed, it is late at t2+150s.
	t2 := t1.Add(time.Hour)
	n.tick(t2)
	minutely := e.newHeartbeat(t, k, map[string]any{"name": "minutely", "schedule": map[string]any{"cron": "* * * * *", "graceSeconds": 30}})
	id := minutely["id"].(string)
	e.pingOK(t, minutely["pingUrl"].(string), "")
	n.run(t2.Add(30*time.Second), 5*time.Second)
	n.tick(t2.Add(100 * time.Second))
	e.wantHeartbeat(t, k, id, monitor.StateUnknown, t2.Add(150*time.Second))
	n.run(t2.Add(150*time.Second+app.PingWait), 5*time.Second)
	e.wantHeartbeat(t, k, id, monitor.StateDown, time.Time{})
	e.wantHistory(t, id, change{monitor.StateUp, t2, ""},
		change{monitor.StateUnknown, t2.Add(30 * time.Second), "unknown: this service was not receiving pings"},
		change{monitor.StateDown, t2.Add(150 * time.Second), "late: "})
}

// heartbeatTwoNodes: with two server processes, the service receives
// pings while either is up, and a deadline is judged once.
func heartbeatTwoNodes(t *testing.T, e *env, k string, t0 time.Time) {
	a, b := e.node(t, "node-a"), e.twin().node(t, "node-b")
	both := func(at time.Time) {
		a.tick(at)
		b.tick(at)
	}
	both(t0)
	hb := e.newHeartbeat(t, k, periodic("job", 60, 30))
	id := hb["id"].(string)
	e.pingOK(t, hb["pingUrl"].(string), "")
	for at := t0.Add(5 * time.Second); at.Before(t0.Add(30 * time.Second)); at = at.Add(5 * time.Second) {
		both(at)
	}
	// Node A is down from +30 s to +120 s, across the deadline (+90 s);
	// node B keeps receiving pings.
	b.run(t0.Add(95*time.Second), 5*time.Second)
	e.wantHeartbeat(t, k, id, monitor.StateDown, time.Time{})
	b.run(t0.Add(115*time.Second), 5*time.Second)
	for at := t0.Add(120 * time.Second); at.Before(t0.Add(150 * time.Second)); at = at.Add(5 * time.Second) {
		both(at)
	}
	e.wantHistory(t, id, change{monitor.StateUp, t0, ""}, change{monitor.StateDown, t0.Add(90 * time.Second), "late: "})

	// Both sweep at the same moments, concurrently: one verdict.
	t1 := t0.Add(time.Hour)
	both(t1)
	hb = e.newHeartbeat(t, k, periodic("job 2", 60, 30))
	id = hb["id"].(string)
	e.pingOK(t, hb["pingUrl"].(string), "")
	for at := t1.Add(5 * time.Second); !at.After(t1.Add(100 * time.Second)); at = at.Add(5 * time.Second) {
		e.clock.Set(at)
		a.now, b.now = at, at
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, s := range []*app.HeartbeatSweeper{a.s, b.s} {
			wg.Go(func() { _, errs[i] = s.Tick(context.Background()) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("ticks at %v: %v", at, err)
		}
	}
	e.wantHeartbeat(t, k, id, monitor.StateDown, time.Time{})
	e.wantHistory(t, id, change{monitor.StateUp, t1, ""}, change{monitor.StateDown, t1.Add(90 * time.Second), "late: "})
}

// heartbeatDaylightSaving: a daily cron job on the nights clocks
// change. A daemon may run a skipped 02:30 at 03:30 summer time and a
// repeated one at its second occurrence; neither is late. A job that does
// not run at all is late once that allowance (and the grace) has passed,
// and not before.
//
// The job last reported an hour before its run that night (say, a run by
// hand): the sweeper must be up from the last report to call a missed run
// DOWN, and a day of ticks would make the test slow for nothing.
func heartbeatDaylightSaving(t *testing.T, e *env, k string, t0 time.Time) {
	for _, c := range daylightSavingNights {
		t.Run(c.name, func(t *testing.T) {
			loc, err := time.LoadLocation(c.zone)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.onTime.In(loc).Format("15:04 MST"); got != c.reading {
				t.Fatalf("the case is wrong: %v reads %s in %s", c.onTime, got, c.zone)
			}
			n := e.node(t, "node-"+c.name)
			n.tick(c.last.Add(-heartbeat.SpanGap))
			n.tick(c.last)
			schedule := map[string]any{"cron": c.cron, "timezone": c.zone, "graceSeconds": 300}
			// Three daemons: one runs the job when recur expects it (the
			// first reading of a repeated time, the end of a gap), one at
			// the latest reading, and one not at all.
			first := e.newHeartbeat(t, k, map[string]any{"name": "runs first", "schedule": schedule})
			latest := e.newHeartbeat(t, k, map[string]any{"name": "runs latest", "schedule": schedule})
			missing := e.newHeartbeat(t, k, map[string]any{"name": "does not run", "schedule": schedule})
			firstID, latestID, missingID := first["id"].(string), latest["id"].(string), missing["id"].(string)
			for _, h := range []map[string]any{first, latest, missing} {
				e.pingOK(t, h["pingUrl"].(string), "")
				e.wantHeartbeat(t, k, h["id"].(string), monitor.StateUp, c.deadline)
			}

			// Up all night; each run counts for that night, none is late.
			n.run(c.expected, heartbeat.SpanGap)
			e.pingOK(t, first["pingUrl"].(string), "")
			e.wantHeartbeat(t, k, firstID, monitor.StateUp, c.next)
			n.run(c.onTime, heartbeat.SpanGap)
			e.wantHeartbeat(t, k, latestID, monitor.StateUp, c.deadline)
			if a := e.pingOK(t, latest["pingUrl"].(string), ""); a["receivedAt"] != rfc3339(c.onTime) {
				t.Errorf("ping at %v acknowledged at %v", c.onTime, a["receivedAt"])
			}
			e.wantHeartbeat(t, k, latestID, monitor.StateUp, c.next)

			// The job that did not run is late when the allowance ends.
			n.run(c.deadline.Add(app.PingWait-time.Second), heartbeat.SpanGap)
			e.wantHeartbeat(t, k, missingID, monitor.StateUp, c.deadline)
			n.run(c.deadline.Add(app.PingWait), heartbeat.SpanGap)
			if h := e.wantHeartbeat(t, k, missingID, monitor.StateDown, time.Time{}); h["stateSince"] != rfc3339(c.deadline) {
				t.Errorf("DOWN since %v, want %s", h["stateSince"], rfc3339(c.deadline))
			}
			e.wantHistory(t, missingID, change{monitor.StateUp, c.last, ""},
				change{monitor.StateDown, c.deadline, fmt.Sprintf("late: no ping since %s; one was expected at %s and is overdue since %s",
					c.last.Format(time.RFC3339), c.expected.Format(time.RFC3339), c.deadline.Format(time.RFC3339))})
			for _, id := range []string{firstID, latestID} {
				e.wantHeartbeat(t, k, id, monitor.StateUp, c.next)
				e.wantHistory(t, id, change{monitor.StateUp, c.last, ""})
			}

			// Out of the next case's way.
			for _, id := range []string{firstID, latestID, missingID} {
				if r := e.send(t, "DELETE", "/api/v1/heartbeats/"+id, k, nil); r.status != http.StatusNoContent {
					t.Errorf("delete: %d %s", r.status, r.body)
				}
			}
		})
	}
}

// heartbeatAccess: reading needs monitors:read, changing
// monitors:write; another workspace's heartbeat does not exist.
func heartbeatAccess(t *testing.T, e *env, k string, t0 time.Time) {
	h := e.newHeartbeat(t, k, periodic("job", 3600, 300))
	id := h["id"].(string)
	e.pingOK(t, h["pingUrl"].(string), "")
	before := e.send(t, "GET", "/api/v1/heartbeats/"+id, k, nil)

	viewer := e.key(e.members[account.RoleViewer], e.wsA.ID, false, account.ScopeMonitorsRead)
	for _, path := range []string{"/api/v1/heartbeats", "/api/v1/heartbeats/" + id, "/api/v1/heartbeats/" + id + "/pings"} {
		if r := e.send(t, "GET", path, viewer, nil); r.status != 200 {
			t.Errorf("viewer GET %s: %d %s", path, r.status, r.body)
		}
	}
	if r := e.send(t, "POST", "/api/v1/heartbeats", viewer, periodic("mine", 60, 0)); r.status != 403 || r.code(t) != "insufficient_scope" {
		t.Errorf("viewer POST: %d %s", r.status, r.body)
	}

	other := e.key(e.ownerB, e.wsB.ID, false, account.Scopes...)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "", nil},
		{"PATCH", "", map[string]any{"name": "mine"}},
		{"POST", "/pause", nil},
		{"POST", "/resume", nil},
		{"POST", "/rotate-token", nil},
		{"GET", "/pings", nil},
		{"DELETE", "", nil},
	} {
		r := e.send(t, c.method, "/api/v1/heartbeats/"+id+c.path, other, c.body)
		if r.status != 404 || r.code(t) != "not_found" {
			t.Errorf("workspace B: %s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	if l := e.send(t, "GET", "/api/v1/heartbeats", other, nil).json(t); l["total"] != float64(0) {
		t.Errorf("workspace B lists: %v", l)
	}
	if after := e.send(t, "GET", "/api/v1/heartbeats/"+id, k, nil); string(after.body) != string(before.body) {
		t.Errorf("refused requests changed the heartbeat:\n%s\n%s", before.body, after.body)
	}
}

// heartbeatPingsList: pings newest first, page by page by cursor,
// and within [from, to).
func heartbeatPingsList(t *testing.T, e *env, k string, t0 time.Time) {
	h := e.newHeartbeat(t, k, periodic("job", 3600, 300))
	id, pingURL := h["id"].(string), h["pingUrl"].(string)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	for i := range 5 {
		e.clock.Set(at(i))
		e.pingOK(t, pingURL, fmt.Sprintf("?key=p%d", i))
	}
	keys := func(ps []map[string]any) (out []string) {
		for _, p := range ps {
			out = append(out, p["key"].(string))
		}
		return out
	}

	// Walk pages of two while pings keep arriving: each page follows
	// the last, nothing is seen twice.
	var seen []string
	path := "/api/v1/heartbeats/" + id + "/pings?limit=2"
	for i := 0; ; i++ {
		r := e.send(t, "GET", path, k, nil)
		if r.status != 200 || i > 5 {
			t.Fatalf("page %d: %d %s", i, r.status, r.body)
		}
		page := r.json(t)
		for _, p := range page["data"].([]any) {
			seen = append(seen, p.(map[string]any)["key"].(string))
		}
		e.clock.Set(at(10 + i))
		e.pingOK(t, pingURL, fmt.Sprintf("?key=late%d", i))
		next, _ := page["nextCursor"].(string)
		if next == "" {
			break
		}
		path = "/api/v1/heartbeats/" + id + "/pings?limit=2&cursor=" + url.QueryEscape(next)
	}
	if want := []string{"p4", "p3", "p2", "p1", "p0"}; !slices.Equal(seen, want) {
		t.Errorf("walked %v, want %v", seen, want)
	}

	q := func(from, to time.Time) string {
		v := url.Values{}
		if !from.IsZero() {
			v.Set("from", from.Format(time.RFC3339))
		}
		if !to.IsZero() {
			v.Set("to", to.Format(time.RFC3339))
		}
		return "?" + v.Encode()
	}
	for _, c := range []struct {
		from, to time.Time
		want     []string
	}{
		{at(1), at(3), []string{"p2", "p1"}},
		{at(3), time.Time{}, []string{"late2", "late1", "late0", "p4", "p3"}},
		{time.Time{}, at(2), []string{"p1", "p0"}},
		{at(2), at(2).Add(time.Second), []string{"p2"}},
	} {
		if got := keys(e.pingsOf(t, k, id, q(c.from, c.to))); !slices.Equal(got, c.want) {
			t.Errorf("from %v to %v: %v, want %v", c.from, c.to, got, c.want)
		}
	}
	for _, bad := range []string{q(at(3), at(1)), q(at(2), at(2)), "?cursor=nonsense"} {
		if r := e.send(t, "GET", "/api/v1/heartbeats/"+id+"/pings"+bad, k, nil); r.status != 422 || r.code(t) != "validation_error" {
			t.Errorf("%s: %d %s", bad, r.status, r.body)
		}
	}
}

// pingRateLimits: a heartbeat takes bursts of 100 pings and 600 a minute;
// an address that sends 60 pings to URLs naming no heartbeat is refused,
// but not for the jobs it has already reported for.
func pingRateLimits(t *testing.T, e *env, k string, t0 time.Time) {
	h := e.newHeartbeat(t, k, periodic("busy", 600, 60))
	id, pingURL := h["id"].(string), h["pingUrl"].(string)
	for i := range app.PingBurst {
		if r := e.ping(t, "GET", pingURL, "", nil); r.status != http.StatusOK {
			t.Fatalf("ping %d of the burst: %d %s", i+1, r.status, r.body)
		}
	}
	wantLimited := func(r response, what string) {
		t.Helper()
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || r.code(t) != "rate_limited" {
			t.Errorf("%s: %d %v %s, want 429 rate_limited with Retry-After", what, r.status, r.header, r.body)
		}
	}
	wantLimited(e.ping(t, "GET", pingURL, "", nil), "ping past the burst")
	if n := len(e.pingsOf(t, k, id, "?limit=100")); n != app.PingBurst {
		t.Errorf("%d pings stored, want the %d acknowledged", n, app.PingBurst)
	}
	// 600 a minute: one more every 100 ms.
	e.clock.Set(t0.Add(100 * time.Millisecond))
	if r := e.ping(t, "GET", pingURL, "", nil); r.status != http.StatusOK {
		t.Errorf("ping after 100 ms: %d %s", r.status, r.body)
	}
	wantLimited(e.ping(t, "GET", pingURL, "", nil), "a second ping after 100 ms")

	// Guessing: 60 unknown tokens from this address, then it is refused.
	e.clock.Set(t0.Add(time.Hour))
	other := e.newHeartbeat(t, k, periodic("quiet", 600, 60))["pingUrl"].(string)
	unknown := e.srv.URL + "/ping/" + strings.Repeat("x", 43)
	for i := range app.UnknownPingBurst {
		if r := e.ping(t, "GET", unknown, "", nil); r.status != http.StatusNotFound {
			t.Fatalf("unknown token %d: %d %s", i+1, r.status, r.body)
		}
	}
	wantLimited(e.ping(t, "GET", unknown, "", nil), "unknown token past the limit")
	// A job this node has heard from still gets through; one it has not
	// waits like the guesses.
	if r := e.ping(t, "GET", pingURL, "", nil); r.status != http.StatusOK {
		t.Errorf("a known job from a blocked address: %d %s", r.status, r.body)
	}
	wantLimited(e.ping(t, "GET", other, "", nil), "a job not yet heard from, from a blocked address")
	// One a second again after a minute.
	e.clock.Set(t0.Add(time.Hour + time.Minute))
	if r := e.ping(t, "GET", other, "", nil); r.status != http.StatusOK {
		t.Errorf("after a minute: %d %s", r.status, r.body)
	}
}

// TestPingNotStoredInTimeIsNotAcknowledged: a ping the database cannot
// take within the wait is answered 503 and is not stored later either, so
// a client that retries it records it once.
func TestPingNotStoredInTimeIsNotAcknowledged(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newEnvWith(t, eng, app.Config{PingWait: time.Second})
			e.clock.Set(hbT0)
			k := e.ownerKey()
			h := e.newHeartbeat(t, k, periodic("job", 600, 60))
			id, pingURL := h["id"].(string), h["pingUrl"].(string)
			e.pingOK(t, pingURL, "")

			release := e.lockPings(t)
			e.clock.Set(hbT0.Add(time.Minute))
			r := e.ping(t, "GET", pingURL, "/fail", nil)
			release()
			if r.status != http.StatusServiceUnavailable || r.code(t) != "unavailable" || r.header.Get("Retry-After") == "" {
				t.Fatalf("ping while the database is stuck: %d %v %s, want 503 unavailable with Retry-After", r.status, r.header, r.body)
			}
			// The writer handles batches in turn: once a later ping is
			// acknowledged, the refused one's batch is over.
			e.clock.Set(hbT0.Add(2 * time.Minute))
			e.pingOK(t, pingURL, "")
			pings := e.pingsOf(t, k, id, "")
			if len(pings) != 2 {
				t.Fatalf("%d pings stored, want the 2 acknowledged: %v", len(pings), pings)
			}
			for _, p := range pings {
				if p["signal"] != "success" {
					t.Errorf("the refused ping was stored: %v", p)
				}
			}
			e.wantHeartbeat(t, k, id, monitor.StateUp, hbT0.Add(2*time.Minute+11*time.Minute))
		})
	}
}
