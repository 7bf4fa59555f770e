package httpapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	dto "github.com/prometheus/client_model/go"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// hostileName is a name a spreadsheet would run as a formula, with the
// characters CSV must quote and a line break.
const hostileName = "=HYPERLINK(\"http://evil.example\",\"click\"), a \"b\"\nline 2"

// csvAnswer is a CSV response read back: its rows keyed by column name.
type csvAnswer struct {
	header []string
	rows   []map[string]string
}

func readCSV(t *testing.T, r response) csvAnswer {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("CSV: %d %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if cd := r.header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment; filename=") || !strings.HasSuffix(cd, `.csv"`) {
		t.Errorf("Content-Disposition %q", cd)
	}
	recs, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, r.body)
	}
	a := csvAnswer{header: recs[0]}
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, name := range a.header {
			row[name] = rec[i]
		}
		a.rows = append(a.rows, row)
	}
	return a
}

// sameNumber: a CSV cell says exactly what a JSON number (nil: null) says.
func sameNumber(t *testing.T, column, cell string, want *float64) {
	t.Helper()
	if want == nil {
		if cell != "" {
			t.Errorf("%s = %q, want empty (null)", column, cell)
		}
		return
	}
	got, err := strconv.ParseFloat(cell, 64)
	if err != nil || got != *want {
		t.Errorf("%s = %q, want %v", column, cell, *want)
	}
}

func num(v float64) *float64 { return &v }

