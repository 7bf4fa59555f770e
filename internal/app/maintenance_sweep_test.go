package app

// The maintenance sweep: what entering and leaving a window does to a
// monitor or heartbeat, as plain functions; then the sweep over a
// database, on every engine.

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/maintenance"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// The maintenance sweep over a database, the same on every engine.
func TestApplyMaintenance(t *testing.T) {
	tests := []struct {
		name string
		fn   func(*testing.T, storetest.Engine)
	}{
		{"Apply", testApplyMaintenance},
		{"ApplyTwoNodes", testApplyMaintenanceTwoNodes},
		{"ApplyWithObservations", testApplyMaintenanceWithObservations},
		{"ApplyHeartbeats", testApplyMaintenanceHeartbeats},
	}
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) { tt.fn(t, e) })
			}
		})
	}
}

func changePaths(changes []StateChange) []string {
	var out []string
	for _, c := range changes {
		out = append(out, fmt.Sprintf("%s %s→%s: %s", c.SubjectID, c.From, c.To, c.Cause))
	}
	slices.Sort(out)
	return out
}

func testApplyMaintenance(t *testing.T, e storetest.Engine) {
	db, a := openWithWorkflow(t, e)
	w := addWorkspace(t, db, "acme")
	up := addMonitor(t, db, w.ID, monitor.Config{})
	paused := addMonitor(t, db, w.ID, monitor.Config{})
	strict := addMonitor(t, db, w.ID, monitor.Config{Confirmations: 3})
	outside := addMonitor(t, db, w.ID, monitor.Config{})
	at := t0.Add(time.Hour)
	tick := func() time.Time { at = at.Add(time.Second); return at }
	observe(t, db, up, monitor.ResultUp, tick())
	observe(t, db, strict, monitor.ResultUp, tick())
	check(t, a.setPaused(ctx, w.ID, paused.ID, true, tick()))

	both := maintenancePlan{Now: tick(), Active: map[string][]string{up.ID: {"mw_a"}, paused.ID: {"mw_a"}, strict.ID: {"mw_a"}}}
	changes, err := a.applyMaintenance(ctx, both)
	check(t, err)
	wantEqual(t, changePaths(changes), changePaths([]StateChange{
		{SubjectID: up.ID, Transition: monitor.Transition{From: monitor.StateUp, To: monitor.StateMaintenance, Cause: "maintenance window mw_a began"}},
		{SubjectID: strict.ID, Transition: monitor.Transition{From: monitor.StateUp, To: monitor.StateMaintenance, Cause: "maintenance window mw_a began"}},
	}))
	for _, c := range changes {
		if !c.At.Equal(both.Now) {
			t.Fatalf("transition at %v, want the sweep's time %v", c.At, both.Now)
		}
	}
	// The same plan again finds the work done.
	changes, err = a.applyMaintenance(ctx, both)
	check(t, err)
	wantEqual(t, len(changes), 0)
	if s := mwState(t, db, paused); s != monitor.StatePaused {
		t.Fatalf("paused monitor is %s", s)
	}
	if s := mwState(t, db, outside); s != monitor.StatePending {
		t.Fatalf("monitor outside the window is %s", s)
	}

	// Checks go on during maintenance and move the streaks, not the state.
	for range 2 {
		if c := observe(t, db, up, monitor.ResultDown, tick()); len(c) != 0 {
			t.Fatalf("a check during maintenance changed the state: %+v", c)
		}
		observe(t, db, strict, monitor.ResultDown, tick())
	}
	if s := mwState(t, db, up); s != monitor.StateMaintenance {
		t.Fatalf("state during maintenance after downs: %s", s)
	}

	// mw_a ends while mw_b still covers up: it stays, now held by mw_b.
	changes, err = a.applyMaintenance(ctx, maintenancePlan{Now: tick(), Active: map[string][]string{up.ID: {"mw_b"}}})
	check(t, err)
	// strict leaves: two downs are not its three confirmations, and its
	// last result was down, so nothing is known: PENDING.
	wantEqual(t, changePaths(changes), changePaths([]StateChange{
		{SubjectID: strict.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StatePending, Cause: "maintenance window mw_a ended"}},
	}))
	// mw_b goes: up leaves to what its two downs support.
	changes, err = a.applyMaintenance(ctx, maintenancePlan{Now: tick(), Active: map[string][]string{},
		EndCause: func(m, win string) string { return "window " + win + " was deleted" }})
	check(t, err)
	wantEqual(t, changePaths(changes), changePaths([]StateChange{
		{SubjectID: up.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StateDown, Cause: "window mw_b was deleted"}},
	}))
	hist, err := db.ListStateChanges(ctx, w.ID, up.ID, time.Time{}, 10)
	check(t, err)
	var causes []string
	for _, tr := range slices.Backward(hist) {
		causes = append(causes, fmt.Sprintf("%s→%s: %s", tr.From, tr.To, tr.Cause))
	}
	wantEqual(t, causes, []string{"PENDING→UP: the check passed", "UP→MAINTENANCE: maintenance window mw_a began", "MAINTENANCE→DOWN: window mw_b was deleted"})

	// A paused monitor resumed inside a window enters maintenance.
	check(t, a.setPaused(ctx, w.ID, paused.ID, false, tick()))
	changes, err = a.applyMaintenance(ctx, both)
	check(t, err)
	if len(changes) != 3 || mwState(t, db, paused) != monitor.StateMaintenance {
		t.Fatalf("after resume: %v", changePaths(changes))
	}
}

