package httpapi_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// seedHistory makes n paused monitors in the workspace wsID, created days
// before now (a whole UTC hour), with the checks of one a minute rolled
// up: every UTC day before today into a daily rollup, today's hours, and
// for the first hourly of them every hour since their creation, into
// hourly ones; and it marks both rollups done up to now. That is what a
// workspace's history looks like to the metrics after months of service,
// for queries by day over any window and by hour over the first hourly
// monitors. It returns the monitors' ids.
func seedHistory(t testing.TB, e *env, wsID string, n, hourly, days int, now time.Time) []string {
	t.Helper()
	ctx := context.Background()
	today := now.Truncate(24 * time.Hour)
	created := today.AddDate(0, 0, -days)
	out := make([]string, n)
	for i := range out {
		id := ids.New(ids.Monitor, created.Add(time.Duration(i)*time.Millisecond))
		m := monitor.Monitor{ID: id, WorkspaceID: wsID, Type: monitor.TypeTCP, Name: fmt.Sprintf("svc-%03d", i),
			Config: monitor.Config{Host: "svc.example", Port: 443, TimeoutSeconds: 10}, IntervalSeconds: 60, Paused: true,
			State: monitor.StateUp, StateSince: created, CreatedAt: created, UpdatedAt: created}
		if err := e.db.CreateMonitor(ctx, m, store.Sealed{}, n+1); err != nil {
			t.Fatal(err)
		}
		out[i] = id
	}
	seqOf, err := e.db.SubjectSeqsOf(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	var hours, daily []store.ObservationRollup
	hour, day := rollupRow(60), rollupRow(60*24)
	for i, id := range out {
		from := today
		if i < hourly {
			from = created
		}
		for h := from; h.Before(now); h = h.Add(time.Hour) {
			r := hour
			r.Seq, r.Bucket = seqOf[id], h
			hours = append(hours, r)
		}
		for d := created; d.Before(today); d = d.Add(24 * time.Hour) {
			r := day
			r.Seq, r.Bucket = seqOf[id], d
			daily = append(daily, r)
		}
	}
	for tier, rows := range map[int][]store.ObservationRollup{store.TierHour: hours, store.TierDay: daily} {
		for s := 0; s < len(rows); s += 500 {
			if err := e.db.PutObservationRollups(ctx, tier, rows[s:min(s+500, len(rows))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, done := range map[string]time.Time{"observations/hour": now, "observations/day": now.Truncate(24 * time.Hour)} {
		if _, ok, err := e.db.TakeRollupTurn(ctx, name, "seed", now, time.Minute, done); err != nil || !ok {
			t.Fatalf("rollup progress %s: %v %v", name, ok, err)
		}
		if err := e.db.EndRollupTurn(ctx, name, "seed"); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// rollupRow is a rollup of n checks up, with latencies of 40 to 80 ms.
func rollupRow(n int) store.ObservationRollup {
	l := metrics.NewLatency()
	for i := range n {
		l.Add(time.Duration(40+i%41) * time.Millisecond)
	}
	return store.ObservationRollup{Up: int64(n), Latency: l.Encode()}
}
