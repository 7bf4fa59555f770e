package store_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
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
			t.Run("Sweep", func(t *testing.T) { testJournalSweep(t, e) })
			t.Run("SecondProcess", func(t *testing.T) { testJournalSecondProcess(t, e) })
		})
	}
}

// openForCrash opens a new database with a workspace and a heartbeat, for
// a test that kills it (Abandon) and opens it again (reopen).
func openForCrash(t *testing.T, e storetest.Engine) (string, *store.DB, account.Workspace, heartbeat.Heartbeat) {
	t.Helper()
	u := storetest.URL(t, e)
	db, err := openStore(ctx, u)
	check(t, err)
	_, w := seed(t, db, "acme")
	return u, db, w, newHeartbeat(t, db, w.ID, t0, 60, 10, 0)
}

// reopen opens the database at u again, as a restarted process would,
// until the test ends: serve migrates it, and app replays the pings a
// stopped process left before the node takes requests.
func reopen(t *testing.T, u string) *store.DB {
	t.Helper()
	db, err := openStore(ctx, u)
	check(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = db.Migrate(ctx)
	check(t, err)
	check(t, appOf(db).FlushPings(ctx))
	return db
}

// A process killed with pings in its journal: after a restart every
// acknowledged ping is listed once, runs pair across the crash as they
// did before it, a retried key is still a replay, and new pings number
// after the old ones.
func testJournalCrash(t *testing.T, e storetest.Engine) {
	u, db, w, h := openForCrash(t, e)
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

	db = reopen(t, u)
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

// A sweep never judges a heartbeat by a row that pending pings have moved
// on from: a job that pinged in time is not late, one that did not is.
func testJournalSweep(t *testing.T, e storetest.Engine) {
	db := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	onTime := newHeartbeat(t, db, w.ID, t0, 60, 0, 0)
	late := newHeartbeat(t, db, w.ID, t0, 60, 0, 0)
	overrun := newHeartbeat(t, db, w.ID, t0, 3600, 0, 5)
	record(t, db,
		ping(onTime.Token, heartbeat.SignalSuccess, t0, "", ""),
		ping(late.Token, heartbeat.SignalSuccess, t0, "", ""),
		ping(overrun.Token, heartbeat.SignalSuccess, t0, "", ""))
	_, _, err := sweepDeadlines(db, "n", t0.Add(time.Second), 100) // applies nothing: none due
	check(t, err)
	record(t, db,
		ping(onTime.Token, heartbeat.SignalSuccess, t0.Add(50*time.Second), "", ""),
		ping(overrun.Token, heartbeat.SignalStart, t0.Add(50*time.Second), "", ""))
	var span int64
	for at := t0.Add(-time.Second); !at.After(t0.Add(70 * time.Second)); at = at.Add(5 * time.Second) {
		span, err = db.TouchSpan(ctx, "n", span, at.Add(-5*time.Second), at, heartbeat.SpanGap)
		check(t, err)
	}
	changes, _, err := sweepDeadlines(db, "n", t0.Add(70*time.Second), 100)
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
	first, err := openStore(ctx, u)
	check(t, err)
	_, w := seed(t, first, "acme")
	h := newHeartbeat(t, first, w.ID, t0, 60, 10, 0)
	record(t, first, ping(h.Token, heartbeat.SignalSuccess, t0, "", ""))
	second, err := openStore(ctx, u)
	check(t, err)
	t.Cleanup(func() { second.Close() })
	_, _, err = recordPings(second, []heartbeat.Arrival{ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Second), "", "")})
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

// The SQLite journal's files: it is applied beside the pings still being
// journaled; a restart replays only what the tables do not hold, reads a
// segment up to a torn tail, and replays what the version before left
// in its table. PostgreSQL has no journal.
func TestPingJournalFiles(t *testing.T) {
	e := storetest.Engines(t)[0]
	if e.Name != store.EngineSQLite {
		t.Fatalf("the first engine is %s", e.Name)
	}
	t.Run("Beside", func(t *testing.T) { testJournalBeside(t, e) })
	t.Run("Watermark", func(t *testing.T) { testJournalWatermark(t, e) })
	t.Run("TornTail", func(t *testing.T) { testJournalTornTail(t, e) })
	t.Run("Legacy", func(t *testing.T) { testJournalLegacy(t, e) })
}

// Pings go on being journaled while applies run beside them, as the ping
// writer calls ApplyPings between batches (each state change makes one
// due at once), and readers flush in between: every ping is stored once,
// every transition recorded in order, and the runtime is the last ping's.
func testJournalBeside(t *testing.T, e storetest.Engine) {
	db := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	hbs := newHeartbeats(t, db, w.ID, 10)
	const rounds = 300
	done := make(chan struct{})
	readErr := make(chan error, 1)
	go func() { // a reader, flushing now and then
		defer close(readErr)
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if _, _, err := db.GetHeartbeat(ctx, w.ID, hbs[0].ID); err != nil {
				readErr <- err
				return
			}
		}
	}()
	at := t0
	for r := range rounds {
		batch := make([]heartbeat.Arrival, 0, len(hbs))
		for i, h := range hbs {
			at = at.Add(time.Millisecond)
			sig := heartbeat.SignalSuccess
			if i == 0 && r%2 == 1 {
				sig = heartbeat.SignalFail // hbs[0] goes DOWN and UP every other batch
			}
			batch = append(batch, ping(h.Token, sig, at, "", ""))
		}
		record(t, db, batch...)
		if _, err := applyPings(db); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
	}
	close(done)
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	n, err := db.CountPings(ctx)
	check(t, err)
	if n != rounds*int64(len(hbs)) {
		t.Errorf("%d pings stored, want %d", n, rounds*len(hbs))
	}
	states, err := db.ListStateChanges(ctx, w.ID, hbs[0].ID, time.Time{}, 1000)
	check(t, err)
	if len(states) != rounds {
		t.Fatalf("%d state changes of the flapping job, want %d (UP, then DOWN and UP in turn)", len(states), rounds)
	}
	for i, s := range states { // newest first
		want := monitor.StateUp
		if i%2 == 0 {
			want = monitor.StateDown
		}
		if s.To != want {
			t.Fatalf("state change %d from the newest: %s, want %s", i, s.To, want)
		}
	}
	last := getHeartbeat(t, db, w.ID, hbs[len(hbs)-1].ID).Runtime
	if !last.LastPing.Equal(at) {
		t.Errorf("last ping %v, want %v", last.LastPing, at)
	}
	pings, err := db.ListPings(ctx, w.ID, hbs[3].ID, store.PingQuery{Limit: rounds + 1})
	check(t, err)
	if len(pings) != rounds {
		t.Fatalf("%d pings listed, want %d", len(pings), rounds)
	}
	for i := 1; i < len(pings); i++ {
		if pings[i].ID >= pings[i-1].ID || !pings[i].At.Before(pings[i-1].At) {
			t.Fatalf("pings %d and %d out of order: %+v, %+v", i-1, i, pings[i-1], pings[i])
		}
	}
	if segs := db.JournalSegments(); len(segs) > 1 {
		t.Errorf("journal files left after everything was applied: %v", segs)
	}
}