func mwState(t *testing.T, db *store.DB, m monitor.Monitor) monitor.State {
	t.Helper()
	got, err := db.GetMonitor(ctx, m.WorkspaceID, m.ID)
	check(t, err)
	return got.State
}

// Several nodes sweep at once: each transition happens once, for monitors
// and heartbeats alike.
func testApplyMaintenanceTwoNodes(t *testing.T, e storetest.Engine) {
	u := storetest.URL(t, e)
	var (
		dbs  []*store.DB
		apps []*App
	)
	for i := range 3 {
		if i > 0 && e.Name == store.EngineSQLite {
			// One process receives a SQLite database's pings, so one
			// process writes its heartbeats: three sweeps of one process.
			dbs, apps = append(dbs, dbs[0]), append(apps, apps[0])
			continue
		}
		db := storetest.Open(t, u)
		dbs, apps = append(dbs, db), append(apps, newApp(db))
	}
	w := addWorkspace(t, dbs[0], "acme")
	active := map[string][]string{}
	for range 40 {
		m := addMonitor(t, dbs[0], w.ID, monitor.Config{})
		active[m.ID] = []string{"mw_x"}
	}
	for range 20 {
		h := mwAddHeartbeat(t, dbs[0], w.ID, false)
		active[h.ID] = []string{"mw_x"}
	}
	for round, plan := range []maintenancePlan{
		{Now: t0.Add(time.Hour), Active: active},
		{Now: t0.Add(2 * time.Hour), Active: map[string][]string{}},
	} {
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			total int
		)
		for i := range 6 {
			wg.Go(func() {
				changes, err := apps[i%len(apps)].applyMaintenance(ctx, plan)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				total += len(changes)
				mu.Unlock()
			})
		}
		wg.Wait()
		if total != len(active) {
			t.Fatalf("round %d: %d transitions for %d monitors and heartbeats", round, total, len(active))
		}
	}
}

