package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The SQLite ping journal.
//
// SQLite has one writer, and a ping is answered only once it is durable.
// Written straight into its heartbeat's block, runtime row and their
// indexes, each ping dirties about two random pages, and a batch waits for
// all of them. Instead a batch is appended to ping_journal as one row (a
// page or two, at the end of the file) and answered when that commits; the
// journal is applied to blocks, runtime rows, keys and state history
// behind it (applyJournal), one transaction for many batches, in which a
// heartbeat's block and runtime row are written once for all its pings.
//
// Until then the pending state lives here, under mu: the ping writer
// stages batches against cached heartbeats, and every other writer of
// heartbeat rows applies the journal first and holds it off while it
// writes (heartbeatWrite), then drops the cache. So the journal only holds
// pings whose effect follows from the rows as they are, and replaying it
// after a crash (loadJournal) gives the states and acknowledgements that
// were given before. SQLite serves one node (PostgreSQL deployments write
// pings directly), so this memory is the whole truth about pending pings.

const (
	// A ping's id is its batch's id shifted left, plus its place in the batch.
	journalIDShift = 16
	// The journal is applied once its oldest ping has waited flushAfter, or
	// it holds flushCount pings or flushBytes of them, or a ping changed a
	// state (so its alerts are not held back).
	flushAfter = 5 * time.Second
	flushCount = 200_000
	flushBytes = 32 << 20
	// maxCached bounds the heartbeats kept in memory between writes.
	maxCached = 100_000
)

type pingJournal struct {
	// Buffers of journalPings, reused batch to batch under mu.
	plan    []plannedPing
	text    []byte
	entries []*hbEntry

	path      string   // the SQLite database's
	lock      *os.File // held from the first use on (lockJournal)
	mu        sync.Mutex
	loaded    bool  // the journal table has been replayed
	nextBatch int64 // the next batch's id
	byHash    map[string]*hbEntry
	bySeq     map[int64]*hbEntry
	pending   pendingPings
}

// hbEntry is a cached heartbeat: its row as the database holds it, plus
// the pending pings' effect on its runtime.
type hbEntry struct {
	row      hbRow
	settings heartbeat.Settings
	hash     string // its token's hash, once a ping named it
	dirty    bool   // the runtime has moved since it was read
	// block holds its pending pings while blockGen is the pending set's.
	block    *pingBlock
	blockGen uint64
}

// pendingPings is what the journal holds that is not applied yet.
type pendingPings struct {
	gen       uint64 // tells this set's blocks from an applied one's
	n         int
	bytes     int
	since     time.Time // when the oldest was staged
	lastBatch int64
	blocks    blockSet
	keys      map[pingKey]heartbeat.Ack
	keyOrder  []pingKey
	changes   []StateChange
	dirty     []*hbEntry
}

func newPingJournal(path string) *pingJournal {
	return &pingJournal{path: path, byHash: map[string]*hbEntry{}, bySeq: map[int64]*hbEntry{}}
}

const journalInsert = `INSERT INTO ping_journal (id, batch) VALUES ($1, $2)`

// plannedPing is a ping of the batch being journaled: its place in the
// batch, its heartbeat and its record.
type plannedPing struct {
	i   int
	e   *hbEntry
	rec heartbeat.PingRecord
}

