package store_test

import (
	"errors"
	"slices"
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
		{"HeartbeatWindows", testMaintenanceHeartbeatWindows},
	}
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) { tt.fn(t, e) })
			}
		})
	}
}

func oneOff(wsID string, monitorIDs ...string) maintenance.Window {
	return maintenance.Window{ID: ids.New(ids.Maintenance, t0), WorkspaceID: wsID, Name: "db upgrade",
		Description: "Postgres 17", StartsAt: t0.Add(time.Hour), EndsAt: t0.Add(3 * time.Hour),
		MonitorIDs: monitorIDs, CreatedAt: t0, UpdatedAt: t0}
}

func testMaintenanceWindows(t *testing.T, e storetest.Engine) {
	db := openWithWorkflow(t, e)
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
	check(t, deleteMonitor(db, w.ID, m2.ID))
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
	db := openWithWorkflow(t, e)
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

// Windows name heartbeats as they name monitors.
func testMaintenanceHeartbeatWindows(t *testing.T, e storetest.Engine) {
	db := openWithWorkflow(t, e)
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
	check(t, deleteHeartbeat(db, w.ID, h2.ID))
	got, err = db.GetMaintenanceWindow(ctx, w.ID, both.ID)
	check(t, err)
	if len(got.HeartbeatIDs) != 0 || !slices.Equal(got.MonitorIDs, []string{m.ID}) {
		t.Fatalf("subjects after deleting the heartbeat: %v, %v", got.MonitorIDs, got.HeartbeatIDs)
	}
}
