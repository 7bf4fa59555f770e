package app

// Our own outages are UNKNOWN, never UP (DESIGN §7): a check that starts
// more than an interval after its slot ends a span in which no node ran
// the monitor's checks. The span goes to the state history as UNKNOWN
// with its cause, and nowhere else: no event, no delivery, no incident
// opened or resolved. It stays UNKNOWN until a check says more; the first
// that returns it to the state before does so quietly too. The stale
// sweep leaves such a monitor to that check.

import (
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

func TestNodeGap(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Run("Up", func(t *testing.T) { testGapUp(t, e) })
			t.Run("DownKeepsItsIncident", func(t *testing.T) { testGapDown(t, e) })
			t.Run("SweepLeavesIt", func(t *testing.T) { testGapSweep(t, e) })
		})
	}
}

// outbox is what the workspace's channel c has been sent: the events and
// their deliveries to c.
func outbox(t *testing.T, db *store.DB, wsID, c string) (events, deliveries int) {
	t.Helper()
	types, _ := eventTypes(t, db, wsID)
	ds, err := db.ListDeliveries(ctx, wsID, store.DeliveryQuery{ChannelID: c, Limit: 100})
	check(t, err)
	return len(types), len(ds)
}

// history is the monitor's state history, oldest first.
func history(t *testing.T, db *store.DB, m monitor.Monitor) []monitor.Transition {
	t.Helper()
	hist, err := db.ListStateChanges(ctx, m.WorkspaceID, m.ID, time.Time{}, 100)
	check(t, err)
	for i, j := 0, len(hist)-1; i < j; i, j = i+1, j-1 {
		hist[i], hist[j] = hist[j], hist[i]
	}
	return hist
}

// A monitor UP whose check due at due starts 3.3 intervals (of 30 s) late,
// and finds the gap, so could not tell: UP→UNKNOWN at due with the gap's
// cause, confirmed when the check started, and UNKNOWN until a check says
// more. The next check passes: UNKNOWN→UP then, quietly. Nothing of it is
// told to anyone.
func testGapUp(t *testing.T, e storetest.Engine) {
	db, _ := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	m := addMonitor(t, db, w.ID, monitor.Config{Confirmations: 1, Recoveries: 1})
	c := addChannel(t, db, w.ID, nil, nil)
	observe(t, db, m, monitor.ResultUp, t0.Add(time.Minute))
	events, deliveries := outbox(t, db, w.ID, c)
	if events != 1 || deliveries != 1 {
		t.Fatalf("after PENDING → UP: %d events, %d deliveries", events, deliveries)
	}

	due := t0.Add(90 * time.Second)
	started := due.Add(99 * time.Second)
	if changes := observeLate(t, db, m, monitor.ResultUnknown, due, started); len(changes) != 0 {
		t.Fatalf("the gap returned state changes to notify: %+v", changes)
	}
	gapped := monitor.Transition{From: monitor.StateUp, To: monitor.StateUnknown, At: due, ConfirmedAt: started,
		Cause: "no Tocsin node was checking from 2026-03-04T05:07:37Z to 2026-03-04T05:09:16Z"}
	wantEqual(t, history(t, db, m)[1:], []monitor.Transition{gapped})
	if s := mwState(t, db, m); s != monitor.StateUnknown {
		t.Fatalf("state after the gap = %s, want UNKNOWN until a check says more", s)
	}

	// The first check after it passes: back to UP, quietly.
	next := started.Add(30 * time.Second)
	if changes := observe(t, db, m, monitor.ResultUp, next); len(changes) != 0 {
		t.Fatalf("the return from the gap returned state changes to notify: %+v", changes)
	}
	wantEqual(t, history(t, db, m)[1:], []monitor.Transition{gapped,
		{From: monitor.StateUnknown, To: monitor.StateUp, At: next, Cause: "the check passed"}})
	if ev, dl := outbox(t, db, w.ID, c); ev != events || dl != deliveries {
		t.Fatalf("the gap wrote %d events and %d deliveries", ev-events, dl-deliveries)
	}
	incs, err := db.ListIncidents(ctx, w.ID, store.IncidentQuery{SubjectID: m.ID})
	check(t, err)
	if len(incs) != 0 {
		t.Fatalf("the gap opened incidents: %+v", incs)
	}

	// A DOWN after it is news.
	if changes := observe(t, db, m, monitor.ResultDown, next.Add(30*time.Second)); len(changes) != 1 || changes[0].From != monitor.StateUp {
		t.Fatalf("a failed check after the gap: %+v", changes)
	}
	if n := len(history(t, db, m)); n != 4 {
		t.Fatalf("history has %d changes, want 4", n)
	}

	// So is a first check after a gap that is not the state before it.
	m2 := addMonitor(t, db, w.ID, monitor.Config{Confirmations: 1, Recoveries: 1})
	observe(t, db, m2, monitor.ResultUp, t0.Add(time.Minute))
	observeLate(t, db, m2, monitor.ResultUnknown, due, started)
	if changes := observe(t, db, m2, monitor.ResultDown, next); len(changes) != 1 ||
		changes[0].From != monitor.StateUnknown || changes[0].To != monitor.StateDown {
		t.Fatalf("a failed check after the gap: %+v", changes)
	}
}