// journalPings stores a batch of pings in the journal; see RecordPings.
func (db *DB) journalPings(ctx context.Context, batch []heartbeat.Arrival) ([]heartbeat.Outcome, []StateChange, error) {
	if len(batch) >= 1<<journalIDShift {
		return nil, nil, fmt.Errorf("a batch of %d pings; at most %d", len(batch), 1<<journalIDShift-1)
	}
	j := db.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := db.loadJournal(ctx); err != nil {
		return nil, nil, err
	}
	var (
		outs = make([]heartbeat.Outcome, len(batch))
		plan = j.plan[:0]
		dups [][2]int // a ping repeating the key of an earlier one in the batch: its index, the earlier's
		bid  = j.nextBatch
	)
	defer func() { clear(plan); j.plan = plan[:0] }()
	j.nextBatch++ // taken even if the insert fails: ids are never reused
	// No transaction: mu keeps every other writer of heartbeats out, so
	// the reads see what the insert commits against, and the insert alone
	// is atomic (one statement, SQLite's autocommit), which spares each
	// batch a BEGIN and a COMMIT.
	err := func() error {
		entries, err := db.entriesByToken(ctx, batch)
		if err != nil {
			return err
		}
		keys, err := db.recentPingKeys(ctx, db.w, batch, func(i int) int64 {
			if e := entries[i]; e != nil {
				if _, pending := j.pending.keys[pingKey{e.row.Seq, batch[i].Key}]; !pending {
					return e.row.Seq
				}
			}
			return 0
		}, batch[0].Ping.At.Add(-heartbeat.KeyTTL))
		if err != nil {
			return err
		}
		var firstWithKey map[pingKey]int
		text := j.text[:0]
		defer func() { j.text = text[:0] }()
		for _, i := range arrivalOrder(batch) {
			in := batch[i]
			e := entries[i]
			if e == nil {
				continue
			}
			outs[i].Found = true
			k := pingKey{e.row.Seq, in.Key}
			if in.Key != "" {
				ack, ok := j.pending.keys[k]
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
					firstWithKey = map[pingKey]int{}
				}
				firstWithKey[k] = i
			}
			rec := pingRecord(bid<<journalIDShift+int64(len(plan)), in)
			plan = append(plan, plannedPing{i, e, rec})
			text = appendJournalRec(text, e.row.Seq, &rec)
		}
		if len(plan) == 0 {
			return nil
		}
		st, err := db.stmts.get(ctx, db.w, journalInsert)
		if err != nil {
			return err
		}
		_, err = st.ExecContext(ctx, bid, text)
		return err
	}()
	if err != nil {
		return nil, nil, err
	}
	// Committed: the pings count now.
	var changes []StateChange
	for _, p := range plan {
		rec := p.rec
		tr := j.stage(p.e, &rec)
		if tr != nil {
			changes = append(changes, StateChange{SubjectID: p.e.row.ID, Transition: *tr})
		}
		outs[p.i].Ack = ackOf(p.e.row.ID, &rec)
		if rec.Key != "" {
			j.pending.addKey(pingKey{p.e.row.Seq, rec.Key}, outs[p.i].Ack)
		}
	}
	for _, d := range dups {
		outs[d[0]] = heartbeat.Outcome{Found: true, Ack: outs[d[1]].Ack, Replayed: true}
	}
	if len(plan) > 0 {
		j.pending.lastBatch = bid
	}
	return outs, changes, nil
}

// stage applies a committed ping to its heartbeat's cached runtime and
// adds it to the pending block, returning the transition it made.
func (j *pingJournal) stage(e *hbEntry, rec *heartbeat.PingRecord) *monitor.Transition {
	p := &j.pending
	var tr *monitor.Transition
	e.row.Runtime, tr = applyPing(e.row.Runtime, rec, e.settings)
	if !rec.Ignored && !e.dirty {
		e.dirty = true
		p.dirty = append(p.dirty, e)
	}
	if tr != nil {
		p.changes = append(p.changes, StateChange{SubjectID: e.row.ID, Transition: *tr})
	}
	if p.n == 0 {
		p.since = time.Now()
	}
	if e.block == nil || e.blockGen != p.gen {
		e.block, e.blockGen = p.blocks.block(e.row.Seq), p.gen
	}
	before := p.blocks.size
	p.blocks.addTo(e.block, rec)
	p.n++
	p.bytes += p.blocks.size - before
	return tr
}

func (p *pendingPings) addKey(k pingKey, ack heartbeat.Ack) {
	if p.keys == nil {
		p.keys = map[pingKey]heartbeat.Ack{}
	}
	p.keys[k] = ack
	p.keyOrder = append(p.keyOrder, k)
}

