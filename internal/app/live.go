package app

import (
	"context"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/monitor"
)

// LiveState is what a member watching a workspace sees change of one
// monitor or heartbeat without reloading: its state, and its latest check
// (a heartbeat's latest ping and run).
type LiveState struct {
	ID          string
	Kind        string // KindMonitor or KindHeartbeat
	State       monitor.State
	Since       time.Time
	Paused      bool
	LastCheckAt time.Time     // zero: never checked or pinged
	Latency     time.Duration // negative: none
	Reason      string        // why a monitor's last check failed
	Created     time.Time
}

// WorkspaceStates returns the live state of every monitor and heartbeat
// of the actor's workspace, in one query. A state may change on any node
// sharing the database, so the live view polls this rather than listening
// in-process.
func (a *App) WorkspaceStates(ctx context.Context, actor Actor) ([]LiveState, error) {
	if err := actor.Require(account.ScopeMonitorsRead); err != nil {
		return nil, err
	}
	a.stateReads.Add(1)
	rows, err := a.store.WorkspaceStates(ctx, actor.WorkspaceID)
	if err != nil {
		return nil, err
	}
	out := make([]LiveState, len(rows))
	for i, r := range rows {
		kind := KindMonitor
		if r.Heartbeat {
			kind = KindHeartbeat
		}
		out[i] = LiveState{ID: r.ID, Kind: kind, State: r.State, Since: r.Since, Paused: r.Paused,
			LastCheckAt: r.LastAt, Latency: r.Latency, Reason: r.Reason, Created: r.Created}
	}
	return out, nil
}

// StateReads counts the workspace-state reads so far, the live view's
// polls and the lists' overviews alike: what they cost the database, as
// the operator's /metrics shows it.
func (a *App) StateReads() int64 { return a.stateReads.Load() }
