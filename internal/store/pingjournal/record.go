package pingjournal

import (
	"context"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store/pingblock"
)

// plannedPing is a ping of the batch being journaled: its place in the
// batch, its heartbeat and its record.
type plannedPing struct {
	i   int
	e   *entry
	rec heartbeat.PingRecord
}

// Record stores a batch of pings in the journal and returns each one's
// outcome and the state changes they made. Pings apply in the batch's
// order, each moved by steps; a ping whose key the heartbeat saw within
// steps.KeyTTL (earlier in the batch too) is replayed, not recorded
// again. When it returns without an error every recorded ping is durable.
func (j *Journal) Record(ctx context.Context, batch []heartbeat.Arrival, steps *Steps) ([]heartbeat.Outcome, []Change, error) {
	if len(batch) >= 1<<IDShift {
		return nil, nil, fmt.Errorf("a batch of %d pings; at most %d", len(batch), 1<<IDShift-1)
	}
	// A ping is answered by its deadline (ctx's): one held off past it, by
	// a writer of heartbeats stuck on the database, is refused unstored.
	if err := j.mu.lockCtx(ctx); err != nil {
		return nil, nil, err
	}
	defer j.mu.Unlock()
	if err := j.load(ctx, steps); err != nil {
		return nil, nil, err
	}
	var (
		outs = make([]heartbeat.Outcome, len(batch))
		plan = j.plan[:0]
		dups [][2]int // a ping repeating the key of an earlier one in the batch: its index, the earlier's
		bid  = j.nextBatch
	)
	defer func() { clear(plan); j.plan = plan[:0] }()
	j.nextBatch++ // taken even if the write fails: ids are never reused
	// mu keeps every other writer of heartbeats out, so the reads (on the
	// readers: an apply may hold the writer) see what the journal is
	// written against. A heartbeat a set not yet applied moved is cached,
	// and its keys are in memory.
	err := func() error {
		entries, err := j.entriesByToken(ctx, batch, steps)
		if err != nil {
			return err
		}
		keys, err := j.store.RecentKeys(ctx, batch, func(i int) int64 {
			if e := entries[i]; e != nil {
				if _, pending := j.pendingKey(pingblock.Key{Seq: e.row.Seq, Key: batch[i].Key}); !pending {
					return e.row.Seq
				}
			}
			return 0
		}, batch[0].Ping.At.Add(-steps.KeyTTL))
		if err != nil {
			return err
		}
		var firstWithKey map[pingblock.Key]int
		text := append(j.text[:0], make([]byte, journalHeader)...)
		text = append(text, journalVersion)
		defer func() { j.text = text[:0] }()
		for _, i := range pingblock.ArrivalOrder(batch) {
			in := batch[i]
			e := entries[i]
			if e == nil {
				continue
			}
			outs[i].Found = true
			k := pingblock.Key{Seq: e.row.Seq, Key: in.Key}
			if in.Key != "" {
				ack, ok := j.pendingKey(k)
				if !ok {
					ack, ok = keys[k]
				}
				if ok {
					outs[i].Ack, outs[i].Replayed = ack, true
					continue
				}
				if first, ok := firstWithKey[k]; ok {
					dups = append(dups, [2]int{i, first})
					continue
				}
				if firstWithKey == nil {
					firstWithKey = map[pingblock.Key]int{}
				}
				firstWithKey[k] = i
			}
			rec := pingblock.Record(bid<<IDShift+int64(len(plan)), in)
			plan = append(plan, plannedPing{i, e, rec})
			text = appendJournalRec(text, e.row.Seq, &rec)
		}
		if len(plan) == 0 {
			return nil
		}
		return j.files.append(bid, text)
	}()
	if err != nil {
		return nil, nil, err
	}
	// Written: the pings count now.
	var changes []Change
	for _, p := range plan {
		rec := p.rec
		tr := j.stage(p.e, &rec, steps)
		if tr != nil {
			changes = append(changes, Change{SubjectID: p.e.row.ID, Transition: *tr, Follow: steps.Follow})
		}
		outs[p.i].Ack = pingblock.AckOf(p.e.row.ID, &rec)
		if rec.Key != "" {
			j.pending.addKey(pingblock.Key{Seq: p.e.row.Seq, Key: rec.Key}, outs[p.i].Ack)
		}
	}
	for _, d := range dups {
		outs[d[0]] = heartbeat.Outcome{Found: true, Ack: outs[d[1]].Ack, Replayed: true}
	}
	if len(plan) > 0 {
		j.pending.LastBatch = bid
	}
	return outs, changes, nil
}