// The sweep and the observation writer take the same rows: run together,
// neither fails (no deadlock) and no observation is lost.
func testApplyMaintenanceWithObservations(t *testing.T, e storetest.Engine) {
	u := storetest.URL(t, e)
	writerDB := storetest.Open(t, u)
	sweepDB := storetest.Open(t, u)
	sweeper := newApp(sweepDB)
	w := addWorkspace(t, writerDB, "acme")
	var ms []monitor.Monitor
	active := map[string][]string{}
	for range 20 {
		m := addMonitor(t, writerDB, w.ID, monitor.Config{})
		ms = append(ms, m)
		active[m.ID] = []string{"mw_x"}
	}
	base := t0.Add(time.Hour)
	// Claimed first: a claim skips rows that a sweep holds locked.
	seqs := map[string]int64{}
	due, err := writerDB.ClaimDue(ctx, "node", base.Add(time.Hour), base.Add(time.Hour), time.Hour, 1000)
	check(t, err)
	for _, d := range due {
		seqs[d.Monitor.ID] = d.Seq
	}
	if len(seqs) != len(ms) {
		t.Fatalf("claimed %d of %d", len(seqs), len(ms))
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 30 {
			plan := maintenancePlan{Now: base.Add(time.Duration(i) * time.Second), Active: active}
			if i%2 == 1 {
				plan.Active = nil
			}
			if _, err := sweeper.applyMaintenance(ctx, plan); err != nil {
				t.Error(err)
				return
			}
		}
	})
	writer := newApp(writerDB)
	wg.Go(func() {
		for i := range 30 {
			var batch []monitor.Completed
			for j := range ms {
				at := base.Add(time.Duration(i)*time.Second + time.Duration(j)*time.Millisecond)
				batch = append(batch, monitor.Completed{Seq: seqs[ms[j].ID], Thresholds: monitor.Thresholds{},
					Observation: monitor.Observation{MonitorID: ms[j].ID, StartedAt: at, Due: at, Result: monitor.ResultDown, Probe: "p", Region: "r"}})
			}
			slices.Reverse(batch) // the writer sorts; the locking order must not depend on the caller's
			if _, err := writer.RecordChecks(ctx, "node", batch); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	for _, m := range ms {
		obs, err := writerDB.ListObservations(ctx, w.ID, m.ID, store.ObservationQuery{Limit: 100})
		check(t, err)
		if len(obs) != 30 {
			t.Fatalf("%s: %d observations stored, want 30", m.ID, len(obs))
		}
	}
}

// addHeartbeatForWindow stores a heartbeat of the workspace that expects a
// ping every minute, with a minute's grace. Its ping token is its id.
func mwAddHeartbeat(t *testing.T, db *store.DB, wsID string, paused bool) heartbeat.Heartbeat {
	t.Helper()
	h := heartbeat.Heartbeat{ID: ids.New(ids.Heartbeat, t0), WorkspaceID: wsID, Name: "backup",
		Schedule: heartbeat.Schedule{PeriodSeconds: 60, GraceSeconds: 60}, Paused: paused,
		Runtime: heartbeat.New(t0, paused), CreatedAt: t0, UpdatedAt: t0}
	check(t, db.CreateHeartbeat(ctx, h, heartbeat.HashToken(h.ID), []byte("sealed"), 1000))
	return h
}

// pingForWindow records one ping of h (success or fail) at at and returns
// the state changes it made.
func mwPing(t *testing.T, db *store.DB, h heartbeat.Heartbeat, sig heartbeat.Signal, at time.Time) []StateChange {
	t.Helper()
	outs, changes, err := newApp(db).RecordPings(ctx, []heartbeat.Arrival{{TokenHash: heartbeat.HashToken(h.ID),
		Ping: heartbeat.Ping{Signal: sig, ExitCode: -1, At: at}, Method: "POST", Client: "127.0.0.1"}})
	check(t, err)
	if !outs[0].Found {
		t.Fatalf("ping of %s not found", h.ID)
	}
	return changes
}

func mwRuntime(t *testing.T, db *store.DB, h heartbeat.Heartbeat) heartbeat.Runtime {
	t.Helper()
	got, _, err := db.GetHeartbeat(ctx, h.WorkspaceID, h.ID)
	check(t, err)
	return got.Runtime
}

// stateHistory is a subject's state history, oldest first, as "FROM→TO: cause".
func mwHistory(t *testing.T, db *store.DB, wsID, id string) []string {
	t.Helper()
	hist, err := db.ListStateChanges(ctx, wsID, id, time.Time{}, 100)
	check(t, err)
	var out []string
	for _, tr := range slices.Backward(hist) {
		out = append(out, fmt.Sprintf("%s→%s: %s", tr.From, tr.To, tr.Cause))
	}
	return out
}

// Heartbeats enter and leave maintenance with monitors, in the same sweep:
// pings are recorded meanwhile, deadlines pass without alerts (also one the
// deadline sweeper had not judged when the window ended), and each leaves
// for the state its job's reports support.
func testApplyMaintenanceHeartbeats(t *testing.T, e storetest.Engine) {
	db, a := openWithWorkflow(t, e)
	w := addWorkspace(t, db, "acme")
	m := addMonitor(t, db, w.ID, monitor.Config{})
	ok, failed := mwAddHeartbeat(t, db, w.ID, false), mwAddHeartbeat(t, db, w.ID, false)
	fresh, paused := mwAddHeartbeat(t, db, w.ID, false), mwAddHeartbeat(t, db, w.ID, true)
	outside := mwAddHeartbeat(t, db, w.ID, false)
	base := t0.Add(time.Hour)
	// This service receives pings throughout, so a missed deadline is DOWN.
	var (
		span     int64
		lastSeen time.Time
	)
	live := func(to time.Time) {
		for at := base; ; at = at.Add(10 * time.Second) {
			if at.After(to) {
				at = to
			}
			if at.After(lastSeen) {
				id, err := db.TouchSpan(ctx, "node", span, lastSeen, at, heartbeat.SpanGap)
				check(t, err)
				span, lastSeen = id, at
			}
			if !at.Before(to) {
				return
			}
		}
	}
	sweep := func(at time.Time) []StateChange {
		live(at)
		changes, _, err := a.SweepHeartbeats(ctx, "node", at, 100)
		check(t, err)
		return changes
	}
	mwPing(t, db, ok, heartbeat.SignalSuccess, base.Add(time.Second))
	mwPing(t, db, failed, heartbeat.SignalFail, base.Add(2*time.Second))
	mwPing(t, db, outside, heartbeat.SignalSuccess, base.Add(3*time.Second))

	began := "maintenance window mw_a began"
	first := maintenancePlan{Now: base.Add(10 * time.Second), Active: map[string][]string{
		m.ID: {"mw_a"}, ok.ID: {"mw_a"}, failed.ID: {"mw_a"}, fresh.ID: {"mw_a"}, paused.ID: {"mw_a"}}}
	changes, err := a.applyMaintenance(ctx, first)
	check(t, err)
	wantEqual(t, changePaths(changes), changePaths([]StateChange{
		{SubjectID: m.ID, Transition: monitor.Transition{From: monitor.StatePending, To: monitor.StateMaintenance, Cause: began}},
		{SubjectID: ok.ID, Transition: monitor.Transition{From: monitor.StateUp, To: monitor.StateMaintenance, Cause: began}},
		{SubjectID: failed.ID, Transition: monitor.Transition{From: monitor.StateDown, To: monitor.StateMaintenance, Cause: began}},
		{SubjectID: fresh.ID, Transition: monitor.Transition{From: monitor.StatePending, To: monitor.StateMaintenance, Cause: began}},
	}))
	for _, c := range changes {
		if !c.At.Equal(first.Now) {
			t.Fatalf("transition at %v, want the sweep's time %v", c.At, first.Now)
		}
	}
	changes, err = a.applyMaintenance(ctx, first)
	check(t, err)
	wantEqual(t, len(changes), 0)
	if s := mwRuntime(t, db, paused).State; s != monitor.StatePaused {
		t.Fatalf("paused heartbeat is %s", s)
	}

	// Pings during maintenance are recorded and move nothing.
	if c := mwPing(t, db, failed, heartbeat.SignalSuccess, base.Add(20*time.Second)); len(c) != 0 {
		t.Fatalf("a ping during maintenance changed the state: %v", changePaths(c))
	}
	// ok's deadline (2 minutes after its ping) passes: no alert. outside's
	// passes too, and it is DOWN.
	changes = sweep(base.Add(130 * time.Second))
	if len(changes) != 1 || changes[0].SubjectID != outside.ID || changes[0].To != monitor.StateDown {
		t.Fatalf("deadline sweep during maintenance: %v", changePaths(changes))
	}
	rt := mwRuntime(t, db, ok)
	if rt.State != monitor.StateMaintenance || rt.Late || !rt.Deadline.After(base.Add(130*time.Second)) {
		t.Fatalf("ok after its deadline passed in maintenance: %+v", rt)
	}

	// mw_a ends while mw_b still holds ok: the others leave.
	ended := "maintenance window mw_a ended"
	changes, err = a.applyMaintenance(ctx, maintenancePlan{Now: base.Add(140 * time.Second),
		Active: map[string][]string{ok.ID: {"mw_b"}}})
	check(t, err)
	wantEqual(t, changePaths(changes), changePaths([]StateChange{
		{SubjectID: m.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StatePending, Cause: ended}},
		// Its last report, made during the window, was a success.
		{SubjectID: failed.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StateUp, Cause: ended}},
		{SubjectID: fresh.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StatePending, Cause: ended}},
	}))

	// ok's next deadline passes inside mw_b, and mw_b goes before the
	// deadline sweeper came to it: that deadline does not count.
	deadline := mwRuntime(t, db, ok).Deadline
	leave := deadline.Add(15 * time.Second)
	changes, err = a.applyMaintenance(ctx, maintenancePlan{Now: leave, Active: map[string][]string{},
		EndCause: func(id, win string) string { return "window " + win + " was deleted" }})
	check(t, err)
	wantEqual(t, changePaths(changes), changePaths([]StateChange{
		{SubjectID: ok.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StateUp, Cause: "window mw_b was deleted"}},
	}))
	if c := sweep(leave); len(c) != 0 {
		t.Fatalf("a deadline inside the window counted after it: %v", changePaths(c))
	}
	// The next one does.
	next := mwRuntime(t, db, ok).Deadline
	if !next.After(leave) {
		t.Fatalf("deadline after leaving %v, not after %v", next, leave)
	}
	changes = sweep(next.Add(time.Second))
	if i := slices.IndexFunc(changes, func(c StateChange) bool { return c.SubjectID == ok.ID }); i < 0 || changes[i].To != monitor.StateDown {
		t.Fatalf("the first deadline after the window: %v", changePaths(changes))
	}
	hist := mwHistory(t, db, w.ID, ok.ID)
	wantEqual(t, hist[:3], []string{
		"PENDING→UP: the job reported success",
		"UP→MAINTENANCE: " + began,
		"MAINTENANCE→UP: window mw_b was deleted",
	})
	if len(hist) != 4 || !strings.HasPrefix(hist[3], "UP→DOWN: late:") {
		t.Fatalf("history of ok: %q", hist)
	}

	// A paused heartbeat resumed inside a window enters maintenance.
	check(t, a.setHeartbeatPaused(ctx, w.ID, paused.ID, false, leave))
	changes, err = a.applyMaintenance(ctx, maintenancePlan{Now: leave.Add(time.Second),
		Active: map[string][]string{paused.ID: {"mw_c"}}})
	check(t, err)
	wantEqual(t, changePaths(changes), changePaths([]StateChange{
		{SubjectID: paused.ID, Transition: monitor.Transition{From: monitor.StatePending, To: monitor.StateMaintenance, Cause: "maintenance window mw_c began"}},
	}))
	wantEqual(t, mwHistory(t, db, w.ID, paused.ID), []string{
		"PAUSED→PENDING: resumed", "PENDING→MAINTENANCE: maintenance window mw_c began"})
}

