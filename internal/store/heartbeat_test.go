package store_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// newHeartbeat stores a heartbeat with a period schedule and returns it
// with its token.
func newHeartbeat(t testing.TB, db *store.DB, wsID string, at time.Time, period, grace, maxRuntime int) heartbeat.Heartbeat {
	t.Helper()
	h := heartbeat.Heartbeat{ID: ids.New(ids.Heartbeat, at), WorkspaceID: wsID, Name: "job",
		Schedule:          heartbeat.Schedule{PeriodSeconds: period, GraceSeconds: grace},
		MaxRuntimeSeconds: maxRuntime, Token: heartbeat.NewToken(), Runtime: heartbeat.New(at, false),
		CreatedAt: at, UpdatedAt: at}
	check(t, db.CreateHeartbeat(ctx, h, heartbeat.HashToken(h.Token), []byte("sealed"), 10_000))
	return h
}

func ping(token string, sig heartbeat.Signal, at time.Time, key, rid string) heartbeat.Arrival {
	return heartbeat.Arrival{TokenHash: heartbeat.HashToken(token), Ping: heartbeat.Ping{Signal: sig, ExitCode: -1, RunID: rid, At: at},
		Method: "GET", Client: "127.0.0.1", Key: key}
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
			t.Run("SweepTwoNodes", func(t *testing.T) { testHeartbeatSweepTwoNodes(t, e) })
			t.Run("Outage", func(t *testing.T) { testHeartbeatOutage(t, e) })
		})
	}
}

// One batch: a start and its completion paired by run id, a retry with the
// same key (in the batch and in a later one) replayed, a token that names
// nothing, and the state they leave.
func testHeartbeatPings(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	h := newHeartbeat(t, db, w.ID, t0, 60, 10, 30)
	outs, changes, err := db.RecordPings(ctx, []heartbeat.Arrival{
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
	outs, _, err = db.RecordPings(ctx, []heartbeat.Arrival{ping(h.Token, heartbeat.SignalFail, t0.Add(5*time.Second), "k1", "")})
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
		db, err := store.Open(ctx, url)
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
	_, _, err := nodes[0].RecordPings(ctx, batch)
	check(t, err)
	// Both nodes were receiving pings throughout.
	var spans [2]int64
	for at := t0.Add(-time.Second); !at.After(t0.Add(2 * time.Minute)); at = at.Add(5 * time.Second) {
		for i, db := range nodes {
			id, err := db.TouchSpan(ctx, fmt.Sprint("node-", i), spans[i], at.Add(-5*time.Second), at)
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
				ch, claimed, err := db.SweepHeartbeats(ctx, fmt.Sprint("node-", i), judge, time.Minute, 7)
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
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	h := newHeartbeat(t, db, w.ID, t0, 60, 10, 0)
	_, _, err := db.RecordPings(ctx, []heartbeat.Arrival{ping(h.Token, heartbeat.SignalSuccess, t0, "", "")})
	check(t, err)
	var prev time.Time // the last touch
	touch := func(span int64, from, to time.Time) int64 {
		for at := from; !at.After(to); at = at.Add(5 * time.Second) {
			id, err := db.TouchSpan(ctx, "node", span, prev, at)
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
	changes, _, err := db.SweepHeartbeats(ctx, "node", t0.Add(2*time.Minute), time.Minute, 10)
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
	changes, _, err = db.SweepHeartbeats(ctx, "node", t0.Add(4*time.Minute), time.Minute, 10)
	check(t, err)
	if len(changes) != 1 || changes[0].To != monitor.StateDown || !strings.HasPrefix(changes[0].Cause, "late") {
		t.Fatalf("changes %+v, want DOWN for being late", changes)
	}
}
