// Package pingjournal is SQLite's ping journal: the pings a server has
// acknowledged but its tables do not hold yet.
//
// SQLite has one writer, and a ping is answered only once it is durable.
// Written straight into its heartbeat's block, runtime row and their
// indexes, each ping dirties about two random pages, and a batch waits for
// all of them. Instead a batch is appended to a journal file beside the
// database (files.go) and answered when that is written; the journal is
// applied to blocks, runtime rows, keys and state history behind it
// (apply), one transaction for many batches, in which a heartbeat's block
// and runtime row are written once for all its pings. The apply runs
// beside the ping writer, not in its way: the journal is not in the
// database, so journaling needs no write lock.
//
// Until then the pending state lives here, under mu: the ping writer
// stages batches against cached heartbeats, and every other writer of
// heartbeat rows applies the journal first and holds it off while it
// writes (Hold, Sweep), then drops the cache. So the journal only holds
// pings whose effect follows from the rows as they are, and replaying it
// after a crash (load) gives the states and acknowledgements that were
// given before. SQLite serves one node (PostgreSQL deployments write
// pings directly), so this memory is the whole truth about pending pings.
//
// Pending pings are set aside (frozen) to be applied: their runtime rows
// as they stand, blocks, keys and transitions, while later pings stage
// into a new set. A set stays in frozen, and its heartbeats dirty, until
// its transaction commits, with the journal's watermark in it. Locks:
// applying (held by the one apply under way) before mu.
//
// The package holds the mechanics; the SQL is the store's, reached
// through Store, and the heartbeat state machine is app's: every call
// that stages pings (or replays them) is handed app's Steps, and keeps
// nothing of them beyond the call but what goes with a state change
// until it is applied (Change.Follow).
package pingjournal

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store/pingblock"
)

const (
	// IDShift: a ping's id is its batch's id shifted left by IDShift,
	// plus its place in the batch.
	IDShift = 16
	// The journal is applied once its oldest ping has waited flushAfter, or
	// it holds flushCount pings or flushBytes of them, or a ping changed a
	// state (so its alerts are not held back).
	flushAfter = 5 * time.Second
	flushCount = 200_000
	flushBytes = 32 << 20
	// maxCached bounds the heartbeats kept in memory between writes.
	maxCached = 100_000
)

// Row is a heartbeat as the store reads it with its runtime row: Seq
// names it in the journal and the ping tables, Version is what a
// compare-and-set of the runtime row checks.
type Row struct {
	heartbeat.Heartbeat
	Seq     int64
	Version int64
}

// Moved is a heartbeat row pings moved, with the settings its state
// machine ran on (its wake time is computed with them).
type Moved struct {
	Row
	Settings heartbeat.Settings
}

// Change is a state change a ping made, with Follow, what the call that
// staged the ping asked to be written with it (opaque here: the store's
// record of the change and what follows from it, from app's Steps). The
// transaction that applies the change writes it.
type Change struct {
	SubjectID  string
	Transition monitor.Transition
	Follow     any
}

// Batch is a journal batch as written: its id and encoded pings
// (codec.go).
type Batch struct {
	ID      int64
	Payload []byte
}

// Steps are the heartbeat state machine's decisions, app's, which the
// journal stages pings by: handed to each call that stages or replays
// pings, never kept beyond it (but for Follow, kept with the change it
// is for until that is applied).
type Steps struct {
	// Settings is what h's state machine runs on.
	Settings func(h heartbeat.Heartbeat) (heartbeat.Settings, error)
	// Ping moves rt by the ping rec and notes in rec what it did,
	// returning the transition it made.
	Ping func(rt heartbeat.Runtime, rec *heartbeat.PingRecord, s heartbeat.Settings) (heartbeat.Runtime, *monitor.Transition)
	// KeyTTL is how long a ping's key makes a retry a no-op.
	KeyTTL time.Duration
	// Follow goes with every state change staged (Change.Follow).
	Follow any
}

