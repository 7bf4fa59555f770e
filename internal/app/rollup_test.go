package app

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// TestRollupsEqualRaw: the figures of random windows and series are the
// same read from raw rows and from the rollups that replace them, on both
// engines; rolling up again changes nothing; and raw rows go only once
// rolled up, after which hour-aligned windows still answer the same.
func TestRollupsEqualRaw(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) { testRollupsEqualRaw(t, e) })
	}
}

func testRollupsEqualRaw(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	start := time.Date(2026, 4, 6, 0, 0, 0, 0, time.UTC)
	now := start
	a := New(db, nil, func() time.Time { return now }, slog.New(slog.DiscardHandler), Config{RetentionDays: 30})
	w := addWorkspace(t, db, "rollups")
	rng := rand.New(rand.NewPCG(17, 4))

	// Three monitors with a check every 5 minutes for three days, random
	// results and latencies, and a heartbeat pinging irregularly.
	var subjects []metricsSubject
	for i := range 3 {
		m := addMonitor(t, db, w.ID, monitor.Config{})
		subjects = append(subjects, metricsSubject{id: m.ID, kind: KindMonitor, name: m.Name, created: m.CreatedAt, state: m.State})
		seqs, err := db.SubjectSeqsOf(ctx, []string{m.ID})
		check(t, err)
		var batch []monitor.Completed
		for at := start.Add(time.Duration(i) * time.Minute); at.Before(start.Add(72 * time.Hour)); at = at.Add(5 * time.Minute) {
			r := monitor.Results[rng.IntN(len(monitor.Results))]
			lat := time.Duration(rng.ExpFloat64()*float64(200*time.Millisecond)) + time.Millisecond
			batch = append(batch, monitor.Completed{Seq: seqs[m.ID], Observation: monitor.Observation{MonitorID: m.ID,
				StartedAt: at, Due: at, Result: r, Latency: lat.Round(time.Microsecond), Probe: "p", Region: "r"}})
		}
		_, err = a.RecordChecks(ctx, "elsewhere", batch)
		check(t, err)
	}
	h := newHeartbeat(t, db, w.ID, start, 600, 60, 0)
	subjects = append(subjects, metricsSubject{id: h.ID, kind: KindHeartbeat, name: h.Name, created: h.CreatedAt, state: h.Runtime.State})
	var pings []heartbeat.Arrival
	for at := start.Add(time.Minute); at.Before(start.Add(72 * time.Hour)); at = at.Add(time.Duration(1+rng.IntN(40)) * time.Minute) {
		sig := []heartbeat.Signal{heartbeat.SignalStart, heartbeat.SignalSuccess, heartbeat.SignalFail}[rng.IntN(3)]
		pings = append(pings, ping(h.Token, sig, at, "", ""))
	}
	_, _, err := newApp(db).RecordPings(ctx, pings)
	check(t, err)

	now = start.Add(74 * time.Hour)
	type query struct {
		req  MetricsRequest
		name string
	}
	span := func(f, to time.Time, res metrics.Resolution, tz string) query {
		return query{MetricsRequest{From: &f, To: &to, Resolution: res, TZ: tz}, fmt.Sprintf("%s–%s %s %s", f.Format(time.RFC3339), to.Format(time.RFC3339), res, tz)}
	}
	var queries, aligned []query
	for range 12 {
		f := start.Add(time.Duration(rng.Int64N(int64(60 * time.Hour)))).Truncate(time.Second)
		to := f.Add(time.Duration(rng.Int64N(int64(20*time.Hour))) + time.Minute).Truncate(time.Second)
		res := []metrics.Resolution{"", metrics.Hour, metrics.Day}[rng.IntN(3)]
		tz := ""
		if res == metrics.Day && rng.IntN(2) == 0 {
			tz = "America/New_York"
		}
		queries = append(queries, span(f, to, res, tz))
	}
	queries = append(queries, span(start.Add(-24*time.Hour), now, metrics.Day, ""), span(start.Add(-24*time.Hour), now, "", ""))
	aligned = append(aligned, span(start, start.Add(72*time.Hour), metrics.Day, ""), span(start.Add(3*time.Hour), start.Add(50*time.Hour), metrics.Hour, ""),
		span(start.Add(-48*time.Hour), now, "", ""))
	answer := func(qs []query) map[string][]SubjectMetrics {
		out := map[string][]SubjectMetrics{}
		for _, q := range qs {
			sp, err := a.metricsSpan(q.req)
			check(t, err)
			got, err := a.subjectMetrics(ctx, w.ID, append([]metricsSubject(nil), subjects...), sp)
			check(t, err)
			out[q.name] = got
		}
		return out
	}
	raw := answer(append(queries, aligned...))

	// Roll up until caught up: the hours and days of the last 30 days.
	rounds := 0
	for {
		n, err := a.Rollup(ctx, "node-a")
		check(t, err)
		if n == 0 {
			break
		}
		if rounds++; rounds > 200 {
			t.Fatal("rollups never caught up")
		}
	}
	progress, err := db.RollupProgress(ctx)
	check(t, err)
	wantHour := now.Add(-RollupSettle).Truncate(time.Hour)
	if !progress[rollupObservationsHour].Equal(wantHour) || !progress[rollupPingsHour].Equal(wantHour) ||
		!progress[rollupObservationsDay].Equal(wantHour.Truncate(24*time.Hour)) {
		t.Fatalf("progress %v; want hours up to %v and days up to its day", progress, wantHour)
	}
	compare := func(when string, want map[string][]SubjectMetrics, qs []query) {
		t.Helper()
		got := answer(qs)
		for _, q := range qs {
			for i := range want[q.name] {
				sameFigures(t, when+" "+q.name+" "+subjects[i].kind, got[q.name][i], want[q.name][i])
			}
		}
	}
	compare("rolled up", raw, append(queries, aligned...))

	// Once more, on another node: nothing to do, nothing changes.
	if n, err := a.Rollup(ctx, "node-b"); err != nil || n != 0 {
		t.Fatalf("a second round wrote %d buckets (%v)", n, err)
	}

	// Raw rows older than a day go, once rolled up; hour-aligned windows
	// answer the same from the rollups alone.
	a.cfg.RetentionDays = 1
	check(t, a.Housekeeping(ctx))
	var left int
	check(t, db.EachObservation(ctx, []int64{1, 2, 3}, start, now, func(store.ObservationPoint) error { left++; return nil }))
	if left == 0 || left >= 3*72*12 {
		t.Fatalf("%d observations left after housekeeping", left)
	}
	compare("raw deleted", raw, aligned)
}

