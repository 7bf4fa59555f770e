package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// metricsDay is a UTC day the metrics tests live in; the monitor is made
// at its noon, so half the day is before it existed.
var metricsDay = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// seedMetrics makes a monitor at noon of metricsDay with a known history:
// PENDING for a minute, then UP, DOWN 20:00–20:30 (an incident, resolved),
// UNKNOWN 22:00–22:10 (no node checking), and one check a minute from
// 12:01 until midnight with latencies 1…n ms, down in the DOWN span,
// unknown in the UNKNOWN span. It returns the monitor's id.
func seedMetrics(t *testing.T, e *env, k string) string {
	t.Helper()
	e.clock.Set(metricsDay.Add(12 * time.Hour))
	r := e.req("POST", "/api/v1/monitors", k, map[string]any{"type": "tcp", "name": "api", "config": map[string]any{"host": "api.example", "port": 443}})
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	at := func(h, m int) time.Time {
		return metricsDay.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
	}
	ctx := context.Background()
	err := e.db.InTx(ctx, func(tx *store.Tx) error {
		for _, tr := range []monitor.Transition{
			{From: monitor.StatePending, To: monitor.StateUp, At: at(12, 1), Cause: "up"},
			{From: monitor.StateUp, To: monitor.StateDown, At: at(20, 0), Cause: "down"},
			{From: monitor.StateDown, To: monitor.StateUp, At: at(20, 30), Cause: "up"},
			{From: monitor.StateUp, To: monitor.StateUnknown, At: at(22, 0), Cause: "no Tocsin node was checking"},
			{From: monitor.StateUnknown, To: monitor.StateUp, At: at(22, 10), Cause: "checks resumed"},
		} {
			if err := tx.AppendStateChange(ctx, id, tr); err != nil {
				return err
			}
		}
		started, resolved := at(20, 0), at(20, 30)
		inc := &incident.Incident{ID: ids.New(ids.Incident, started), WorkspaceID: e.wsA.ID, Title: "api is down",
			Status: incident.Resolved, Origin: incident.Automatic, Subject: &incident.Subject{Type: "monitor", ID: id, Name: "api"},
			AffectedMonitors: []string{id}, StartedAt: started, ResolvedAt: &resolved, CreatedAt: started, UpdatedAt: resolved}
		if err := tx.InsertIncident(ctx, inc); err != nil {
			return err
		}
		return tx.UpdateIncident(ctx, inc) // as resolving writes it
	})
	if err != nil {
		t.Fatal(err)
	}
	seqs, err := e.db.SubjectSeqsOf(ctx, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	var batch []monitor.Completed
	n := 0
	for t0 := at(12, 1); t0.Before(metricsDay.Add(24 * time.Hour)); t0 = t0.Add(time.Minute) {
		n++
		res := monitor.ResultUp
		switch {
		case !t0.Before(at(20, 0)) && t0.Before(at(20, 30)):
			res = monitor.ResultDown
		case !t0.Before(at(22, 0)) && t0.Before(at(22, 10)):
			res = monitor.ResultUnknown
		}
		batch = append(batch, monitor.Completed{Seq: seqs[id], Observation: monitor.Observation{MonitorID: id, StartedAt: t0, Due: t0,
			Result: res, Latency: time.Duration(n) * time.Millisecond, Probe: "p", Region: "r"}})
	}
	// Recorded by a node that holds no lease: stored, moving nothing.
	if _, err := e.app.RecordChecks(ctx, "elsewhere", batch); err != nil {
		t.Fatal(err)
	}
	return id
}

type wireMetrics struct {
	Subject                struct{ ID, Kind, Name string }
	From, To               time.Time
	Availability           *float64
	UnadjustedAvailability *float64
	Coverage               *float64
	Durations              map[string]float64
	Checks                 map[string]int64
	LatencyMs              map[string]*float64
	Incidents              struct {
		Count           int
		DowntimeSeconds float64
		MTTRSeconds     *float64
	}
	Series []struct {
		Start, End             time.Time
		Availability, Coverage *float64
		Durations              map[string]float64
		Checks                 map[string]int64
	}
	Methodology struct{ Version string }
}

func getMetrics(t *testing.T, e *env, path, k string) wireMetrics {
	t.Helper()
	r := e.req("GET", path, k, nil)
	if r.status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	var m wireMetrics
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func near(got *float64, want float64) bool { return got != nil && math.Abs(*got-want) < 1e-9 }

// TestMonitorMetrics: the figures of a known history, checked by hand, on
// both engines: durations add up to the window with half of it before
// the monitor existed, ratios over the part in which it did, checks by
// result, exact min and max latency, the incident with its recovery time,
// and a daily series in UTC whose buckets add up to the whole.
func TestMonitorMetrics(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		id := seedMetrics(t, e, k)
		e.clock.Set(metricsDay.Add(24 * time.Hour))
		m := getMetrics(t, e, "/api/v1/monitors/"+id+"/metrics?window=24h", k)
		min := 60.0
		d := m.Durations
		want := map[string]float64{"beforeCreation": 720 * min, "pending": 1 * min, "down": 30 * min, "unknown": 10 * min,
			"up": (720 - 1 - 30 - 10) * min, "degraded": 0, "paused": 0, "maintenance": 0}
		for state, w := range want {
			if d[state] != w {
				t.Errorf("durations.%s = %v, want %v", state, d[state], w)
			}
		}
		if !m.From.Equal(metricsDay) || !m.To.Equal(metricsDay.Add(24*time.Hour)) || m.Subject.ID != id || m.Subject.Kind != "monitor" {
			t.Errorf("span %v–%v subject %+v", m.From, m.To, m.Subject)
		}
		if !near(m.Availability, 679.0/709) || !near(m.UnadjustedAvailability, 679.0/720) || !near(m.Coverage, 709.0/720) {
			t.Errorf("availability %v unadjusted %v coverage %v; want 679/709, 679/720, 709/720", *m.Availability, *m.UnadjustedAvailability, *m.Coverage)
		}
		// 719 checks from 12:01 to 23:59: 30 down, 10 unknown.
		if c := m.Checks; c["up"] != 679 || c["down"] != 30 || c["unknown"] != 10 || c["degraded"] != 0 || c["total"] != 719 {
			t.Errorf("checks %v", c)
		}
		// Latencies of known checks: 1 ms … 719 ms without the unknowns'.
		// Latencies of known checks: 1–599 and 610–719 ms (the unknowns'
		// left out); the percentiles of rank ⌊q·708⌋ within 1%, as
		// docs/metrics.md works them out by hand.
		l := m.LatencyMs
		if !near(l["min"], 1) || !near(l["max"], 719) || l["mean"] == nil || math.Abs(*l["mean"]-252795.0/709) > 1e-9 {
			t.Errorf("latency min %v max %v mean %v", deref(l["min"]), deref(l["max"]), deref(l["mean"]))
		}
		for q, exact := range map[string]float64{"p50": 355, "p90": 648, "p95": 683, "p99": 711} {
			if l[q] == nil || math.Abs(*l[q]-exact) > 0.01*exact {
				t.Errorf("latency %s = %v, want within 1%% of %v", q, deref(l[q]), exact)
			}
		}
		if m.Incidents.Count != 1 || m.Incidents.DowntimeSeconds != 30*min || !near(m.Incidents.MTTRSeconds, 30*min) {
			t.Errorf("incidents %+v", m.Incidents)
		}
		if m.Methodology.Version == "" {
			t.Error("no methodology")
		}

		// Hourly: 24 buckets; the morning's ratios are null (it did not
		// exist), and the buckets add up to the window.
		s := getMetrics(t, e, "/api/v1/monitors/"+id+"/metrics?window=24h&resolution=hour", k)
		if len(s.Series) != 24 {
			t.Fatalf("%d hourly buckets", len(s.Series))
		}
		if b := s.Series[3]; b.Availability != nil || b.Coverage != nil || b.Durations["beforeCreation"] != 3600 {
			t.Errorf("a bucket before creation: %+v", b)
		}
		if b := s.Series[20]; !near(b.Availability, 0.5) || b.Checks["down"] != 30 || b.Checks["up"] != 30 {
			t.Errorf("20:00–21:00: availability %v checks %v", b.Availability, b.Checks)
		}
		sum := map[string]float64{}
		var checks int64
		for _, b := range s.Series {
			for st, v := range b.Durations {
				sum[st] += v
			}
			checks += b.Checks["total"]
		}
		for st, w := range want {
			if math.Abs(sum[st]-w) > 1e-6 {
				t.Errorf("buckets' %s add up to %v, want %v", st, sum[st], w)
			}
		}
		if checks != 719 || s.Checks["total"] != 719 {
			t.Errorf("buckets count %d checks, the whole %d; want 719", checks, s.Checks["total"])
		}

		// from/to, and a day in another zone: Berlin's day of 2 March is
		// 23:00 UTC on the 1st to 23:00 UTC on the 2nd.
		q := url.Values{"from": {metricsDay.Add(-time.Hour).Format(time.RFC3339)}, "to": {metricsDay.Add(23 * time.Hour).Format(time.RFC3339)},
			"resolution": {"day"}, "tz": {"Europe/Berlin"}}
		z := getMetrics(t, e, "/api/v1/monitors/"+id+"/metrics?"+q.Encode(), k)
		if len(z.Series) != 1 || !z.Series[0].Start.Equal(metricsDay.Add(-time.Hour)) || z.Series[0].Checks["total"] != 659 {
			t.Errorf("Berlin day: %+v", z.Series)
		}
	})
}

