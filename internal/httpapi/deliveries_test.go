package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/deliver"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// receiver is a webhook receiver as docs/webhooks.md tells users to
// write one: it verifies every signature with the channel's secret and
// handles each delivery id once. What it answers can be changed.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	answer int           // status to answer; 0: 204
	hold   chan struct{} // non-nil: requests wait for it to close
	got    []received    // handled deliveries, in arrival order
	seen   map[string]int
	bad    int // requests whose signature did not verify
	calls  int
	notify chan struct{}
}

type received struct {
	delivery, event, incident string
	body                      map[string]any
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{t: t, seen: map[string]int{}, notify: make(chan struct{}, 1)}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.calls++
	hold, answer, secret := rc.hold, rc.answer, rc.secret
	rc.mu.Unlock()
	if hold != nil {
		<-hold
	}
	defer func() {
		select {
		case rc.notify <- struct{}{}:
		default:
		}
	}()
	if answer != 0 {
		w.WriteHeader(answer)
		return
	}
	if err := notify.Verify(r.Header.Get(notify.HeaderSignature), body, secret, time.Now(), notify.DefaultTolerance); err != nil ||
		r.Header.Get(notify.HeaderTimestamp) == "" || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		rc.mu.Lock()
		rc.bad++
		rc.mu.Unlock()
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	id := r.Header.Get(notify.HeaderDelivery)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.seen[id]++
	if rc.seen[id] == 1 {
		inc := ""
		if d, ok := m["data"].(map[string]any); ok {
			if i, ok := d["incident"].(map[string]any); ok {
				inc, _ = i["id"].(string)
			}
		}
		if m["type"] != r.Header.Get(notify.HeaderEvent) || m["deliveryId"] != id {
			rc.t.Errorf("delivery %s: header event %q, body %v", id, r.Header.Get(notify.HeaderEvent), m)
		}
		rc.got = append(rc.got, received{delivery: id, event: m["type"].(string), incident: inc, body: m})
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) set(answer int) {
	rc.mu.Lock()
	rc.answer = answer
	rc.mu.Unlock()
}

// waitFor waits until the receiver has handled n deliveries.
func (rc *receiver) waitFor(n int) []received {
	rc.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		rc.mu.Lock()
		got := slices.Clone(rc.got)
		rc.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-rc.notify:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			rc.t.Fatalf("the receiver handled %d deliveries, want %d", len(got), n)
		}
	}
}

// fastRetries make a failed delivery come back within a fraction of a
// second instead of 30 seconds.
var fastRetries = app.Config{RetryFirst: 30 * time.Millisecond, RetryMax: 150 * time.Millisecond}

