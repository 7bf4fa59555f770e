package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store"
)

// problems are the pointers and messages of a 422's error details.
func problems(t *testing.T, r response) map[string]string {
	t.Helper()
	if r.status != 422 || r.code(t) != "validation_error" {
		t.Fatalf("want a 422 validation_error: %d %s", r.status, r.body)
	}
	var env struct {
		Error struct {
			Details []struct{ Pointer, Message string }
		}
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range env.Error.Details {
		out[d.Pointer] = d.Message
	}
	return out
}

// sloOf is the slo of a monitor or heartbeat response: nil for null; the
// test fails when the field is absent.
func sloOf(t *testing.T, r response) map[string]any {
	t.Helper()
	m := r.json(t)
	v, ok := m["slo"]
	if !ok {
		t.Fatalf("no slo in %s", r.body)
	}
	if v == nil {
		return nil
	}
	return v.(map[string]any)
}

func isObjective(s map[string]any, target float64, days int) bool {
	return s != nil && s["target"] == target && s["periodDays"] == float64(days) && len(s) == 2
}

// TestObjectives: a monitor and a heartbeat carry an objective from
// create, in every response (null when none), through a PATCH that
// leaves it out (kept), replaces it, or removes it with null; an invalid
// one is refused with pointers under /slo that say what is accepted, and
// changes nothing.
func TestObjectives(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		for _, kind := range []struct{ path, create string }{
			{"/api/v1/monitors", `{"type":"tcp","name":"db","config":{"host":"db.example","port":5432}`},
			{"/api/v1/heartbeats", `{"name":"backup","schedule":{"periodSeconds":3600}`},
		} {
			r := e.req("POST", kind.path, k, kind.create+`,"slo":{"target":0.999,"periodDays":30}}`)
			if r.status != 201 || !isObjective(sloOf(t, r), 0.999, 30) {
				t.Fatalf("%s: create: %d %s", kind.path, r.status, r.body)
			}
			id := r.json(t)["id"].(string)
			one := kind.path + "/" + id
			if r := e.req("GET", one, k, nil); !isObjective(sloOf(t, r), 0.999, 30) {
				t.Errorf("%s: get: %s", kind.path, r.body)
			}
			r = e.req("GET", kind.path, k, nil)
			var list struct{ Data []map[string]any }
			if err := json.Unmarshal(r.body, &list); err != nil || len(list.Data) != 1 {
				t.Fatalf("%s: list: %s", kind.path, r.body)
			}
			if s, _ := list.Data[0]["slo"].(map[string]any); !isObjective(s, 0.999, 30) {
				t.Errorf("%s: list: %s", kind.path, r.body)
			}
			if r := e.req("PATCH", one, k, `{"name":"renamed"}`); r.status != 200 || !isObjective(sloOf(t, r), 0.999, 30) {
				t.Errorf("%s: a patch without slo: %d %s", kind.path, r.status, r.body)
			}
			if r := e.req("PATCH", one, k, `{"slo":{"target":0.99,"periodDays":7}}`); r.status != 200 || !isObjective(sloOf(t, r), 0.99, 7) {
				t.Errorf("%s: replace: %d %s", kind.path, r.status, r.body)
			}
			for _, bad := range []string{`{"target":1,"periodDays":0}`, `{"target":0,"periodDays":91}`, `{"target":0.999999,"periodDays":-1}`} {
				d := problems(t, e.req("PATCH", one, k, `{"slo":`+bad+`}`))
				if !strings.Contains(d["/slo/target"], "at most 0.99999") || !strings.Contains(d["/slo/periodDays"], "1 to 90 days") {
					t.Errorf("%s: patch %s: %v", kind.path, bad, d)
				}
				d = problems(t, e.req("POST", kind.path, k, kind.create+`,"slo":`+bad+`}`))
				if !strings.Contains(d["/slo/target"], "above 0") || !strings.Contains(d["/slo/periodDays"], "1 to 90 days") {
					t.Errorf("%s: create with %s: %v", kind.path, bad, d)
				}
			}
			if r := e.req("GET", one, k, nil); !isObjective(sloOf(t, r), 0.99, 7) {
				t.Errorf("%s: after refused patches: %s", kind.path, r.body)
			}
			if r := e.req("PATCH", one, k, `{"slo":null}`); r.status != 200 || sloOf(t, r) != nil {
				t.Errorf("%s: remove: %d %s", kind.path, r.status, r.body)
			}
			if r := e.req("GET", one, k, nil); sloOf(t, r) != nil {
				t.Errorf("%s: after removal: %s", kind.path, r.body)
			}
			if r := e.req("POST", kind.path, k, kind.create+`}`); r.status != 201 || sloOf(t, r) != nil {
				t.Errorf("%s: create without slo: %d %s", kind.path, r.status, r.body)
			}
		}
	})
}

