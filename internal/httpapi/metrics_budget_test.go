package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// budgetNow is the instant the budget tests ask at: a whole UTC hour, so
// a window of whole days has as many hourly buckets as it has hours.
var budgetNow = time.Date(2026, 5, 20, 15, 0, 0, 0, time.UTC)

// metricsPage is a page of the listing as the budget tests read it.
type metricsPage struct {
	Data []struct {
		Subject struct{ ID string }
		Series  []json.RawMessage
	}
	NextCursor *string
	Total      int
}

func listPage(t *testing.T, e *env, k, query string) (metricsPage, response) {
	t.Helper()
	r := e.req("GET", "/api/v1/metrics?"+query, k, nil)
	var p metricsPage
	if r.status == 200 {
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatal(err)
		}
	}
	return p, r
}

// points is what a page cost: 1 a subject, and 1 a bucket of its series.
func (p metricsPage) points() int {
	n := 0
	for _, d := range p.Data {
		n += 1 + len(d.Series)
	}
	return n
}

// TestMetricsResponseBudget: with the default budget of 10,000 points a
// response, a listing of 100 monitors by hour over 7 days (169 points
// each) answers the 59 that fit with nextCursor, and the pages cover
// every monitor once; by day over 90 days (92 points each) all 100 fit;
// one monitor by hour over 90 days (2,161 points) is answered whole.
func TestMetricsResponseBudget(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		e.clock.Set(budgetNow)
		mons := seedHistory(t, e, e.wsA.ID, 100, 1, 91, budgetNow)
		k := e.ownerKey()

		seen := map[string]bool{}
		cursor := ""
		for pages := 0; ; pages++ {
			q := "window=7d&resolution=hour&limit=100"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			p, r := listPage(t, e, k, q)
			if r.status != 200 {
				t.Fatalf("page %d: %d %s", pages, r.status, r.body)
			}
			if len(p.Data) == 0 || len(p.Data[0].Series) != 7*24 {
				t.Fatalf("page %d: %d subjects, the first with %d buckets", pages, len(p.Data), len(p.Data[0].Series))
			}
			if pages == 0 && (len(p.Data) != app.MetricsPointsPerResponse/169 || p.NextCursor == nil || p.Total != 100) {
				t.Fatalf("first page: %d subjects (want %d), nextCursor %v, total %d", len(p.Data), app.MetricsPointsPerResponse/169, p.NextCursor, p.Total)
			}
			if p.points() > app.MetricsPointsPerResponse {
				t.Fatalf("page %d holds %d points", pages, p.points())
			}
			for _, d := range p.Data {
				if seen[d.Subject.ID] {
					t.Fatalf("%s answered twice", d.Subject.ID)
				}
				seen[d.Subject.ID] = true
			}
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		if len(seen) != len(mons) {
			t.Fatalf("the pages answered %d of %d monitors", len(seen), len(mons))
		}

		p, r := listPage(t, e, k, "window=90d&resolution=day&limit=100")
		if r.status != 200 || len(p.Data) != 100 || p.NextCursor != nil || p.points() != 100*92 {
			t.Fatalf("90 days by day: %d, %d subjects, %d points, nextCursor %v", r.status, len(p.Data), p.points(), p.NextCursor)
		}
		m := getMetrics(t, e, "/api/v1/monitors/"+mons[0]+"/metrics?window=90d&resolution=hour", k)
		if len(m.Series) != 90*24 {
			t.Fatalf("one monitor by hour over 90 days: %d buckets", len(m.Series))
		}
	})
}

// TestMetricsOneSubjectOverBudget: with a budget of 1,000 points, one
// monitor by hour over 90 days (2,161 points) is a 422 naming
// query.resolution, alone or in the listing; by day it is answered, and
// the listing by day answers the subjects that fit, with nextCursor.
func TestMetricsOneSubjectOverBudget(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newEnvWith(t, eng, app.Config{MetricsPointsPerResponse: 1000})
			e.clock.Set(budgetNow)
			mons := seedHistory(t, e, e.wsA.ID, 40, 1, 91, budgetNow)
			k := e.ownerKey()
			for _, path := range []string{"/api/v1/monitors/" + mons[0] + "/metrics?window=90d&resolution=hour", "/api/v1/metrics?window=90d&resolution=hour"} {
				r := e.req("GET", path, k, nil)
				if r.status != 422 || r.code(t) != "validation_error" || !strings.Contains(string(r.body), `"parameter":"query.resolution"`) ||
					!strings.Contains(string(r.body), "2161 points") {
					t.Errorf("%s: %d %s", path, r.status, r.body)
				}
			}
			if m := getMetrics(t, e, "/api/v1/monitors/"+mons[0]+"/metrics?window=90d&resolution=day", k); len(m.Series) != 91 {
				t.Errorf("by day: %d buckets", len(m.Series))
			}
			p, r := listPage(t, e, k, "window=30d&resolution=day&limit=100")
			if r.status != 200 || len(p.Data) != 1000/32 || p.NextCursor == nil || p.points() > 1000 {
				t.Fatalf("listing by day: %d, %d subjects (want %d), %d points, nextCursor %v", r.status, len(p.Data), 1000/32, p.points(), p.NextCursor)
			}
		})
	}
}

