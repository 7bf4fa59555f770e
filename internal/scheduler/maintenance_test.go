package scheduler_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/maintenance"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/scheduler"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// addWindow stores a one-off maintenance window over monitors.
func addWindow(t testing.TB, db *store.DB, ws string, from, to time.Time, monitorIDs ...string) maintenance.Window {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	slices.Sort(monitorIDs)
	w := maintenance.Window{ID: ids.New(ids.Maintenance, now), WorkspaceID: ws, Name: "maintenance",
		StartsAt: from.UTC().Truncate(time.Microsecond), EndsAt: to.UTC().Truncate(time.Microsecond),
		MonitorIDs: monitorIDs, CreatedAt: now, UpdatedAt: now}
	check(t, db.CreateMaintenanceWindow(ctx, w, 100))
	return w
}

// history is a monitor's state history, oldest first, as "FROM→TO: cause".
func history(t testing.TB, db *store.DB, m monitor.Monitor) []string {
	t.Helper()
	hist, err := db.ListStateChanges(ctx, m.WorkspaceID, m.ID, time.Time{}, 100)
	check(t, err)
	var out []string
	for _, tr := range slices.Backward(hist) {
		out = append(out, fmt.Sprintf("%s→%s: %s", tr.From, tr.To, tr.Cause))
	}
	return out
}

func countResults(obs []monitor.Observation, r monitor.Result, after time.Time) int {
	n := 0
	for _, o := range obs {
		if o.Result == r && o.StartedAt.After(after) {
			n++
		}
	}
	return n
}

// TestMaintenanceWindowHoldsState runs a real monitor of a real server:
// a window active now puts it in MAINTENANCE while its checks go on being
// recorded; the target failing meanwhile does not make it DOWN; deleting
// the window lets it leave MAINTENANCE for the state its results support.
// A paused monitor in the same window stays PAUSED.
func TestMaintenanceWindowHoldsState(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := openDB(t, e)
			ws := workspace(t, db)
			tg := newTarget(t)
			m := addMonitor(t, db, ws, tg.URL, time.Second, 1)
			paused := addMonitor(t, db, ws, tg.URL, time.Second, 1)
			_, err := appOf(db).SetPaused(ctx, app.Actor{WorkspaceID: ws, Role: account.RoleOwner}, paused.ID, true)
			check(t, err)
			start(t, scheduler.Options{Node: "node-a", App: appOf(db)})
			startMaintenance(t, &scheduler.Maintenance{App: appOf(db), Every: 100 * time.Millisecond})
			wait.For(t, 30*time.Second, "UP", func() bool { return getMonitor(t, db, m).State == monitor.StateUp })

			w := addWindow(t, db, ws, time.Now().Add(-time.Minute), time.Now().Add(time.Hour), m.ID, paused.ID)
			wait.For(t, 30*time.Second, "MAINTENANCE", func() bool { return getMonitor(t, db, m).State == monitor.StateMaintenance })
			began := time.Now()

			tg.status.Store(503)
			wait.For(t, 30*time.Second, "three down checks during maintenance", func() bool {
				return countResults(observations(t, db, m), monitor.ResultDown, began) >= 3
			})
			got := getMonitor(t, db, m)
			if got.State != monitor.StateMaintenance || got.Last.Result != monitor.ResultDown {
				t.Fatalf("during maintenance with a failing target: state %s, last check %+v", got.State, got.Last)
			}

			check(t, db.DeleteMaintenanceWindow(ctx, ws, w.ID))
			wait.For(t, 30*time.Second, "DOWN after the window went", func() bool { return getMonitor(t, db, m).State == monitor.StateDown })
			want := []string{
				"PENDING→UP: the check passed",
				"UP→MAINTENANCE: maintenance window " + w.ID + " began",
				"MAINTENANCE→DOWN: maintenance window " + w.ID + " was deleted",
			}
			if h := history(t, db, m); !slices.Equal(h, want) {
				t.Fatalf("state history:\n%q\nwant\n%q", h, want)
			}
			if s := getMonitor(t, db, paused).State; s != monitor.StatePaused {
				t.Fatalf("paused monitor in the window is %s", s)
			}
			if h := history(t, db, paused); !slices.Equal(h, []string{"PENDING→PAUSED: paused"}) {
				t.Fatalf("paused monitor's history: %q", h)
			}
		})
	}
}

