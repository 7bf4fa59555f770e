package httpapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/probe"
	"github.com/tocsin/tocsin/internal/scheduler"
	"github.com/tocsin/tocsin/internal/wait"
)

// TestCausesNameWhatFailed: a monitor checked by the real engine against
// a real target goes DOWN, and its state change, its incident and the
// webhooks a verifying receiver gets all say what failed and after how
// many checks — for a wrong status, a refused connection and a JSON
// assertion; the recovery says what recovered.
func TestCausesNameWhatFailed(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		rc := newReceiver(t)
		e.webhookChannel(t, k, rc, nil)
		runNotifier(t, e, "causes")

		var status atomic.Int32
		status.Store(500)
		statusTarget := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(int(status.Load()))
		}))
		t.Cleanup(statusTarget.Close)
		jsonTarget := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status": "degraded", "db": "ok"}`))
		}))
		t.Cleanup(jsonTarget.Close)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := l.Addr().String()
		l.Close()

		for _, c := range []struct {
			name   string
			config map[string]any
			reason string
		}{
			{"status", map[string]any{"url": statusTarget.URL, "expectedStatusCodes": []any{"200-299"}},
				"status 500 not in 200-299"},
			{"refused", map[string]any{"url": "http://" + closed + "/health"},
				"connection refused to " + closed},
			{"json", map[string]any{"url": jsonTarget.URL, "jsonAssertions": []any{
				map[string]any{"path": "$.status", "operator": "equals", "value": "ok"}}},
				`$.status is "degraded", expected "ok"`},
		} {
			t.Run(c.name, func(t *testing.T) {
				c.config["confirmations"] = 2
				r := e.req("POST", "/api/v1/monitors", k, map[string]any{"type": "http", "name": c.name + " check",
					"intervalSeconds": 3600, "config": c.config})
				if r.status != http.StatusCreated {
					t.Fatalf("create: %d %s", r.status, r.body)
				}
				id := r.json(t)["id"].(string)
				e.checkOnce(t, k, id)
				if s := e.states(t, k, id); len(s) != 0 {
					t.Fatalf("one failed check changed the state: %v", s)
				}
				e.checkOnce(t, k, id)
				want := c.reason + " (after 2 consecutive failed checks)"

				states := e.states(t, k, id)
				if len(states) != 1 || states[0]["to"] != "DOWN" || states[0]["cause"] != want {
					t.Fatalf("state history %v, want PENDING → DOWN because %q", states, want)
				}
				r = e.req("GET", "/api/v1/incidents?status=open&subject="+id, k, nil)
				incs := r.json(t)["data"].([]any)
				if r.status != 200 || len(incs) != 1 {
					t.Fatalf("open incidents of %s: %d %s", id, r.status, r.body)
				}
				inc := incs[0].(map[string]any)
				updates := inc["updates"].([]any)
				if inc["cause"] != want || updates[0].(map[string]any)["message"] != want {
					t.Errorf("incident cause %q, first update %v; want %q", inc["cause"], updates[0], want)
				}

				changed := rc.event(t, "monitor.state_changed", id, "DOWN")
				if changed["cause"] != want {
					t.Errorf("webhook monitor.state_changed: %v, want cause %q", changed, want)
				}
				opened := rc.event(t, "incident.opened", id, "")["incident"].(map[string]any)
				if opened["cause"] != want || opened["id"] != inc["id"] {
					t.Errorf("webhook incident.opened: %v, want cause %q", opened, want)
				}
			})
		}

		// The recovery says what recovered; the incident keeps what failed.
		t.Run("recovery", func(t *testing.T) {
			id := e.monitorNamed(t, k, "status check")
			status.Store(200)
			e.checkOnce(t, k, id)
			const back = "checks pass again (after 1 passing check)"
			if states := e.states(t, k, id); len(states) != 2 || states[0]["to"] != "UP" || states[0]["cause"] != back {
				t.Fatalf("state history %v, want DOWN → UP because %q", states, back)
			}
			if changed := rc.event(t, "monitor.state_changed", id, "UP"); changed["cause"] != back {
				t.Errorf("webhook monitor.state_changed: %v, want cause %q", changed, back)
			}
			resolved := rc.event(t, "incident.resolved", id, "")["incident"].(map[string]any)
			updates := resolved["updates"].([]any)
			last := updates[len(updates)-1].(map[string]any)
			if resolved["cause"] != "status 500 not in 200-299 (after 2 consecutive failed checks)" ||
				last["message"] != "status check recovered (up): "+back {
				t.Errorf("webhook incident.resolved: cause %q, last update %v", resolved["cause"], last)
			}
		})
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if rc.bad != 0 {
			t.Errorf("%d deliveries failed the receiver's signature check", rc.bad)
		}
	})
}

