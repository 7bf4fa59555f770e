package app

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// Recording checks: the check scheduler claims due checks, runs them, and
// hands the finished ones back in batches; each batch is recorded in one
// transaction (its observations, what they move of each monitor's state
// machine with the transitions and what those write, the latest-check
// summary, and the end of each lease with the next slot). The decisions
// are the domain's (monitor.Tracker, monitor.NextSlot); the writes are
// store.Tx's primitives.

// ClaimDue leases up to limit checks due at or before horizon whose lease
// has lapsed by now, earliest first, to owner for lease beyond their due
// time. Checks already leased by a live node are skipped, never waited for.
func (a *App) ClaimDue(ctx context.Context, owner string, now, horizon time.Time, lease time.Duration, limit int) ([]monitor.DueCheck, error) {
	return a.store.ClaimDue(ctx, owner, now, horizon, lease, limit)
}

// ReleaseLeases gives back checks that owner claimed but will not run (it
// is stopping), so another node takes them at once rather than when the
// leases lapse.
func (a *App) ReleaseLeases(ctx context.Context, owner string, seqs []int64) error {
	return a.store.ReleaseLeases(ctx, owner, seqs)
}

// RecordChecks stores a batch of finished checks in one transaction: each
// observation, its effect on the monitor's state machine (with the
// transition, if any, and what it writes), the latest-check summary, and
// the end of the lease with the next slot. A check whose lease another
// node has taken over meanwhile is stored but moves nothing; a check of a
// deleted monitor is dropped. It returns the state changes made, but not
// those of a span no node was checking (see gap), which notify no one.
func (a *App) RecordChecks(ctx context.Context, owner string, batch []monitor.Completed) (changes []monitor.StateChange, err error) {
	defer errs.Wrap(&err, "app.RecordChecks(%d)", len(batch))
	if len(batch) == 0 {
		return nil, nil
	}
	// Per monitor in start order, monitors in seq order: nodes lock rows in
	// the same order, so their batches never deadlock.
	batch = slices.Clone(batch)
	slices.SortStableFunc(batch, func(a, b monitor.Completed) int {
		if a.Seq != b.Seq {
			return cmp.Compare(a.Seq, b.Seq)
		}
		return a.Observation.StartedAt.Compare(b.Observation.StartedAt)
	})
	probes := make([]int, len(batch))
	for i, c := range batch {
		if probes[i], err = a.store.ProbeID(ctx, c.Observation.Probe, c.Observation.Region); err != nil {
			return nil, err
		}
	}
	seqs := make([]int64, 0, len(batch))
	for _, c := range batch {
		if len(seqs) == 0 || seqs[len(seqs)-1] != c.Seq {
			seqs = append(seqs, c.Seq)
		}
	}
	err = a.store.InTx(ctx, func(tx *store.Tx) error {
		changes = changes[:0]
		locked, err := tx.LockRuntimes(ctx, seqs)
		if err != nil {
			return err
		}
		rts := make(map[int64]*store.Runtime, len(locked))
		// Whether this node held each lease when the batch began: a batch
		// may carry several checks of one monitor, and the first releases it.
		owned := make(map[int64]bool, len(locked))
		for i := range locked {
			rts[locked[i].Seq] = &locked[i]
			owned[locked[i].Seq] = locked[i].LeaseOwner == owner
		}
		var (
			obs   store.Observations
			moved []*store.Runtime
		)
		for i, c := range batch {
			rt := rts[c.Seq]
			if rt == nil {
				continue // the monitor was deleted while its check ran
			}
			obs.Add(c.Seq, c.Observation, probes[i])
			if !owned[c.Seq] {
				continue // taken over after our lease lapsed: the new owner moves it
			}
			// Our outage before the check goes to the history alone: no
			// event, no incident, nothing to notify.
			if tr := gap(rt, c); tr != nil {
				if err := tx.AppendStateChange(ctx, rt.MonitorID, *tr); err != nil {
					return err
				}
			}
			if tr := checked(rt, c); tr != nil {
				if tr.Quiet, err = endsGap(ctx, tx, rt.MonitorID, *tr); err != nil {
					return err
				}
				if !tr.Quiet {
					changes = append(changes, monitor.StateChange{SubjectID: rt.MonitorID, Transition: *tr})
				}
				if err := recordTransition(ctx, tx, rt.MonitorID, *tr); err != nil {
					return err
				}
			}
			moved = append(moved, rt)
		}
		if err := tx.SaveRuntimes(ctx, moved); err != nil {
			return err
		}
		return tx.InsertObservations(ctx, &obs)
	})
	return changes, err
}

