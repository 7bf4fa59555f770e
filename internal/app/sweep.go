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

// outageBatch bounds the heartbeats one transaction of recordOutage moves.
const outageBatch = 500

// recordOutage records an outage of this service, from from to to, on
// every heartbeat it may have cost a ping (heartbeat.Runtime.Gap): UNKNOWN
// from its start, for the state history only, in transactions of up to
// outageBatch heartbeats. It returns the state changes made.
func (a *App) recordOutage(ctx context.Context, from, to time.Time) ([]StateChange, error) {
	var all []StateChange
	for after := int64(0); ; {
		var (
			changes []StateChange
			last    int64
			n       int
		)
		err := a.store.HeartbeatTx(ctx, func(tx *store.Tx) error {
			changes, last = changes[:0], after
			hs, err := tx.LockOutageHeartbeats(ctx, to, after, outageBatch)
			n = len(hs)
			if err != nil {
				return err
			}
			for _, h := range hs {
				last = h.Seq
				settings, err := a.flow.Settings(h.Heartbeat)
				if err != nil {
					return err
				}
				rt, tr := h.Runtime.Gap(from, to, settings)
				if tr == nil {
					continue
				}
				if err := tx.SaveHeartbeatRuntime(ctx, h.Seq, rt, settings); err != nil {
					return err
				}
				if err := recordTransition(ctx, tx, h.ID, *tr); err != nil {
					return err
				}
				changes = append(changes, StateChange{SubjectID: h.ID, Transition: *tr})
			}
			return nil
		})
		if err != nil {
			return all, err
		}
		all = append(all, changes...)
		if n < outageBatch {
			return all, nil
		}
		after = last
	}
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