// A process killed after an apply committed but before it removed the
// segments it applied: the restart skips the batches the tables hold.
func testJournalWatermark(t *testing.T, e storetest.Engine) {
	u, db, w, h := openForCrash(t, e)
	record(t, db, ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Second), "k1", ""),
		ping(h.Token, heartbeat.SignalSuccess, t0.Add(2*time.Second), "", ""))
	saved := map[string][]byte{}
	for _, p := range db.JournalSegments() {
		b, err := os.ReadFile(p)
		check(t, err)
		saved[p] = b
	}
	if len(saved) != 1 {
		t.Fatalf("journal files after one batch: %v", db.JournalSegments())
	}
	getHeartbeat(t, db, w.ID, h.ID) // a read applies the journal
	if segs := db.JournalSegments(); len(segs) != 0 {
		t.Fatalf("applied segments not removed: %v", segs)
	}
	for p, b := range saved { // as if the process died before removing them
		check(t, os.WriteFile(p, b, 0o600))
	}
	record(t, db, ping(h.Token, heartbeat.SignalSuccess, t0.Add(3*time.Second), "", ""))
	db.Abandon()

	db = reopen(t, u)
	pings, err := db.ListPings(ctx, w.ID, h.ID, store.PingQuery{Limit: 10})
	check(t, err)
	if len(pings) != 3 {
		t.Fatalf("after the restart %d pings listed, want 3 (each once): %+v", len(pings), pings)
	}
	outs := record(t, db, ping(h.Token, heartbeat.SignalSuccess, t0.Add(4*time.Second), "k1", ""))
	if !outs[0].Replayed {
		t.Errorf("a key of an applied batch is not a replay after the restart: %+v", outs[0])
	}
	if segs := db.JournalSegments(); len(segs) > 1 {
		t.Errorf("journal files left after the replay was applied: %v", segs)
	}
}

