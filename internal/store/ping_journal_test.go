package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// The SQLite journal: acknowledged pings wait in it, the tables catch up
// behind, and nothing another writer does or a crash can lose one or
// change what it was acknowledged as. The same assertions run on
// PostgreSQL, which writes pings directly.
func TestPingJournal(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Run("Crash", func(t *testing.T) { testJournalCrash(t, e) })
			t.Run("Edits", func(t *testing.T) { testJournalEdits(t, e) })
			t.Run("Sweep", func(t *testing.T) { testJournalSweep(t, e) })
			t.Run("SecondProcess", func(t *testing.T) { testJournalSecondProcess(t, e) })
		})
	}
}

func record(t *testing.T, db *store.DB, pings ...heartbeat.Arrival) []heartbeat.Outcome {
	t.Helper()
	outs, _, err := db.RecordPings(ctx, pings)
	check(t, err)
	return outs
}

// A process killed with pings in its journal: after a restart every
// acknowledged ping is listed once, runs pair across the crash as they
// did before it, a retried key is still a replay, and new pings number
// after the old ones.
func testJournalCrash(t *testing.T, e storetest.Engine) {
	u := storetest.URL(t, e)
	db, err := store.Open(ctx, u)
	check(t, err)
	_, w := seed(t, db, "acme")
	h := newHeartbeat(t, db, w.ID, t0, 60, 10, 0)
	outs := record(t, db,
		ping(h.Token, heartbeat.SignalStart, t0.Add(time.Second), "", "r1"),
		ping(h.Token, heartbeat.SignalSuccess, t0.Add(2*time.Second), "k1", ""))
	if outs[1].Ack.DurationUs != time.Second.Microseconds() {
		t.Fatalf("completion acknowledged with %+v, want a 1 s run", outs[1].Ack)
	}
	outs = record(t, db, ping(h.Token, heartbeat.SignalStart, t0.Add(3*time.Second), "", "r2"))

	if e.Name == store.EngineSQLite && db.PendingPings() != 3 {
		t.Fatalf("%d pings pending in the journal, want 3 (none applied yet)", db.PendingPings())
	}
	db.Abandon()

	db, err = store.Open(ctx, u)
	check(t, err)
	t.Cleanup(func() { db.Close() })
	pings, err := db.ListPings(ctx, w.ID, h.ID, store.PingQuery{Limit: 10})
	check(t, err)
	if len(pings) != 3 {
		t.Fatalf("after the restart %d pings listed, want 3: %+v", len(pings), pings)
	}
	if pings[0].RunID != "r2" || pings[1].Key != "k1" || pings[1].Duration != time.Second || pings[2].RunID != "r1" {
		t.Errorf("pings after the restart, newest first: %+v", pings)
	}
	got := getHeartbeat(t, db, w.ID, h.ID).Runtime
	if got.State != monitor.StateUp || !got.LastPing.Equal(t0.Add(3*time.Second)) || len(got.Open) != 1 || got.Open[0].ID != "r2" {
		t.Errorf("runtime after the restart: %+v", got)
	}
	// The retry of k1 is a replay; r2 ends with its duration; ids grow.
	outs = record(t, db,
		ping(h.Token, heartbeat.SignalSuccess, t0.Add(4*time.Second), "k1", ""),
		ping(h.Token, heartbeat.SignalSuccess, t0.Add(5*time.Second), "", "r2"))
	if !outs[0].Replayed || outs[1].Replayed || outs[1].Ack.DurationUs != 2*time.Second.Microseconds() {
		t.Errorf("after the restart: %+v", outs)
	}
	pings, err = db.ListPings(ctx, w.ID, h.ID, store.PingQuery{Limit: 10})
	check(t, err)
	if len(pings) != 4 || pings[0].ID <= pings[1].ID || pings[0].Duration != 2*time.Second {
		t.Errorf("pings: %+v", pings)
	}

}

