package app

import (
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// A heartbeat's pause and edit are app's transactions over heartbeat rows
// that pending pings (SQLite's journal) may have moved on from: they must
// see every acknowledged ping first. The same assertions run on
// PostgreSQL, which writes pings directly.
func TestHeartbeatEditsSeePendingPings(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) { testJournalEdits(t, e) })
	}
}

// storedHeartbeat reads a heartbeat as stored.
func storedHeartbeat(t *testing.T, db *store.DB, wsID, id string) heartbeat.Heartbeat {
	t.Helper()
	h, _, err := db.GetHeartbeat(ctx, wsID, id)
	check(t, err)
	return h
}

// Pause, edit, rotate and delete see every acknowledged ping first, and
// pings after them see what they did.
func testJournalEdits(t *testing.T, e storetest.Engine) {
	db, a := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	h := newHeartbeat(t, db, w.ID, t0, 60, 10, 0)
	record(t, db, ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Second), "", ""))
	check(t, a.setHeartbeatPaused(ctx, w.ID, h.ID, true, t0.Add(2*time.Second)))
	states, err := db.ListStateChanges(ctx, w.ID, h.ID, time.Time{}, 10)
	check(t, err)
	if len(states) != 2 || states[0].To != monitor.StatePaused || states[1].To != monitor.StateUp {
		t.Fatalf("state history, newest first: %+v; want UP, then PAUSED", states)
	}
	outs := record(t, db, ping(h.Token, heartbeat.SignalFail, t0.Add(3*time.Second), "", ""))
	if !outs[0].Ack.Ignored {
		t.Errorf("a ping to a paused heartbeat: %+v", outs[0])
	}
	check(t, a.setHeartbeatPaused(ctx, w.ID, h.ID, false, t0.Add(4*time.Second)))
	got := storedHeartbeat(t, db, w.ID, h.ID)
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
	cur := storedHeartbeat(t, db, w.ID, h.ID)
	record(t, db, ping(fresh, heartbeat.SignalSuccess, t0.Add(8*time.Second), "", ""))
	cur.Schedule.PeriodSeconds, cur.UpdatedAt = 120, t0.Add(9*time.Second)
	prev := storedHeartbeat(t, db, w.ID, h.ID).UpdatedAt
	check(t, a.saveHeartbeat(ctx, cur, prev))
	got = storedHeartbeat(t, db, w.ID, h.ID)
	if !got.Runtime.LastPing.Equal(t0.Add(8*time.Second)) || !got.Runtime.Deadline.Equal(t0.Add(8*time.Second+130*time.Second)) {
		t.Errorf("after the edit: %+v", got.Runtime)
	}

	// Deleting takes the pings, applied or pending, with the heartbeat.
	record(t, db, ping(fresh, heartbeat.SignalSuccess, t0.Add(10*time.Second), "", ""))
	check(t, a.DeleteHeartbeat(ctx, Actor{WorkspaceID: w.ID, Role: account.RoleOwner}, h.ID))
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
