package app

import (
	"context"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// The heartbeat deadline sweep: the store claims the heartbeats that are
// due, reads when this service was receiving pings, and stores verdicts
// with a compare-and-set, in the hold of its ping journal; the verdict is
// decided here.

// deadlineVerdict is the verdict of the sweep at now on a heartbeat with
// runtime rt and schedule s: the deadlines and overruns that have passed
// by now, each judged DOWN only if this service was receiving pings all
// the while its ping could have come (covered), UNKNOWN otherwise.
func deadlineVerdict(now time.Time, rt heartbeat.Runtime, s heartbeat.Settings, covered heartbeat.Coverage) (heartbeat.Runtime, []monitor.Transition) {
	return rt.Sweep(now, s, covered)
}

// sweepHeartbeats judges up to limit heartbeats whose deadline or overrun
// has come by now, leased to owner for a minute. It returns the state
// changes made, by time, and how many heartbeats were claimed; a verdict
// the database refuses is set aside, the others stored, and the error
// (IsDataError) names it.
func (a *App) sweepHeartbeats(ctx context.Context, owner string, now time.Time, limit int) ([]StateChange, int, error) {
	changes, claimed, err := a.store.SweepHeartbeats(ctx, owner, now, time.Minute, limit,
		func(h store.SweptHeartbeat, spans [][2]time.Time) (heartbeat.Runtime, []monitor.Transition) {
			return deadlineVerdict(now, h.Runtime, h.Settings, heartbeat.SpanCoverage(spans))
		})
	return fromStoreChanges(changes), claimed, err
}

// fromStoreChanges is changes as app reports them.
func fromStoreChanges(changes []store.StateChange) []StateChange {
	if len(changes) == 0 {
		return nil
	}
	out := make([]StateChange, len(changes))
	for i, c := range changes {
		out[i] = StateChange{SubjectID: c.SubjectID, Transition: c.Transition}
	}
	return out
}
