package app

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// TestWorkspaceOverview: a workspace's overview says of each subject what
// its metrics say, and of all of them together what their durations
// added up say, for monitors, heartbeats and both, on both engines;
// another workspace's subjects are in neither; a key without
// metrics:read is refused.
func TestWorkspaceOverview(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := storetest.OpenDB(t, e)
			start := time.Date(2026, 4, 6, 0, 0, 0, 0, time.UTC)
			now := start
			a := New(db, nil, func() time.Time { return now }, slog.New(slog.DiscardHandler), Config{RetentionDays: 30})
			w := addWorkspace(t, db, "overview")
			other := addWorkspace(t, db, "other")
			actor := Actor{UserID: "usr_x", WorkspaceID: w.ID, Role: account.RoleViewer}
			rng := rand.New(rand.NewPCG(3, 9))
			// Monitors checked every 8 hours for 40 days with runs of
			// results, created 13 days apart; another workspace's monitor
			// down throughout.
			observeAll := func(wsID string, created time.Time, results func() monitor.Result) string {
				now = created
				m := addMonitor(t, db, wsID, monitor.Config{Confirmations: 1, Recoveries: 1})
				for at := created.Add(time.Minute); at.Before(start.Add(40 * 24 * time.Hour)); at = at.Add(8 * time.Hour) {
					now = at
					observe(t, db, m, results(), at)
				}
				return m.ID
			}
			r := monitor.ResultUp
			runs := func() monitor.Result {
				if rng.IntN(6) == 0 {
					r = []monitor.Result{monitor.ResultUp, monitor.ResultDown, monitor.ResultDegraded}[rng.IntN(3)]
				}
				return r
			}
			var mons []string
			for i := range 3 {
				mons = append(mons, observeAll(w.ID, start.Add(time.Duration(i)*13*24*time.Hour), runs))
			}
			foreign := observeAll(other.ID, start, func() monitor.Result { return monitor.ResultDown })
			now = start
			h := newHeartbeat(t, db, w.ID, start, 3600, 300, 0)
			var pings []heartbeat.Arrival
			for at := start.Add(time.Minute); at.Before(start.Add(40 * 24 * time.Hour)); at = at.Add(time.Duration(30+rng.IntN(80)) * time.Minute) {
				sig := heartbeat.SignalSuccess
				if rng.IntN(8) == 0 {
					sig = heartbeat.SignalFail
				}
				pings = append(pings, ping(h.Token, sig, at, "", ""))
			}
			_, _, err := newApp(db).RecordPings(ctx, pings)
			check(t, err)
			now = start.Add(40*24*time.Hour + 5*time.Minute)

			windows := []string{"24h", "7d", "30d"}
			for _, kind := range []string{KindMonitor, KindHeartbeat, ""} {
				got, err := a.WorkspaceOverview(ctx, actor, kind, windows...)
				check(t, err)
				wantIDs := map[string]bool{h.ID: kind != KindMonitor}
				for _, id := range mons {
					wantIDs[id] = kind != KindHeartbeat
				}
				seen := map[string]bool{}
				for _, s := range got.States {
					if s.ID == foreign {
						t.Fatalf("%q: another workspace's monitor is in the overview", kind)
					}
					seen[s.ID] = true
				}
				for id, want := range wantIDs {
					if seen[id] != want {
						t.Errorf("%q: %s in the overview: %v, want %v", kind, id, seen[id], want)
					}
				}
				if len(got.Windows) != len(windows) {
					t.Fatalf("%q: %d windows", kind, len(got.Windows))
				}
				for i, win := range windows {
					list, err := a.ListMetrics(ctx, actor, MetricsFilter{Kind: kind}, PageRequest{Limit: MaxPageLimit}, MetricsRequest{Window: win})
					check(t, err)
					var sum metrics.Durations
					for _, m := range list.Items {
						sum = sum.Add(m.Figures.Durations)
						wantEqual(t, ratio(got.Windows[i].Of[m.SubjectID]), ratio(m.Figures.Ratios.Availability))
					}
					if len(got.Windows[i].Of) != len(list.Items) {
						t.Errorf("%q %s: %d subjects, metrics list %d", kind, win, len(got.Windows[i].Of), len(list.Items))
					}
					wantEqual(t, ratio(got.Windows[i].All), ratio(sum.Ratios().Availability))
					if win == "30d" && (got.Windows[i].All == nil || *got.Windows[i].All == 1 || *got.Windows[i].All == 0) {
						t.Errorf("%q %s: overall %v, want a ratio strictly between 0 and 1 from 30 days of this history", kind, win, ratio(got.Windows[i].All))
					}
				}
			}

			key := Actor{UserID: "usr_x", KeyID: "key_x", WorkspaceID: w.ID, Role: account.RoleOwner, Scopes: []account.Scope{account.ScopeMonitorsRead}}
			if _, err := a.WorkspaceOverview(ctx, key, KindMonitor, "24h"); errs.KindOf(err) != errs.KindInsufficientScope {
				t.Errorf("a key without metrics:read: %v", err)
			}
			if _, err := a.WorkspaceOverview(ctx, actor, KindMonitor, "1y2"); errs.KindOf(err) != errs.KindInvalid {
				t.Errorf("a bad window: %v", err)
			}
		})
	}
}

