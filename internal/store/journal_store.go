package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/store/pingblock"
	"github.com/tocsin/tocsin/internal/store/pingjournal"
)

// The SQLite ping journal (package pingjournal) holds acknowledged pings
// until they are applied; here is the SQL it runs on, and the store's
// writers and readers of heartbeats and pings holding it off or applying
// it first.

// journalStore is the store as the journal reaches it.
type journalStore struct{ db *DB }

var _ pingjournal.Store = journalStore{}

func (s journalStore) ByToken(ctx context.Context, hash []byte) (pingjournal.Row, bool, error) {
	st, err := s.db.stmts.get(ctx, s.db.r, pingLookupSQLite)
	if err != nil {
		return hbRow{}, false, err
	}
	var got []byte
	return foundHeartbeat(scanHeartbeat(st.QueryRowContext(ctx, hash), &got))
}

func (s journalStore) BySeq(ctx context.Context, seq int64) (pingjournal.Row, bool, error) {
	return foundHeartbeat(scanHeartbeat(s.db.w.QueryRowContext(ctx, `SELECT `+heartbeatColumns+heartbeatFrom+` WHERE r.seq = $1`, seq)))
}

// foundHeartbeat tells a heartbeat read from none.
func foundHeartbeat(h hbRow, err error) (hbRow, bool, error) {
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.Is(err, errs.ErrNotFound):
		return h, false, nil
	case err != nil:
		return h, false, err
	}
	return h, true, nil
}

func (s journalStore) RecentKeys(ctx context.Context, batch []heartbeat.Arrival, seqOf func(i int) int64,
	since time.Time) (map[pingblock.Key]heartbeat.Ack, error) {
	return s.db.recentPingKeys(ctx, s.db.r, batch, seqOf, since)
}

func (s journalStore) Write(ctx context.Context, sets []*pingjournal.Set, applied int64, legacy bool) (refused, err error) {
	db := s.db
	return db.isolating(ctx, func(w *isolation) error {
		for _, p := range sets {
			if err := db.writeSet(ctx, w, p); err != nil {
				return err
			}
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
}

// writeSet writes one frozen set: in bulk, or, isolating, each heartbeat's
// block, runtime row and state change and each key on its own. Keys are
// written as their label then (a journal of an earlier version may hold
// them as sent).
func (db *DB) writeSet(ctx context.Context, w *isolation, p *pingjournal.Set) error {
	tx := w.tx
	if !w.on {
		if err := db.insertBlocks(ctx, tx, p.Blocks.Blocks()); err != nil {
			return err
		}
		if err := db.saveHBRuntimes(ctx, tx, p.Moved); err != nil {
			return err
		}
		for i := range p.Changes {
			c := &p.Changes[i]
			if err := db.recordChange(ctx, tx, c); err != nil {
				return err
			}
		}
		return db.insertPingKeys(ctx, tx, p.KeyOrder, p.Keys)
	}
	for _, b := range p.Blocks.Blocks() {
		if _, err := w.subject(ctx, fmt.Sprintf("the pings of heartbeat %d", b.Seq), func() error {
			return db.insertBlocks(ctx, tx, []*pingblock.Block{b})
		}); err != nil {
			return err
		}
	}
	for seq, row := range p.Moved {
		if _, err := w.subject(ctx, "the state of heartbeat "+row.ID, func() error {
			return db.saveHBRuntimes(ctx, tx, map[int64]*pingjournal.Moved{seq: row})
		}); err != nil {
			return err
		}
	}
	for i := range p.Changes {
		c := &p.Changes[i]
		if _, err := w.subject(ctx, "a state change of heartbeat "+c.SubjectID, func() error {
			return db.recordChange(ctx, tx, c)
		}); err != nil {
			return err
		}
	}
	for _, k := range p.KeyOrder {
		label := pingblock.Key{Seq: k.Seq, Key: heartbeat.Label(k.Key)}
		if _, err := w.subject(ctx, fmt.Sprintf("a ping key of heartbeat %d", k.Seq), func() error {
			return db.insertPingKeys(ctx, tx, []pingblock.Key{label}, map[pingblock.Key]heartbeat.Ack{label: p.Keys[k]})
		}); err != nil {
			return err
		}
	}
	return nil
}

func (s journalStore) Load(ctx context.Context) (applied, last int64, legacy []pingjournal.Batch, err error) {
	db := s.db
	err = db.w.QueryRowContext(ctx, `SELECT batch FROM ping_journal_applied`).Scan(&applied)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("reading the ping journal's watermark: %w", err)
	}
	err = db.w.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = 'ping_journal'`).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil, fmt.Errorf("reading the ping journal: %w", err)
	}
	// Batches a process of the version before left in the table.
	rows, err := db.w.QueryContext(ctx, `SELECT id, batch FROM ping_journal ORDER BY id`)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("reading the ping journal: %w", err)
	}
	legacy, err = collect(rows, err, func(r rowScanner) (b pingjournal.Batch, err error) {
		return b, r.Scan(&b.ID, &b.Payload)
	})
	if err != nil {
		return 0, 0, nil, err
	}
	return applied, last, legacy, nil
}

func (s journalStore) Claim() error {
	if err := s.db.locks.Claim(journalHolder()); err != nil {
		if refused := (*InUseError)(nil); errors.As(err, &refused) {
			return fmt.Errorf("another process receives pings: %w", err)
		}
		return fmt.Errorf("claiming the database for pings: %w", err)
	}
	return nil
}

// FlushPings applies the ping journal, if any, so what follows reads
// every acknowledged ping from the tables (a ping's incident, say),
// replaying by steps what a stopped process left in it.
func (db *DB) FlushPings(ctx context.Context, steps *PingSteps) (err error) {
	defer errs.Wrap(&err, "store.FlushPings")
	if db.journal == nil {
		return nil
	}
	return db.journal.Flush(ctx, steps.journal())
}

// flushPings is FlushPings before a read: it applies what this process
// journaled (what a stopped process left is replayed by the first call
// that brings app's steps; serve makes one before it takes requests).
func (db *DB) flushPings(ctx context.Context) error {
	if db.journal == nil {
		return nil
	}
	return db.journal.Flush(ctx, nil)
}

// heartbeatWrite runs fn, which writes heartbeat rows other than by pings,
// with the ping journal applied first (as FlushPings with steps, or as
// flushPings with none) and no ping staged until fn returns
// (pingjournal's Hold). On PostgreSQL it just runs fn.
func (db *DB) heartbeatWrite(ctx context.Context, steps *PingSteps, fn func() error) error {
	if db.journal == nil {
		return fn()
	}
	return db.journal.Hold(ctx, steps.journal(), fn)
}

// ApplyPings starts applying the ping journal, beside the ping writer, if
// it is due: its oldest ping has waited long enough, it has grown big, or
// a ping in it changed a state. The ping writer calls it between batches.
// It returns when to call again if no ping comes first (zero: nothing is
// pending), and the error of an apply that failed since the last call;
// PostgreSQL has no journal.
func (db *DB) ApplyPings(ctx context.Context, steps *PingSteps) (next time.Time, err error) {
	defer errs.Wrap(&err, "store.ApplyPings")
	if db.journal == nil {
		return time.Time{}, nil
	}
	return db.journal.ApplyDue(ctx, steps.journal())
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
	return db.journal.Lock()
}