// runNotifier runs a node's notifier beside the test's server until the
// test ends.
func runNotifier(t *testing.T, e *env, node string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	n := deliver.New(deliver.Options{App: e.app, Node: node, Poll: 20 * time.Millisecond})
	go func() { defer close(done); n.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// webhookChannel creates a webhook channel to rc through the API and
// gives rc its secret.
func (e *env) webhookChannel(t *testing.T, k string, rc *receiver, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"name": "hook", "kind": "webhook", "config": map[string]any{"url": rc.srv.URL + "/hook"}}
	for k, v := range extra {
		body[k] = v
	}
	r := e.req("POST", "/api/v1/notification-channels", k, body)
	if r.status != http.StatusCreated {
		t.Fatalf("create channel: %d %s", r.status, r.body)
	}
	ch := r.json(t)
	rc.mu.Lock()
	rc.secret = ch["signingSecret"].(string)
	rc.mu.Unlock()
	return ch["id"].(string)
}

// incidentStory writes a manual incident and its life through the API:
// opened, acknowledged, updated, resolved. It returns the incident's id.
func (e *env) incidentStory(t *testing.T, k, title string) string {
	t.Helper()
	r := e.req("POST", "/api/v1/incidents", k, map[string]any{"title": title, "message": "looking"})
	if r.status != http.StatusCreated {
		t.Fatalf("create incident: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	for _, step := range []struct {
		path string
		body any
	}{
		{"/acknowledge", nil},
		{"/updates", map[string]any{"status": "identified", "message": "found it"}},
		{"/updates", map[string]any{"status": "resolved", "message": "fixed"}},
	} {
		if r := e.req("POST", "/api/v1/incidents/"+id+step.path, k, step.body); r.status >= 300 {
			t.Fatalf("incident %s: %d %s", step.path, r.status, r.body)
		}
	}
	return id
}

var storyEvents = []string{"incident.opened", "incident.acknowledged", "incident.updated", "incident.resolved"}

// eventsOf is the event types rc handled for one incident, in order.
func eventsOf(got []received, incidentID string) []string {
	var out []string
	for _, g := range got {
		if g.incident == incidentID {
			out = append(out, g.event)
		}
	}
	return out
}

// deliveries lists a channel's deliveries through the API, oldest first.
func (e *env) deliveries(t *testing.T, k, channelID string) []map[string]any {
	t.Helper()
	r := e.req("GET", "/api/v1/notification-channels/"+channelID+"/deliveries?limit=100", k, nil)
	if r.status != 200 {
		t.Fatalf("list deliveries: %d %s", r.status, r.body)
	}
	var out []map[string]any
	for _, d := range r.json(t)["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	slices.Reverse(out)
	return out
}

// settled waits until a channel has n deliveries, none pending (the
// receiver may have answered before the attempt is recorded), and
// returns them oldest first.
func (e *env) settled(t *testing.T, k, channelID string, n int) []map[string]any {
	t.Helper()
	var ds []map[string]any
	wait.For(t, 20*time.Second, "the deliveries to settle", func() bool {
		ds = e.deliveries(t, k, channelID)
		return len(ds) == n && !slices.ContainsFunc(ds, func(d map[string]any) bool { return d["status"] == "pending" })
	})
	return ds
}

// Events reach a webhook receiver signed, once per delivery id, in order
// per incident, through a receiver outage (retried with the same ids), a
// redelivery and a test; a 410 Gone disables the channel. Two nodes send:
// each delivery goes out once.
func TestWebhookDelivery(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newEnvWith(t, eng, fastRetries)
			runNotifier(t, e, "node-1")
			runNotifier(t, e.twin(), "node-2")
			k := e.ownerKey()
			rc := newReceiver(t)
			ch := e.webhookChannel(t, k, rc, nil)

			inc := e.incidentStory(t, k, "Checkout is slow")
			got := rc.waitFor(4)
			if ev := eventsOf(got, inc); !slices.Equal(ev, storyEvents) {
				t.Fatalf("events of the incident, in arrival order: %q, want %q", ev, storyEvents)
			}
			ds := e.settled(t, k, ch, 4)
			for i, d := range ds {
				at := d["attempts"].([]any)
				if d["id"] != got[i].delivery || d["status"] != "succeeded" || d["eventType"] != storyEvents[i] ||
					d["attemptCount"] != 1.0 || len(at) != 1 || at[0].(map[string]any)["statusCode"] != 204.0 ||
					at[0].(map[string]any)["error"] != "" || d["completedAt"] == nil || d["nextAttemptAt"] != nil {
					t.Errorf("delivery %d: %v", i, d)
				}
			}
			if body := got[0].body; body["id"] != ds[0]["eventId"] || body["workspaceId"] != e.wsA.ID || body["createdAt"] == nil {
				t.Errorf("the event as delivered: %v", body)
			}

			// The receiver is down: deliveries are retried with their ids,
			// and in order per incident once it is back.
			rc.set(http.StatusServiceUnavailable)
			inc2 := e.incidentStory(t, k, "Search is down")
			wait.For(t, 20*time.Second, "the first delivery of the outage is retried", func() bool {
				ds := e.deliveries(t, k, ch)
				return len(ds) == 8 && ds[4]["attemptCount"].(float64) >= 2
			})
			ds = e.deliveries(t, k, ch)
			if d := ds[4]; d["status"] != "pending" || d["lastStatusCode"] != 503.0 || d["nextAttemptAt"] == nil ||
				d["lastError"] == "" || ds[5]["attemptCount"] != 0.0 {
				t.Errorf("during the outage: the first %v; the next, waiting behind it: %v", d, ds[5])
			}
			rc.set(0)
			got = rc.waitFor(8)
			if ev := eventsOf(got, inc2); !slices.Equal(ev, storyEvents) {
				t.Fatalf("events of the incident after the outage: %q, want %q", ev, storyEvents)
			}
			ds = e.settled(t, k, ch, 8)
			for i, d := range ds[4:] {
				if d["id"] != got[4+i].delivery || d["status"] != "succeeded" {
					t.Errorf("after the outage, delivery %d: %v (receiver saw %s)", i, d, got[4+i].delivery)
				}
			}

			// Redelivering sends the same id again: the receiver dedupes it.
			r := e.req("POST", "/api/v1/deliveries/"+ds[0]["id"].(string)+"/redeliver", k, nil)
			if r.status != http.StatusAccepted || r.json(t)["status"] != "pending" {
				t.Fatalf("redeliver: %d %s", r.status, r.body)
			}
			wait.For(t, 20*time.Second, "the redelivery", func() bool {
				rc.mu.Lock()
				defer rc.mu.Unlock()
				return rc.seen[ds[0]["id"].(string)] == 2
			})
			if r := e.req("POST", "/api/v1/deliveries/"+ds[0]["id"].(string)+"/redeliver", e.key(e.members["viewer"], e.wsA.ID, false, "notifications:read"), nil); r.status != http.StatusForbidden {
				t.Errorf("redeliver with a read key: %d", r.status)
			}

			// A test event goes to the channel whatever its filters.
			r = e.req("PATCH", "/api/v1/notification-channels/"+ch, k, map[string]any{"events": []string{"incident.resolved"}})
			if r.status != 200 {
				t.Fatalf("patch: %d %s", r.status, r.body)
			}
			r = e.req("POST", "/api/v1/notification-channels/"+ch+"/test", k, nil)
			if r.status != http.StatusAccepted || r.json(t)["eventType"] != "test" || r.json(t)["status"] != "pending" {
				t.Fatalf("test: %d %s", r.status, r.body)
			}
			got = rc.waitFor(9)
			if g := got[8]; g.event != "test" || g.delivery != r.json(t)["id"] {
				t.Errorf("the test delivery: %+v", g)
			}
			// A 410 Gone disables the channel and fails what was pending.
			rc.set(http.StatusGone)
			e.incidentStory(t, k, "Gone")
			wait.For(t, 20*time.Second, "the channel is disabled", func() bool {
				return e.req("GET", "/api/v1/notification-channels/"+ch, k, nil).json(t)["enabled"] == false
			})
			c := e.req("GET", "/api/v1/notification-channels/"+ch, k, nil).json(t)
			ds = e.deliveries(t, k, ch)
			last := ds[len(ds)-1]
			if c["disabledReason"] != "the receiver answered 410 Gone" || last["status"] != "failed" || last["lastStatusCode"] != 410.0 {
				t.Errorf("after 410: channel %v, delivery %v", c, last)
			}
			if r := e.req("POST", "/api/v1/notification-channels/"+ch+"/test", k, nil); r.status != http.StatusConflict {
				t.Errorf("testing a disabled channel: %d %s", r.status, r.body)
			}
			rc.mu.Lock()
			defer rc.mu.Unlock()
			if rc.bad != 0 {
				t.Errorf("%d requests did not verify", rc.bad)
			}
			for id, n := range rc.seen {
				if n != 1 && !(id == ds[0]["id"] && n == 2) {
					t.Errorf("delivery %s was handled %d times", id, n)
				}
			}
		})
	}
}

