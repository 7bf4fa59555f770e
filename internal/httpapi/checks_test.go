package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// storeChecks writes observations of a monitor as the engine's writer
// would, one per minute from start: results cycle up, down, unknown.
func (e *env) storeChecks(t *testing.T, monitorID string, start time.Time, n int) {
	t.Helper()
	ctx := context.Background()
	m, err := e.db.GetMonitor(ctx, e.wsA.ID, monitorID)
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := e.db.ClaimDue(ctx, "writer", start, start.Add(100*365*24*time.Hour), time.Hour, 1000)
	if err != nil || len(claimed) == 0 {
		t.Fatalf("claim: %v %d", err, len(claimed))
	}
	var seq int64
	for _, c := range claimed {
		if c.Monitor.ID == m.ID {
			seq = c.Seq
		}
	}
	results := []monitor.Result{monitor.ResultUp, monitor.ResultDown, monitor.ResultUnknown}
	var batch []monitor.Completed
	for i := range n {
		at := start.Add(time.Duration(i) * time.Minute)
		o := monitor.Observation{MonitorID: m.ID, StartedAt: at, Due: at.Add(-3 * time.Millisecond), Result: results[i%3],
			Latency: 42 * time.Millisecond, Phases: monitor.Phases{DNS: time.Millisecond, Connect: 2 * time.Millisecond, FirstByte: 40 * time.Millisecond},
			StatusCode: 200, Probe: "node-1", Region: "eu"}
		if o.Result != monitor.ResultUp {
			o.Reason, o.StatusCode = fmt.Sprintf("reason %d", i), 0
		}
		batch = append(batch, monitor.Completed{Seq: seq, Observation: o})
	}
	if _, err := e.app.RecordChecks(ctx, "writer", batch); err != nil {
		t.Fatal(err)
	}
}

