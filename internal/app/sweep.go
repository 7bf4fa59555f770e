package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// The heartbeat deadline sweep, in the shape of RecordChecks: the store
// claims the heartbeats that are due and reads when this service was
// receiving pings, with its ping journal held off; the domain gives the
// verdict (heartbeat.Runtime.Sweep); the store writes it with a
// compare-and-set, and the state changes are recorded here.

// deadlineVerdict is the verdict of the sweep at now on a heartbeat with
// runtime rt and schedule s: the deadlines and overruns that have passed
// by now, each judged DOWN only if this service was receiving pings all
// the while its ping could have come (covered), UNKNOWN otherwise.
func deadlineVerdict(now time.Time, rt heartbeat.Runtime, s heartbeat.Settings, covered heartbeat.Coverage) (heartbeat.Runtime, []monitor.Transition) {
	return rt.Sweep(now, s, covered)
}

// SweepHeartbeats judges up to limit heartbeats whose deadline or overrun
// has come by now, leased to owner for a minute (other nodes skip them);
// a verdict is stored only if no ping moved the heartbeat meanwhile. It
// returns the state changes made, by time, and how many heartbeats were
// claimed; a verdict the database refuses is set aside, the others
// stored, and the error (IsDataError) names it.
func (a *App) SweepHeartbeats(ctx context.Context, owner string, now time.Time, limit int) (changes []StateChange, claimed int, err error) {
	err = a.store.SweepHeartbeats(ctx, a.steps, now, func(sw *store.Sweep) error {
		hs, err := sw.Claim(ctx, owner, now, time.Minute, limit)
		claimed = len(hs)
		if err != nil || len(hs) == 0 {
			return err
		}
		// Judged outside any transaction, knowing when this service was
		// receiving pings since the earliest a ping could have come.
		spans, err := sw.Spans(ctx, sweepFrom(hs, now), now)
		if err != nil {
			return err
		}
		covered := heartbeat.SpanCoverage(spans)
		verdicts := make([]verdict, len(hs))
		for i, h := range hs {
			v := verdict{h: h}
			if v.settings, err = a.flow.settings(h.Heartbeat); err != nil {
				return err
			}
			v.rt, v.trs = deadlineVerdict(now, h.Runtime, v.settings, covered)
			verdicts[i] = v
		}
		changes, err = storeVerdicts(ctx, sw, owner, verdicts)
		return err
	})
	slices.SortStableFunc(changes, func(a, b StateChange) int { return a.At.Compare(b.At) })
	return changes, claimed, err
}

// verdict is the sweep's on the claimed heartbeat h: its runtime after,
// with the settings it was judged by, and the state changes that makes.
type verdict struct {
	h        store.ClaimedHeartbeat
	rt       heartbeat.Runtime
	settings heartbeat.Settings
	trs      []monitor.Transition
}

// storeVerdicts stores the verdicts in one transaction, each with a
// compare-and-set (a ping that moved the heartbeat meanwhile, or another
// node that took it over, wins), and records their state changes, which
// it returns. One the database refuses for its content is set aside (its
// lease keeps it until it is judged again), the others stored, and the
// error names it; on any other error nothing is stored.
func storeVerdicts(ctx context.Context, sw *store.Sweep, owner string, verdicts []verdict) (changes []StateChange, err error) {
	refused, err := sw.Store(ctx, func(iso *store.Isolated) error {
		changes = changes[:0]
		for _, v := range verdicts {
			var made []StateChange
			ok, err := iso.Subject(ctx, "the verdict on heartbeat "+v.h.ID, func(tx *store.Tx) error {
				made = made[:0]
				stored, err := tx.SaveSweptRuntime(ctx, owner, v.h.Seq, v.h.Version, v.rt, v.settings)
				if err != nil || !stored {
					return err
				}
				for _, tr := range v.trs {
					made = append(made, StateChange{SubjectID: v.h.ID, Transition: tr})
					if err := recordTransition(ctx, tx, v.h.ID, tr); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if ok {
				changes = append(changes, made...)
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case refused != nil:
		return changes, fmt.Errorf("judging heartbeat deadlines: %w", refused)
	}
	return changes, nil
}

// sweepFrom is the earliest time a ping to the heartbeats hs could have
// come that a verdict at now must know the coverage of: their windows'
// and open runs' starts.
func sweepFrom(hs []store.ClaimedHeartbeat, now time.Time) time.Time {
	earliest := now
	for _, h := range hs {
		if ws := h.Runtime.WindowStart; !ws.IsZero() && ws.Before(earliest) {
			earliest = ws
		}
		for _, run := range h.Runtime.Open {
			if run.StartedAt.Before(earliest) {
				earliest = run.StartedAt
			}
		}
	}
	return earliest
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
		err := a.store.HeartbeatTx(ctx, a.steps, func(tx *store.Tx) error {
			changes, last = changes[:0], after
			hs, err := tx.LockOutageHeartbeats(ctx, to, after, outageBatch)
			n = len(hs)
			if err != nil {
				return err
			}
			for _, h := range hs {
				last = h.Seq
				settings, err := a.flow.settings(h.Heartbeat)
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