// gap moves rt through the span before the finished check c in which no
// node ran its checks, when c started more than an interval after the slot
// it was due for (DESIGN §7: our own outages are UNKNOWN, never UP), and
// returns the transition: UNKNOWN from that slot, until a check says
// more. It is for the state history only: the span says nothing of the
// target, so it opens, resolves and notifies nothing.
func gap(rt *store.Runtime, c monitor.Completed) *monitor.Transition {
	o := c.Observation
	if o.Due.IsZero() || rt.Interval <= 0 || o.StartedAt.Sub(o.Due) <= rt.Interval {
		return nil
	}
	var tr *monitor.Transition
	rt.Tracker, tr = rt.Tracker.Gap(o.Due, o.StartedAt)
	return tr
}

// endsGap reports whether tr, a check's move of the monitor id, ends a gap
// in its checks by returning to the state the gap interrupted: it leaves
// the UNKNOWN the gap left it in (its last change, with GapCause) for the
// state before it. Nobody was told it had left that state, so nobody is
// told it is back: the move is for the state history only.
func endsGap(ctx context.Context, tx *store.Tx, id string, tr monitor.Transition) (bool, error) {
	if tr.From != monitor.StateUnknown {
		return false, nil
	}
	last, ok, err := tx.LastStateChange(ctx, id)
	if err != nil || !ok {
		return false, err
	}
	return last.To == monitor.StateUnknown && last.From == tr.To && strings.HasPrefix(last.Cause, monitor.GapCausePrefix), nil
}

// checked moves rt by the finished check c: its state machine, its latest
// check (unless a later one is recorded already), its next slot after the
// one c ran for (a paused monitor stays never due), and the end of its
// lease. It returns the transition made, if any.
func checked(rt *store.Runtime, c monitor.Completed) *monitor.Transition {
	o := c.Observation
	var tr *monitor.Transition
	if o.Result.Known() {
		rt.Tracker, tr = rt.Tracker.Observe(o.Result, o.Reason, o.StartedAt, c.Thresholds)
	} else {
		rt.Tracker, tr = rt.Tracker.Tick(o.StartedAt, rt.Interval)
	}
	if o.StartedAt.After(rt.Last.At) {
		expiry := rt.Last.CertExpiry
		if !o.CertExpiry.IsZero() {
			expiry = o.CertExpiry
		}
		rt.Last = monitor.LastCheck{At: o.StartedAt, Result: o.Result, Reason: o.Reason,
			Latency: o.Latency, StatusCode: o.StatusCode, CertExpiry: expiry}
	}
	if !rt.NextDue.IsZero() {
		from := o.StartedAt
		if o.Due.After(from) {
			from = o.Due
		}
		rt.NextDue = monitor.NextSlot(rt.MonitorID, rt.Interval, from)
	}
	rt.LeaseOwner, rt.LeaseUntil = "", time.Time{}
	return tr
}

// SweepStale marks UNKNOWN every monitor whose checks ran but none could
// tell for two intervals, and returns the transitions. A monitor with no
// check at all for two intervals is left alone: no node was running its
// checks, which is our outage, not news about the target, and the check
// that ends it records the span as UNKNOWN without notifying anyone (see
// gap). Rows another node holds locked are left to it.
func (a *App) SweepStale(ctx context.Context, now time.Time) (changes []monitor.StateChange, err error) {
	defer errs.Wrap(&err, "app.SweepStale")
	err = a.store.InTx(ctx, func(tx *store.Tx) error {
		changes = changes[:0]
		stale, err := tx.StaleRuntimes(ctx, now)
		if err != nil {
			return err
		}
		for _, rt := range stale {
			var tr *monitor.Transition
			rt.Tracker, tr = rt.Tracker.Tick(now, rt.Interval)
			if tr == nil {
				continue
			}
			if err := tx.SaveRuntime(ctx, rt); err != nil {
				return err
			}
			if err := recordTransition(ctx, tx, rt.MonitorID, *tr); err != nil {
				return err
			}
			changes = append(changes, monitor.StateChange{SubjectID: rt.MonitorID, Transition: *tr})
		}
		return nil
	})
	return changes, err
}

// paused moves rt to PAUSED, never due, or back to PENDING, due at its
// next slot after at; either way its lease ends. It returns the
// transition made, if any.
func paused(rt *store.Runtime, pause bool, at time.Time) *monitor.Transition {
	var tr *monitor.Transition
	if pause {
		rt.Tracker, tr = rt.Tracker.Pause(at)
		rt.NextDue = time.Time{}
	} else {
		rt.Tracker, tr = rt.Tracker.Resume(at)
		rt.NextDue = monitor.NextSlot(rt.MonitorID, rt.Interval, at)
	}
	rt.LeaseOwner, rt.LeaseUntil = "", time.Time{}
	return tr
}