// A write torn by the process's death leaves a partial record at the end
// of a segment: it was never acknowledged, and the batches before it are
// replayed.
func testJournalTornTail(t *testing.T, e storetest.Engine) {
	u, db, w, h := openForCrash(t, e)
	record(t, db, ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Second), "", ""))
	record(t, db, ping(h.Token, heartbeat.SignalSuccess, t0.Add(2*time.Second), "", ""))
	segs := db.JournalSegments()
	db.Abandon()
	if len(segs) != 1 {
		t.Fatalf("journal files: %v", segs)
	}
	whole, err := os.ReadFile(segs[0])
	check(t, err)
	// A third record, cut short: its header and part of its payload.
	torn := append(append([]byte(nil), whole...), whole[len(whole)/2:len(whole)/2+20]...)
	check(t, os.WriteFile(segs[0], torn, 0o600))

	db = reopen(t, u)
	n, err := db.CountPings(ctx)
	check(t, err)
	if n != 2 {
		t.Fatalf("%d pings after the restart, want the 2 whole records", n)
	}
	record(t, db, ping(h.Token, heartbeat.SignalSuccess, t0.Add(3*time.Second), "", ""))
	pings, err := db.ListPings(ctx, w.ID, h.ID, store.PingQuery{Limit: 10})
	check(t, err)
	if len(pings) != 3 || pings[0].ID <= pings[1].ID {
		t.Errorf("pings after the restart: %+v", pings)
	}
}

// Batches the version before left in ping_journal (the table) are
// replayed after the upgrade, and new pings number after them.
func testJournalLegacy(t *testing.T, e storetest.Engine) {
	u := storetest.EmptyURL(t, e)
	db, err := openStore(ctx, u)
	check(t, err)
	_, err = db.MigrateUpTo(ctx, 5)
	check(t, err)
	_, w := seedBeforeQuotas(t, db, "acme")
	h := newHeartbeatBeforeQuotas(t, db, w.ID)
	check(t, db.WriteLegacyJournal(ctx, 7, h.ID,
		ping(h.Token, heartbeat.SignalStart, t0.Add(time.Second), "", "r1"),
		ping(h.Token, heartbeat.SignalSuccess, t0.Add(3*time.Second), "k1", "r1")))
	db.Abandon()

	db = reopen(t, u)
	_, err = db.Migrate(ctx)
	check(t, err)
	outs := record(t, db,
		ping(h.Token, heartbeat.SignalSuccess, t0.Add(4*time.Second), "k1", ""),
		ping(h.Token, heartbeat.SignalSuccess, t0.Add(5*time.Second), "", ""))
	if !outs[0].Replayed || outs[0].Ack.DurationUs != 2*time.Second.Microseconds() || outs[1].Replayed {
		t.Errorf("after the upgrade: %+v", outs)
	}
	pings, err := db.ListPings(ctx, w.ID, h.ID, store.PingQuery{Limit: 10})
	check(t, err)
	if len(pings) != 3 || pings[2].RunID != "r1" || pings[1].Duration != 2*time.Second || pings[0].ID <= 7<<16+1 {
		t.Errorf("pings after the upgrade, newest first: %+v", pings)
	}
	if got := getHeartbeat(t, db, w.ID, h.ID).Runtime; !got.LastPing.Equal(t0.Add(5*time.Second)) || len(got.Open) != 0 {
		t.Errorf("runtime after the upgrade: %+v", got)
	}
}
