package store_test

import (
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// newHeartbeats makes n heartbeats in workspace wsID, each with a
// 60-second period and 10 seconds' grace.
func newHeartbeats(t testing.TB, db *store.DB, wsID string, n int) []heartbeat.Heartbeat {
	t.Helper()
	hbs := make([]heartbeat.Heartbeat, n)
	for i := range hbs {
		hbs[i] = newHeartbeat(t, db, wsID, t0, 60, 10, 0)
	}
	return hbs
}

func getHeartbeat(t *testing.T, db *store.DB, wsID, id string) heartbeat.Heartbeat {
	t.Helper()
	h, _, err := db.GetHeartbeat(ctx, wsID, id)
	check(t, err)
	return h
}

func TestHeartbeatStore(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Run("Pings", func(t *testing.T) { testHeartbeatPings(t, e) })
			t.Run("ConcurrentWriters", func(t *testing.T) { testPingWriters(t, e) })
			if e.Name == store.EnginePostgres {
				t.Run("IDsAfterLocks", func(t *testing.T) { testPingIDsAfterLocks(t, e) })
			}
			t.Run("SweepTwoNodes", func(t *testing.T) { testHeartbeatSweepTwoNodes(t, e) })
			t.Run("Outage", func(t *testing.T) { testHeartbeatOutage(t, e) })
		})
	}
}

// One batch: a start and its completion paired by run id, a retry with the
// same key (in the batch and in a later one) replayed, a token that names
// nothing, and the state they leave.
func testHeartbeatPings(t *testing.T, e storetest.Engine) {
	db := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	h := newHeartbeat(t, db, w.ID, t0, 60, 10, 30)
	outs, changes, err := recordPings(db, []heartbeat.Arrival{
		ping(h.Token, heartbeat.SignalStart, t0.Add(time.Second), "", "r1"),
		ping("no-such-token-at-all-here", heartbeat.SignalSuccess, t0.Add(2*time.Second), "", ""),
		ping(h.Token, heartbeat.SignalSuccess, t0.Add(3*time.Second), "k1", "r1"),
		ping(h.Token, heartbeat.SignalSuccess, t0.Add(4*time.Second), "k1", "r1"),
	})
	check(t, err)
	if !outs[0].Found || outs[1].Found || !outs[2].Found || outs[2].Replayed || !outs[3].Replayed {
		t.Fatalf("outcomes %+v", outs)
	}
	if outs[3].Ack != outs[2].Ack {
		t.Errorf("replay %+v, want the first acknowledgement %+v", outs[3].Ack, outs[2].Ack)
	}
	if outs[2].Ack.DurationUs != 2_000_000 {
		t.Errorf("run duration %d µs, want 2 s from its start", outs[2].Ack.DurationUs)
	}
	if len(changes) != 1 || changes[0].To != monitor.StateUp {
		t.Errorf("changes %+v, want PENDING → UP", changes)
	}
	// The same key in a later batch is still a replay.
	outs, _, err = recordPings(db, []heartbeat.Arrival{ping(h.Token, heartbeat.SignalFail, t0.Add(5*time.Second), "k1", "")})
	check(t, err)
	if !outs[0].Replayed || outs[0].Ack.Signal != "success" {
		t.Errorf("later retry %+v, want the replayed success", outs[0])
	}
	pings, err := db.ListPings(ctx, w.ID, h.ID, store.PingQuery{Limit: 10})
	check(t, err)
	if len(pings) != 2 || pings[0].Signal != heartbeat.SignalSuccess || pings[1].Signal != heartbeat.SignalStart {
		t.Fatalf("stored pings %+v, want the start and one success", pings)
	}
	got := getHeartbeat(t, db, w.ID, h.ID)
	rt := got.Runtime
	if rt.State != monitor.StateUp || !rt.LastPing.Equal(t0.Add(3*time.Second)) || rt.LastDuration != 2*time.Second || len(rt.Open) != 0 {
		t.Errorf("runtime %+v", rt)
	}
	if want := t0.Add(3*time.Second + 70*time.Second); !got.NextDeadline().Equal(want) {
		t.Errorf("next deadline %v, want %v (ping + period + grace)", got.NextDeadline(), want)
	}
}

