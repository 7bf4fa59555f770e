package store_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/maintenance"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// The maintenance-window contract, the same on every engine.
func TestMaintenance(t *testing.T) {
	tests := []struct {
		name string
		fn   func(*testing.T, storetest.Engine)
	}{
		{"Windows", testMaintenanceWindows},
		{"WindowPages", testMaintenanceWindowPages},
		{"Apply", testApplyMaintenance},
		{"ApplyTwoNodes", testApplyMaintenanceTwoNodes},
		{"ApplyWithObservations", testApplyMaintenanceWithObservations},
		{"HeartbeatWindows", testMaintenanceHeartbeatWindows},
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

// addMonitor stores a tcp monitor of the workspace.
func addMonitor(t *testing.T, db *store.DB, wsID string, cfg monitor.Config) monitor.Monitor {
	t.Helper()
	if cfg.Host == "" {
		cfg.Host, cfg.Port = "db.internal", 5432
	}
	m := monitor.Monitor{ID: ids.New(ids.Monitor, t0), WorkspaceID: wsID, Type: monitor.TypeTCP, Name: "m", Config: cfg,
		IntervalSeconds: 30, State: monitor.StatePending, StateSince: t0, CreatedAt: t0, UpdatedAt: t0}
	check(t, db.CreateMonitor(ctx, m, store.Sealed{}, 1000))
	return m
}

func oneOff(wsID string, monitorIDs ...string) maintenance.Window {
	return maintenance.Window{ID: ids.New(ids.Maintenance, t0), WorkspaceID: wsID, Name: "db upgrade",
		Description: "Postgres 17", StartsAt: t0.Add(time.Hour), EndsAt: t0.Add(3 * time.Hour),
		MonitorIDs: monitorIDs, CreatedAt: t0, UpdatedAt: t0}
}

func testMaintenanceWindows(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	_, other := seed(t, db, "other")
	m1, m2 := addMonitor(t, db, w.ID, monitor.Config{}), addMonitor(t, db, w.ID, monitor.Config{})
	mOther := addMonitor(t, db, other.ID, monitor.Config{})
	ids2 := []string{m1.ID, m2.ID}
	slices.Sort(ids2)

	one := oneOff(w.ID, ids2...)
	check(t, db.CreateMaintenanceWindow(ctx, one, 10))
	wantKind(t, db.CreateMaintenanceWindow(ctx, one, 10), store.ErrConflict)
	got, err := db.GetMaintenanceWindow(ctx, w.ID, one.ID)
	check(t, err)
	equal(t, got, one)

	weekly := maintenance.Window{ID: ids.New(ids.Maintenance, t0), WorkspaceID: w.ID, Name: "weekly",
		StartsAt: t0, Cron: "0 2 * * 6", Timezone: "Europe/Berlin", Duration: 2 * time.Hour,
		Until: t0.AddDate(1, 0, 0), MonitorIDs: []string{m1.ID}, CreatedAt: t0, UpdatedAt: t0}
	check(t, db.CreateMaintenanceWindow(ctx, weekly, 10))
	got, err = db.GetMaintenanceWindow(ctx, w.ID, weekly.ID)
	check(t, err)
	equal(t, got, weekly)

	// A monitor of another workspace, or none at all, is refused and named;
	// nothing is stored.
	for _, bad := range [][]string{{m1.ID, mOther.ID}, {"mon_nope"}} {
		win := oneOff(w.ID, bad...)
		err := db.CreateMaintenanceWindow(ctx, win, 10)
		var um *store.UnknownMonitorsError
		if !errors.As(err, &um) || !slices.Equal(um.IDs, bad[len(bad)-1:]) || errs.KindOf(err) != errs.KindInvalid {
			t.Fatalf("create naming %v: %v", bad, err)
		}
		_, err = db.GetMaintenanceWindow(ctx, w.ID, win.ID)
		wantKind(t, err, errs.ErrNotFound)
	}
	missing, err := db.UnknownMonitors(ctx, w.ID, []string{m1.ID, mOther.ID, "mon_nope"})
	check(t, err)
	equal(t, missing, []string{mOther.ID, "mon_nope"})

	// Another workspace cannot tell the window exists.
	_, err = db.GetMaintenanceWindow(ctx, other.ID, one.ID)
	wantKind(t, err, errs.ErrNotFound)
	wantKind(t, db.DeleteMaintenanceWindow(ctx, other.ID, one.ID), errs.ErrNotFound)
	moved := one
	moved.WorkspaceID = other.ID
	wantKind(t, db.UpdateMaintenanceWindow(ctx, moved, one.UpdatedAt), errs.ErrNotFound)

	// Update everything a user edits, subjects included; optimistic.
	prev := one.UpdatedAt
	one.Name, one.Description = "db upgrade, take two", ""
	one.StartsAt, one.EndsAt = t0.Truncate(time.Minute), time.Time{}
	one.RRule, one.Timezone, one.Duration = "FREQ=MONTHLY;BYDAY=1SU;BYHOUR=3;BYMINUTE=0", "America/New_York", 90*time.Minute
	one.MonitorIDs = []string{m2.ID}
	one.UpdatedAt = t0.Add(time.Minute)
	check(t, db.UpdateMaintenanceWindow(ctx, one, prev))
	got, err = db.GetMaintenanceWindow(ctx, w.ID, one.ID)
	check(t, err)
	equal(t, got, one)
	stale := one
	stale.Name = "lost update"
	wantKind(t, db.UpdateMaintenanceWindow(ctx, stale, prev), store.ErrStale)
	// A refused update changes nothing.
	bad := one
	bad.MonitorIDs, bad.UpdatedAt = []string{mOther.ID}, t0.Add(2*time.Minute)
	var um *store.UnknownMonitorsError
	if err := db.UpdateMaintenanceWindow(ctx, bad, one.UpdatedAt); !errors.As(err, &um) {
		t.Fatalf("update naming another workspace's monitor: %v", err)
	}
	got, err = db.GetMaintenanceWindow(ctx, w.ID, one.ID)
	check(t, err)
	equal(t, got, one)

	// Deleting a monitor takes it out of its windows.
	check(t, db.DeleteMonitor(ctx, w.ID, m2.ID))
	got, err = db.GetMaintenanceWindow(ctx, w.ID, one.ID)
	check(t, err)
	if len(got.MonitorIDs) != 0 {
		t.Fatalf("subjects after deleting the monitor: %v", got.MonitorIDs)
	}

	// The sweep sees every workspace's windows.
	otherWin := oneOff(other.ID, mOther.ID)
	check(t, db.CreateMaintenanceWindow(ctx, otherWin, 10))
	all, err := db.AllMaintenanceWindows(ctx)
	check(t, err)
	var allIDs []string
	for _, x := range all {
		allIDs = append(allIDs, x.ID)
	}
	equal(t, allIDs, []string{one.ID, weekly.ID, otherWin.ID})

	check(t, db.DeleteMaintenanceWindow(ctx, w.ID, one.ID))
	_, err = db.GetMaintenanceWindow(ctx, w.ID, one.ID)
	wantKind(t, err, errs.ErrNotFound)
	wantKind(t, db.DeleteMaintenanceWindow(ctx, w.ID, one.ID), errs.ErrNotFound)
	wantKind(t, db.UpdateMaintenanceWindow(ctx, one, one.UpdatedAt), errs.ErrNotFound)

	// Quota, and a workspace that does not exist.
	n, err := db.CountMaintenanceWindows(ctx, w.ID)
	check(t, err)
	if n != 1 {
		t.Fatalf("CountMaintenanceWindows = %d, want 1", n)
	}
	wantKind(t, db.CreateMaintenanceWindow(ctx, oneOff(w.ID, m1.ID), 1), store.ErrQuota)
	wantKind(t, db.CreateMaintenanceWindow(ctx, oneOff("ws_missing"), 10), errs.ErrNotFound)
}

func testMaintenanceWindowPages(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	_, other := seed(t, db, "other")
	m := addMonitor(t, db, w.ID, monitor.Config{})
	check(t, db.CreateMaintenanceWindow(ctx, oneOff(other.ID), 10))
	var want []string
	for range 5 {
		win := oneOff(w.ID, m.ID)
		check(t, db.CreateMaintenanceWindow(ctx, win, 10))
		want = append(want, win.ID)
	}
	var got []string
	after := ""
	for {
		page, err := db.ListMaintenanceWindows(ctx, w.ID, after, 2)
		check(t, err)
		for _, x := range page {
			if !slices.Equal(x.MonitorIDs, []string{m.ID}) {
				t.Fatalf("window %s lists %v", x.ID, x.MonitorIDs)
			}
			got = append(got, x.ID)
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].ID
	}
	equal(t, got, want)
	n, err := db.CountMaintenanceWindows(ctx, w.ID)
	check(t, err)
	if n != 5 {
		t.Fatalf("count %d", n)
	}
}

// observe runs one check result of m through the engine's path: claim,
// then apply.
func observe(t *testing.T, db *store.DB, m monitor.Monitor, r monitor.Result, at time.Time) []store.StateChange {
	t.Helper()
	check(t, db.SetNextDueForTest(ctx, m.ID, at))
	due, err := db.ClaimDue(ctx, "node", at, at, time.Microsecond, 1000)
	check(t, err)
	i := slices.IndexFunc(due, func(d monitor.DueCheck) bool { return d.Monitor.ID == m.ID })
	if i < 0 {
		t.Fatalf("%s not claimed at %v", m.ID, at)
	}
	changes, err := recordChecks(db, "node", []monitor.Completed{{Seq: due[i].Seq,
		Observation: monitor.Observation{MonitorID: m.ID, StartedAt: at, Due: at, Result: r, Probe: "p", Region: "r"},
		Thresholds:  monitor.Thresholds{Confirmations: m.Config.Confirmations, Recoveries: m.Config.Recoveries}}})
	check(t, err)
	return changes
}

func path(changes []store.StateChange) []string {
	var out []string
	for _, c := range changes {
		out = append(out, fmt.Sprintf("%s %s→%s: %s", c.SubjectID, c.From, c.To, c.Cause))
	}
	slices.Sort(out)
	return out
}

func testApplyMaintenance(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	up := addMonitor(t, db, w.ID, monitor.Config{})
	paused := addMonitor(t, db, w.ID, monitor.Config{})
	strict := addMonitor(t, db, w.ID, monitor.Config{Confirmations: 3})
	outside := addMonitor(t, db, w.ID, monitor.Config{})
	at := t0.Add(time.Hour)
	tick := func() time.Time { at = at.Add(time.Second); return at }
	observe(t, db, up, monitor.ResultUp, tick())
	observe(t, db, strict, monitor.ResultUp, tick())
	check(t, setPaused(db, w.ID, paused.ID, true, tick()))

	both := store.MaintenancePlan{Now: tick(), Active: map[string][]string{up.ID: {"mw_a"}, paused.ID: {"mw_a"}, strict.ID: {"mw_a"}}}
	changes, err := db.ApplyMaintenance(ctx, both)
	check(t, err)
	equal(t, path(changes), path([]store.StateChange{
		{SubjectID: up.ID, Transition: monitor.Transition{From: monitor.StateUp, To: monitor.StateMaintenance, Cause: "maintenance window mw_a began"}},
		{SubjectID: strict.ID, Transition: monitor.Transition{From: monitor.StateUp, To: monitor.StateMaintenance, Cause: "maintenance window mw_a began"}},
	}))
	for _, c := range changes {
		if !c.At.Equal(both.Now) {
			t.Fatalf("transition at %v, want the sweep's time %v", c.At, both.Now)
		}
	}
	// The same plan again finds the work done.
	changes, err = db.ApplyMaintenance(ctx, both)
	check(t, err)
	equal(t, len(changes), 0)
	if s := getState(t, db, paused); s != monitor.StatePaused {
		t.Fatalf("paused monitor is %s", s)
	}
	if s := getState(t, db, outside); s != monitor.StatePending {
		t.Fatalf("monitor outside the window is %s", s)
	}

	// Checks go on during maintenance and move the streaks, not the state.
	for range 2 {
		if c := observe(t, db, up, monitor.ResultDown, tick()); len(c) != 0 {
			t.Fatalf("a check during maintenance changed the state: %+v", c)
		}
		observe(t, db, strict, monitor.ResultDown, tick())
	}
	if s := getState(t, db, up); s != monitor.StateMaintenance {
		t.Fatalf("state during maintenance after downs: %s", s)
	}

	// mw_a ends while mw_b still covers up: it stays, now held by mw_b.
	changes, err = db.ApplyMaintenance(ctx, store.MaintenancePlan{Now: tick(), Active: map[string][]string{up.ID: {"mw_b"}}})
	check(t, err)
	// strict leaves: two downs are not its three confirmations, and its
	// last result was down, so nothing is known: PENDING.
	equal(t, path(changes), path([]store.StateChange{
		{SubjectID: strict.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StatePending, Cause: "maintenance window mw_a ended"}},
	}))
	// mw_b goes: up leaves to what its two downs support.
	changes, err = db.ApplyMaintenance(ctx, store.MaintenancePlan{Now: tick(), Active: map[string][]string{},
		EndCause: func(m, win string) string { return "window " + win + " was deleted" }})
	check(t, err)
	equal(t, path(changes), path([]store.StateChange{
		{SubjectID: up.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StateDown, Cause: "window mw_b was deleted"}},
	}))
	hist, err := db.ListStateChanges(ctx, w.ID, up.ID, time.Time{}, 10)
	check(t, err)
	var causes []string
	for _, tr := range slices.Backward(hist) {
		causes = append(causes, fmt.Sprintf("%s→%s: %s", tr.From, tr.To, tr.Cause))
	}
	equal(t, causes, []string{"PENDING→UP: up", "UP→MAINTENANCE: maintenance window mw_a began", "MAINTENANCE→DOWN: window mw_b was deleted"})

	// A paused monitor resumed inside a window enters maintenance.
	check(t, setPaused(db, w.ID, paused.ID, false, tick()))
	changes, err = db.ApplyMaintenance(ctx, both)
	check(t, err)
	if len(changes) != 3 || getState(t, db, paused) != monitor.StateMaintenance {
		t.Fatalf("after resume: %v", path(changes))
	}
}