// TestListChecks pages through observations newest first with filters,
// and shows the monitor's last check.
func TestListChecks(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		id := e.monitorIn(e.wsA)
		start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
		e.storeChecks(t, id, start, 30)

		// Walk every page of 7: 30 checks, newest first, none twice.
		var seen []string
		path := "/api/v1/monitors/" + id + "/checks?limit=7"
		for pages := 0; ; pages++ {
			r := e.req("GET", path, k, nil)
			if r.status != 200 {
				t.Fatalf("GET %s: %d %s", path, r.status, r.body)
			}
			body := r.json(t)
			for _, c := range body["data"].([]any) {
				seen = append(seen, c.(map[string]any)["startedAt"].(string))
			}
			next, _ := body["nextCursor"].(string)
			if next == "" {
				break
			}
			if pages > 10 {
				t.Fatal("pages never end")
			}
			path = "/api/v1/monitors/" + id + "/checks?limit=7&cursor=" + url.QueryEscape(next)
		}
		if len(seen) != 30 || seen[0] != rfc3339(start.Add(29*time.Minute)) || seen[29] != rfc3339(start) {
			t.Fatalf("%d checks, first %s, last %s", len(seen), seen[0], seen[len(seen)-1])
		}

		// The newest up check in full.
		r := e.req("GET", "/api/v1/monitors/"+id+"/checks?limit=1&result=up", k, nil)
		c := r.json(t)["data"].([]any)[0].(map[string]any)
		want := map[string]any{"result": "up", "latencyMs": 42.0, "statusCode": 200.0, "probe": "node-1", "region": "eu",
			"startedAt": "2026-11-01T12:27:00.000000Z", "dueAt": "2026-11-01T12:26:59.997000Z"}
		for f, v := range want {
			if c[f] != v {
				t.Errorf("check %s = %v, want %v (%s)", f, c[f], v, r.body)
			}
		}
		if ph := c["phases"].(map[string]any); ph["dnsMs"] != 1.0 || ph["connectMs"] != 2.0 || ph["firstByteMs"] != 40.0 || ph["tlsMs"] != nil {
			t.Errorf("phases = %v", ph)
		}

		// The monitor shows its latest check.
		mon := e.req("GET", "/api/v1/monitors/"+id, k, nil).json(t)
		if mon["lastCheckAt"] != "2026-11-01T12:29:00.000000Z" || mon["lastResult"] != "unknown" || mon["lastReason"] != "reason 29" || mon["lastLatencyMs"] != 42.0 {
			t.Errorf("monitor's last check: %v", mon)
		}

		// One down between ups never confirms DOWN: the history holds the
		// first result only.
		st := e.req("GET", "/api/v1/monitors/"+id+"/states", k, nil).json(t)["data"].([]any)
		if len(st) != 1 || st[0].(map[string]any)["from"] != "PENDING" || st[0].(map[string]any)["to"] != "UP" ||
			st[0].(map[string]any)["at"] != "2026-11-01T12:00:00.000000Z" {
			t.Errorf("state history: %v", st)
		}

		// Filters: result and a time range [from, to).
		r = e.req("GET", "/api/v1/monitors/"+id+"/checks?result=down&limit=100", k, nil)
		downs := r.json(t)["data"].([]any)
		if len(downs) != 10 {
			t.Fatalf("result=down: %d checks", len(downs))
		}
		for _, d := range downs {
			if d := d.(map[string]any); d["result"] != "down" || !strings.HasPrefix(d["reason"].(string), "reason ") {
				t.Fatalf("result=down gave %v", d)
			}
		}
		q := url.Values{"from": {start.Add(10 * time.Minute).Format(time.RFC3339)}, "to": {start.Add(20 * time.Minute).Format(time.RFC3339)}}
		r = e.req("GET", "/api/v1/monitors/"+id+"/checks?"+q.Encode(), k, nil)
		ranged := r.json(t)["data"].([]any)
		if len(ranged) != 10 || ranged[0].(map[string]any)["startedAt"] != "2026-11-01T12:19:00.000000Z" || ranged[9].(map[string]any)["startedAt"] != "2026-11-01T12:10:00.000000Z" {
			t.Fatalf("from/to: %s", r.body)
		}

		// Bad input is a clear 422; another workspace's monitor does not exist.
		for _, bad := range []struct{ query, pointer string }{
			{"result=sideways", "query.result"},
			{"cursor=nonsense", "query.cursor"},
			{"from=yesterday", "query.from"},
			{"from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z", "query.to"},
			{"limit=0", "query.limit"},
		} {
			r := e.req("GET", "/api/v1/monitors/"+id+"/checks?"+bad.query, k, nil)
			if r.status != 422 || !strings.Contains(string(r.body), bad.pointer) {
				t.Errorf("%s: %d %s", bad.query, r.status, r.body)
			}
		}
		if r := e.req("GET", "/api/v1/monitors/"+e.monitorIn(e.wsB)+"/checks", k, nil); r.status != 404 {
			t.Errorf("other workspace's checks: %d %s", r.status, r.body)
		}
	})
}