// A receiver that hangs holds its own deliveries, not another channel's.
func TestSlowReceiverHoldsOnlyItself(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newEnvWith(t, eng, fastRetries)
			runNotifier(t, e, "node-1")
			k := e.ownerKey()
			slow, fast := newReceiver(t), newReceiver(t)
			release := make(chan struct{})
			slow.hold = release
			e.webhookChannel(t, k, slow, nil)
			e.webhookChannel(t, k, fast, nil)
			inc := e.incidentStory(t, k, "Slow")
			got := fast.waitFor(4)
			if ev := eventsOf(got, inc); !slices.Equal(ev, storyEvents) {
				t.Errorf("the fast receiver got %q", ev)
			}
			slow.mu.Lock()
			calls := slow.calls
			slow.mu.Unlock()
			if calls != 1 {
				t.Errorf("the slow receiver has %d requests in flight, want the first only (the rest wait in order)", calls)
			}
			close(release)
			slow.waitFor(4)
		})
	}
}

// A storm of incidents reaches a person's channel as at most its bound of
// messages a minute, and one summary of the rest once the minute is over;
// nothing held is dropped: every held delivery names the summary, and
// can be redelivered.
func TestRateBoundHoldsAStorm(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newEnvWith(t, eng, fastRetries)
			start := time.Now().UTC().Truncate(time.Second)
			e.clock.Set(start)
			runNotifier(t, e, "node-1")
			k := e.ownerKey()
			var (
				mu  sync.Mutex
				got []map[string]any
			)
			ntfy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var m map[string]any
				if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
					http.Error(w, "not JSON", http.StatusBadRequest)
					return
				}
				mu.Lock()
				got = append(got, m)
				mu.Unlock()
			}))
			defer ntfy.Close()
			r := e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "phone", "kind": "ntfy",
				"config": map[string]any{"url": ntfy.URL, "topic": "ops"}, "events": []string{"incident.opened"}})
			if r.status != http.StatusCreated {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			ch := r.json(t)["id"].(string)
			bound := notify.RateBound(notify.Ntfy)
			const storm = 30
			for i := range storm {
				if r := e.req("POST", "/api/v1/incidents", k, map[string]any{"title": fmt.Sprintf("service %d is down", i), "message": "down"}); r.status != http.StatusCreated {
					t.Fatalf("incident: %d %s", r.status, r.body)
				}
			}
			ds := e.settled(t, k, ch, storm)
			var sent, held int
			for _, d := range ds {
				switch d["status"] {
				case "succeeded":
					sent++
				case "held":
					held++
					if d["heldBy"] != nil && d["heldBy"] != "" {
						t.Errorf("told of before the window ended: %v", d)
					}
				}
			}
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if sent != bound || held != storm-bound || n != bound {
				t.Fatalf("in the first minute: %d sent, %d held, %d received; want %d, %d, %d", sent, held, n, bound, storm-bound, bound)
			}

			// The minute is over: one summary tells of the held ones.
			e.clock.Set(start.Add(notify.RateWindow + time.Second))
			ds = e.settled(t, k, ch, storm+1)
			summary := ds[len(ds)-1]
			if summary["eventType"] != notify.EventHeld || summary["status"] != "succeeded" {
				t.Fatalf("the summary delivery: %v", summary)
			}
			for _, d := range ds[:storm] {
				if d["status"] == "held" && d["heldBy"] != summary["id"] {
					t.Errorf("a held delivery not told of: %v", d)
				}
			}
			mu.Lock()
			last := got[len(got)-1]
			mu.Unlock()
			if title, _ := last["title"].(string); !strings.Contains(title, fmt.Sprint(storm-bound)) {
				t.Errorf("the summary as the channel got it: %v", last)
			}
			// A held delivery can still be sent by hand.
			var heldOne map[string]any
			for _, d := range ds {
				if d["status"] == "held" {
					heldOne = d
					break
				}
			}
			if r := e.req("POST", "/api/v1/deliveries/"+heldOne["id"].(string)+"/redeliver", k, nil); r.status != http.StatusAccepted {
				t.Fatalf("redeliver a held one: %d %s", r.status, r.body)
			}
			wait.For(t, 20*time.Second, "the held delivery to go", func() bool {
				return e.req("GET", "/api/v1/deliveries/"+heldOne["id"].(string), k, nil).json(t)["status"] == "succeeded"
			})
			if d := e.req("GET", "/api/v1/deliveries/"+heldOne["id"].(string), k, nil).json(t); d["heldBy"] != summary["id"] {
				t.Errorf("a held delivery sent by hand forgot its summary: %v", d)
			}
		})
	}
}