// TestMetricsCSV: a monitor's metrics as CSV say what its JSON says, cell
// by cell; a series is a row per bucket; JSON stays the default; errors
// stay JSON; operations that export nothing answer JSON.
func TestMetricsCSV(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		id := seedMetrics(t, e, k)
		e.clock.Set(metricsDay.Add(24 * time.Hour))
		path := "/api/v1/monitors/" + id + "/metrics?window=24h"
		r := e.req("GET", path, k, nil)
		var j struct {
			wireMetrics
			LatencyMs map[string]*float64
		}
		if err := json.Unmarshal(r.body, &j); err != nil {
			t.Fatal(err)
		}
		c := e.req("GET", path, k, nil, "Accept", "text/csv")
		a := readCSV(t, c)
		if cd := c.header.Get("Content-Disposition"); cd != `attachment; filename="tocsin-metrics-`+id+`.csv"` {
			t.Errorf("Content-Disposition %q", cd)
		}
		want := []string{"subjectId", "kind", "name", "from", "to", "availability", "unadjustedAvailability", "coverage",
			"pendingSeconds", "upSeconds", "degradedSeconds", "downSeconds", "unknownSeconds", "pausedSeconds", "maintenanceSeconds", "beforeCreationSeconds",
			"checksUp", "checksDegraded", "checksDown", "checksUnknown", "checksTotal", "pingsSuccess", "pingsStart", "pingsFail", "pingsTotal",
			"latencyP50Ms", "latencyP90Ms", "latencyP95Ms", "latencyP99Ms", "latencyMinMs", "latencyMaxMs", "latencyMeanMs",
			"runDurationP50Ms", "runDurationP90Ms", "runDurationP95Ms", "runDurationP99Ms", "runDurationMinMs", "runDurationMaxMs", "runDurationMeanMs",
			"incidents", "downtimeSeconds", "mttrSeconds"}
		if !slices.Equal(a.header, want) {
			t.Fatalf("header %q", a.header)
		}
		if len(a.rows) != 1 {
			t.Fatalf("%d rows, want 1", len(a.rows))
		}
		row := a.rows[0]
		if row["subjectId"] != id || row["kind"] != "monitor" || row["name"] != "api" {
			t.Errorf("subject %q %q %q", row["subjectId"], row["kind"], row["name"])
		}
		for col, w := range map[string]time.Time{"from": j.From, "to": j.To} {
			if got, err := time.Parse(time.RFC3339, row[col]); err != nil || !got.Equal(w) {
				t.Errorf("%s = %q, want %v", col, row[col], w)
			}
		}
		sameNumber(t, "availability", row["availability"], j.Availability)
		sameNumber(t, "unadjustedAvailability", row["unadjustedAvailability"], j.UnadjustedAvailability)
		sameNumber(t, "coverage", row["coverage"], j.Coverage)
		for _, st := range []string{"pending", "up", "degraded", "down", "unknown", "paused", "maintenance", "beforeCreation"} {
			sameNumber(t, st+"Seconds", row[st+"Seconds"], num(j.Durations[st]))
		}
		for _, res := range []string{"up", "degraded", "down", "unknown", "total"} {
			col := "checks" + strings.ToUpper(res[:1]) + res[1:]
			sameNumber(t, col, row[col], num(float64(j.Checks[res])))
		}
		for _, q := range []string{"p50", "p90", "p95", "p99", "min", "max", "mean"} {
			col := "latency" + strings.ToUpper(q[:1]) + q[1:] + "Ms"
			if j.LatencyMs[q] == nil {
				t.Fatalf("latencyMs.%s is null", q)
			}
			sameNumber(t, col, row[col], j.LatencyMs[q])
			sameNumber(t, "runDuration"+col[len("latency"):], row["runDuration"+col[len("latency"):]], nil)
		}
		for _, col := range []string{"pingsSuccess", "pingsStart", "pingsFail", "pingsTotal"} {
			sameNumber(t, col, row[col], nil)
		}
		sameNumber(t, "incidents", row["incidents"], num(float64(j.Incidents.Count)))
		sameNumber(t, "downtimeSeconds", row["downtimeSeconds"], num(j.Incidents.DowntimeSeconds))
		sameNumber(t, "mttrSeconds", row["mttrSeconds"], j.Incidents.MTTRSeconds)
		if row["availability"] == "" || row["mttrSeconds"] != "1800" || row["checksTotal"] != "719" {
			t.Errorf("availability %q mttr %q checks %q", row["availability"], row["mttrSeconds"], row["checksTotal"])
		}

		// Hourly: a row per bucket, its from and to the bucket's; null
		// ratios before the monitor existed are empty cells.
		h := readCSV(t, e.req("GET", path+"&resolution=hour", k, nil, "Accept", "text/csv"))
		if len(h.rows) != 24 {
			t.Fatalf("%d hourly rows", len(h.rows))
		}
		if b := h.rows[3]; b["from"] != "2026-03-02T03:00:00.000000Z" || b["to"] != "2026-03-02T04:00:00.000000Z" || b["availability"] != "" || b["beforeCreationSeconds"] != "3600" {
			t.Errorf("03:00 bucket %v", b)
		}
		if b := h.rows[20]; b["availability"] != "0.5" || b["checksDown"] != "30" {
			t.Errorf("20:00 bucket: availability %q checksDown %q", b["availability"], b["checksDown"])
		}

		// JSON when asked for, or when nothing is; a CSV request's error is
		// the JSON envelope; an operation without an export answers JSON.
		for _, accept := range []string{"application/json", "", "*/*", "text/csv;q=0.5, application/json"} {
			r := e.req("GET", path, k, nil, "Accept", accept)
			var m wireMetrics
			if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || json.Unmarshal(r.body, &m) != nil || m.Subject.ID != id {
				t.Errorf("Accept %q: %d %s %.80s", accept, r.status, r.header.Get("Content-Type"), r.body)
			}
			if r.header.Get("Content-Disposition") != "" {
				t.Errorf("Accept %q: Content-Disposition on JSON", accept)
			}
		}
		if r := e.req("GET", "/api/v1/monitors/"+id+"/metrics?window=2d", k, nil, "Accept", "text/csv"); r.status != 422 ||
			r.header.Get("Content-Type") != "application/json" || r.code(t) != "validation_error" {
			t.Errorf("bad window as CSV: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
		}
		if r := e.req("GET", "/api/v1/monitors/mon_nope/metrics", k, nil, "Accept", "text/csv"); r.status != 404 || r.code(t) != "not_found" {
			t.Errorf("unknown monitor as CSV: %d %s", r.status, r.body)
		}
		if r := e.req("GET", "/api/v1/monitors/"+id, k, nil, "Accept", "text/csv"); r.status != 200 ||
			r.header.Get("Content-Type") != "application/json" || r.json(t)["id"] != id {
			t.Errorf("a monitor asked for as CSV: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
		}
	})
}