// Pause, edit, rotate and delete see every acknowledged ping first, and
// pings after them see what they did.
func testJournalEdits(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	h := newHeartbeat(t, db, w.ID, t0, 60, 10, 0)
	record(t, db, ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Second), "", ""))
	check(t, db.SetHeartbeatPaused(ctx, w.ID, h.ID, true, t0.Add(2*time.Second)))
	states, err := db.ListStateChanges(ctx, w.ID, h.ID, time.Time{}, 10)
	check(t, err)
	if len(states) != 2 || states[0].To != monitor.StatePaused || states[1].To != monitor.StateUp {
		t.Fatalf("state history, newest first: %+v; want UP, then PAUSED", states)
	}
	outs := record(t, db, ping(h.Token, heartbeat.SignalFail, t0.Add(3*time.Second), "", ""))
	if !outs[0].Ack.Ignored {
		t.Errorf("a ping to a paused heartbeat: %+v", outs[0])
	}
	check(t, db.SetHeartbeatPaused(ctx, w.ID, h.ID, false, t0.Add(4*time.Second)))
	got := getHeartbeat(t, db, w.ID, h.ID)
	if got.Runtime.State == monitor.StateDown || !got.Runtime.LastPing.Equal(t0.Add(time.Second)) {
		t.Errorf("the ignored /fail moved the heartbeat: %+v", got.Runtime)
	}

	// Rotating the token: the old URL names nothing from then on.
	old := h.Token
	fresh := heartbeat.NewToken()
	check(t, db.RotateHeartbeatToken(ctx, w.ID, h.ID, heartbeat.HashToken(fresh), []byte("sealed"), t0.Add(5*time.Second)))
	outs = record(t, db,
		ping(old, heartbeat.SignalSuccess, t0.Add(6*time.Second), "", ""),
		ping(fresh, heartbeat.SignalSuccess, t0.Add(7*time.Second), "", ""))
	if outs[0].Found || !outs[1].Found {
		t.Errorf("after rotating: old token %+v, new %+v", outs[0], outs[1])
	}

	// A schedule edit keeps the pending ping's effect.
	cur := getHeartbeat(t, db, w.ID, h.ID)
	record(t, db, ping(fresh, heartbeat.SignalSuccess, t0.Add(8*time.Second), "", ""))
	cur.Schedule.PeriodSeconds, cur.UpdatedAt = 120, t0.Add(9*time.Second)
	prev := getHeartbeat(t, db, w.ID, h.ID).UpdatedAt
	check(t, db.UpdateHeartbeat(ctx, cur, prev))
	got = getHeartbeat(t, db, w.ID, h.ID)
	if !got.Runtime.LastPing.Equal(t0.Add(8*time.Second)) || !got.Runtime.Deadline.Equal(t0.Add(8*time.Second+130*time.Second)) {
		t.Errorf("after the edit: %+v", got.Runtime)
	}

	// Deleting takes the pings, applied or pending, with the heartbeat.
	record(t, db, ping(fresh, heartbeat.SignalSuccess, t0.Add(10*time.Second), "", ""))
	check(t, db.DeleteHeartbeat(ctx, w.ID, h.ID))
	outs = record(t, db, ping(fresh, heartbeat.SignalSuccess, t0.Add(11*time.Second), "", ""))
	if outs[0].Found {
		t.Errorf("a deleted heartbeat took a ping: %+v", outs[0])
	}
	n, err := db.CountPings(ctx)
	check(t, err)
	if n != 0 {
		t.Errorf("%d pings left after the only heartbeat was deleted", n)
	}
}

// A sweep never judges a heartbeat by a row that pending pings have moved
// on from: a job that pinged in time is not late, one that did not is.
func testJournalSweep(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	onTime := newHeartbeat(t, db, w.ID, t0, 60, 0, 0)
	late := newHeartbeat(t, db, w.ID, t0, 60, 0, 0)
	overrun := newHeartbeat(t, db, w.ID, t0, 3600, 0, 5)
	record(t, db,
		ping(onTime.Token, heartbeat.SignalSuccess, t0, "", ""),
		ping(late.Token, heartbeat.SignalSuccess, t0, "", ""),
		ping(overrun.Token, heartbeat.SignalSuccess, t0, "", ""))
	_, _, err := db.SweepHeartbeats(ctx, "n", t0.Add(time.Second), time.Minute, 100) // applies nothing: none due
	check(t, err)
	record(t, db,
		ping(onTime.Token, heartbeat.SignalSuccess, t0.Add(50*time.Second), "", ""),
		ping(overrun.Token, heartbeat.SignalStart, t0.Add(50*time.Second), "", ""))
	var span int64
	for at := t0.Add(-time.Second); !at.After(t0.Add(70 * time.Second)); at = at.Add(5 * time.Second) {
		span, err = db.TouchSpan(ctx, "n", span, at.Add(-5*time.Second), at)
		check(t, err)
	}
	changes, _, err := db.SweepHeartbeats(ctx, "n", t0.Add(70*time.Second), time.Minute, 100)
	check(t, err)
	got := map[string]string{}
	for _, c := range changes {
		got[c.SubjectID] = string(c.To) + ": " + c.Cause
	}
	if _, ok := got[onTime.ID]; ok || len(got) != 2 || !strings.HasPrefix(got[late.ID], "DOWN: late") ||
		!strings.HasPrefix(got[overrun.ID], "DOWN: overrun") {
		t.Errorf("sweep at t0+70s: %v; want the late and the overrunning job DOWN, not the one that pinged at t0+50s", got)
	}
	if s := getHeartbeat(t, db, w.ID, onTime.ID).Runtime; s.State != monitor.StateUp || !s.LastPing.Equal(t0.Add(50*time.Second)) {
		t.Errorf("the job that pinged in time: %+v", s)
	}
}

// SQLite serves one node: a second process cannot take its pings (it
// would write over the first one's pending pings); once the first is
// gone, it can. PostgreSQL takes pings from every node.
func testJournalSecondProcess(t *testing.T, e storetest.Engine) {
	u := storetest.URL(t, e)
	first, err := store.Open(ctx, u)
	check(t, err)
	_, w := seed(t, first, "acme")
	h := newHeartbeat(t, first, w.ID, t0, 60, 10, 0)
	record(t, first, ping(h.Token, heartbeat.SignalSuccess, t0, "", ""))
	second, err := store.Open(ctx, u)
	check(t, err)
	t.Cleanup(func() { second.Close() })
	_, _, err = second.RecordPings(ctx, []heartbeat.Arrival{ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Second), "", "")})
	if e.Name == store.EngineSQLite {
		if err == nil || !strings.Contains(err.Error(), "another process receives pings") {
			t.Fatalf("a second process recorded pings into SQLite: err %v", err)
		}
	} else {
		check(t, err)
	}
	check(t, first.Close())
	record(t, second, ping(h.Token, heartbeat.SignalSuccess, t0.Add(2*time.Second), "", ""))
	n, err := second.CountPings(ctx)
	check(t, err)
	want := int64(2)
	if e.Name == store.EnginePostgres {
		want = 3
	}
	if n != want {
		t.Errorf("%d pings stored, want %d", n, want)
	}
}
