package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The SQLite ping journal.
//
// SQLite has one writer, and a ping is answered only once it is durable.
// Written straight into its heartbeat's block, runtime row and their
// indexes, each ping dirties about two random pages, and a batch waits for
// all of them. Instead a batch is appended to a journal file beside the
// database (journal_files.go) and answered when that is written; the
// journal is applied to blocks, runtime rows, keys and state history
// behind it (applyJournal), one transaction for many batches, in which a
// heartbeat's block and runtime row are written once for all its pings.
// The apply runs beside the ping writer, not in its way: the journal is
// not in the database, so journaling needs no write lock.
//
// Until then the pending state lives here, under mu: the ping writer
// stages batches against cached heartbeats, and every other writer of
// heartbeat rows applies the journal first and holds it off while it
// writes (heartbeatWrite), then drops the cache. So the journal only holds
// pings whose effect follows from the rows as they are, and replaying it
// after a crash (loadJournal) gives the states and acknowledgements that
// were given before. SQLite serves one node (PostgreSQL deployments write
// pings directly), so this memory is the whole truth about pending pings.
//
// Pending pings are set aside (frozen) to be applied: their runtime rows
// as they stand, blocks, keys and transitions, while later pings stage
// into a new set. A set stays in frozen, and its heartbeats dirty, until
// its transaction commits, with the journal's watermark in it. Locks:
// applying (held by the one apply under way) before mu.

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

	path      string // the SQLite database's
	applying  sync.Mutex
	mu        ctxMutex
	files     journalFiles
	loaded    bool  // the journal has been replayed
	legacy    bool  // ping_journal (the table) had batches to replay
	nextBatch int64 // the next batch's id
	byHash    map[string]*hbEntry
	bySeq     map[int64]*hbEntry
	pending   pendingPings
	frozen    []*pendingPings // set aside, not yet applied; oldest first
	failed    error           // of the last apply beside the writer
	retryAt   time.Time       // after it failed
}

// hbEntry is a cached heartbeat: its row as the database holds it, plus
// the pending pings' effect on its runtime.
type hbEntry struct {
	row      hbRow
	settings heartbeat.Settings
	hash     string // its token's hash, once a ping named it
	// dirty: the runtime has moved since it was read, and the set of that
	// gen (pending or frozen) is not applied yet.
	dirty    bool
	dirtyGen uint64
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
	// moved holds the dirty heartbeats' rows as they stood when the set
	// was frozen: what its transaction writes.
	moved map[int64]*hbRow
}

func newPingJournal(path string) *pingJournal {
	return &pingJournal{path: path, mu: newCtxMutex(), files: journalFiles{db: path},
		byHash: map[string]*hbEntry{}, bySeq: map[int64]*hbEntry{}}
}

// ctxMutex is a mutex whose Lock can give up when a context ends.
type ctxMutex struct{ ch chan struct{} }

func newCtxMutex() ctxMutex { return ctxMutex{ch: make(chan struct{}, 1)} }

func (m ctxMutex) Lock()   { m.ch <- struct{}{} }
func (m ctxMutex) Unlock() { <-m.ch }

func (m ctxMutex) TryLock() bool {
	select {
	case m.ch <- struct{}{}:
		return true
	default:
		return false
	}
}