// TestMetricsCSVListing: the listing pages in CSV through its Link header,
// every subject once, heartbeats with their columns; a hostile name comes
// back whole, quoted, and defused.
func TestMetricsCSVListing(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		api := seedMetrics(t, e, k)
		hostile := e.req("POST", "/api/v1/monitors", k, map[string]any{"type": "tcp", "name": hostileName, "config": map[string]any{"host": "evil.example", "port": 443}})
		if hostile.status != 201 {
			t.Fatalf("create: %d %s", hostile.status, hostile.body)
		}
		hb := e.newHeartbeat(t, k, periodic("+backup", 3600, 300))["id"].(string)
		e.clock.Set(metricsDay.Add(24 * time.Hour))

		next := "/api/v1/metrics?window=24h&limit=2"
		var rows []map[string]string
		pages := 0
		for next != "" {
			pages++
			r := e.req("GET", next, k, nil, "Accept", "text/csv")
			a := readCSV(t, r)
			if len(a.rows) > 2 {
				t.Errorf("page of %d rows with limit=2", len(a.rows))
			}
			rows = append(rows, a.rows...)
			next = ""
			if link := r.header.Get("Link"); link != "" {
				target, ok := strings.CutSuffix(link, `>; rel="next"`)
				if target, ok = strings.CutPrefix(target, "<"); !ok {
					t.Fatalf("Link %q", link)
				}
				u, err := url.Parse(target)
				if err != nil || u.Query().Get("window") != "24h" || u.Query().Get("limit") != "2" || u.Query().Get("cursor") == "" {
					t.Fatalf("Link %q keeps not the query", link)
				}
				next = target
			}
			if pages > 3 {
				t.Fatal("pages do not end")
			}
		}
		if pages != 2 || len(rows) != 3 {
			t.Fatalf("%d pages, %d rows; want 2 and 3", pages, len(rows))
		}
		hostileID := hostile.json(t)["id"].(string)
		if rows[0]["subjectId"] != hb || rows[1]["subjectId"] != api || rows[2]["subjectId"] != hostileID {
			t.Errorf("subjects %q %q %q", rows[0]["subjectId"], rows[1]["subjectId"], rows[2]["subjectId"])
		}
		if r := rows[0]; r["kind"] != "heartbeat" || r["name"] != "'+backup" || r["pingsTotal"] != "0" || r["checksTotal"] != "" || r["latencyP50Ms"] != "" {
			t.Errorf("heartbeat row %v", r)
		}
		hr := e.req("GET", "/api/v1/heartbeats/"+hb+"/metrics?window=24h", k, nil, "Accept", "text/csv")
		if a := readCSV(t, hr); len(a.rows) != 1 || a.rows[0]["subjectId"] != hb || a.rows[0]["pingsTotal"] != "0" ||
			hr.header.Get("Content-Disposition") != `attachment; filename="tocsin-metrics-`+hb+`.csv"` {
			t.Errorf("a heartbeat's CSV: %s %s", hr.header.Get("Content-Disposition"), hr.body)
		}
		if rows[2]["name"] != "'"+hostileName {
			t.Errorf("hostile name came back as %q", rows[2]["name"])
		}
		// On the wire: quoted whole, so the comma and line break stay in
		// the cell, and starting with the quote, not =.
		r := e.req("GET", "/api/v1/metrics?window=24h&kind=monitor&q=HYPERLINK", k, nil, "Accept", "text/csv")
		quoted := `"'=HYPERLINK(""http://evil.example"",""click""), a ""b""` + "\nline 2\""
		if !bytes.Contains(r.body, []byte(quoted)) || r.header.Get("Link") != "" {
			t.Errorf("hostile row on the wire:\n%s", r.body)
		}
	})
}

