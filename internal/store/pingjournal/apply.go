package pingjournal

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// freeze sets the pending pings aside to be applied, with their
// heartbeats' rows as they stand, and seals the journal segment holding
// them. The caller holds mu.
func (j *Journal) freeze() {
	j.files.seal()
	p := j.pending
	if p.n == 0 && len(p.dirty) == 0 {
		return
	}
	p.Moved = make(map[int64]*Moved, len(p.dirty))
	for _, e := range p.dirty {
		// The runtime's values are never changed in place.
		p.Moved[e.row.Seq] = &Moved{Row: e.row, Settings: e.settings}
	}
	j.frozen = append(j.frozen, &p)
	j.pending = Set{gen: p.gen + 1}
}

// writeSets writes the frozen sets, with the watermark of the last batch
// in them, in one transaction. It reads nothing of the journal's shared
// state but the sets, which no one changes once frozen, so it runs
// without mu. A row the database refuses for its content does not hold
// the others back: the rest is applied, and refused lists what was set
// aside.
func (j *Journal) writeSets(ctx context.Context, sets []*Set, legacy bool) (applied int64, refused, err error) {
	for _, p := range sets {
		applied = max(applied, p.LastBatch)
	}
	refused, err = j.store.Write(ctx, sets, applied, legacy)
	if err != nil {
		return 0, nil, fmt.Errorf("applying the ping journal: %w", err)
	}
	if refused != nil {
		refused = fmt.Errorf("applying the ping journal: %w", refused)
	}
	return applied, refused, nil
}

// settle marks the first n frozen sets applied, up to batch applied: their
// heartbeats are clean unless a later set moved them again, and the
// segments holding them go. The caller holds mu.
func (j *Journal) settle(n int, applied int64) error {
	for _, p := range j.frozen[:n] {
		for _, e := range p.dirty {
			if e.dirtyGen == p.gen {
				e.dirty = false
			}
		}
	}
	j.frozen = slices.Delete(j.frozen, 0, n)
	if len(j.frozen) == 0 && j.legacy && applied > 0 {
		j.legacy = false
	}
	return j.files.drop(applied)
}

// apply applies every pending and frozen ping before it returns. The
// caller holds applying and mu (or, before the journal is loaded, mu
// alone: no apply can be under way then).
func (j *Journal) apply(ctx context.Context) error {
	j.freeze()
	if len(j.frozen) == 0 {
		return j.files.drop(j.nextBatch - 1) // segments of no pings
	}
	n := len(j.frozen)
	applied, refused, err := j.writeSets(ctx, j.frozen, j.legacy)
	if err != nil {
		return err
	}
	j.noteRefused(refused)
	return j.settle(n, applied)
}

// noteRefused keeps what an apply set aside for the next ApplyDue to
// report; the apply itself went through. The caller holds mu.
func (j *Journal) noteRefused(refused error) {
	if refused != nil {
		j.failed, j.retryAt = refused, time.Now()
	}
}

// applyBeside starts applying the pending and frozen pings (the caller
// has some) beside the ping writer, which goes on journaling meanwhile.
// The caller holds mu and has taken applying, which the apply releases
// when it is done; a failure is reported by the next ApplyDue.
func (j *Journal) applyBeside() {
	j.freeze()
	sets := slices.Clone(j.frozen)
	legacy := j.legacy
	go func() {
		defer j.applying.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		applied, refused, err := j.writeSets(ctx, sets, legacy)
		j.mu.Lock()
		defer j.mu.Unlock()
		if err == nil {
			j.noteRefused(refused)
			err = j.settle(len(sets), applied)
		}
		if err != nil {
			j.failed, j.retryAt = err, time.Now().Add(time.Second)
		}
	}()
}

// ApplyDue starts applying the journal, beside the ping writer, if it is
// due: its oldest ping has waited long enough, it has grown big, or a
// ping in it changed a state. The ping writer calls it between batches.
// It returns when to call again if no ping comes first (zero: nothing is
// pending), and the error of an apply that failed since the last call.
func (j *Journal) ApplyDue(ctx context.Context, steps *Steps) (next time.Time, err error) {
	if !j.mu.TryLock() {
		// Held off by another writer: the ping writer does not wait here.
		return time.Now().Add(50 * time.Millisecond), nil
	}
	defer j.mu.Unlock()
	if err := j.load(ctx, steps); err != nil {
		return time.Time{}, err
	}
	if err := j.failed; err != nil {
		j.failed = nil
		return j.retryAt, err
	}
	p := &j.pending
	now := time.Now()
	switch {
	case len(j.frozen) > 0 && now.Before(j.retryAt):
		return j.retryAt, nil
	case len(j.frozen) > 0:
	case p.n == 0:
		return time.Time{}, nil
	case now.Before(p.since.Add(flushAfter)) && p.n < flushCount && p.bytes < flushBytes && len(p.Changes) == 0:
		return p.since.Add(flushAfter), nil
	}
	if !j.applying.TryLock() {
		return now.Add(50 * time.Millisecond), nil // one is under way
	}
	j.applyBeside()
	// Come back to learn how it went, if no ping does.
	return now.Add(time.Second), nil
}