// entriesByToken returns the cached heartbeats the batch's tokens name,
// reading those not cached.
func (db *DB) entriesByToken(ctx context.Context, batch []heartbeat.Arrival) ([]*hbEntry, error) {
	j := db.journal
	out := j.entries[:0]
	for range batch {
		out = append(out, nil)
	}
	j.entries = out
	var (
		st     *sql.Stmt
		absent map[string]bool // tokens read and found naming nothing
	)
	for i, in := range batch {
		if e := j.byHash[string(in.TokenHash)]; e != nil {
			out[i] = e
			continue
		}
		if absent[string(in.TokenHash)] {
			continue
		}
		if st == nil {
			var err error
			if st, err = db.stmts.get(ctx, db.w, pingLookupSQLite); err != nil {
				return nil, err
			}
		}
		var got []byte
		h, err := scanHeartbeat(st.QueryRowContext(ctx, in.TokenHash), &got)
		switch {
		case errors.Is(err, sql.ErrNoRows), errors.Is(err, monitor.ErrNotFound):
			if absent == nil {
				absent = map[string]bool{}
			}
			absent[string(in.TokenHash)] = true
			continue
		case err != nil:
			return nil, err
		}
		if out[i], err = j.cache(db, h, string(in.TokenHash)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cache keeps h, read from the database, unless its entry is already
// cached (a dirty entry is newer than any row).
func (j *pingJournal) cache(db *DB, h hbRow, hash string) (*hbEntry, error) {
	if e := j.bySeq[h.Seq]; e != nil {
		if hash != "" && e.hash == "" {
			e.hash = hash
			j.byHash[hash] = e
		}
		return e, nil
	}
	settings, err := db.plans.settings(h.Heartbeat)
	if err != nil {
		return nil, err
	}
	if len(j.bySeq) >= maxCached {
		j.dropClean()
	}
	e := &hbEntry{row: h, settings: settings, hash: hash}
	j.bySeq[h.Seq] = e
	if hash != "" {
		j.byHash[hash] = e
	}
	return e, nil
}

// dropClean forgets the cached heartbeats with no pending pings.
func (j *pingJournal) dropClean() {
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

// applyJournal writes the pending pings into blocks, runtime rows, keys
// and state history, and empties the journal, in one transaction. The
// caller holds mu.
func (db *DB) applyJournal(ctx context.Context) error {
	j := db.journal
	p := &j.pending
	if p.n == 0 && len(p.dirty) == 0 {
		return nil
	}
	blocks := p.blocks.blocks()
	moved := make(map[int64]*hbRow, len(p.dirty))
	for _, e := range p.dirty {
		moved[e.row.Seq] = &e.row
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.insertBlocks(ctx, tx, blocks); err != nil {
			return err
		}
		if err := db.saveHBRuntimes(ctx, tx, moved); err != nil {
			return err
		}
		for i := range p.changes {
			c := &p.changes[i]
			if err := db.recordTransition(ctx, tx, c.SubjectID, &c.Transition); err != nil {
				return err
			}
		}
		if err := db.insertPingKeys(ctx, tx, p.keyOrder, p.keys); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM ping_journal WHERE id <= $1`, p.lastBatch)
		return err
	})
	if err != nil {
		return fmt.Errorf("applying the ping journal: %w", err)
	}
	for _, e := range p.dirty {
		e.dirty = false
	}
	j.pending = pendingPings{gen: p.gen + 1}
	return nil
}

// loadJournal, once, learns the next batch id and replays the batches a
// stopped process left in the journal, then applies them. The caller
// holds mu.
func (db *DB) loadJournal(ctx context.Context) error {
	j := db.journal
	if j.loaded {
		return nil
	}
	if j.lock == nil {
		f, err := lockJournal(j.path)
		if err != nil {
			return err
		}
		j.lock = f
	}
	var last int64
	err := db.w.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = 'ping_journal'`).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("reading the ping journal: %w", err)
	}
	type batch struct {
		id      int64
		entries []journalEntry
	}
	var batches []batch
	rows, err := db.w.QueryContext(ctx, `SELECT id, batch FROM ping_journal ORDER BY id`)
	if err != nil {
		return fmt.Errorf("reading the ping journal: %w", err)
	}
	for rows.Next() {
		var (
			b   batch
			raw []byte
		)
		if err := rows.Scan(&b.id, &raw); err != nil {
			rows.Close()
			return err
		}
		if b.entries, err = decodeJournal(raw); err != nil {
			rows.Close()
			return fmt.Errorf("ping journal batch %d: %w", b.id, err)
		}
		batches = append(batches, b)
		last = max(last, b.id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, b := range batches {
		for _, je := range b.entries {
			e, err := db.entryBySeq(ctx, je.seq)
			if err != nil {
				return err
			}
			if e == nil {
				continue // deleted since: its pings went with it
			}
			// Staging works out again what the ping did, from the same rows.
			rec := je.rec
			j.stage(e, &rec)
			if rec.Key != "" {
				j.pending.addKey(pingKey{e.row.Seq, rec.Key}, ackOf(e.row.ID, &rec))
			}
		}
		j.pending.lastBatch = b.id
	}
	j.nextBatch = last + 1
	j.loaded = true
	return db.applyJournal(ctx)
}

// entryBySeq returns the cached heartbeat with this seq, reading it if
// it is not cached; nil if there is none.
func (db *DB) entryBySeq(ctx context.Context, seq int64) (*hbEntry, error) {
	j := db.journal
	if e := j.bySeq[seq]; e != nil {
		return e, nil
	}
	h, err := scanHeartbeat(db.w.QueryRowContext(ctx, `SELECT `+heartbeatColumns+heartbeatFrom+` WHERE r.seq = $1`, seq))
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.Is(err, monitor.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return j.cache(db, h, "")
}

// flushPings applies the ping journal, if any, so what follows reads
// every acknowledged ping from the tables.
func (db *DB) flushPings(ctx context.Context) error {
	j := db.journal
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return db.flushLocked(ctx)
}

func (db *DB) flushLocked(ctx context.Context) error {
	if err := db.loadJournal(ctx); err != nil {
		return err
	}
	return db.applyJournal(ctx)
}

// closeJournal applies what a process that used the journal left in it.
func (db *DB) closeJournal(ctx context.Context) error {
	j := db.journal
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lock != nil {
		defer j.lock.Close()
	}
	if !j.loaded {
		return nil
	}
	return db.applyJournal(ctx)
}

// ApplyPings applies the ping journal if it is due: its oldest ping has
// waited long enough, it has grown big, or a ping in it changed a state.
// The ping writer calls it between batches. It returns when the journal
// is due next (zero: nothing is pending); PostgreSQL has no journal.
func (db *DB) ApplyPings(ctx context.Context) (next time.Time, err error) {
	defer monitor.Wrap(&err, "store.ApplyPings")
	j := db.journal
	if j == nil {
		return time.Time{}, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := db.loadJournal(ctx); err != nil {
		return time.Time{}, err
	}
	p := &j.pending
	if p.n == 0 {
		return time.Time{}, nil
	}
	due := p.since.Add(flushAfter)
	if time.Now().Before(due) && p.n < flushCount && p.bytes < flushBytes && len(p.changes) == 0 {
		return due, nil
	}
	return time.Time{}, db.applyJournal(ctx)
}

// heartbeatWrite runs fn, which writes heartbeat rows other than by pings,
// with the ping journal applied first and no ping staged until fn
// returns; then the cached heartbeats are dropped, so pings read them
// anew. On PostgreSQL it just runs fn.
func (db *DB) heartbeatWrite(ctx context.Context, fn func() error) error {
	j := db.journal
	if j == nil {
		return fn()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := db.flushLocked(ctx); err != nil {
		return err
	}
	defer j.forget()
	return fn()
}

// drop forgets the cached heartbeat with this seq, which must not be dirty.
func (j *pingJournal) drop(seq int64) {
	e := j.bySeq[seq]
	if e == nil {
		return
	}
	delete(j.bySeq, seq)
	if e.hash != "" {
		delete(j.byHash, e.hash)
	}
}

// forget drops the cached heartbeats; none may be dirty.
func (j *pingJournal) forget() {
	clear(j.byHash)
	clear(j.bySeq)
}

// dueDirty reports whether a heartbeat with pending pings is due by now:
// a sweep must then apply the journal first.
func (j *pingJournal) dueDirty(now time.Time) bool {
	for _, e := range j.pending.dirty {
		if !e.row.Runtime.Wake(e.settings).After(now) {
			return true
		}
	}
	return false
}

// anyDirty reports whether one of the heartbeats with these seqs has
// pending pings: a sweep that claimed them must apply the journal first.
func (j *pingJournal) anyDirty(seqs []any) bool {
	for _, s := range seqs {
		if e := j.bySeq[s.(int64)]; e != nil && e.dirty {
			return true
		}
	}
	return false
}