// Store is the SQL the journal runs on: the store's.
type Store interface {
	// ByToken reads, on the readers, the heartbeat whose token hashes to
	// hash; ok is false if there is none.
	ByToken(ctx context.Context, hash []byte) (row Row, ok bool, err error)
	// BySeq reads, on the writer, the heartbeat with this seq; ok is
	// false if there is none.
	BySeq(ctx context.Context, seq int64) (row Row, ok bool, err error)
	// RecentKeys returns, from the readers, the acknowledgements stored
	// since `since` under the keys the batch's pings carry; seqOf names
	// the heartbeat of the i-th ping (0 for none).
	RecentKeys(ctx context.Context, batch []heartbeat.Arrival, seqOf func(i int) int64, since time.Time) (map[pingblock.Key]heartbeat.Ack, error)
	// Write writes the sets into blocks, runtime rows, state history (with
	// what each change's Follow writes) and keys, and the
	// watermark applied, in one transaction; if legacy, it removes the
	// table's batches up to applied too. A row the database refuses for
	// its content does not hold the others back: the rest is written, and
	// refused lists what was set aside.
	Write(ctx context.Context, sets []*Set, applied int64, legacy bool) (refused, err error)
	// Load reads, on the writer, the watermark, the last batch id the
	// table's sequence gave, and the batches a process of the version
	// before left in the table, in order.
	Load(ctx context.Context) (applied, last int64, legacy []Batch, err error)
	// Claim makes the database this process's for pings.
	Claim() error
}

// errNoSteps: the journal a stopped process left is replayed only by a
// call that brings app's Steps.
var errNoSteps = errors.New("pingjournal: the journal is not replayed yet")

// Journal is the ping journal of one SQLite database.
type Journal struct {
	// Buffers of Record, reused batch to batch under mu.
	plan    []plannedPing
	text    []byte
	entries []*entry

	store     Store
	path      string // the SQLite database's
	applying  sync.Mutex
	mu        ctxMutex
	files     journalFiles
	loaded    bool  // the journal has been replayed
	legacy    bool  // ping_journal (the table) had batches to replay
	nextBatch int64 // the next batch's id
	byHash    map[string]*entry
	bySeq     map[int64]*entry
	pending   Set
	frozen    []*Set    // set aside, not yet applied; oldest first
	failed    error     // of the last apply beside the writer
	retryAt   time.Time // after it failed
}

// entry is a cached heartbeat: its row as the database holds it, plus
// the pending pings' effect on its runtime.
type entry struct {
	row      Row
	settings heartbeat.Settings // what its pings are staged by
	hash     string             // its token's hash, once a ping named it
	// dirty: the runtime has moved since it was read, and the set of that
	// gen (pending or frozen) is not applied yet.
	dirty    bool
	dirtyGen uint64
	// block holds its pending pings while blockGen is the pending set's.
	block    *pingblock.Block
	blockGen uint64
}

// Set is what the journal holds that is not applied yet: the pending
// pings, or a set of them frozen to be applied, which no one changes
// after. The store writes a frozen set's exported fields.
type Set struct {
	Blocks pingblock.Set
	// Moved holds the dirty heartbeats' rows as they stood when the set
	// was frozen, by seq: what its transaction writes.
	Moved    map[int64]*Moved
	Changes  []Change
	Keys     map[pingblock.Key]heartbeat.Ack
	KeyOrder []pingblock.Key // Keys in the order they were staged
	// LastBatch is the last batch the set holds pings of.
	LastBatch int64

	gen   uint64 // tells this set's blocks from an applied one's
	n     int
	bytes int
	since time.Time // when the oldest was staged
	dirty []*entry
}

