package store_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// TestWorkspaceStates: one query gives every monitor and heartbeat of a
// workspace with its state and latest check or ping, and nothing of
// another workspace; a ping still in the SQLite journal is seen.
func TestWorkspaceStates(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := storetest.OpenDB(t, e)
			_, w := seed(t, db, "acme")
			_, other := seed(t, db, "other")
			m := addMonitor(t, db, w.ID, monitor.Config{})
			addMonitor(t, db, other.ID, monitor.Config{})
			h := newHeartbeat(t, db, w.ID, t0, 60, 10, 0)
			newHeartbeat(t, db, other.ID, t0, 60, 10, 0)

			got := workspaceStates(t, db, w.ID)
			equal(t, got, []store.LiveState{
				{ID: m.ID, State: monitor.StatePending, Since: t0, Latency: -1, Created: m.CreatedAt},
				{ID: h.ID, Heartbeat: true, State: h.Runtime.State, Since: t0, Latency: -1, Created: h.CreatedAt},
			})

			at := t0.Add(time.Minute)
			check(t, setPaused(db, w.ID, m.ID, true, at))
			pinged := t0.Add(30 * time.Second)
			record(t, db, ping(h.Token, heartbeat.SignalSuccess, pinged, "", ""))
			got = workspaceStates(t, db, w.ID)
			equal(t, got[0], store.LiveState{ID: m.ID, State: monitor.StatePaused, Since: at, Paused: true, Latency: -1, Created: m.CreatedAt})
			if got[1].State != monitor.StateUp || !got[1].LastAt.Equal(pinged) || got[1].Paused {
				t.Errorf("heartbeat after a ping: %+v", got[1])
			}
			if n := len(workspaceStates(t, db, other.ID)); n != 2 {
				t.Errorf("the other workspace has %d subjects, want 2", n)
			}
		})
	}
}

// workspaceStates reads the workspace's states, monitors first.
func workspaceStates(t *testing.T, db *store.DB, wsID string) []store.LiveState {
	t.Helper()
	got, err := db.WorkspaceStates(ctx, wsID)
	check(t, err)
	slices.SortFunc(got, func(a, b store.LiveState) int {
		if a.Heartbeat != b.Heartbeat {
			if a.Heartbeat {
				return 1
			}
			return -1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return got
}