// sameFigures requires two answers to agree: durations and counts
// exactly, latencies to the last bit (merged sketches are the sketch of
// the merged data).
func sameFigures(t *testing.T, what string, got, want SubjectMetrics) {
	t.Helper()
	eq := func(part string, g, w Figures) {
		if g.Durations != w.Durations || ratiosText(g.Ratios) != ratiosText(w.Ratios) {
			t.Errorf("%s %s: durations %+v, want %+v", what, part, g.Durations, w.Durations)
		}
		if fmt.Sprint(deref(g.Checks), deref(g.Pings)) != fmt.Sprint(deref(w.Checks), deref(w.Pings)) {
			t.Errorf("%s %s: counts %+v %+v, want %+v %+v", what, part, deref(g.Checks), deref(g.Pings), deref(w.Checks), deref(w.Pings))
		}
		for _, l := range [][2]*metrics.LatencySummary{{g.Latency, w.Latency}, {g.Runs, w.Runs}} {
			if summaryText(l[0]) != summaryText(l[1]) {
				t.Errorf("%s %s: latency %s, want %s", what, part, summaryText(l[0]), summaryText(l[1]))
			}
		}
	}
	eq("window", got.Figures, want.Figures)
	if len(got.Series) != len(want.Series) {
		t.Fatalf("%s: %d buckets, want %d", what, len(got.Series), len(want.Series))
	}
	for i := range got.Series {
		eq(fmt.Sprint("bucket ", i), got.Series[i].Figures, want.Series[i].Figures)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func summaryText(s *metrics.LatencySummary) string {
	if s == nil {
		return "none"
	}
	f := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.6f", *p)
	}
	return fmt.Sprintf("p50 %s p90 %s p95 %s p99 %s min %s max %s mean %s", f(s.P50), f(s.P90), f(s.P95), f(s.P99), f(s.Min), f(s.Max), f(s.Mean))
}

func ratiosText(r metrics.Ratios) string {
	return fmt.Sprint(deref(r.Availability), deref(r.UnadjustedAvailability), deref(r.Coverage))
}