// startMaintenance runs m until the test ends.
func startMaintenance(t testing.TB, m *scheduler.Maintenance) {
	t.Helper()
	c, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(c)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// TestMaintenanceWindowEndsOnTime: the runner applies the windows at an
// occurrence's end, not only every few seconds, and the monitor goes back
// to what its checks during the window found.
func TestMaintenanceWindowEndsOnTime(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := openDB(t, e)
			ws := workspace(t, db)
			tg := newTarget(t)
			m := addMonitor(t, db, ws, tg.URL, time.Second, 1)
			end := time.Now().Add(2500 * time.Millisecond)
			w := addWindow(t, db, ws, time.Now().Add(-time.Second), end, m.ID)
			// The periodic sweep is far slower than the window is long.
			start(t, scheduler.Options{Node: "node-a", App: appOf(db)})
			startMaintenance(t, &scheduler.Maintenance{App: appOf(db), Every: time.Minute})
			wait.For(t, 30*time.Second, "MAINTENANCE from the sweep at start", func() bool { return getMonitor(t, db, m).State == monitor.StateMaintenance })
			wait.For(t, 30*time.Second, "UP after the window", func() bool { return getMonitor(t, db, m).State == monitor.StateUp })
			hist, err := db.ListStateChanges(ctx, ws, m.ID, time.Time{}, 1)
			check(t, err)
			if late := hist[0].At.Sub(end); hist[0].Cause != "maintenance window "+w.ID+" ended" || late < 0 || late > time.Second {
				t.Fatalf("left maintenance %v after the window's end, cause %q", late, hist[0].Cause)
			}
			if n := countResults(observations(t, db, m), monitor.ResultUp, time.Time{}); n == 0 {
				t.Fatal("no checks recorded during the window")
			}
		})
	}
}

// fakeClock is a settable runner's clock, which counts how often it was
// read.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	reads int
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return c.t
}

func (c *fakeClock) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// TestRecurringMaintenanceWindow: a weekly window in a time zone begins and
// ends with the runner's clock. No check of the monitor runs: only the
// windows move its state.
func TestRecurringMaintenanceWindow(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := openDB(t, e)
			ws := workspace(t, db)
			m := addMonitor(t, db, ws, "http://127.0.0.1:1/", 10*time.Second, 5)
			now := time.Now().UTC().Truncate(time.Microsecond)
			// Saturdays 02:00-04:00 in Berlin: 00:00-02:00Z in summer.
			w := maintenance.Window{ID: ids.New(ids.Maintenance, now), WorkspaceID: ws, Name: "weekly",
				StartsAt: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), Cron: "0 2 * * 6", Timezone: "Europe/Berlin",
				Duration: 2 * time.Hour, MonitorIDs: []string{m.ID}, CreatedAt: now, UpdatedAt: now}
			check(t, db.CreateMaintenanceWindow(ctx, w, 100))
			clock := &fakeClock{t: time.Date(2020, 5, 1, 23, 59, 0, 0, time.UTC)} // Friday night
			startMaintenance(t, &scheduler.Maintenance{App: appOf(db), Now: clock.Now, Every: 50 * time.Millisecond})
			// A round reads the clock once, at its start: the second read
			// is the second round's, so the first is done.
			wait.For(t, 30*time.Second, "a round on Friday night", func() bool { return clock.Reads() >= 2 })
			if s := getMonitor(t, db, m).State; s != monitor.StatePending {
				t.Fatalf("before the window: %s", s)
			}
			clock.Set(time.Date(2020, 5, 2, 0, 30, 0, 0, time.UTC))
			wait.For(t, 30*time.Second, "MAINTENANCE on Saturday at 02:30 Berlin", func() bool { return getMonitor(t, db, m).State == monitor.StateMaintenance })
			clock.Set(time.Date(2020, 5, 2, 2, 0, 0, 0, time.UTC))
			wait.For(t, 30*time.Second, "out of maintenance at 04:00 Berlin", func() bool { return getMonitor(t, db, m).State == monitor.StatePending })
			want := []string{
				"PENDING→MAINTENANCE: maintenance window " + w.ID + " began",
				"MAINTENANCE→PENDING: maintenance window " + w.ID + " ended",
			}
			if h := history(t, db, m); !slices.Equal(h, want) {
				t.Fatalf("state history %q, want %q", h, want)
			}
		})
	}
}