// A monitor DOWN with its incident open is UNKNOWN through a gap, and the
// incident stays open: the gap resolves nothing. A failed check after it
// makes it DOWN again, quietly; the recovery after that is news.
func testGapDown(t *testing.T, e storetest.Engine) {
	db, _ := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	m := addMonitor(t, db, w.ID, monitor.Config{Confirmations: 1, Recoveries: 1})
	c := addChannel(t, db, w.ID, nil, nil)
	observe(t, db, m, monitor.ResultDown, t0.Add(time.Minute))
	events, deliveries := outbox(t, db, w.ID, c)

	due := t0.Add(90 * time.Second)
	started := due.Add(10 * time.Minute)
	observeLate(t, db, m, monitor.ResultUnknown, due, started)
	observe(t, db, m, monitor.ResultDown, started.Add(30*time.Second))
	hist := history(t, db, m)
	if len(hist) != 3 || hist[1].To != monitor.StateUnknown || !hist[1].At.Equal(due) || hist[1].Cause != monitor.GapCause(due, started) ||
		hist[2].From != monitor.StateUnknown || hist[2].To != monitor.StateDown || !hist[2].At.Equal(started.Add(30*time.Second)) {
		t.Fatalf("history %+v", hist)
	}
	if ev, dl := outbox(t, db, w.ID, c); ev != events || dl != deliveries {
		t.Fatalf("the gap wrote %d events and %d deliveries", ev-events, dl-deliveries)
	}
	open, err := db.ListIncidents(ctx, w.ID, store.IncidentQuery{Status: "open", SubjectID: m.ID})
	check(t, err)
	if len(open) != 1 || mwState(t, db, m) != monitor.StateDown {
		t.Fatalf("after the gap: %d open incidents, state %s; want the incident open, DOWN", len(open), mwState(t, db, m))
	}

	observe(t, db, m, monitor.ResultUp, started.Add(time.Minute))
	got, err := db.GetIncident(ctx, w.ID, open[0].ID)
	check(t, err)
	if got.Open() {
		t.Fatal("the recovery after the gap left the incident open")
	}
	types, _ := eventTypes(t, db, w.ID)
	wantStrings(t, "events", types,
		incident.MonitorStateChanged, incident.IncidentOpened, // PENDING → DOWN
		incident.MonitorStateChanged, incident.IncidentResolved) // DOWN → UP, after the gap
}

// The stale sweep marks UNKNOWN a monitor whose checks ran and could not
// tell, and leaves alone one with no check at all for two intervals: no
// node ran it, and the check that ends the gap records it.
func testGapSweep(t *testing.T, e storetest.Engine) {
	db, a := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	silent := addMonitor(t, db, w.ID, monitor.Config{})
	unsure := addMonitor(t, db, w.ID, monitor.Config{})
	never := addMonitor(t, db, w.ID, monitor.Config{})
	last := t0.Add(time.Minute)
	observe(t, db, silent, monitor.ResultUp, last.Add(-time.Second))
	observe(t, db, unsure, monitor.ResultUp, last)
	observe(t, db, unsure, monitor.ResultUnknown, last.Add(45*time.Second))

	// Two intervals (of 30 s) after the last known results.
	changes, err := a.SweepStale(ctx, last.Add(time.Minute))
	check(t, err)
	if len(changes) != 1 || changes[0].SubjectID != unsure.ID || changes[0].From != monitor.StateUp || changes[0].To != monitor.StateUnknown {
		t.Fatalf("swept %+v, want only %s UP → UNKNOWN", changes, unsure.ID)
	}
	if s := mwState(t, db, silent); s != monitor.StateUp {
		t.Fatalf("a monitor no node checked went %s", s)
	}
	if s := mwState(t, db, never); s != monitor.StatePending {
		t.Fatalf("a monitor never checked went %s", s)
	}
	types, _ := eventTypes(t, db, w.ID)
	if len(types) != 3 {
		t.Fatalf("events %q, want the two ups and the sweep's unknown", types)
	}

	// The check that ends the silent monitor's gap records it.
	due := last.Add(29 * time.Second)
	observeLate(t, db, silent, monitor.ResultUnknown, due, last.Add(5*time.Minute))
	hist := history(t, db, silent)
	if len(hist) != 2 || hist[1].To != monitor.StateUnknown || hist[1].Cause != monitor.GapCause(due, last.Add(5*time.Minute)) {
		t.Fatalf("history %+v", hist)
	}
}
