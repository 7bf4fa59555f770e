package store_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// TestMetricsReads: what the metrics read and write, on both engines:
// observations and pings point by point over a span, rollup rows written
// twice leaving them as once, state histories with the change before the
// window, and a rollup's turn held by one node at a time.
func TestMetricsReads(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := storetest.OpenDB(t, e)
			_, w := seed(t, db, "metrics")
			var ms []monitor.Monitor
			for range 3 {
				ms = append(ms, addMonitor(t, db, w.ID, monitor.Config{}))
			}
			claimed, err := db.ClaimDue(ctx, "n", t0, t0.Add(time.Hour), time.Hour, 10)
			check(t, err)
			seqOf := map[string]int64{}
			var batch []monitor.Completed
			for _, c := range claimed {
				seqOf[c.Monitor.ID] = c.Seq
				for k := range 120 { // two hours, one a minute
					at := t0.Add(time.Duration(k) * time.Minute)
					r := monitor.ResultUp
					if k%10 == 9 {
						r = monitor.ResultDown
					}
					batch = append(batch, monitor.Completed{Seq: c.Seq, Observation: monitor.Observation{MonitorID: c.Monitor.ID,
						StartedAt: at, Due: at, Result: r, Latency: time.Duration(k+1) * time.Millisecond, Probe: "p"}})
				}
			}
			_, err = recordChecks(db, "n", batch)
			check(t, err)
			seqs := []int64{seqOf[ms[0].ID], seqOf[ms[2].ID]}
			slices.Sort(seqs)

			// The second hour of two of the three monitors.
			var got []store.ObservationPoint
			check(t, db.EachObservation(ctx, seqs, t0.Add(time.Hour), t0.Add(2*time.Hour), func(p store.ObservationPoint) error {
				got = append(got, p)
				return nil
			}))
			if len(got) != 120 || got[0].Seq != seqs[0] || got[60].Seq != seqs[1] || !got[0].At.Equal(t0.Add(time.Hour)) ||
				got[0].Latency != 61*time.Millisecond || got[9].Result != monitor.ResultDown {
				t.Fatalf("%d points; first %+v", len(got), got[0])
			}
			for i := 1; i < len(got); i++ {
				if got[i].Seq == got[i-1].Seq && !got[i].At.After(got[i-1].At) {
					t.Fatalf("point %d out of order: %+v after %+v", i, got[i], got[i-1])
				}
			}

			// Rollups: written twice, the second replaces the first.
			row := func(seq int64, h int, up int64) store.ObservationRollup {
				return store.ObservationRollup{Seq: seq, Bucket: t0.Add(time.Duration(h) * time.Hour), Up: up, Degraded: 1,
					Down: 2, Unknown: 3, Latency: []byte{byte(up), 0, 0xff}}
			}
			check(t, db.PutObservationRollups(ctx, store.TierHour, []store.ObservationRollup{row(seqs[0], 0, 5), row(seqs[0], 1, 6), row(seqs[1], 0, 7)}))
			check(t, db.PutObservationRollups(ctx, store.TierHour, []store.ObservationRollup{row(seqs[0], 1, 9)}))
			check(t, db.PutObservationRollups(ctx, store.TierDay, []store.ObservationRollup{row(seqs[0], 0, 100)}))
			var rolled []store.ObservationRollup
			check(t, db.EachObservationRollup(ctx, store.TierHour, seqs, t0, t0.Add(24*time.Hour), func(r store.ObservationRollup) error {
				rolled = append(rolled, r)
				return nil
			}))
			want := []store.ObservationRollup{row(seqs[0], 0, 5), row(seqs[0], 1, 9), row(seqs[1], 0, 7)}
			if len(rolled) != len(want) {
				t.Fatalf("rollups %+v, want %+v", rolled, want)
			}
			for i := range want {
				if r := rolled[i]; r.Seq != want[i].Seq || !r.Bucket.Equal(want[i].Bucket) || r.Up != want[i].Up || r.Unknown != 3 ||
					string(r.Latency) != string(want[i].Latency) {
					t.Errorf("rollup %d: %+v, want %+v", i, r, want[i])
				}
			}

			// State history: the change before the window gives the state at
			// its start; a backdated change (inserted later) sorts by time.
			sub := ms[1].ID
			check(t, db.InTx(ctx, func(tx *store.Tx) error {
				for _, tr := range []monitor.Transition{
					{From: monitor.StatePending, To: monitor.StateUp, At: t0.Add(time.Minute), Cause: "a"},
					{From: monitor.StateUp, To: monitor.StateDown, At: t0.Add(3 * time.Hour), Cause: "c"},
					{From: monitor.StateUp, To: monitor.StateUnknown, At: t0.Add(2 * time.Hour), Cause: "b"},
				} {
					if err := tx.AppendStateChange(ctx, sub, tr); err != nil {
						return err
					}
				}
				return nil
			}))
			hs, err := db.StateHistories(ctx, []string{sub, ms[0].ID}, t0.Add(time.Hour), t0.Add(4*time.Hour))
			check(t, err)
			h := hs[sub]
			if h == nil || h.Before == nil || *h.Before != monitor.StateUp || len(h.Changes) != 2 ||
				h.Changes[0].Cause != "b" || h.Changes[1].Cause != "c" {
				t.Fatalf("history %+v", h)
			}
			if hs[ms[0].ID] != nil && len(hs[ms[0].ID].Changes) > 0 {
				t.Errorf("a monitor without changes in the window has %+v", hs[ms[0].ID])
			}

			// A rollup's turn: one node at a time, passed on when the lease lapses.
			done, ok, err := db.TakeRollupTurn(ctx, "observations/hour", "a", t0, time.Minute, t0.Add(-time.Hour))
			check(t, err)
			if !ok || !done.Equal(t0.Add(-time.Hour)) {
				t.Fatalf("first turn: %v %v", done, ok)
			}
			if _, ok, err := db.TakeRollupTurn(ctx, "observations/hour", "b", t0.Add(30*time.Second), time.Minute, t0); err != nil || ok {
				t.Fatalf("b took a held turn: %v %v", ok, err)
			}
			if ok, err := db.AdvanceRollup(ctx, "observations/hour", "a", t0); err != nil || !ok {
				t.Fatalf("a advancing: %v %v", ok, err)
			}
			done, ok, err = db.TakeRollupTurn(ctx, "observations/hour", "b", t0.Add(2*time.Minute), time.Minute, t0)
			check(t, err)
			if !ok || !done.Equal(t0) {
				t.Fatalf("b after a's lease lapsed: %v %v", done, ok)
			}
			if ok, err := db.AdvanceRollup(ctx, "observations/hour", "a", t0.Add(time.Hour)); err != nil || ok {
				t.Fatalf("a advanced a turn it lost: %v %v", ok, err)
			}
			check(t, db.EndRollupTurn(ctx, "observations/hour", "b"))
			progress, err := db.RollupProgress(ctx)
			check(t, err)
			if !progress["observations/hour"].Equal(t0) {
				t.Fatalf("progress %v", progress)
			}
		})
	}
}