func getState(t *testing.T, db *store.DB, m monitor.Monitor) monitor.State {
	t.Helper()
	got, err := db.GetMonitor(ctx, m.WorkspaceID, m.ID)
	check(t, err)
	return got.State
}

// Several nodes sweep at once: each transition happens once, for monitors
// and heartbeats alike.
func testApplyMaintenanceTwoNodes(t *testing.T, e storetest.Engine) {
	u := storetest.URL(t, e)
	var dbs []*store.DB
	for i := range 3 {
		if i > 0 && e.Name == store.EngineSQLite {
			// One process receives a SQLite database's pings, so one
			// process writes its heartbeats: three sweeps of one process.
			dbs = append(dbs, dbs[0])
			continue
		}
		db, err := store.Open(ctx, u)
		check(t, err)
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	_, w := seed(t, dbs[0], "acme")
	active := map[string][]string{}
	for range 40 {
		m := addMonitor(t, dbs[0], w.ID, monitor.Config{})
		active[m.ID] = []string{"mw_x"}
	}
	for range 20 {
		h := addHeartbeatForWindow(t, dbs[0], w.ID, false)
		active[h.ID] = []string{"mw_x"}
	}
	for round, plan := range []store.MaintenancePlan{
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
				changes, err := dbs[i%len(dbs)].ApplyMaintenance(ctx, plan)
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
	writerDB, err := store.Open(ctx, u)
	check(t, err)
	t.Cleanup(func() { writerDB.Close() })
	sweepDB, err := store.Open(ctx, u)
	check(t, err)
	t.Cleanup(func() { sweepDB.Close() })
	_, w := seed(t, writerDB, "acme")
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
			plan := store.MaintenancePlan{Now: base.Add(time.Duration(i) * time.Second), Active: active}
			if i%2 == 1 {
				plan.Active = nil
			}
			if _, err := sweepDB.ApplyMaintenance(ctx, plan); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		for i := range 30 {
			var batch []monitor.Completed
			for j := range ms {
				at := base.Add(time.Duration(i)*time.Second + time.Duration(j)*time.Millisecond)
				batch = append(batch, monitor.Completed{Seq: seqs[ms[j].ID], Thresholds: monitor.Thresholds{},
					Observation: monitor.Observation{MonitorID: ms[j].ID, StartedAt: at, Due: at, Result: monitor.ResultDown, Probe: "p", Region: "r"}})
			}
			slices.Reverse(batch) // the writer sorts; the locking order must not depend on the caller's
			if _, err := recordChecks(writerDB, "node", batch); err != nil {
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
func addHeartbeatForWindow(t *testing.T, db *store.DB, wsID string, paused bool) heartbeat.Heartbeat {
	t.Helper()
	h := heartbeat.Heartbeat{ID: ids.New(ids.Heartbeat, t0), WorkspaceID: wsID, Name: "backup",
		Schedule: heartbeat.Schedule{PeriodSeconds: 60, GraceSeconds: 60}, Paused: paused,
		Runtime: heartbeat.New(t0, paused), CreatedAt: t0, UpdatedAt: t0}
	check(t, db.CreateHeartbeat(ctx, h, heartbeat.HashToken(h.ID), []byte("sealed"), 1000))
	return h
}

// pingForWindow records one ping of h (success or fail) at at and returns
// the state changes it made.
func pingForWindow(t *testing.T, db *store.DB, h heartbeat.Heartbeat, sig heartbeat.Signal, at time.Time) []store.StateChange {
	t.Helper()
	outs, changes, err := db.RecordPings(ctx, []heartbeat.Arrival{{TokenHash: heartbeat.HashToken(h.ID),
		Ping: heartbeat.Ping{Signal: sig, ExitCode: -1, At: at}, Method: "POST", Client: "127.0.0.1"}})
	check(t, err)
	if !outs[0].Found {
		t.Fatalf("ping of %s not found", h.ID)
	}
	return changes
}

func heartbeatRuntime(t *testing.T, db *store.DB, h heartbeat.Heartbeat) heartbeat.Runtime {
	t.Helper()
	got, _, err := db.GetHeartbeat(ctx, h.WorkspaceID, h.ID)
	check(t, err)
	return got.Runtime
}

// stateHistory is a subject's state history, oldest first, as "FROM→TO: cause".
func stateHistory(t *testing.T, db *store.DB, wsID, id string) []string {
	t.Helper()
	hist, err := db.ListStateChanges(ctx, wsID, id, time.Time{}, 100)
	check(t, err)
	var out []string
	for _, tr := range slices.Backward(hist) {
		out = append(out, fmt.Sprintf("%s→%s: %s", tr.From, tr.To, tr.Cause))
	}
	return out
}

// Windows name heartbeats as they name monitors.
func testMaintenanceHeartbeatWindows(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	_, other := seed(t, db, "other")
	m := addMonitor(t, db, w.ID, monitor.Config{})
	h1, h2 := addHeartbeatForWindow(t, db, w.ID, false), addHeartbeatForWindow(t, db, w.ID, false)
	hOther := addHeartbeatForWindow(t, db, other.ID, false)
	hbs := []string{h1.ID, h2.ID}
	slices.Sort(hbs)

	both := oneOff(w.ID, m.ID)
	both.HeartbeatIDs = hbs
	check(t, db.CreateMaintenanceWindow(ctx, both, 10))
	got, err := db.GetMaintenanceWindow(ctx, w.ID, both.ID)
	check(t, err)
	equal(t, got, both)
	only := oneOff(w.ID)
	only.HeartbeatIDs = []string{h1.ID}
	check(t, db.CreateMaintenanceWindow(ctx, only, 10))
	got, err = db.GetMaintenanceWindow(ctx, w.ID, only.ID)
	check(t, err)
	equal(t, got, only)

	// A heartbeat of another workspace, or none at all, is refused and
	// named; nothing is stored. Unknown monitors are named with them.
	for _, bad := range [][]string{{h1.ID, hOther.ID}, {"hb_nope"}} {
		win := oneOff(w.ID, m.ID)
		win.HeartbeatIDs = bad
		err := db.CreateMaintenanceWindow(ctx, win, 10)
		var uh *store.UnknownHeartbeatsError
		if !errors.As(err, &uh) || !slices.Equal(uh.IDs, bad[len(bad)-1:]) || errs.KindOf(err) != errs.KindInvalid {
			t.Fatalf("create naming heartbeats %v: %v", bad, err)
		}
		_, err = db.GetMaintenanceWindow(ctx, w.ID, win.ID)
		wantKind(t, err, errs.ErrNotFound)
	}
	win := oneOff(w.ID, "mon_nope")
	win.HeartbeatIDs = []string{"hb_nope"}
	err = db.CreateMaintenanceWindow(ctx, win, 10)
	var (
		um *store.UnknownMonitorsError
		uh *store.UnknownHeartbeatsError
	)
	if !errors.As(err, &um) || !errors.As(err, &uh) || errs.KindOf(err) != errs.KindInvalid {
		t.Fatalf("create naming an unknown monitor and heartbeat: %v", err)
	}
	missing, err := db.UnknownHeartbeats(ctx, w.ID, []string{h1.ID, hOther.ID, "hb_nope", m.ID})
	check(t, err)
	equal(t, missing, []string{hOther.ID, "hb_nope", m.ID})
	// Nor may an update name one.
	bad := both
	bad.HeartbeatIDs, bad.UpdatedAt = []string{hOther.ID}, t0.Add(time.Minute)
	if err := db.UpdateMaintenanceWindow(ctx, bad, both.UpdatedAt); !errors.As(err, &uh) {
		t.Fatalf("update naming another workspace's heartbeat: %v", err)
	}
	// An update replaces the heartbeats too.
	prev := both.UpdatedAt
	both.HeartbeatIDs, both.UpdatedAt = []string{h2.ID}, t0.Add(time.Minute)
	check(t, db.UpdateMaintenanceWindow(ctx, both, prev))
	got, err = db.GetMaintenanceWindow(ctx, w.ID, both.ID)
	check(t, err)
	equal(t, got, both)

	// The sweep sees them.
	all, err := db.AllMaintenanceWindows(ctx)
	check(t, err)
	equal(t, all, []maintenance.Window{both, only})

	// Deleting a heartbeat takes it out of its windows.
	check(t, db.DeleteHeartbeat(ctx, w.ID, h2.ID))
	got, err = db.GetMaintenanceWindow(ctx, w.ID, both.ID)
	check(t, err)
	if len(got.HeartbeatIDs) != 0 || !slices.Equal(got.MonitorIDs, []string{m.ID}) {
		t.Fatalf("subjects after deleting the heartbeat: %v, %v", got.MonitorIDs, got.HeartbeatIDs)
	}
}

// Heartbeats enter and leave maintenance with monitors, in the same sweep:
// pings are recorded meanwhile, deadlines pass without alerts (also one the
// deadline sweeper had not judged when the window ended), and each leaves
// for the state its job's reports support.
func testApplyMaintenanceHeartbeats(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	m := addMonitor(t, db, w.ID, monitor.Config{})
	ok, failed := addHeartbeatForWindow(t, db, w.ID, false), addHeartbeatForWindow(t, db, w.ID, false)
	fresh, paused := addHeartbeatForWindow(t, db, w.ID, false), addHeartbeatForWindow(t, db, w.ID, true)
	outside := addHeartbeatForWindow(t, db, w.ID, false)
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
				id, err := db.TouchSpan(ctx, "node", span, lastSeen, at)
				check(t, err)
				span, lastSeen = id, at
			}
			if !at.Before(to) {
				return
			}
		}
	}
	sweep := func(at time.Time) []store.StateChange {
		live(at)
		changes, _, err := db.SweepHeartbeats(ctx, "node", at, time.Minute, 100)
		check(t, err)
		return changes
	}
	pingForWindow(t, db, ok, heartbeat.SignalSuccess, base.Add(time.Second))
	pingForWindow(t, db, failed, heartbeat.SignalFail, base.Add(2*time.Second))
	pingForWindow(t, db, outside, heartbeat.SignalSuccess, base.Add(3*time.Second))

	began := "maintenance window mw_a began"
	first := store.MaintenancePlan{Now: base.Add(10 * time.Second), Active: map[string][]string{
		m.ID: {"mw_a"}, ok.ID: {"mw_a"}, failed.ID: {"mw_a"}, fresh.ID: {"mw_a"}, paused.ID: {"mw_a"}}}
	changes, err := db.ApplyMaintenance(ctx, first)
	check(t, err)
	equal(t, path(changes), path([]store.StateChange{
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
	changes, err = db.ApplyMaintenance(ctx, first)
	check(t, err)
	equal(t, len(changes), 0)
	if s := heartbeatRuntime(t, db, paused).State; s != monitor.StatePaused {
		t.Fatalf("paused heartbeat is %s", s)
	}

	// Pings during maintenance are recorded and move nothing.
	if c := pingForWindow(t, db, failed, heartbeat.SignalSuccess, base.Add(20*time.Second)); len(c) != 0 {
		t.Fatalf("a ping during maintenance changed the state: %v", path(c))
	}
	// ok's deadline (2 minutes after its ping) passes: no alert. outside's
	// passes too, and it is DOWN.
	changes = sweep(base.Add(130 * time.Second))
	if len(changes) != 1 || changes[0].SubjectID != outside.ID || changes[0].To != monitor.StateDown {
		t.Fatalf("deadline sweep during maintenance: %v", path(changes))
	}
	rt := heartbeatRuntime(t, db, ok)
	if rt.State != monitor.StateMaintenance || rt.Late || !rt.Deadline.After(base.Add(130*time.Second)) {
		t.Fatalf("ok after its deadline passed in maintenance: %+v", rt)
	}

	// mw_a ends while mw_b still holds ok: the others leave.
	ended := "maintenance window mw_a ended"
	changes, err = db.ApplyMaintenance(ctx, store.MaintenancePlan{Now: base.Add(140 * time.Second),
		Active: map[string][]string{ok.ID: {"mw_b"}}})
	check(t, err)
	equal(t, path(changes), path([]store.StateChange{
		{SubjectID: m.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StatePending, Cause: ended}},
		// Its last report, made during the window, was a success.
		{SubjectID: failed.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StateUp, Cause: ended}},
		{SubjectID: fresh.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StatePending, Cause: ended}},
	}))

	// ok's next deadline passes inside mw_b, and mw_b goes before the
	// deadline sweeper came to it: that deadline does not count.
	deadline := heartbeatRuntime(t, db, ok).Deadline
	leave := deadline.Add(15 * time.Second)
	changes, err = db.ApplyMaintenance(ctx, store.MaintenancePlan{Now: leave, Active: map[string][]string{},
		EndCause: func(id, win string) string { return "window " + win + " was deleted" }})
	check(t, err)
	equal(t, path(changes), path([]store.StateChange{
		{SubjectID: ok.ID, Transition: monitor.Transition{From: monitor.StateMaintenance, To: monitor.StateUp, Cause: "window mw_b was deleted"}},
	}))
	if c := sweep(leave); len(c) != 0 {
		t.Fatalf("a deadline inside the window counted after it: %v", path(c))
	}
	// The next one does.
	next := heartbeatRuntime(t, db, ok).Deadline
	if !next.After(leave) {
		t.Fatalf("deadline after leaving %v, not after %v", next, leave)
	}
	changes = sweep(next.Add(time.Second))
	if i := slices.IndexFunc(changes, func(c store.StateChange) bool { return c.SubjectID == ok.ID }); i < 0 || changes[i].To != monitor.StateDown {
		t.Fatalf("the first deadline after the window: %v", path(changes))
	}
	hist := stateHistory(t, db, w.ID, ok.ID)
	equal(t, hist[:3], []string{
		"PENDING→UP: the job reported success",
		"UP→MAINTENANCE: " + began,
		"MAINTENANCE→UP: window mw_b was deleted",
	})
	if len(hist) != 4 || !strings.HasPrefix(hist[3], "UP→DOWN: late:") {
		t.Fatalf("history of ok: %q", hist)
	}

	// A paused heartbeat resumed inside a window enters maintenance.
	check(t, db.SetHeartbeatPaused(ctx, w.ID, paused.ID, false, leave))
	changes, err = db.ApplyMaintenance(ctx, store.MaintenancePlan{Now: leave.Add(time.Second),
		Active: map[string][]string{paused.ID: {"mw_c"}}})
	check(t, err)
	equal(t, path(changes), path([]store.StateChange{
		{SubjectID: paused.ID, Transition: monitor.Transition{From: monitor.StatePending, To: monitor.StateMaintenance, Cause: "maintenance window mw_c began"}},
	}))
	equal(t, stateHistory(t, db, w.ID, paused.ID), []string{
		"PAUSED→PENDING: resumed", "PENDING→MAINTENANCE: maintenance window mw_c began"})
}