// ratio shows a nil ratio as -1, to compare.
func ratio(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestWorkspaceOverviewKept: every subject's figures are computed afresh
// when they are a minute old; in between, those of a subject that changes
// state or is new are, and say what its metrics say, while the others
// come from memory. The states are always read afresh.
func TestWorkspaceOverviewKept(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := storetest.OpenDB(t, e)
			now := t0
			a := New(db, nil, func() time.Time { return now }, slog.New(slog.DiscardHandler), Config{})
			w := addWorkspace(t, db, "kept")
			actor := Actor{UserID: "usr_x", WorkspaceID: w.ID, Role: account.RoleViewer}
			key := overviewKey{workspace: w.ID, kind: KindMonitor, windows: "24h"}
			m := addMonitor(t, db, w.ID, monitor.Config{Confirmations: 1, Recoveries: 1})
			other := addMonitor(t, db, w.ID, monitor.Config{Confirmations: 1, Recoveries: 1})
			now = t0.Add(time.Minute)
			observe(t, db, m, monitor.ResultUp, now)
			overview := func() Overview {
				t.Helper()
				got, err := a.WorkspaceOverview(ctx, actor, KindMonitor, "24h")
				check(t, err)
				return got
			}
			// afresh says when every subject's figures were last computed.
			afresh := func() time.Time {
				t.Helper()
				e, ok := a.overviews.entries[key]
				if !ok {
					t.Fatal("no overview kept")
				}
				return e.at
			}
			// wantMetrics compares a subject's figure with its metrics now.
			wantMetrics := func(got Overview, id string) {
				t.Helper()
				mm, err := a.MonitorMetrics(ctx, actor, id, MetricsRequest{Window: "24h"})
				check(t, err)
				wantEqual(t, ratio(got.Windows[0].Of[id]), ratio(mm.Figures.Ratios.Availability))
			}
			first := now.Add(time.Hour)
			now = first
			overview()
			wantEqual(t, afresh(), first)
			now = first.Add(59 * time.Second)
			overview()
			wantEqual(t, afresh(), first) // kept
			now = first.Add(OverviewMaxAge)
			overview()
			wantEqual(t, afresh(), now) // a minute old: all afresh
			second := now

			now = second.Add(10 * time.Second)
			observe(t, db, m, monitor.ResultDown, now)
			now = now.Add(10 * time.Second)
			got := overview()
			wantEqual(t, afresh(), second) // only the changed monitor's
			if got.States[0].State != monitor.StateDown && got.States[1].State != monitor.StateDown {
				t.Errorf("states after the change: %+v", got.States)
			}
			wantMetrics(got, m.ID)
			if *got.Windows[0].Of[m.ID] == 1 || *got.Windows[0].All == 1 {
				t.Errorf("after the change: %v of the monitor, %v of all", ratio(got.Windows[0].Of[m.ID]), ratio(got.Windows[0].All))
			}
			kept := a.overviews.entries[key].subjects[other.ID]

			now = now.Add(10 * time.Second)
			added := addMonitor(t, db, w.ID, monitor.Config{})
			now = now.Add(10 * time.Second)
			got = overview()
			wantEqual(t, afresh(), second)
			if _, ok := got.Windows[0].Of[added.ID]; !ok {
				t.Error("the new monitor has no figure")
			}
			if f := a.overviews.entries[key].subjects[other.ID]; &f.windows[0] != &kept.windows[0] {
				t.Error("the unchanged monitor's figures were computed again")
			}
			now = second.Add(OverviewMaxAge)
			got = overview()
			wantEqual(t, afresh(), now)
			for _, id := range []string{m.ID, other.ID, added.ID} {
				wantMetrics(got, id)
			}
		})
	}
}