// TestMetricsRequests: bad spans get a 422 naming the field and saying
// what is accepted; the scope guards the endpoints; another workspace's
// monitor is not found.
func TestMetricsRequests(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		id := seedMetrics(t, e, k)
		e.clock.Set(metricsDay.Add(24 * time.Hour))
		base := "/api/v1/monitors/" + id + "/metrics?"
		for _, c := range []struct{ query, pointer string }{
			{"window=2d", "query.window"},
			{"window=24h&from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z", "query.window"},
			{"from=2026-03-01T00:00:00Z", "query.to"},
			{"from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z", "query.to"},
			{"from=2024-01-01T00:00:00Z&to=2026-03-01T00:00:00Z", "query.from"},
			{"window=24h&resolution=minute", "query.resolution"},
			{"window=24h&resolution=day&tz=Mars/Olympus", "query.tz"},
			{"window=24h&tz=UTC", "query.tz"},
		} {
			r := e.req("GET", base+c.query, k, nil)
			if r.status != 422 || r.code(t) != "validation_error" {
				t.Errorf("%s: %d %s", c.query, r.status, r.body)
				continue
			}
			var body struct {
				Error struct{ Details []struct{ Parameter string } }
			}
			_ = json.Unmarshal(r.body, &body)
			found := false
			for _, d := range body.Error.Details {
				found = found || d.Parameter == c.pointer
			}
			if !found {
				t.Errorf("%s: details %s, want %s", c.query, r.body, c.pointer)
			}
		}
		// No window: the last 24 hours.
		if m := getMetrics(t, e, base, k); m.To.Sub(m.From) != 24*time.Hour {
			t.Errorf("default span %v–%v", m.From, m.To)
		}
		noMetrics := e.key(e.members[account.RoleOwner], e.wsA.ID, false, account.ScopeMonitorsRead)
		if r := e.req("GET", base+"window=24h", noMetrics, nil); r.status != 403 || r.code(t) != "insufficient_scope" {
			t.Errorf("without metrics:read: %d %s", r.status, r.body)
		}
		if r := e.req("GET", "/api/v1/monitors/mon_nope/metrics", k, nil); r.status != 404 {
			t.Errorf("unknown monitor: %d %s", r.status, r.body)
		}
	})
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestHeartbeatMetricsAndListing: a heartbeat's pings by signal and its
// run durations; the workspace listing pages through heartbeats, then
// monitors, filters like the lists, and never shows another workspace's.
func TestHeartbeatMetricsAndListing(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		base := metricsDay.Add(12 * time.Hour)
		e.clock.Set(base)
		var hbs []map[string]any
		for i := range 2 {
			hbs = append(hbs, e.newHeartbeat(t, k, periodic(fmt.Sprint("job ", i), 3600, 600)))
		}
		for i := range 3 {
			r := e.req("POST", "/api/v1/monitors", k, map[string]any{"type": "tcp", "name": fmt.Sprint("db ", i),
				"config": map[string]any{"host": "db.internal", "port": 5432}})
			if r.status != 201 {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
		}
		kB := e.key(e.ownerB, e.wsB.ID, false, account.Scopes...)
		if r := e.req("POST", "/api/v1/monitors", kB, map[string]any{"type": "tcp", "name": "theirs",
			"config": map[string]any{"host": "db.internal", "port": 5432}}); r.status != 201 {
			t.Fatalf("create in B: %d %s", r.status, r.body)
		}
		url := hbs[0]["pingUrl"].(string)
		e.clock.Set(base.Add(time.Minute))
		e.pingOK(t, url, "/start")
		e.clock.Set(base.Add(3 * time.Minute))
		e.pingOK(t, url, "")
		e.clock.Set(base.Add(4 * time.Minute))
		e.pingOK(t, url, "/fail")

		e.clock.Set(metricsDay.Add(24 * time.Hour))
		r := e.req("GET", "/api/v1/heartbeats/"+hbs[0]["id"].(string)+"/metrics?window=24h", k, nil)
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		var hm struct {
			Subject       struct{ Kind string }
			Pings         map[string]int64
			RunDurationMs map[string]*float64
			Checks        map[string]int64
			Durations     map[string]float64
		}
		if err := json.Unmarshal(r.body, &hm); err != nil {
			t.Fatal(err)
		}
		if hm.Subject.Kind != "heartbeat" || hm.Pings["success"] != 1 || hm.Pings["start"] != 1 || hm.Pings["fail"] != 1 ||
			hm.Pings["total"] != 3 || hm.Checks != nil || !near(hm.RunDurationMs["min"], 120000) || !near(hm.RunDurationMs["max"], 120000) ||
			hm.Durations["beforeCreation"] != 12*3600 {
			t.Errorf("heartbeat metrics: %s", r.body)
		}

		type page struct {
			Data []struct {
				Subject struct{ ID, Kind string }
			}
			NextCursor  *string
			Total       int
			Methodology struct{ Version string }
		}
		list := func(q string) page {
			t.Helper()
			r := e.req("GET", "/api/v1/metrics?"+q, k, nil)
			if r.status != 200 {
				t.Fatalf("%s: %d %s", q, r.status, r.body)
			}
			var p page
			if err := json.Unmarshal(r.body, &p); err != nil {
				t.Fatal(err)
			}
			return p
		}
		var kinds []string
		cursor := ""
		for n := 0; ; n++ {
			q := "window=24h&limit=2"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			p := list(q)
			if p.Total != 5 || p.Methodology.Version == "" {
				t.Fatalf("page %d: total %d, methodology %q", n, p.Total, p.Methodology.Version)
			}
			for _, d := range p.Data {
				kinds = append(kinds, d.Subject.Kind)
			}
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
			if n > 5 {
				t.Fatal("the pages never end")
			}
		}
		if fmt.Sprint(kinds) != "[heartbeat heartbeat monitor monitor monitor]" {
			t.Errorf("listing pages: %v", kinds)
		}
		if p := list("window=24h&kind=monitor"); p.Total != 3 || len(p.Data) != 3 {
			t.Errorf("kind=monitor: %d of %d", len(p.Data), p.Total)
		}
		if p := list("window=24h&type=tcp"); p.Total != 3 || len(p.Data) != 3 || p.Data[0].Subject.Kind != "monitor" {
			t.Errorf("type=tcp: %+v", p)
		}
		if p := list("window=24h&kind=heartbeat&state=PENDING"); p.Total != 1 || len(p.Data) != 1 {
			t.Errorf("kind=heartbeat&state=PENDING: %+v", p) // the other has pinged
		}
	})
}