// Which subjects the windows cover, when that next changes by the clock,
// and what each window's fate says when a subject leaves it.
func TestPlanMaintenance(t *testing.T) {
	now := t0
	win := func(id string, from, to time.Duration, subjects ...string) maintenance.Window {
		w := maintenance.Window{ID: id, StartsAt: now.Add(from), EndsAt: now.Add(to)}
		for _, s := range subjects {
			if strings.HasPrefix(s, ids.Heartbeat+"_") {
				w.HeartbeatIDs = append(w.HeartbeatIDs, s)
			} else {
				w.MonitorIDs = append(w.MonitorIDs, s)
			}
		}
		return w
	}
	bad := maintenance.Window{ID: "mw_bad", StartsAt: now.Add(-time.Hour), Cron: "0 2 * * *", Timezone: "Nowhere/Nope",
		Duration: time.Hour, MonitorIDs: []string{"mon_c"}}
	windows := []maintenance.Window{
		win("mw_a", -time.Hour, 2*time.Hour, "mon_a", "hb_a"),
		win("mw_b", -time.Minute, time.Hour, "mon_a"),
		win("mw_later", 30*time.Minute, 3*time.Hour, "mon_b"),
		win("mw_over", -3*time.Hour, -time.Hour, "mon_b"),
		bad,
	}
	plan, boundary := planMaintenance(windows, now, slog.New(slog.DiscardHandler))
	wantEqual(t, plan.Now, now)
	wantEqual(t, plan.Active, map[string][]string{"mon_a": {"mw_a", "mw_b"}, "hb_a": {"mw_a"}})
	wantEqual(t, boundary, now.Add(30*time.Minute)) // mw_later begins before mw_b ends
	for _, c := range []struct{ subject, window, want string }{
		{"mon_a", "mw_a", "monitor was removed from maintenance window mw_a"},
		{"hb_a", "mw_b", "heartbeat was removed from maintenance window mw_b"},
		{"mon_b", "mw_over", "maintenance window mw_over ended"},
		{"mon_b", "mw_later", "maintenance window mw_later ended"},
		{"mon_c", "mw_bad", "maintenance window mw_bad can no longer be evaluated"},
		{"mon_d", "mw_gone", "maintenance window mw_gone was deleted"},
	} {
		if got := plan.endCause(c.subject, c.window); got != c.want {
			t.Errorf("leaving %s for %s: %q, want %q", c.window, c.subject, got, c.want)
		}
	}
	if got := (maintenancePlan{}).endCause("mon_a", "mw_a"); got != "maintenance window mw_a ended" {
		t.Errorf("a plan without EndCause: %q", got)
	}
	_, boundary = planMaintenance(nil, now, slog.New(slog.DiscardHandler))
	wantEqual(t, boundary, time.Time{})
}