// New returns the journal of the SQLite database at path, stored through
// s. Nothing is read until the first call that needs it.
func New(path string, s Store) *Journal {
	return &Journal{store: s, path: path, mu: newCtxMutex(), files: journalFiles{db: path},
		byHash: map[string]*entry{}, bySeq: map[int64]*entry{}}
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

// Lock waits for an apply under way and holds off the next, and holds
// pings off until unlock: what a writer of heartbeat rows, and a flush,
// needs. Pings queue behind it, those past their wait answered 503 by the
// app; it is how a stuck store is tested on SQLite, whose pings need
// neither the database's lock nor its writer.
func (j *Journal) Lock() (unlock func()) {
	j.applying.Lock()
	j.mu.Lock()
	return func() {
		j.mu.Unlock()
		j.applying.Unlock()
	}
}

// Flush applies the journal, so what follows reads every acknowledged
// ping from the tables. Without steps (nil) it applies what this process
// staged, but does not replay what a stopped process left: the first
// call with app's steps does (serve makes one before it takes requests).
func (j *Journal) Flush(ctx context.Context, steps *Steps) error {
	unlock := j.Lock()
	defer unlock()
	return j.flushLocked(ctx, steps)
}

func (j *Journal) flushLocked(ctx context.Context, steps *Steps) error {
	if err := j.load(ctx, steps); errors.Is(err, errNoSteps) {
		return nil // nothing of this process's is pending
	} else if err != nil {
		return err
	}
	return j.apply(ctx)
}

// Hold runs fn, which writes heartbeat rows other than by pings, with the
// journal applied first (as Flush, with steps or without) and no ping
// staged until fn returns; then the cached heartbeats are dropped, so
// pings read them anew.
func (j *Journal) Hold(ctx context.Context, steps *Steps, fn func() error) error {
	unlock := j.Lock()
	defer unlock()
	if err := j.flushLocked(ctx, steps); err != nil {
		return err
	}
	defer j.forget()
	return fn()
}

// Sweep runs sweep, which claims heartbeats whose deadline has come by
// now and rewrites their runtime rows, with pings held off. Pings not
// applied yet may have moved what is due: they are applied first if a
// heartbeat they moved is due, and again once sweep has claimed (called
// claimed with the seqs it claimed) one they moved. The claimed
// heartbeats are dropped from the cache when sweep returns.
func (j *Journal) Sweep(ctx context.Context, steps *Steps, now time.Time, sweep func(claimed func(seqs []int64) error) error) error {
	unlock := j.Lock()
	defer unlock()
	if err := j.load(ctx, steps); err != nil {
		return err
	}
	if j.dueDirty(now) {
		if err := j.apply(ctx); err != nil {
			return err
		}
	}
	var rewritten []int64
	defer func() {
		for _, s := range rewritten {
			j.drop(s)
		}
	}()
	return sweep(func(seqs []int64) error {
		if j.anyDirty(seqs) {
			if err := j.apply(ctx); err != nil {
				return err
			}
		}
		rewritten = seqs
		return nil
	})
}

// Close applies what a process that used the journal left in it, and
// closes its file.
func (j *Journal) Close(ctx context.Context) error {
	unlock := j.Lock()
	defer unlock()
	defer j.files.close()
	if !j.loaded {
		return nil
	}
	return j.apply(ctx)
}

// Abandon closes the journal's file as a killed process would leave it:
// pings still in the journal are not applied.
func (j *Journal) Abandon() {
	unlock := j.Lock()
	j.files.close()
	unlock()
}

// Pending is how many acknowledged pings wait in the journal.
func (j *Journal) Pending() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := j.pending.n
	for _, p := range j.frozen {
		n += p.n
	}
	return n
}

// Segments lists the journal's files, oldest first.
func (j *Journal) Segments() []string {
	paths, _ := filepath.Glob(globEscape(j.path) + "-pings-*.journal")
	slices.Sort(paths)
	return paths
}

// drop forgets the cached heartbeat with this seq, which must not be dirty.
func (j *Journal) drop(seq int64) {
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
func (j *Journal) forget() {
	clear(j.byHash)
	clear(j.bySeq)
}

// dueDirty reports whether a heartbeat with pending pings is due by now:
// a sweep must then apply the journal first.
func (j *Journal) dueDirty(now time.Time) bool {
	due := func(p *Set) bool {
		return slices.ContainsFunc(p.dirty, func(e *entry) bool { return !e.row.Runtime.Wake(e.settings).After(now) })
	}
	return due(&j.pending) || slices.ContainsFunc(j.frozen, due)
}

// anyDirty reports whether one of the heartbeats with these seqs has
// pending pings: a sweep that claimed them must apply the journal first.
func (j *Journal) anyDirty(seqs []int64) bool {
	for _, s := range seqs {
		if e := j.bySeq[s]; e != nil && e.dirty {
			return true
		}
	}
	return false
}
