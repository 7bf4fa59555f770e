package pingjournal

import (
	"context"
	"fmt"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/store/pingblock"
)

// load, once, learns the next batch id and replays the batches a stopped
// process left in the journal (its files, and the table a process of the
// version before wrote them to) by steps, then applies them. Without
// steps (nil) it does nothing until a call brings them: errNoSteps. The
// caller holds mu.
func (j *Journal) load(ctx context.Context, steps *Steps) error {
	if j.loaded {
		return nil
	}
	if steps == nil {
		return errNoSteps
	}
	// The pending pings are this process's alone: serve claimed the
	// database at start; anything else that takes pings claims it now.
	if err := j.store.Claim(); err != nil {
		return err
	}
	applied, last, legacy, err := j.store.Load(ctx)
	if err != nil {
		return err
	}
	last = max(last, applied)
	type batch struct {
		id      int64
		entries []journalEntry
	}
	var batches []batch
	for _, lb := range legacy {
		b := batch{id: lb.ID}
		if b.entries, err = decodeJournal(lb.Payload); err != nil {
			return fmt.Errorf("ping journal batch %d: %w", b.id, err)
		}
		batches = append(batches, b)
		last = max(last, b.id)
		j.legacy = true
	}
	fileBatches, segs, err := readSegments(j.path, applied)
	if err != nil {
		return err
	}
	for _, fb := range fileBatches {
		b := batch{id: fb.ID}
		if b.entries, err = decodeJournal(fb.Payload); err != nil {
			return fmt.Errorf("ping journal batch %d: %w", b.id, err)
		}
		batches = append(batches, b)
	}
	for _, s := range segs {
		last = max(last, s.last)
		s.last = 0 // removed once the replay is applied, whatever it held
		j.files.sealed = append(j.files.sealed, s)
	}
	for _, b := range batches {
		for _, je := range b.entries {
			e, err := j.entryBySeq(ctx, je.seq, steps)
			if err != nil {
				return err
			}
			if e == nil {
				continue // deleted since: its pings went with it
			}
			// Staging works out again what the ping did, from the same rows.
			rec := je.rec
			j.stage(e, &rec, steps)
			if rec.Key != "" {
				j.pending.addKey(pingblock.Key{Seq: e.row.Seq, Key: rec.Key}, pingblock.AckOf(e.row.ID, &rec))
			}
		}
		j.pending.LastBatch = b.id
	}
	j.nextBatch = last + 1
	j.loaded = true
	return j.apply(ctx)
}

// entryBySeq returns the cached heartbeat with this seq, reading it if
// it is not cached; nil if there is none.
func (j *Journal) entryBySeq(ctx context.Context, seq int64, steps *Steps) (*entry, error) {
	if e := j.bySeq[seq]; e != nil {
		return e, nil
	}
	h, ok, err := j.store.BySeq(ctx, seq)
	if err != nil || !ok {
		return nil, err
	}
	return j.cache(h, "", steps)
}

// LegacyBatch is batch as a process of the version before wrote it to
// its table: the pings of the heartbeat with this seq, for tests of the
// replay of such a table.
func LegacyBatch(batch, seq int64, pings ...heartbeat.Arrival) []byte {
	var text []byte
	for i, in := range pings {
		rec := pingblock.Record(batch<<IDShift+int64(i), in)
		text = appendJournalRec(text, seq, &rec)
	}
	return text
}