// As many writers as the store takes (PingWriters: several on PostgreSQL,
// which several nodes share too) store batches at once, every batch naming
// the same few heartbeats: none is lost or stored twice, a heartbeat's
// pings list newest first with no two blocks overlapping in ids, each
// writer's later pings have higher ids, a heartbeat's state takes its
// pings in id order, and a key is replayed, not stored again, whichever
// writer sees it next.
func testPingWriters(t *testing.T, e storetest.Engine) {
	db := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	hbs := newHeartbeats(t, db, w.ID, 3)
	writers := db.PingWriters()
	if e.Name == store.EnginePostgres && writers < 2 {
		t.Fatalf("PostgreSQL takes %d writer(s), want several", writers)
	}
	const batches, perBatch = 100, 6
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				batch := make([]heartbeat.Arrival, perBatch)
				for i := range batch {
					at := t0.Add(time.Duration((b*perBatch+i)*writers+g) * time.Millisecond)
					batch[i] = ping(hbs[i%len(hbs)].Token, heartbeat.SignalSuccess, at, fmt.Sprintf("w%d-%d-%d", g, b, i), "")
				}
				if b > 0 {
					// A retry of this writer's first ping: replayed.
					batch[perBatch-1].Key = fmt.Sprintf("w%d-0-%d", g, (perBatch-1)%len(hbs))
					batch[perBatch-1].TokenHash = heartbeat.HashToken(hbs[(perBatch-1)%len(hbs)].Token)
				}
				outs, _, err := recordPings(db, batch)
				if err != nil {
					errs <- err
					return
				}
				for i, o := range outs {
					if replay := b > 0 && i == perBatch-1; !o.Found || o.Replayed != replay {
						errs <- fmt.Errorf("writer %d, batch %d, ping %d: %+v", g, b, i, o)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	for _, h := range hbs {
		pings, err := db.ListPings(ctx, w.ID, h.ID, store.PingQuery{Limit: 10_000})
		check(t, err)
		total += len(pings)
		last := map[string]heartbeat.PingRecord{} // by writer: its newest ping listed so far
		for i, p := range pings {
			if i > 0 && p.ID >= pings[i-1].ID {
				t.Fatalf("%s: ping %d listed after %d: ids must fall (blocks overlapping?)", h.ID, p.ID, pings[i-1].ID)
			}
			g, _, _ := strings.Cut(p.Key, "-")
			if newer, ok := last[g]; ok && !p.At.Before(newer.At) {
				t.Errorf("%s: writer %s's ping at %v has a lower id (%d) than its ping at %v (%d)", h.ID, g, p.At, p.ID, newer.At, newer.ID)
			}
			last[g] = p
		}
		// Its state machine took its pings in id order: the last ping it
		// applied is the newest listed.
		if got := getHeartbeat(t, db, w.ID, h.ID).Runtime.LastPing; len(pings) > 0 && !got.Equal(pings[0].At) {
			t.Errorf("%s: last ping applied at %v, but its newest ping (id %d) is at %v", h.ID, got, pings[0].ID, pings[0].At)
		}
	}
	if want := writers * (batches*perBatch - (batches - 1)); total != want {
		t.Errorf("%d pings stored, want %d (every ping once, the retries not again)", total, want)
	}
}

// Two batches on PostgreSQL, the first held up on a lock: the second,
// which does not wait, commits first, and the first, taking its ids only
// once it holds its heartbeats, still gets the higher ones, so ids order a
// heartbeat's pings as its state took them.
func testPingIDsAfterLocks(t *testing.T, e storetest.Engine) {
	u := storetest.URL(t, e)
	db, err := openStore(ctx, u)
	check(t, err)
	t.Cleanup(func() { db.Close() })
	_, w := seed(t, db, "acme")
	a := newHeartbeat(t, db, w.ID, t0, 60, 10, 0)
	b := newHeartbeat(t, db, w.ID, t0, 60, 10, 0) // created after a: a higher seq, locked after a's
	raw, err := sql.Open("pgx", u)
	check(t, err)
	defer raw.Close()
	holder, err := raw.BeginTx(ctx, nil)
	check(t, err)
	defer holder.Rollback()
	_, err = holder.ExecContext(ctx, `SELECT 1 FROM heartbeat_runtime WHERE heartbeat_id = $1 FOR UPDATE`, a.ID)
	check(t, err)

	first := make(chan error, 1)
	go func() {
		_, _, err := recordPings(db, []heartbeat.Arrival{
			ping(a.Token, heartbeat.SignalSuccess, t0.Add(time.Second), "", ""),
			ping(b.Token, heartbeat.SignalSuccess, t0.Add(time.Second), "", ""),
		})
		first <- err
	}()
	// Until the first batch waits for a's lock.
	wait.For(t, 10*time.Second, "the first batch to wait for the held heartbeat", func() bool {
		var waiting int
		check(t, raw.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting))
		return waiting > 0
	})
	_, _, err = recordPings(db, []heartbeat.Arrival{ping(b.Token, heartbeat.SignalSuccess, t0.Add(2*time.Second), "", "")})
	check(t, err)
	check(t, holder.Rollback())
	check(t, <-first)

	pings, err := db.ListPings(ctx, w.ID, b.ID, store.PingQuery{Limit: 10})
	check(t, err)
	if len(pings) != 2 {
		t.Fatalf("%d pings of b, want 2", len(pings))
	}
	if !pings[0].At.Equal(t0.Add(time.Second)) || pings[0].ID <= pings[1].ID {
		t.Errorf("b's pings newest first: %d at %v, %d at %v; want the first batch's (committed last) with the higher id",
			pings[0].ID, pings[0].At, pings[1].ID, pings[1].At)
	}
	if got := getHeartbeat(t, db, w.ID, b.ID).Runtime.LastPing; !got.Equal(pings[0].At) {
		t.Errorf("b's last ping applied at %v, its newest listed at %v", got, pings[0].At)
	}
}

// Two nodes sweep the same overdue heartbeats at once: each heartbeat is
// judged once, and its DOWN recorded once. SQLite serves one node (one
// process receives its pings): there, two sweepers of one process.
func testHeartbeatSweepTwoNodes(t *testing.T, e storetest.Engine) {
	url := storetest.URL(t, e)
	var nodes [2]*store.DB
	for i := range nodes {
		if i > 0 && e.Name == store.EngineSQLite {
			nodes[i] = nodes[0]
			continue
		}
		db, err := openStore(ctx, url)
		check(t, err)
		t.Cleanup(func() { db.Close() })
		nodes[i] = db
	}
	_, w := seed(t, nodes[0], "acme")
	const n = 120
	var batch []heartbeat.Arrival
	var hbs []heartbeat.Heartbeat
	for i := range n {
		h := newHeartbeat(t, nodes[0], w.ID, t0, 60, 0, 0)
		hbs = append(hbs, h)
		batch = append(batch, ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Duration(i)*time.Millisecond), "", ""))
	}
	_, _, err := recordPings(nodes[0], batch)
	check(t, err)
	// Both nodes were receiving pings throughout.
	var spans [2]int64
	for at := t0.Add(-time.Second); !at.After(t0.Add(2 * time.Minute)); at = at.Add(5 * time.Second) {
		for i, db := range nodes {
			id, err := db.TouchSpan(ctx, fmt.Sprint("node-", i), spans[i], at.Add(-5*time.Second), at, heartbeat.SpanGap)
			check(t, err)
			spans[i] = id
		}
	}
	judge := t0.Add(2 * time.Minute)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		changes []store.StateChange
	)
	for i, db := range nodes {
		wg.Go(func() {
			for {
				ch, claimed, err := sweepDeadlines(db, fmt.Sprint("node-", i), judge, 7)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				changes = append(changes, ch...)
				mu.Unlock()
				if claimed == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	downs := map[string]int{}
	for _, c := range changes {
		if c.To != monitor.StateDown || !strings.HasPrefix(c.Cause, "late") {
			t.Errorf("change %+v, want DOWN for being late", c)
		}
		downs[c.SubjectID]++
	}
	for _, h := range hbs {
		if downs[h.ID] != 1 {
			t.Errorf("%s judged DOWN %d times, want once", h.ID, downs[h.ID])
		}
		if s := getHeartbeat(t, nodes[1], w.ID, h.ID).Runtime.State; s != monitor.StateDown {
			t.Errorf("%s is %s, want DOWN", h.ID, s)
		}
	}
}

// A deadline that passed while no node was receiving pings is UNKNOWN; so
// is the next while the time a ping for it could have come includes the
// outage; the first judged with a node listening throughout is DOWN.
func testHeartbeatOutage(t *testing.T, e storetest.Engine) {
	db := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	h := newHeartbeat(t, db, w.ID, t0, 60, 10, 0)
	_, _, err := recordPings(db, []heartbeat.Arrival{ping(h.Token, heartbeat.SignalSuccess, t0, "", "")})
	check(t, err)
	var prev time.Time // the last touch
	touch := func(span int64, from, to time.Time) int64 {
		for at := from; !at.After(to); at = at.Add(5 * time.Second) {
			id, err := db.TouchSpan(ctx, "node", span, prev, at, heartbeat.SpanGap)
			check(t, err)
			span, prev = id, at
		}
		return span
	}
	// Up until 30 s after the ping, down until 2 minutes after it: the
	// deadline (70 s) falls in the outage.
	span := touch(0, t0.Add(-time.Minute), t0.Add(30*time.Second))
	span2 := touch(0, t0.Add(2*time.Minute), t0.Add(2*time.Minute))
	if span2 == span {
		t.Fatal("a span went on across a 90 s silence")
	}
	changes, _, err := sweepDeadlines(db, "node", t0.Add(2*time.Minute), 10)
	check(t, err)
	if len(changes) != 1 || changes[0].To != monitor.StateUnknown || !strings.Contains(changes[0].Cause, "not receiving pings") {
		t.Fatalf("changes %+v, want UNKNOWN for the outage", changes)
	}
	got := getHeartbeat(t, db, w.ID, h.ID)
	if want := t0.Add(130 * time.Second); !got.NextDeadline().Equal(want) {
		t.Errorf("next deadline %v, want the next run's %v", got.NextDeadline(), want)
	}
	// Up from 2 minutes on. The next run's ping (due by 130 s) could still
	// have come before 120 s, in the outage: UNKNOWN still. The one after
	// (due by 190 s) had a node listening all along: DOWN.
	touch(span2, t0.Add(2*time.Minute), t0.Add(4*time.Minute))
	changes, _, err = sweepDeadlines(db, "node", t0.Add(4*time.Minute), 10)
	check(t, err)
	if len(changes) != 1 || changes[0].To != monitor.StateDown || !strings.HasPrefix(changes[0].Cause, "late") {
		t.Fatalf("changes %+v, want DOWN for being late", changes)
	}
}