// TestEachPing: pings read back point by point over a span, with run
// durations on the ends of started runs, on both engines.
func TestEachPing(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := openWithWorkflow(t, e)
			_, w := seed(t, db, "pingpoints")
			hb := newHeartbeat(t, db, w.ID, t0, 60, 10, 0)
			var batch []heartbeat.Arrival
			for k := range 6 {
				sig := heartbeat.SignalSuccess
				switch k % 3 {
				case 0:
					sig = heartbeat.SignalStart
				case 2:
					sig = heartbeat.SignalFail
				}
				batch = append(batch, ping(hb.Token, sig, t0.Add(time.Duration(k)*time.Minute), "", fmt.Sprint("r", k/3)))
			}
			_, _, err := recordPings(db, batch)
			check(t, err)
			seqs, err := db.SubjectSeqs(ctx, true, 0, 10)
			check(t, err)
			var got []store.PingPoint
			check(t, db.EachPing(ctx, seqs, t0.Add(time.Minute), t0.Add(5*time.Minute), func(p store.PingPoint) error {
				got = append(got, p)
				return nil
			}))
			if len(got) != 4 || got[0].Signal != heartbeat.SignalSuccess || got[0].RunDuration != time.Minute ||
				got[1].Signal != heartbeat.SignalFail || got[2].Signal != heartbeat.SignalStart || got[2].RunDuration >= 0 {
				t.Fatalf("pings %+v", got)
			}
		})
	}
}