// TestMetricsEach: a subject's metrics for several windows in one call are
// what a call for each window says, for a monitor and a heartbeat, on both
// engines; a bad window anywhere refuses the whole call.
func TestMetricsEach(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := storetest.OpenDB(t, e)
			now := t0
			a := New(db, nil, func() time.Time { return now }, slog.New(slog.DiscardHandler), Config{})
			w := addWorkspace(t, db, "each")
			actor := Actor{UserID: "usr_x", WorkspaceID: w.ID, Role: account.RoleViewer}
			m := addMonitor(t, db, w.ID, monitor.Config{Confirmations: 1, Recoveries: 1})
			for i, r := range []monitor.Result{monitor.ResultUp, monitor.ResultDown, monitor.ResultUp, monitor.ResultDegraded, monitor.ResultUp} {
				now = t0.Add(time.Duration(i+1) * 7 * time.Hour)
				observe(t, db, m, r, now)
			}
			h := newHeartbeat(t, db, w.ID, t0, 3600, 300, 0)
			_, _, err := newApp(db).RecordPings(ctx, []heartbeat.Arrival{ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Hour), "", ""),
				ping(h.Token, heartbeat.SignalFail, t0.Add(20*time.Hour), "", "")})
			check(t, err)
			now = t0.Add(50 * time.Hour)
			reqs := []MetricsRequest{{Window: "24h", Resolution: metrics.Hour}, {Window: "30d"}, {Window: "90d", Resolution: metrics.Day}}
			for _, c := range []struct {
				id   string
				each func(context.Context, Actor, string, ...MetricsRequest) ([]SubjectMetrics, error)
				one  func(context.Context, Actor, string, MetricsRequest) (SubjectMetrics, error)
			}{{m.ID, a.MonitorMetricsEach, a.MonitorMetrics}, {h.ID, a.HeartbeatMetricsEach, a.HeartbeatMetrics}} {
				got, err := c.each(ctx, actor, c.id, reqs...)
				check(t, err)
				if len(got) != len(reqs) {
					t.Fatalf("%s: %d answers for %d requests", c.id, len(got), len(reqs))
				}
				for i, req := range reqs {
					want, err := c.one(ctx, actor, c.id, req)
					check(t, err)
					wantEqual(t, got[i], want)
				}
				if got[1].Figures.Ratios.Availability == nil || *got[1].Figures.Ratios.Availability == 1 {
					t.Errorf("%s: 30 days %v, want the history's ratio", c.id, ratio(got[1].Figures.Ratios.Availability))
				}
				if _, err := c.each(ctx, actor, c.id, reqs[0], MetricsRequest{Window: "1y2"}); errs.KindOf(err) != errs.KindInvalid {
					t.Errorf("%s: a bad window: %v", c.id, err)
				}
			}
		})
	}
}