func (m ctxMutex) lockCtx(ctx context.Context) error {
	select {
	case m.ch <- struct{}{}:
		return nil
	default:
	}
	select {
	case m.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

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
	// A ping is answered by its deadline (ctx's): one held off past it, by
	// a writer of heartbeats stuck on the database, is refused unstored.
	if err := j.mu.lockCtx(ctx); err != nil {
		return nil, nil, err
	}
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
	j.nextBatch++ // taken even if the write fails: ids are never reused
	// mu keeps every other writer of heartbeats out, so the reads (on the
	// readers: an apply may hold the writer) see what the journal is
	// written against. A heartbeat a set not yet applied moved is cached,
	// and its keys are in memory.
	err := func() error {
		entries, err := db.entriesByToken(ctx, batch)
		if err != nil {
			return err
		}
		keys, err := db.recentPingKeys(ctx, db.r, batch, func(i int) int64 {
			if e := entries[i]; e != nil {
				if _, pending := j.pendingKey(pingKey{e.row.Seq, batch[i].Key}); !pending {
					return e.row.Seq
				}
			}
			return 0
		}, batch[0].Ping.At.Add(-db.workflow.KeyTTL()))
		if err != nil {
			return err
		}
		var firstWithKey map[pingKey]int
		text := append(j.text[:0], make([]byte, journalHeader)...)
		text = append(text, journalVersion)
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
		return j.files.append(bid, text)
	}()
	if err != nil {
		return nil, nil, err
	}
	// Written: the pings count now.
	var changes []StateChange
	for _, p := range plan {
		rec := p.rec
		tr := j.stage(p.e, &rec, db.workflow)
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
func (j *pingJournal) stage(e *hbEntry, rec *heartbeat.PingRecord, w Workflow) *monitor.Transition {
	p := &j.pending
	var tr *monitor.Transition
	e.row.Runtime, tr = w.Ping(e.row.Runtime, rec, e.settings)
	if !rec.Ignored && (!e.dirty || e.dirtyGen != p.gen) {
		e.dirty, e.dirtyGen = true, p.gen
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

// pendingKey returns the acknowledgement of a key not yet applied.
func (j *pingJournal) pendingKey(k pingKey) (heartbeat.Ack, bool) {
	if ack, ok := j.pending.keys[k]; ok {
		return ack, true
	}
	for _, f := range j.frozen {
		if ack, ok := f.keys[k]; ok {
			return ack, true
		}
	}
	return heartbeat.Ack{}, false
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
			if st, err = db.stmts.get(ctx, db.r, pingLookupSQLite); err != nil {
				return nil, err
			}
		}
		var got []byte
		h, err := scanHeartbeat(st.QueryRowContext(ctx, in.TokenHash), &got)
		switch {
		case errors.Is(err, sql.ErrNoRows), errors.Is(err, errs.ErrNotFound):
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
	settings, err := db.settings(h.Heartbeat)
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

// freeze sets the pending pings aside to be applied, with their
// heartbeats' rows as they stand, and seals the journal segment holding
// them. The caller holds mu.
func (j *pingJournal) freeze() {
	j.files.seal()
	p := j.pending
	if p.n == 0 && len(p.dirty) == 0 {
		return
	}
	p.moved = make(map[int64]*hbRow, len(p.dirty))
	for _, e := range p.dirty {
		row := e.row // the runtime's values are never changed in place
		p.moved[e.row.Seq] = &row
	}
	j.frozen = append(j.frozen, &p)
	j.pending = pendingPings{gen: p.gen + 1}
}

// writeSets writes the frozen sets into blocks, runtime rows, keys and
// state history, with the watermark of the last batch in them, in one
// transaction. It reads nothing of the journal's shared state but the
// sets, which no one changes once frozen, so it runs without mu. A row
// the database refuses for its content does not hold the others back
// (isolating): the rest is applied, and refused lists what was set aside.
func (db *DB) writeSets(ctx context.Context, sets []*pendingPings, legacy bool) (applied int64, refused, err error) {
	refused, err = db.isolating(ctx, func(w *isolation) error {
		applied = 0
		for _, p := range sets {
			if err := db.writeSet(ctx, w, p); err != nil {
				return err
			}
			applied = max(applied, p.lastBatch)
		}
		if _, err := w.tx.ExecContext(ctx, `UPDATE ping_journal_applied SET batch = max(batch, $1)`, applied); err != nil {
			return err
		}
		if legacy {
			_, err := w.tx.ExecContext(ctx, `DELETE FROM ping_journal WHERE id <= $1`, applied)
			return err
		}
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("applying the ping journal: %w", err)
	}
	if refused != nil {
		refused = fmt.Errorf("applying the ping journal: %w", refused)
	}
	return applied, refused, nil
}

// writeSet writes one frozen set: in bulk, or, isolating, each heartbeat's
// block, runtime row and state change and each key on its own. Keys are
// written as their label then (a journal of an earlier version may hold
// them as sent).
func (db *DB) writeSet(ctx context.Context, w *isolation, p *pendingPings) error {
	tx := w.tx
	if !w.on {
		if err := db.insertBlocks(ctx, tx, p.blocks.blocks()); err != nil {
			return err
		}
		if err := db.saveHBRuntimes(ctx, tx, p.moved); err != nil {
			return err
		}
		for i := range p.changes {
			c := &p.changes[i]
			if err := db.recordTransition(ctx, tx, c.SubjectID, &c.Transition); err != nil {
				return err
			}
		}
		return db.insertPingKeys(ctx, tx, p.keyOrder, p.keys)
	}
	for _, b := range p.blocks.blocks() {
		if _, err := w.subject(ctx, fmt.Sprintf("the pings of heartbeat %d", b.seq), func() error {
			return db.insertBlocks(ctx, tx, []*pingBlock{b})
		}); err != nil {
			return err
		}
	}
	for seq, row := range p.moved {
		if _, err := w.subject(ctx, "the state of heartbeat "+row.ID, func() error {
			return db.saveHBRuntimes(ctx, tx, map[int64]*hbRow{seq: row})
		}); err != nil {
			return err
		}
	}
	for i := range p.changes {
		c := &p.changes[i]
		if _, err := w.subject(ctx, "a state change of heartbeat "+c.SubjectID, func() error {
			return db.recordTransition(ctx, tx, c.SubjectID, &c.Transition)
		}); err != nil {
			return err
		}
	}
	for _, k := range p.keyOrder {
		label := pingKey{k.seq, heartbeat.Label(k.key)}
		if _, err := w.subject(ctx, fmt.Sprintf("a ping key of heartbeat %d", k.seq), func() error {
			return db.insertPingKeys(ctx, tx, []pingKey{label}, map[pingKey]heartbeat.Ack{label: p.keys[k]})
		}); err != nil {
			return err
		}
	}
	return nil
}

// settle marks the first n frozen sets applied, up to batch applied: their
// heartbeats are clean unless a later set moved them again, and the
// segments holding them go. The caller holds mu.
func (j *pingJournal) settle(n int, applied int64) error {
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

// applyJournal applies every pending and frozen ping before it returns.
// The caller holds applying and mu (or, before the journal is loaded, mu
// alone: no apply can be under way then).
func (db *DB) applyJournal(ctx context.Context) error {
	j := db.journal
	j.freeze()
	if len(j.frozen) == 0 {
		return j.files.drop(j.nextBatch - 1) // segments of no pings
	}
	n := len(j.frozen)
	applied, refused, err := db.writeSets(ctx, j.frozen, j.legacy)
	if err != nil {
		return err
	}
	j.noteRefused(refused)
	return j.settle(n, applied)
}

// noteRefused keeps what an apply set aside for the next ApplyPings to
// report; the apply itself went through. The caller holds mu.
func (j *pingJournal) noteRefused(refused error) {
	if refused != nil {
		j.failed, j.retryAt = refused, time.Now()
	}
}

// applyBeside starts applying the pending and frozen pings (the caller
// has some) beside the ping writer, which goes on journaling meanwhile.
// The caller holds mu and has taken applying, which the apply releases
// when it is done; a failure is reported by the next ApplyPings.
func (db *DB) applyBeside() {
	j := db.journal
	j.freeze()
	sets := slices.Clone(j.frozen)
	legacy := j.legacy
	go func() {
		defer j.applying.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		applied, refused, err := db.writeSets(ctx, sets, legacy)
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

// loadJournal, once, learns the next batch id and replays the batches a
// stopped process left in the journal, then applies them. The caller
// holds mu.
func (db *DB) loadJournal(ctx context.Context) error {
	j := db.journal
	if j.loaded {
		return nil
	}
	// The pending pings are this process's alone: serve claimed the
	// database at start; anything else that takes pings claims it now.
	if err := db.locks.Claim(journalHolder()); err != nil {
		if refused := (*InUseError)(nil); errors.As(err, &refused) {
			return fmt.Errorf("another process receives pings: %w", err)
		}
		return fmt.Errorf("claiming the database for pings: %w", err)
	}
	var last, applied int64
	err := db.w.QueryRowContext(ctx, `SELECT batch FROM ping_journal_applied`).Scan(&applied)
	if err != nil {
		return fmt.Errorf("reading the ping journal's watermark: %w", err)
	}
	err = db.w.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = 'ping_journal'`).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("reading the ping journal: %w", err)
	}
	last = max(last, applied)
	type batch struct {
		id      int64
		entries []journalEntry
	}
	var batches []batch
	// Batches a process of the version before left in the table.
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
		j.legacy = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	fileBatches, segs, err := readSegments(j.path, applied)
	if err != nil {
		return err
	}
	for _, fb := range fileBatches {
		b := batch{id: fb.id}
		if b.entries, err = decodeJournal(fb.payload); err != nil {
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
			e, err := db.entryBySeq(ctx, je.seq)
			if err != nil {
				return err
			}
			if e == nil {
				continue // deleted since: its pings went with it
			}
			// Staging works out again what the ping did, from the same rows.
			rec := je.rec
			j.stage(e, &rec, db.workflow)
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
	case errors.Is(err, sql.ErrNoRows), errors.Is(err, errs.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return j.cache(db, h, "")
}

// FlushPings applies the ping journal, if any, so what follows reads
// every acknowledged ping from the tables (a ping's incident, say).
func (db *DB) FlushPings(ctx context.Context) error { return db.flushPings(ctx) }

// flushPings applies the ping journal, if any, so what follows reads
// every acknowledged ping from the tables.
func (db *DB) flushPings(ctx context.Context) error {
	j := db.journal
	if j == nil {
		return nil
	}
	unlock := j.lockAll()
	defer unlock()
	return db.flushLocked(ctx)
}

// lockAll waits for an apply under way and holds off the next, and holds
// pings off: what a writer of heartbeat rows, and a flush, needs.
func (j *pingJournal) lockAll() (unlock func()) {
	j.applying.Lock()
	j.mu.Lock()
	return func() {
		j.mu.Unlock()
		j.applying.Unlock()
	}
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
	unlock := j.lockAll()
	defer unlock()
	defer j.files.close()
	if !j.loaded {
		return nil
	}
	return db.applyJournal(ctx)
}

// ApplyPings starts applying the ping journal, beside the ping writer, if
// it is due: its oldest ping has waited long enough, it has grown big, or
// a ping in it changed a state. The ping writer calls it between batches.
// It returns when to call again if no ping comes first (zero: nothing is
// pending), and the error of an apply that failed since the last call;
// PostgreSQL has no journal.
func (db *DB) ApplyPings(ctx context.Context) (next time.Time, err error) {
	defer errs.Wrap(&err, "store.ApplyPings")
	j := db.journal
	if j == nil {
		return time.Time{}, nil
	}
	if !j.mu.TryLock() {
		// Held off by another writer: the ping writer does not wait here.
		return time.Now().Add(50 * time.Millisecond), nil
	}
	defer j.mu.Unlock()
	if err := db.loadJournal(ctx); err != nil {
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
	case now.Before(p.since.Add(flushAfter)) && p.n < flushCount && p.bytes < flushBytes && len(p.changes) == 0:
		return p.since.Add(flushAfter), nil
	}
	if !j.applying.TryLock() {
		return now.Add(50 * time.Millisecond), nil // one is under way
	}
	db.applyBeside()
	// Come back to learn how it went, if no ping does.
	return now.Add(time.Second), nil
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
	unlock := j.lockAll()
	defer unlock()
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
	due := func(p *pendingPings) bool {
		return slices.ContainsFunc(p.dirty, func(e *hbEntry) bool { return !e.row.Runtime.Wake(e.settings).After(now) })
	}
	return due(&j.pending) || slices.ContainsFunc(j.frozen, due)
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

// HoldPings holds off every writer of pings until release: the journal's
// apply under way ends first, and pings queue behind the hold, those past
// their wait answered 503 by the app. It is how a stuck store is tested on
// SQLite, whose pings need neither the database's lock nor its writer;
// on PostgreSQL it holds nothing.
func (db *DB) HoldPings() (release func()) {
	if db.journal == nil {
		return func() {}
	}
	return db.journal.lockAll()
}