// What a window's start and end do to a monitor's tracker.
func TestMonitorMaintenance(t *testing.T) {
	now := t0
	tracker := func(s monitor.State, last monitor.Result, downs, ups int) monitor.Tracker {
		return monitor.Tracker{State: s, Since: now.Add(-time.Hour), Last: last, Downs: downs, Ups: ups}
	}
	covered := map[string][]string{"mon_x": {"mw_a", "mw_b"}}
	deleted := func(_, win string) string { return "window " + win + " was deleted" }
	cases := []struct {
		name      string
		active    map[string][]string
		endCause  func(string, string) string
		t         monitor.Tracker
		hold      string
		th        monitor.Thresholds
		state     monitor.State
		wantHold  string
		cause     string // "" for no transition
		unchanged bool
	}{
		{name: "paused stays paused", active: covered, t: tracker(monitor.StatePaused, "", 0, 0),
			state: monitor.StatePaused, unchanged: true},
		{name: "up enters", active: covered, t: tracker(monitor.StateUp, monitor.ResultUp, 0, 1),
			state: monitor.StateMaintenance, wantHold: "mw_a", cause: "maintenance window mw_a began"},
		{name: "down enters", active: covered, t: tracker(monitor.StateDown, monitor.ResultDown, 2, 0),
			state: monitor.StateMaintenance, wantHold: "mw_a", cause: "maintenance window mw_a began"},
		{name: "held by a window still active", active: covered, t: tracker(monitor.StateMaintenance, monitor.ResultUp, 0, 1), hold: "mw_b",
			state: monitor.StateMaintenance, wantHold: "mw_b", unchanged: true},
		{name: "its window ended, another holds it", active: covered, t: tracker(monitor.StateMaintenance, monitor.ResultUp, 0, 1), hold: "mw_z",
			state: monitor.StateMaintenance, wantHold: "mw_a"},
		{name: "leaves to what its results support", active: map[string][]string{}, t: tracker(monitor.StateMaintenance, monitor.ResultDown, 2, 0),
			hold: "mw_a", th: monitor.Thresholds{Confirmations: 2}, state: monitor.StateDown, cause: "maintenance window mw_a ended"},
		{name: "leaves short of its confirmations", active: map[string][]string{}, t: tracker(monitor.StateMaintenance, monitor.ResultDown, 2, 0),
			hold: "mw_a", th: monitor.Thresholds{Confirmations: 3}, state: monitor.StatePending, cause: "maintenance window mw_a ended"},
		{name: "leaves with the plan's cause", active: nil, endCause: deleted, t: tracker(monitor.StateMaintenance, monitor.ResultUp, 0, 1),
			hold: "mw_b", state: monitor.StateUp, cause: "window mw_b was deleted"},
		{name: "outside any window", active: map[string][]string{}, t: tracker(monitor.StateUp, monitor.ResultUp, 0, 1),
			state: monitor.StateUp, unchanged: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := maintenancePlan{Now: now, Active: c.active, EndCause: c.endCause}
			got, hold, tr, changed := monitorMaintenance(p, "mon_x", c.t, c.hold, c.th)
			if got.State != c.state || hold != c.wantHold || changed == c.unchanged {
				t.Fatalf("state %s, hold %q, changed %v; want %s, %q, %v", got.State, hold, changed, c.state, c.wantHold, !c.unchanged)
			}
			switch {
			case c.cause == "" && tr != nil:
				t.Fatalf("transition %+v, want none", *tr)
			case c.cause != "" && (tr == nil || tr.Cause != c.cause || tr.To != c.state || !tr.At.Equal(now)):
				t.Fatalf("transition %+v, want to %s at %v: %q", tr, c.state, now, c.cause)
			}
		})
	}
	// A check result that landed after the sweep read the clock keeps the
	// history in order.
	late := tracker(monitor.StateUp, monitor.ResultUp, 0, 1)
	late.Since = now.Add(time.Second)
	_, _, tr, _ := monitorMaintenance(maintenancePlan{Now: now, Active: covered}, "mon_x", late, "", monitor.Thresholds{})
	if tr == nil || !tr.At.Equal(late.Since) {
		t.Fatalf("transition %+v, want at %v", tr, late.Since)
	}
}