// sloNow is the now of the budget test: a day and a half after the
// monitor was made.
var sloNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// TestObjectiveBudget: the budget of a known history, checked by hand, is
// over the objective's own period ending now, whatever window the query
// asks for; a subject without an objective has no slo.
//
// Period: the last day, [now−24h, now). In it the monitor was UNKNOWN
// for an hour (10:00–11:00 the day before: not known, spends nothing)
// and DOWN 30 minutes (09:00–09:30 today); the rest UP. Known time is
// 23 h = 82 800 s; with a target of 0.99 the budget is 1% of it, 828 s;
// 1 800 s are spent, so 1 − 1800/828 = −1.1739… is left. The last hour
// was all UP: burn rate 0. The last six hours had 30 minutes DOWN:
// (1800/21600)/0.01 = 8.333….
func TestObjectiveBudget(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		e.clock.Set(sloNow.Add(-36 * time.Hour))
		r := e.req("POST", "/api/v1/monitors", k, `{"type":"tcp","name":"db","config":{"host":"db.example","port":5432},"slo":{"target":0.99,"periodDays":1}}`)
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)
		r = e.req("POST", "/api/v1/monitors", k, `{"type":"tcp","name":"plain","config":{"host":"db.example","port":5432}}`)
		plain := r.json(t)["id"].(string)
		day := sloNow.Add(-24 * time.Hour)
		history(t, e, id, []monitor.Transition{
			{From: monitor.StatePending, To: monitor.StateUp, At: sloNow.Add(-36 * time.Hour).Add(time.Minute), Cause: "up"},
			{From: monitor.StateUp, To: monitor.StateUnknown, At: day.Add(-2 * time.Hour), Cause: "no node"},
			{From: monitor.StateUnknown, To: monitor.StateUp, At: day.Add(-time.Hour), Cause: "back"},
			{From: monitor.StateUp, To: monitor.StateUnknown, At: day.Add(10 * time.Hour), Cause: "no node"},
			{From: monitor.StateUnknown, To: monitor.StateUp, At: day.Add(11 * time.Hour), Cause: "back"},
			{From: monitor.StateUp, To: monitor.StateDown, At: sloNow.Add(-3 * time.Hour), Cause: "down"},
			{From: monitor.StateDown, To: monitor.StateUp, At: sloNow.Add(-150 * time.Minute), Cause: "up"},
		})
		e.clock.Set(sloNow)
		type figures struct {
			Target                                  float64
			PeriodDays                              int
			From, To                                time.Time
			BudgetSeconds, SpentSeconds             float64
			BudgetRemaining, BurnRate1h, BurnRate6h *float64
		}
		for _, q := range []string{"?window=1h", "?window=30d", "?window=24h&resolution=hour", ""} {
			r := e.req("GET", "/api/v1/monitors/"+id+"/metrics"+q, k, nil)
			var m struct{ SLO *figures }
			if err := json.Unmarshal(r.body, &m); r.status != 200 || err != nil || m.SLO == nil {
				t.Fatalf("metrics%s: %d %s", q, r.status, r.body)
			}
			s := *m.SLO
			if s.Target != 0.99 || s.PeriodDays != 1 || !s.From.Equal(day) || !s.To.Equal(sloNow) ||
				s.BudgetSeconds != 828 || s.SpentSeconds != 1800 || !near(s.BudgetRemaining, 1-1800.0/828) ||
				!near(s.BurnRate1h, 0) || !near(s.BurnRate6h, 1800.0/21600/0.01) {
				t.Errorf("metrics%s: slo %s", q, mustJSON(s))
			}
		}
		if r := e.req("GET", "/api/v1/monitors/"+plain+"/metrics", k, nil); r.status != 200 || strings.Contains(string(r.body), `"slo"`) {
			t.Errorf("a monitor without objective: %d %s", r.status, r.body)
		}
		// The workspace's list shows the same figures for the same subject.
		r = e.req("GET", "/api/v1/metrics?window=1h", k, nil)
		var list struct {
			Data []struct {
				Subject struct{ ID string }
				SLO     *figures
			}
		}
		if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		for _, d := range list.Data {
			if (d.Subject.ID == id) != (d.SLO != nil) || (d.SLO != nil && d.SLO.SpentSeconds != 1800) {
				t.Errorf("list: %s", r.body)
			}
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// history appends state changes to a subject's history, as a checker
// would have recorded them (without their events).
func history(t *testing.T, e *env, id string, trs []monitor.Transition) {
	t.Helper()
	ctx := context.Background()
	err := e.db.InTx(ctx, func(tx *store.Tx) error {
		for _, tr := range trs {
			if err := tx.AppendStateChange(ctx, id, tr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hook is a webhook receiver on loopback that verifies each signature
// with the channel's secret as of the test's clock (the server signs with
// that clock), and keeps each delivery once.
type hook struct {
	srv    *httptest.Server
	clock  *clock
	mu     sync.Mutex
	secret string
	bad    int
	seen   map[string]bool
	got    []map[string]any
}

func newHook(t *testing.T, c *clock) *hook {
	h := &hook{clock: c, seen: map[string]bool{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := notify.Verify(r.Header.Get(notify.HeaderSignature), body, h.secret, h.clock.Now(), notify.DefaultTolerance); err != nil {
			h.bad++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		if id := r.Header.Get(notify.HeaderDelivery); !h.seen[id] {
			h.seen[id] = true
			h.got = append(h.got, m)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) received() ([]map[string]any, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got), h.bad
}

// TestBurnRateAlertReachesWebhook: a monitor with a 99.9% objective that
// has been DOWN for the last hour fires the fast rule (both its hour and
// its five minutes burn at 1000×, past 14.4×): one slo.burn_rate event
// reaches a webhook, signed, however often the rules are evaluated and by
// whichever node. After it recovers, the slow rule keeps the alert open
// while its last 30 minutes still hold DOWN time; 31 minutes after
// recovery no rule fires and one resolved event follows.
func TestBurnRateAlertReachesWebhook(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		runNotifier(t, e, "node-1")
		k := e.ownerKey()
		now := time.Now().UTC().Truncate(time.Second)
		e.clock.Set(now.Add(-2 * time.Hour))
		r := e.req("POST", "/api/v1/monitors", k, `{"type":"tcp","name":"db","config":{"host":"db.example","port":5432},"slo":{"target":0.999,"periodDays":30}}`)
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)
		h := newHook(t, e.clock)
		r = e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "slo", "kind": "webhook",
			"config": map[string]any{"url": h.srv.URL + "/hook"}, "events": []string{"slo.burn_rate"}})
		if r.status != 201 {
			t.Fatalf("create channel: %d %s", r.status, r.body)
		}
		ch := r.json(t)
		h.mu.Lock()
		h.secret = ch["signingSecret"].(string)
		h.mu.Unlock()
		history(t, e, id, []monitor.Transition{
			{From: monitor.StatePending, To: monitor.StateUp, At: now.Add(-2 * time.Hour).Add(time.Minute), Cause: "up"},
			{From: monitor.StateUp, To: monitor.StateDown, At: now.Add(-time.Hour), Cause: "connection refused"},
		})

		e.clock.Set(now)
		twin := e.twin()
		for _, a := range []interface {
			EvaluateSLOAlerts(context.Context, string) error
		}{e.app, e.app, twin.app} {
			if err := a.EvaluateSLOAlerts(ctx, "node-x"); err != nil {
				t.Fatal(err)
			}
		}
		e.settled(t, k, ch["id"].(string), 1)
		got, bad := h.received()
		if len(got) != 1 || bad != 0 {
			t.Fatalf("want one verified delivery: %d, %d unverified: %v", len(got), bad, got)
		}
		// Known time: 59 minutes UP and 60 DOWN (PENDING is not known), so
		// the budget is 0.1% of 7 140 s, 7.14 s, and 3 600 s are spent.
		d := got[0]["data"].(map[string]any)
		subj := d["subject"].(map[string]any)
		if got[0]["type"] != "slo.burn_rate" || d["status"] != "firing" || d["rule"] != "fast" || d["factor"] != 14.4 ||
			d["longWindowSeconds"] != 3600.0 || d["shortWindowSeconds"] != 300.0 || d["burnRateLong"] != 1000.0 ||
			d["burnRateShort"] != 1000.0 || d["target"] != 0.999 || d["periodDays"] != 30.0 ||
			!near(ptr(d["budgetRemaining"]), 1-3600/7.14) || subj["id"] != id || subj["name"] != "db" || subj["type"] != "monitor" ||
			d["openedAt"] != d["at"] || d["reason"] != nil {
			t.Errorf("the firing event: %s", mustJSON(got[0]))
		}
		if at, _ := time.Parse(time.RFC3339Nano, d["at"].(string)); !at.Equal(now) {
			t.Errorf("at %v, want %v", d["at"], now)
		}

		// Recovered: ten minutes later the slow rule (6 h and 30 min at
		// 6×) still fires, so nothing is sent.
		history(t, e, id, []monitor.Transition{{From: monitor.StateDown, To: monitor.StateUp, At: now, Cause: "up"}})
		e.clock.Set(now.Add(10 * time.Minute))
		if err := e.app.EvaluateSLOAlerts(ctx, "node-1"); err != nil {
			t.Fatal(err)
		}
		// 31 minutes after: none fires; resolved once.
		e.clock.Set(now.Add(31 * time.Minute))
		for _, a := range []interface {
			EvaluateSLOAlerts(context.Context, string) error
		}{e.app, twin.app, e.app} {
			if err := a.EvaluateSLOAlerts(ctx, "node-1"); err != nil {
				t.Fatal(err)
			}
		}
		e.settled(t, k, ch["id"].(string), 2)
		got, bad = h.received()
		if len(got) != 2 || bad != 0 {
			t.Fatalf("want two verified deliveries: %d, %d unverified: %v", len(got), bad, got)
		}
		d = got[1]["data"].(map[string]any)
		if got[1]["type"] != "slo.burn_rate" || d["status"] != "resolved" || d["rule"] != "fast" ||
			d["burnRateShort"] != 0.0 || !near(ptr(d["burnRateLong"]), 29.0/60/0.001) || d["target"] != 0.999 ||
			d["openedAt"] != got[0]["data"].(map[string]any)["at"] || d["subject"].(map[string]any)["id"] != id {
			t.Errorf("the resolved event: %s", mustJSON(got[1]))
		}
	})
}

func ptr(v any) *float64 {
	f, ok := v.(float64)
	if !ok {
		return nil
	}
	return &f
}

// TestBurnRateAlertEnds: an alert whose objective is removed is resolved
// with the reason and without the objective; a heartbeat's alert fires
// like a monitor's, and goes without an event when the heartbeat is
// deleted (its deletion is what its channels hear of).
func TestBurnRateAlertEnds(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		runNotifier(t, e, "node-1")
		k := e.ownerKey()
		now := time.Now().UTC().Truncate(time.Second)
		e.clock.Set(now.Add(-2 * time.Hour))
		slo := `,"slo":{"target":0.99,"periodDays":7}}`
		r := e.req("POST", "/api/v1/monitors", k, `{"type":"tcp","name":"db","config":{"host":"db.example","port":5432}`+slo)
		mon := r.json(t)["id"].(string)
		r = e.req("POST", "/api/v1/heartbeats", k, `{"name":"backup","schedule":{"periodSeconds":60}`+slo)
		hb := r.json(t)["id"].(string)
		h := newHook(t, e.clock)
		r = e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "slo", "kind": "webhook",
			"config": map[string]any{"url": h.srv.URL + "/hook"}, "events": []string{"slo.burn_rate"}})
		ch := r.json(t)
		h.mu.Lock()
		h.secret = ch["signingSecret"].(string)
		h.mu.Unlock()
		for _, id := range []string{mon, hb} {
			// DOWN for the last 40 minutes of two hours: the fast rule's
			// hour burns at 66.7×, its 5 minutes at 100×.
			history(t, e, id, []monitor.Transition{
				{From: monitor.StatePending, To: monitor.StateUp, At: now.Add(-2 * time.Hour), Cause: "up"},
				{From: monitor.StateUp, To: monitor.StateDown, At: now.Add(-40 * time.Minute), Cause: "down"},
			})
		}
		e.clock.Set(now)
		if err := e.app.EvaluateSLOAlerts(ctx, "node-1"); err != nil {
			t.Fatal(err)
		}
		e.settled(t, k, ch["id"].(string), 2)
		firing := map[string]bool{}
		got, _ := h.received()
		for _, g := range got {
			d := g["data"].(map[string]any)
			if d["status"] == "firing" && d["rule"] == "fast" && near(ptr(d["burnRateLong"]), 40.0/60/0.01) {
				firing[d["subject"].(map[string]any)["id"].(string)] = true
			}
		}
		if !firing[mon] || !firing[hb] {
			t.Fatalf("want both firing: %s", mustJSON(got))
		}

		if r := e.req("PATCH", "/api/v1/monitors/"+mon, k, `{"slo":null}`); r.status != 200 {
			t.Fatalf("remove: %d %s", r.status, r.body)
		}
		if r := e.req("DELETE", "/api/v1/heartbeats/"+hb, k, nil); r.status != 204 {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		e.clock.Set(now.Add(time.Minute))
		for range 2 {
			if err := e.app.EvaluateSLOAlerts(ctx, "node-1"); err != nil {
				t.Fatal(err)
			}
		}
		e.settled(t, k, ch["id"].(string), 3)
		got, bad := h.received()
		if len(got) != 3 || bad != 0 {
			t.Fatalf("want three verified deliveries: %d, %d unverified", len(got), bad)
		}
		d := got[2]["data"].(map[string]any)
		if d["status"] != "resolved" || d["reason"] != "the objective was removed" || d["subject"].(map[string]any)["id"] != mon ||
			d["rule"] != "fast" || d["target"] != nil || d["periodDays"] != nil || d["budgetRemaining"] != nil {
			t.Errorf("the resolved event: %s", mustJSON(got[2]))
		}
	})
}