// event waits until rc has handled an event of type typ about the
// subject id (for a state change, to the state to) and returns its data.
func (rc *receiver) event(t *testing.T, typ, id, to string) map[string]any {
	t.Helper()
	var data map[string]any
	wait.For(t, 20*time.Second, typ+" about "+id, func() bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, g := range slices.Backward(rc.got) {
			d, _ := g.body["data"].(map[string]any)
			if g.event != typ || d == nil {
				continue
			}
			subject, _ := d["subject"].(map[string]any)
			if inc, ok := d["incident"].(map[string]any); ok {
				subject, _ = inc["subject"].(map[string]any)
			}
			if subject != nil && subject["id"] == id && (to == "" || d["to"] == to) {
				data = d
				return true
			}
		}
		return false
	})
	return data
}

// states is a monitor's state history through the API, newest first.
func (e *env) states(t *testing.T, k, id string) []map[string]any {
	t.Helper()
	r := e.req("GET", "/api/v1/monitors/"+id+"/states", k, nil)
	if r.status != 200 {
		t.Fatalf("states: %d %s", r.status, r.body)
	}
	var out []map[string]any
	for _, s := range r.json(t)["data"].([]any) {
		out = append(out, s.(map[string]any))
	}
	return out
}

// checkCount is how many checks of a monitor the API lists.
func (e *env) checkCount(t *testing.T, k, id string) int {
	t.Helper()
	r := e.req("GET", "/api/v1/monitors/"+id+"/checks?limit=100", k, nil)
	if r.status != 200 {
		t.Fatalf("checks: %d %s", r.status, r.body)
	}
	return len(r.json(t)["data"].([]any))
}

// monitorNamed is the id of the monitor called name.
func (e *env) monitorNamed(t *testing.T, k, name string) string {
	t.Helper()
	r := e.req("GET", "/api/v1/monitors?limit=100", k, nil)
	for _, m := range r.json(t)["data"].([]any) {
		if m := m.(map[string]any); m["name"] == name {
			return m["id"].(string)
		}
	}
	t.Fatalf("no monitor named %q: %s", name, r.body)
	return ""
}

// checkOnce makes the monitor due now and runs the check engine over the
// env's database until one more check of it is recorded.
func (e *env) checkOnce(t *testing.T, k, id string) {
	t.Helper()
	before := e.checkCount(t, k, id)
	e.checkUntil(t, id, fmt.Sprintf("a check of %s", id), func() bool { return e.checkCount(t, k, id) > before })
}

// checkUntil makes monitor id due now in the env's database and runs a
// check scheduler on the env's app until cond holds (what names it when
// it never does).
func (e *env) checkUntil(t *testing.T, id, what string, cond func() bool) {
	t.Helper()
	db := e.rawDB(t)
	_, err := db.Exec(`UPDATE monitor_runtime SET next_due_at = $1 WHERE monitor_id = $2`, time.Now().UnixMicro(), id)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	eng := scheduler.New(scheduler.Options{Node: "test", Region: "test", App: e.app,
		Checker:  probe.New(probe.Options{ProbeID: "test", Region: "test"}),
		OpenAuth: e.app.OpenMonitorAuth, OpenHeaders: e.app.OpenMonitorHeaders, Poll: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		eng.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	wait.For(t, 20*time.Second, what, cond)
}