// TestMetricsPointsPerMinute: a key spends at most 60,000 points a minute
// (the clock is frozen): six listings of 100 monitors by day over 90 days
// (9,200 points each) pass, the seventh is a 429 rate_limited whose
// Retry-After is when it fits, while the request limit's headers go on
// describing requests; other requests of the key, and other keys, pass;
// once Retry-After has passed, it does too. On PostgreSQL, two servers
// share the budget.
func TestMetricsPointsPerMinute(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		e.clock.Set(budgetNow)
		seedHistory(t, e, e.wsA.ID, 100, 0, 91, budgetNow)
		const q = "window=90d&resolution=day&limit=100"
		const cost = 100 * 92
		spend := func(srvs []*env, k string) response {
			t.Helper()
			for i := range app.MetricsPointsPerMinute / cost {
				if p, r := listPage(t, srvs[i%len(srvs)], k, q); r.status != 200 || p.points() != cost {
					t.Fatalf("listing %d: %d, %d points: %.300s", i+1, r.status, p.points(), r.body)
				}
			}
			return srvs[0].req("GET", "/api/v1/metrics?"+q, k, nil)
		}
		k := e.ownerKey()
		r := spend([]*env{e}, k)
		if r.status != 429 || r.code(t) != "rate_limited" || !strings.Contains(string(r.body), "points") {
			t.Fatalf("listing past the budget: %d %s", r.status, r.body)
		}
		// 6 × 9,200 points spent of 60,000: the next 9,200 fit once 4,400
		// have drained, at 1,000 a second.
		if r.header.Get("Retry-After") != "5" {
			t.Errorf("Retry-After %q, want 5", r.header.Get("Retry-After"))
		}
		if r.header.Get("X-RateLimit-Limit") != "600" || r.header.Get("X-RateLimit-Remaining") != "593" {
			t.Errorf("request limit headers: %s of %s", r.header.Get("X-RateLimit-Remaining"), r.header.Get("X-RateLimit-Limit"))
		}
		if r := e.req("GET", "/api/v1/monitors?limit=1", k, nil); r.status != 200 {
			t.Errorf("the key's other requests: %d", r.status)
		}
		if _, r := listPage(t, e, e.ownerKey(), q); r.status != 200 {
			t.Errorf("another key: %d", r.status)
		}
		e.clock.Set(budgetNow.Add(4 * time.Second))
		if _, r := listPage(t, e, k, q); r.status != 429 {
			t.Errorf("before Retry-After: %d", r.status)
		}
		e.clock.Set(budgetNow.Add(5 * time.Second))
		if _, r := listPage(t, e, k, q); r.status != 200 {
			t.Errorf("after Retry-After: %d %s", r.status, r.body)
		}

		if e.db.Engine() != store.EnginePostgres {
			return // SQLite serves one node
		}
		e.clock.Set(budgetNow.Add(time.Hour))
		if r := spend([]*env{e, e.twin()}, e.ownerKey()); r.status != 429 {
			t.Errorf("past the budget two servers share: %d", r.status)
		}
	})
}

// TestAPICompression: an answer of 1 KiB or more is gzipped for a client
// whose Accept-Encoding takes gzip, and is then the same answer; it is
// sent as it is without Accept-Encoding, with gzip refused (q=0), and
// when small; every answer varies by Accept-Encoding.
func TestAPICompression(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		e.clock.Set(budgetNow)
		mons := seedHistory(t, e, e.wsA.ID, 20, 0, 91, budgetNow)
		k := e.ownerKey()
		// A client that shows the answer as sent: Go's transport would ask
		// for gzip itself and hide it.
		client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
		get := func(path, accept string) (*http.Response, []byte, int) {
			t.Helper()
			req, err := http.NewRequest("GET", e.srv.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+k)
			if accept != "" {
				req.Header.Set("Accept-Encoding", accept)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			sent := len(b)
			if resp.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("%s (%s): not gzip: %v", path, accept, err)
				}
				if b, err = io.ReadAll(zr); err != nil {
					t.Fatalf("%s (%s): %v", path, accept, err)
				}
			}
			if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("%s (%s): Vary %q", path, accept, resp.Header.Get("Vary"))
			}
			e.validate(t, req, nil, resp, b)
			return resp, b, sent
		}
		const large = "/api/v1/metrics?window=90d&resolution=day"
		plain, want, _ := get(large, "")
		if plain.StatusCode != 200 || plain.Header.Get("Content-Encoding") != "" || len(want) < 100<<10 {
			t.Fatalf("without Accept-Encoding: %d, Content-Encoding %q, %d bytes", plain.StatusCode, plain.Header.Get("Content-Encoding"), len(want))
		}
		for accept, gzipped := range map[string]bool{"gzip": true, "br, gzip;q=0.5": true, "*": true, "GZIP": true,
			"identity": false, "gzip;q=0": false, "br": false} {
			resp, got, sent := get(large, accept)
			if enc := resp.Header.Get("Content-Encoding"); (enc == "gzip") != gzipped || resp.StatusCode != 200 || !bytes.Equal(got, want) {
				t.Errorf("Accept-Encoding %q: %d, Content-Encoding %q, the same answer: %v", accept, resp.StatusCode, enc, bytes.Equal(got, want))
			}
			// JSON of figures shrinks many times over.
			if gzipped && sent*10 > len(want) {
				t.Errorf("Accept-Encoding %q: %d bytes sent for %d", accept, sent, len(want))
			}
		}
		small, b, _ := get("/api/v1/monitors/"+mons[0], "gzip")
		if small.StatusCode != 200 || small.Header.Get("Content-Encoding") != "" || len(b) >= 1<<10 {
			t.Errorf("a small answer: %d, Content-Encoding %q, %d bytes", small.StatusCode, small.Header.Get("Content-Encoding"), len(b))
		}
	})
}