// stage applies a committed ping to its heartbeat's cached runtime by
// steps and adds it to the pending block, returning the transition it
// made.
func (j *Journal) stage(e *entry, rec *heartbeat.PingRecord, steps *Steps) *monitor.Transition {
	p := &j.pending
	var tr *monitor.Transition
	e.row.Runtime, tr = steps.Ping(e.row.Runtime, rec, e.settings)
	if !rec.Ignored && (!e.dirty || e.dirtyGen != p.gen) {
		e.dirty, e.dirtyGen = true, p.gen
		p.dirty = append(p.dirty, e)
	}
	if tr != nil {
		p.Changes = append(p.Changes, Change{SubjectID: e.row.ID, Transition: *tr, Follow: steps.Follow})
	}
	if p.n == 0 {
		p.since = time.Now()
	}
	if e.block == nil || e.blockGen != p.gen {
		e.block, e.blockGen = p.Blocks.Block(e.row.Seq), p.gen
	}
	before := p.Blocks.Size()
	p.Blocks.AddTo(e.block, rec)
	p.n++
	p.bytes += p.Blocks.Size() - before
	return tr
}

// pendingKey returns the acknowledgement of a key not yet applied.
func (j *Journal) pendingKey(k pingblock.Key) (heartbeat.Ack, bool) {
	if ack, ok := j.pending.Keys[k]; ok {
		return ack, true
	}
	for _, f := range j.frozen {
		if ack, ok := f.Keys[k]; ok {
			return ack, true
		}
	}
	return heartbeat.Ack{}, false
}

func (p *Set) addKey(k pingblock.Key, ack heartbeat.Ack) {
	if p.Keys == nil {
		p.Keys = map[pingblock.Key]heartbeat.Ack{}
	}
	p.Keys[k] = ack
	p.KeyOrder = append(p.KeyOrder, k)
}

// entriesByToken returns the cached heartbeats the batch's tokens name,
// reading those not cached.
func (j *Journal) entriesByToken(ctx context.Context, batch []heartbeat.Arrival, steps *Steps) ([]*entry, error) {
	out := j.entries[:0]
	for range batch {
		out = append(out, nil)
	}
	j.entries = out
	var absent map[string]bool // tokens read and found naming nothing
	for i, in := range batch {
		if e := j.byHash[string(in.TokenHash)]; e != nil {
			out[i] = e
			continue
		}
		if absent[string(in.TokenHash)] {
			continue
		}
		h, ok, err := j.store.ByToken(ctx, in.TokenHash)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			if absent == nil {
				absent = map[string]bool{}
			}
			absent[string(in.TokenHash)] = true
			continue
		}
		if out[i], err = j.cache(h, string(in.TokenHash), steps); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cache keeps h, read from the database, with the settings steps give
// it, unless its entry is already cached (a dirty entry is newer than
// any row).
func (j *Journal) cache(h Row, hash string, steps *Steps) (*entry, error) {
	if e := j.bySeq[h.Seq]; e != nil {
		if hash != "" && e.hash == "" {
			e.hash = hash
			j.byHash[hash] = e
		}
		return e, nil
	}
	settings, err := steps.Settings(h.Heartbeat)
	if err != nil {
		return nil, err
	}
	if len(j.bySeq) >= maxCached {
		j.dropClean()
	}
	e := &entry{row: h, settings: settings, hash: hash}
	j.bySeq[h.Seq] = e
	if hash != "" {
		j.byHash[hash] = e
	}
	return e, nil
}

// dropClean forgets the cached heartbeats with no pending pings.
func (j *Journal) dropClean() {
	for hash, e := range j.byHash {
		if !e.dirty {
			delete(j.byHash, hash)
		}
	}
	for seq, e := range j.bySeq {
		if !e.dirty {
			delete(j.bySeq, seq)
		}
	}
}