// TestTestMonitor runs a draft's check against a real server and returns
// each assertion's verdict, never the response body, saving nothing.
func TestTestMonitor(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer t0ken" {
				w.WriteHeader(401)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"ok","version":"SECRET-BODY-MARKER","queue":12}`))
		}))
		defer target.Close()
		draft := map[string]any{"type": "http", "name": "try", "config": map[string]any{
			"url":               target.URL,
			"auth":              map[string]any{"type": "bearer", "token": "t0ken"},
			"keywordAssertions": []any{map[string]any{"keyword": "ok"}},
			"jsonAssertions": []any{
				map[string]any{"path": "$.status", "operator": "equals", "value": "ok"},
				map[string]any{"path": "$.queue", "operator": "lt", "value": 10},
			},
		}}
		r := e.req("POST", "/api/v1/monitors/test", k, draft)
		if r.status != 200 {
			t.Fatalf("test: %d %s", r.status, r.body)
		}
		if strings.Contains(string(r.body), "SECRET-BODY-MARKER") || strings.Contains(string(r.body), "t0ken") {
			t.Fatalf("the response leaks the body or the credential: %s", r.body)
		}
		res := r.json(t)
		if res["result"] != "down" || res["statusCode"] != 200.0 || !strings.Contains(res["reason"].(string), "$.queue") {
			t.Fatalf("result: %s", r.body)
		}
		var verdicts []string
		for _, a := range res["assertions"].([]any) {
			a := a.(map[string]any)
			verdicts = append(verdicts, fmt.Sprintf("%s/%v/%v", a["kind"], a["index"], a["passed"]))
		}
		if got := strings.Join(verdicts, " "); got != "status/0/true keyword/0/true json/0/true json/1/false" {
			t.Fatalf("verdicts = %s", got)
		}
		// Nothing was saved.
		list := e.req("GET", "/api/v1/monitors", k, nil).json(t)
		if list["total"] != 0.0 {
			t.Fatalf("a test run created a monitor: %v", list)
		}
		// An invalid draft is a 422 like a create.
		bad := e.req("POST", "/api/v1/monitors/test", k, map[string]any{"type": "http", "name": "x", "config": map[string]any{"url": "ftp://x"}})
		if bad.status != 422 || !strings.Contains(string(bad.body), "/config/url") {
			t.Fatalf("invalid draft: %d %s", bad.status, bad.body)
		}
	})
}

// TestStatesConfirmedAt: with confirmations 3, the state history dates
// DOWN from the first failed check and says when the third confirmed it;
// a change that took effect at once has one time twice. Paging one
// change at a time gives the same history.
func TestStatesConfirmedAt(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		r := e.req("POST", "/api/v1/monitors", k, map[string]any{"type": "tcp", "name": "api",
			"config": map[string]any{"host": "api.example", "port": 443, "confirmations": 3}})
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)
		start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
		ctx := context.Background()
		claimed, err := e.db.ClaimDue(ctx, "writer", start, start.Add(100*365*24*time.Hour), time.Hour, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var seq int64
		for _, c := range claimed {
			if c.Monitor.ID == id {
				seq = c.Seq
			}
		}
		var batch []monitor.Completed
		for i, res := range []monitor.Result{monitor.ResultUp, monitor.ResultDown, monitor.ResultDown, monitor.ResultDown, monitor.ResultUp} {
			at := start.Add(time.Duration(i) * time.Minute)
			batch = append(batch, monitor.Completed{Seq: seq, Thresholds: monitor.Thresholds{Confirmations: 3},
				Observation: monitor.Observation{MonitorID: id, StartedAt: at, Due: at, Result: res, Reason: "refused", Probe: "p", Region: "r"}})
		}
		if _, err := e.app.RecordChecks(ctx, "writer", batch); err != nil {
			t.Fatal(err)
		}
		want := [][3]string{
			{"DOWN", "2026-11-01T12:04:00.000000Z", "2026-11-01T12:04:00.000000Z"},
			{"UP", "2026-11-01T12:01:00.000000Z", "2026-11-01T12:03:00.000000Z"},
			{"PENDING", "2026-11-01T12:00:00.000000Z", "2026-11-01T12:00:00.000000Z"},
		}
		var paged []any
		path := "/api/v1/monitors/" + id + "/states?limit=1"
		for range 5 {
			body := e.req("GET", path, k, nil).json(t)
			paged = append(paged, body["data"].([]any)...)
			next, _ := body["nextCursor"].(string)
			if next == "" {
				break
			}
			path = "/api/v1/monitors/" + id + "/states?limit=1&cursor=" + url.QueryEscape(next)
		}
		whole := e.req("GET", "/api/v1/monitors/"+id+"/states", k, nil).json(t)["data"].([]any)
		for name, got := range map[string][]any{"one page": whole, "paged": paged} {
			if len(got) != len(want) {
				t.Fatalf("%s: %v", name, got)
			}
			for i, w := range want {
				c := got[i].(map[string]any)
				if c["from"] != w[0] || c["at"] != w[1] || c["confirmedAt"] != w[2] {
					t.Errorf("%s, change %d: %v; want from %s at %s confirmed %s", name, i, c, w[0], w[1], w[2])
				}
			}
		}
		if mon := e.req("GET", "/api/v1/monitors/"+id, k, nil).json(t); mon["state"] != "UP" || mon["stateSince"] != "2026-11-01T12:04:00.000000Z" {
			t.Errorf("monitor state %v since %v", mon["state"], mon["stateSince"])
		}
	})
}