// What a window's start and end do to a heartbeat's runtime.
func TestHeartbeatMaintenance(t *testing.T) {
	now := t0
	plan, err := heartbeat.Schedule{PeriodSeconds: 60, GraceSeconds: 60}.Compile()
	check(t, err)
	s := heartbeat.Settings{Plan: plan}
	// A job that reported at from (success or fail) in the state it leads
	// to, then entered maintenance at held if not zero.
	reported := func(sig heartbeat.Signal, from, held time.Time) heartbeat.Runtime {
		rt, _, _ := heartbeat.New(from.Add(-time.Minute), false).Ping(heartbeat.Ping{Signal: sig, ExitCode: -1, At: from}, s)
		if !held.IsZero() {
			rt, _ = rt.EnterMaintenance(held, "maintenance window mw_a began")
		}
		return rt
	}
	covered := map[string][]string{"hb_x": {"mw_a", "mw_b"}}
	cases := []struct {
		name      string
		active    map[string][]string
		rt        heartbeat.Runtime
		hold      string
		state     monitor.State
		wantHold  string
		cause     string
		unchanged bool
	}{
		{name: "paused stays paused", active: covered, rt: heartbeat.New(now.Add(-time.Hour), true),
			state: monitor.StatePaused, unchanged: true},
		{name: "up enters", active: covered, rt: reported(heartbeat.SignalSuccess, now.Add(-10*time.Second), time.Time{}),
			state: monitor.StateMaintenance, wantHold: "mw_a", cause: "maintenance window mw_a began"},
		{name: "pending enters", active: covered, rt: heartbeat.New(now.Add(-time.Hour), false),
			state: monitor.StateMaintenance, wantHold: "mw_a", cause: "maintenance window mw_a began"},
		{name: "held by a window still active", active: covered, rt: reported(heartbeat.SignalSuccess, now.Add(-time.Hour), now.Add(-time.Minute)),
			hold: "mw_a", state: monitor.StateMaintenance, wantHold: "mw_a", unchanged: true},
		{name: "its window ended, another holds it", active: covered, rt: reported(heartbeat.SignalSuccess, now.Add(-time.Hour), now.Add(-time.Minute)),
			hold: "mw_z", state: monitor.StateMaintenance, wantHold: "mw_a"},
		{name: "leaves up after a success", active: nil, rt: reported(heartbeat.SignalSuccess, now.Add(-10*time.Second), now.Add(-5*time.Second)),
			hold: "mw_a", state: monitor.StateUp, cause: "maintenance window mw_a ended"},
		{name: "leaves down after a failure", active: nil, rt: reported(heartbeat.SignalFail, now.Add(-10*time.Second), now.Add(-5*time.Second)),
			hold: "mw_a", state: monitor.StateDown, cause: "maintenance window mw_a ended"},
		// Its deadline (two minutes after its ping) passed in the window,
		// before the deadline sweeper came to it: it does not count.
		{name: "a deadline inside the window does not count", active: nil,
			rt:   reported(heartbeat.SignalSuccess, now.Add(-time.Hour), now.Add(-50*time.Minute)),
			hold: "mw_a", state: monitor.StateUp, cause: "maintenance window mw_a ended"},
		{name: "outside any window", active: map[string][]string{}, rt: reported(heartbeat.SignalSuccess, now.Add(-10*time.Second), time.Time{}),
			state: monitor.StateUp, unchanged: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := maintenancePlan{Now: now, Active: c.active}
			got, hold, tr, changed := heartbeatMaintenance(p, "hb_x", c.rt, s, c.hold)
			if got.State != c.state || hold != c.wantHold || changed == c.unchanged {
				t.Fatalf("state %s, hold %q, changed %v; want %s, %q, %v", got.State, hold, changed, c.state, c.wantHold, !c.unchanged)
			}
			switch {
			case c.cause == "" && tr != nil:
				t.Fatalf("transition %+v, want none", *tr)
			case c.cause != "" && (tr == nil || tr.Cause != c.cause || tr.To != c.state || !tr.At.Equal(now)):
				t.Fatalf("transition %+v, want to %s at %v: %q", tr, c.state, now, c.cause)
			}
			if c.state != monitor.StateMaintenance && c.cause != "" && (got.Late || !got.Deadline.After(now)) {
				t.Fatalf("left with deadline %v (late %v), want the next one after %v", got.Deadline, got.Late, now)
			}
		})
	}
}