// TestPackHours: a day's hourly rollups packed into one row (PostgreSQL;
// SQLite keeps them) read back as the same hours, on both engines; the
// hourly rows are gone; packing again, with an hourly row a late writer
// left, merges it; the packed days go with the hourly tier's retention.
func TestPackHours(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := storetest.OpenDB(t, e)
			_, w := seed(t, db, "pack")
			var seqs []int64
			for range 2 {
				addMonitor(t, db, w.ID, monitor.Config{})
			}
			seqs, err := db.SubjectSeqs(ctx, false, 0, 10)
			check(t, err)
			d := t0.Truncate(24 * time.Hour)
			row := func(seq int64, h int, up int64) store.ObservationRollup {
				return store.ObservationRollup{Seq: seq, Bucket: d.Add(time.Duration(h) * time.Hour), Up: up, Degraded: int64(h),
					Down: 1, Unknown: 2, Latency: bytes.Repeat([]byte{byte(h)}, h)}
			}
			var rows []store.ObservationRollup
			for _, s := range seqs {
				for h := range 25 { // a day and the next day's first hour
					rows = append(rows, row(s, h, s*100+int64(h)))
				}
			}
			check(t, db.PutObservationRollups(ctx, store.TierHour, rows))
			read := func(from, to time.Time) []store.ObservationRollup {
				t.Helper()
				var got []store.ObservationRollup
				check(t, db.EachObservationRollup(ctx, store.TierHour, seqs, from, to, func(r store.ObservationRollup) error {
					got = append(got, r)
					return nil
				}))
				slices.SortFunc(got, func(a, b store.ObservationRollup) int {
					if a.Seq != b.Seq {
						return int(a.Seq - b.Seq)
					}
					return a.Bucket.Compare(b.Bucket)
				})
				return got
			}
			same := func(what string, got, want []store.ObservationRollup) {
				t.Helper()
				if len(got) != len(want) {
					t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
				}
				for i := range want {
					g, w := got[i], want[i]
					if g.Seq != w.Seq || !g.Bucket.Equal(w.Bucket) || g.Up != w.Up || g.Degraded != w.Degraded || g.Down != w.Down ||
						g.Unknown != w.Unknown || !bytes.Equal(g.Latency, w.Latency) {
						t.Fatalf("%s: row %d %+v, want %+v", what, i, g, w)
					}
				}
			}
			from, to := d.Add(3*time.Hour), d.Add(25*time.Hour)
			before := read(from, to)
			check(t, db.PackHours(ctx, false, seqs, d))
			same("packed", read(from, to), before)
			var hourly int
			check(t, db.InSQLTx(ctx, func(tx *sql.Tx) error {
				return tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM observation_rollups WHERE tier = 1`).Scan(&hourly)
			}))
			packs := e.Name == store.EnginePostgres
			if want := map[bool]int{true: 2, false: 50}[packs]; hourly != want { // packed: the next day's first hours
				t.Fatalf("%d hourly rows left, want %d", hourly, want)
			}
			// A late writer rewrites hour 5 of the packed day: readers keep
			// the packed hour until the day is packed again, which takes it.
			late := row(seqs[0], 5, 999)
			check(t, db.PutObservationRollups(ctx, store.TierHour, []store.ObservationRollup{late}))
			want := slices.Clone(before)
			for i := range want {
				if want[i].Seq == late.Seq && want[i].Bucket.Equal(late.Bucket) {
					want[i] = late
				}
			}
			if packs {
				same("a stray hourly row", read(from, to), before)
			} else {
				same("an hourly row rewritten", read(from, to), want)
			}
			check(t, db.PackHours(ctx, false, seqs, d))
			same("packed again", read(from, to), want)
			// Retention: the packed day goes with the hourly tier.
			check(t, db.DeleteRollupsBefore(ctx, store.TierHour, d.Add(24*time.Hour)))
			same("after retention", read(d, d.Add(48*time.Hour)), read(d.Add(24*time.Hour), d.Add(48*time.Hour)))
			if got := read(d, d.Add(24*time.Hour)); len(got) != 0 {
				t.Fatalf("%d rows of the expired day", len(got))
			}
		})
	}
}