// TestMaintenanceWindowHoldsHeartbeats: the maintenance runner moves the
// heartbeats a window names into MAINTENANCE with its monitors, and out
// when the window stops naming them, saying so.
func TestMaintenanceWindowHoldsHeartbeats(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := openDB(t, e)
			ws := workspace(t, db)
			m := addMonitor(t, db, ws, "http://127.0.0.1:1/", 10*time.Second, 5)
			now := time.Now().UTC().Truncate(time.Microsecond)
			h := heartbeat.Heartbeat{ID: ids.New(ids.Heartbeat, now), WorkspaceID: ws, Name: "backup",
				Schedule: heartbeat.Schedule{PeriodSeconds: 3600}, Runtime: heartbeat.New(now, false), CreatedAt: now, UpdatedAt: now}
			check(t, db.CreateHeartbeat(ctx, h, heartbeat.HashToken(h.ID), []byte("sealed"), 100))
			state := func() monitor.State {
				got, _, err := db.GetHeartbeat(ctx, ws, h.ID)
				check(t, err)
				return got.State()
			}
			clock := &fakeClock{t: time.Date(2020, 5, 2, 0, 30, 0, 0, time.UTC)}
			w := maintenance.Window{ID: ids.New(ids.Maintenance, now), WorkspaceID: ws, Name: "weekly",
				StartsAt: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), Cron: "0 2 * * 6", Timezone: "Europe/Berlin",
				Duration: 2 * time.Hour, MonitorIDs: []string{m.ID}, HeartbeatIDs: []string{h.ID}, CreatedAt: now, UpdatedAt: now}
			check(t, db.CreateMaintenanceWindow(ctx, w, 100))
			startMaintenance(t, &scheduler.Maintenance{App: appOf(db), Now: clock.Now, Every: 50 * time.Millisecond})
			wait.For(t, 30*time.Second, "heartbeat in MAINTENANCE", func() bool { return state() == monitor.StateMaintenance })
			if s := getMonitor(t, db, m).State; s != monitor.StateMaintenance {
				t.Fatalf("monitor in the same window: %s", s)
			}

			prev := w.UpdatedAt
			w.HeartbeatIDs, w.UpdatedAt = nil, prev.Add(time.Second)
			check(t, db.UpdateMaintenanceWindow(ctx, w, prev))
			wait.For(t, 30*time.Second, "heartbeat out of maintenance", func() bool { return state() == monitor.StatePending })
			hist, err := db.ListStateChanges(ctx, ws, h.ID, time.Time{}, 10)
			check(t, err)
			var got []string
			for _, tr := range slices.Backward(hist) {
				got = append(got, fmt.Sprintf("%s→%s: %s", tr.From, tr.To, tr.Cause))
			}
			want := []string{
				"PENDING→MAINTENANCE: maintenance window " + w.ID + " began",
				"MAINTENANCE→PENDING: heartbeat was removed from maintenance window " + w.ID,
			}
			if !slices.Equal(got, want) {
				t.Fatalf("heartbeat's history %q, want %q", got, want)
			}
			if s := getMonitor(t, db, m).State; s != monitor.StateMaintenance {
				t.Fatalf("monitor still named by the window: %s", s)
			}
		})
	}
}
