package checks

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/internal/monitor"
)

// TestAnalyzeWindow stores observations of known slots in a real SQLite
// database and checks what the window analysis makes of them: a missing
// slot, a duplicate, a check off its slot, a missed start, and an
// observation of the slot before the window.
func TestAnalyzeWindow(t *testing.T) {
	ctx := context.Background()
	const interval = 10 * time.Second
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	db, err := seed.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ws, err := seed.Workspace(ctx, db, "bench", 3)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	monitors, _, err := seed.WriteMonitors(ctx, db, seed.Monitors{Workspace: ws, Count: 3, Created: now.Add(-seed.Day), Now: now,
		Target: "http://127.0.0.1:1", Interval: int(interval / time.Second), Name: func(i int) string { return fmt.Sprint(i) },
		Quota: 3, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	var ts []monitorURL
	for _, id := range monitors {
		ts = append(ts, monitorURL{ID: id})
	}
	raw, err := seed.OpenRaw(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	from := time.Unix(1_800_000_000, 0)
	to := from.Add(3 * interval)
	seq := func(id string) int64 {
		var s int64
		if err := raw.QueryRow(`SELECT seq FROM monitor_runtime WHERE monitor_id = $1`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// slot i of monitor m: i = -1 is the slot before the window.
	slot := func(m, i int) time.Time {
		return monitor.NextSlot(ts[m].ID, interval, from.Add(-time.Nanosecond)).Add(time.Duration(i) * interval)
	}
	started := 0 // observations that started in the window
	observe := func(m int, due time.Time, lag time.Duration, result int, reason any) {
		t.Helper()
		at := due.Add(lag)
		if !at.Before(from) && at.Before(to) {
			started++
		}
		if _, err := raw.Exec(`INSERT INTO observations (monitor_seq, at, result, latency_us, lag_us, probe, reason)
			VALUES ($1, $2, $3, 100, $4, 1, $5)`, seq(ts[m].ID), at.UnixMicro(), result, lag.Microseconds(), reason); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		observe(0, slot(0, i), time.Duration(i+1)*time.Millisecond, 1, nil)
	}
	observe(1, slot(1, -1), time.Millisecond, 1, nil) // before the window
	observe(1, slot(1, 0), time.Millisecond, 1, nil)
	observe(1, slot(1, 1), time.Millisecond, 1, nil)
	observe(1, slot(1, 1), 2*time.Millisecond, 1, nil) // duplicate; slot 2 missing
	// Missed by more than an interval: the reason names the gap.
	observe(2, slot(2, 0), 15*time.Second, 4, monitor.GapCause(slot(2, 0), slot(2, 0).Add(15*time.Second)))
	observe(2, slot(2, 1).Add(5*time.Millisecond), time.Millisecond, 1, nil) // off its slot
	observe(2, slot(2, 2), 40*time.Millisecond, 3, "status 500")

	w, err := analyze(ctx, raw, ts, interval, from, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{{"due", w.Due, 9}, {"done", w.Done, 8}, {"missing", w.Missing, 1}, {"duplicates", w.Duplicates, 1},
		{"missed start", w.MissedStart, 1}, {"lags", w.Lag.N, 9}, {"started", w.Started, started}, {"max lag", int(w.Lag.Max), int(15 * time.Second)}} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}