// scrape reads the exposition, failing unless it parses.
func scrape(t *testing.T, e *env, key string) map[string]*dto.MetricFamily {
	t.Helper()
	r := e.req("GET", "/api/v1/metrics/prometheus", key, nil, "Accept", "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
	if r.status != 200 {
		t.Fatalf("scrape: %d %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("exposition does not parse: %v\n%s", err, r.body)
	}
	return fams
}

// sample finds the value of family name whose labels include want; ok is
// false when no sample has them.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

// TestPrometheusScrape: the exposition parses, holds the seeded monitor's
// and heartbeat's states, last ping and availability as the JSON metrics
// state them, carries a hostile name whole, and shows nothing of another
// workspace; the key needs metrics:read, and a key at all.
func TestPrometheusScrape(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		api := seedMetrics(t, e, k)
		// Heartbeat names hold no control characters; monitor names may.
		hbName, monName := `backup"} 1 fake_metric{a="\`, hostileName+`"} 1`+"\n"+`fake_metric{a="\`
		h := e.newHeartbeat(t, k, periodic(hbName, 3600, 300))
		hb := h["id"].(string)
		evil := e.req("POST", "/api/v1/monitors", k, map[string]any{"type": "tcp", "name": monName, "config": map[string]any{"host": "evil.example", "port": 443}}).json(t)["id"]
		checkAt := metricsDay.Add(23*time.Hour + 30*time.Minute)
		e.storeChecks(t, evil.(string), checkAt, 1)
		e.clock.Set(metricsDay.Add(23 * time.Hour))
		e.pingOK(t, h["pingUrl"].(string), "")
		e.clock.Set(metricsDay.Add(24 * time.Hour))
		other := e.key(e.ownerB, e.wsB.ID, false, account.Scopes...)
		otherID := e.req("POST", "/api/v1/monitors", other, map[string]any{"type": "tcp", "name": "theirs", "config": map[string]any{"host": "b.example", "port": 443}}).json(t)["id"]

		metricsOnly := e.key(e.members[account.RoleOwner], e.wsA.ID, false, account.ScopeMetricsRead)
		fams := scrape(t, e, metricsOnly)
		if _, ok := fams["fake_metric"]; ok {
			t.Error("a name injected a series")
		}
		for _, f := range fams {
			if f.GetType() != dto.MetricType_GAUGE {
				t.Errorf("%s is %v", f.GetName(), f.GetType())
			}
			for _, m := range f.Metric {
				for _, l := range m.Label {
					if l.GetName() == "id" && l.GetValue() != api && l.GetValue() != hb && l.GetValue() != evil {
						t.Errorf("%s of %s, not of this workspace", f.GetName(), l.GetValue())
					}
				}
			}
		}
		if otherID == nil {
			t.Fatal("no monitor in workspace B")
		}

		mon := e.req("GET", "/api/v1/monitors/"+api, k, nil).json(t)
		labels := map[string]string{"id": api, "name": "api", "type": "tcp"}
		for _, st := range monitor.States {
			want := 0.0
			if string(st) == mon["state"] {
				want = 1
			}
			if v, ok := sample(fams, "tocsin_monitor_state", map[string]string{"id": api, "name": "api", "type": "tcp", "state": string(st)}); !ok || v != want {
				t.Errorf("tocsin_monitor_state{state=%s} = %v %v, want %v", st, v, ok, want)
			}
		}
		for _, w := range []string{"24h", "30d"} {
			m := getMetrics(t, e, "/api/v1/monitors/"+api+"/metrics?window="+w, k)
			got, ok := sample(fams, "tocsin_monitor_availability_ratio", map[string]string{"id": api, "window": w})
			if m.Availability == nil || !ok || got != *m.Availability {
				t.Errorf("availability over %s: %v %v, JSON says %v", w, got, ok, m.Availability)
			}
		}
		if !near(mustSample(t, fams, "tocsin_monitor_availability_ratio", map[string]string{"id": api, "window": "24h"}), 679.0/709) {
			t.Error("availability over 24h is not 679/709")
		}
		if _, ok := sample(fams, "tocsin_monitor_up", labels); ok != (mon["state"] == "UP" || mon["state"] == "DEGRADED" || mon["state"] == "DOWN") {
			t.Errorf("tocsin_monitor_up present %v in state %v", ok, mon["state"])
		}

		// The monitor with a check and a hostile name: the name comes back
		// whole as a label value, the check as the monitor's JSON says.
		em := e.req("GET", "/api/v1/monitors/"+evil.(string), k, nil).json(t)
		el := map[string]string{"id": evil.(string), "name": monName, "type": "tcp"}
		if em["lastResult"] != "up" || em["lastLatencyMs"] != 42.0 {
			t.Fatalf("the stored check: %v", em)
		}
		if v, ok := sample(fams, "tocsin_monitor_state", map[string]string{"id": evil.(string), "name": monName, "state": em["state"].(string)}); !ok || v != 1 {
			t.Errorf("hostile monitor's state %v: %v %v", em["state"], v, ok)
		}
		if v, ok := sample(fams, "tocsin_monitor_last_check_timestamp_seconds", el); !ok || v != float64(checkAt.Unix()) {
			t.Errorf("last check at %v %v, want %d", v, ok, checkAt.Unix())
		}
		if v, ok := sample(fams, "tocsin_monitor_last_latency_seconds", el); !ok || v != 0.042 {
			t.Errorf("last latency %v %v, want 0.042", v, ok)
		}
		if v, ok := sample(fams, "tocsin_monitor_up", el); ok != (em["state"] == "UP" || em["state"] == "DOWN") || (ok && v != map[any]float64{"UP": 1, "DOWN": 0}[em["state"]]) {
			t.Errorf("tocsin_monitor_up %v %v in state %v", v, ok, em["state"])
		}
		if _, ok := sample(fams, "tocsin_monitor_last_check_timestamp_seconds", labels); ok {
			t.Error("a last check of a monitor whose checks moved nothing")
		}
		hl := map[string]string{"id": hb, "name": hbName}
		if v, ok := sample(fams, "tocsin_heartbeat_state", map[string]string{"id": hb, "name": hl["name"], "state": "UP"}); !ok || v != 1 {
			t.Errorf("heartbeat UP: %v %v", v, ok)
		}
		if v, ok := sample(fams, "tocsin_heartbeat_up", hl); !ok || v != 1 {
			t.Errorf("tocsin_heartbeat_up %v %v", v, ok)
		}
		if v, ok := sample(fams, "tocsin_heartbeat_last_ping_timestamp_seconds", hl); !ok || v != float64(metricsDay.Add(23*time.Hour).Unix()) {
			t.Errorf("last ping %v %v, want %d", v, ok, metricsDay.Add(23*time.Hour).Unix())
		}
		hm := getMetrics(t, e, "/api/v1/heartbeats/"+hb+"/metrics?window=24h", k)
		if v, ok := sample(fams, "tocsin_heartbeat_availability_ratio", map[string]string{"id": hb, "window": "24h"}); hm.Availability == nil || !ok || v != *hm.Availability {
			t.Errorf("heartbeat availability %v %v, JSON says %v", v, ok, hm.Availability)
		}

		// Workspace B's scrape holds B's monitor only.
		if b := scrape(t, e, other); len(b["tocsin_monitor_state"].GetMetric()) != len(monitor.States) || len(b["tocsin_heartbeat_state"].GetMetric()) != 0 {
			t.Errorf("B's scrape: %d monitor states, %d heartbeat states", len(b["tocsin_monitor_state"].GetMetric()), len(b["tocsin_heartbeat_state"].GetMetric()))
		}

		noMetrics := e.key(e.members[account.RoleOwner], e.wsA.ID, false, account.ScopeMonitorsRead)
		if r := e.req("GET", "/api/v1/metrics/prometheus", noMetrics, nil); r.status != 403 || r.code(t) != "insufficient_scope" {
			t.Errorf("without metrics:read: %d %s", r.status, r.body)
		}
		if r := e.req("GET", "/api/v1/metrics/prometheus", "", nil); r.status != 401 || r.code(t) != "unauthorized" {
			t.Errorf("without a key: %d %s", r.status, r.body)
		}
		r := e.req("GET", "/api/v1/metrics/prometheus", metricsOnly, nil)
		if r.header.Get("X-RateLimit-Remaining") == "" {
			t.Error("a scrape counts against no rate limit")
		}
	})
}

func mustSample(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) *float64 {
	t.Helper()
	v, ok := sample(fams, name, labels)
	if !ok || math.IsNaN(v) {
		t.Fatalf("no %s%v", name, labels)
	}
	return &v
}

// TestCertificateExpiry: the expiry a tls monitor's check saw is kept
// with the monitor (a later check that completes no handshake keeps it),
// shown as certificateExpiresAt and scraped as a timestamp gauge.
func TestCertificateExpiry(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		r := e.req("POST", "/api/v1/monitors", k, map[string]any{"type": "tls", "name": "cert",
			"config": map[string]any{"host": "service.example", "port": 443}})
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)
		expiry := time.Date(2027, 1, 15, 12, 0, 0, 0, time.UTC)
		ctx := context.Background()
		for i, exp := range []time.Time{expiry, {}} { // the second check's handshake failed
			at := time.Now().Add(time.Duration(i) * time.Minute).UTC().Truncate(time.Microsecond)
			storetest.SetNextDue(t, e.db, id, at)
			due, err := e.app.ClaimDue(ctx, "n", at, at, time.Minute, 100)
			if err != nil || len(due) != 1 {
				t.Fatalf("claim: %v %d", err, len(due))
			}
			res := monitor.ResultUp
			if exp.IsZero() {
				res = monitor.ResultDown
			}
			if _, err := e.app.RecordChecks(ctx, "n", []monitor.Completed{{Seq: due[0].Seq, Observation: monitor.Observation{
				MonitorID: id, StartedAt: at, Due: at, Result: res, Reason: "x", Probe: "p", Region: "r", CertExpiry: exp}}}); err != nil {
				t.Fatal(err)
			}
		}
		got := e.req("GET", "/api/v1/monitors/"+id, k, nil).json(t)
		if got["certificateExpiresAt"] != "2027-01-15T12:00:00.000000Z" || got["lastResult"] != "down" {
			t.Errorf("monitor: certificateExpiresAt %v, lastResult %v", got["certificateExpiresAt"], got["lastResult"])
		}
		fams := scrape(t, e, k)
		if v := mustSample(t, fams, "tocsin_monitor_tls_certificate_expiry_timestamp_seconds", map[string]string{"id": id}); *v != float64(expiry.Unix()) {
			t.Errorf("expiry gauge %v, want %d", *v, expiry.Unix())
		}
	})
}
