package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/store/pingblock"
	"github.com/tocsin/tocsin/internal/store/pingjournal"
)

// Pings: received in batches (group commit). On PostgreSQL each batch is
// one transaction that stores the pings in blocks, replays retried ones,
// and moves each heartbeat's state machine; several nodes may write at
// once. On SQLite, one node, a batch is appended to a journal and applied
// behind it in larger batches (package pingjournal, journal_store.go).

// pingLookupSQLite finds a heartbeat by token for the SQLite journal (a
// cached statement of the write pool).
const pingLookupSQLite = `SELECT ` + heartbeatColumns + `, h.token_hash` + heartbeatFrom + ` WHERE h.token_hash = $1`

// RecordPings stores a batch of pings and returns each one's outcome and
// the state changes they made. Pings apply in the batch's order, each
// moving its heartbeat by steps, which also record each state change; a
// ping whose key the heartbeat saw within steps.KeyTTL (earlier in the
// batch too) is replayed, not recorded again. When it returns without an
// error every recorded ping is durable.
func (db *DB) RecordPings(ctx context.Context, steps *PingSteps, batch []heartbeat.Arrival) (outs []heartbeat.Outcome, changes []StateChange, err error) {
	defer errs.Wrap(&err, "store.RecordPings(%d)", len(batch))
	if len(batch) == 0 {
		return nil, nil, nil
	}
	if db.journal != nil {
		return db.journalPings(ctx, steps, batch)
	}
	return db.pgPings(ctx, steps, batch)
}

// journalPings stores a batch of pings in the SQLite journal.
func (db *DB) journalPings(ctx context.Context, steps *PingSteps, batch []heartbeat.Arrival) ([]heartbeat.Outcome, []StateChange, error) {
	outs, made, err := db.journal.Record(ctx, batch, steps.journal())
	if err != nil || len(made) == 0 {
		return outs, nil, err
	}
	changes := make([]StateChange, len(made))
	for i, c := range made {
		changes[i] = StateChange{SubjectID: c.SubjectID, Transition: c.Transition}
	}
	return outs, changes, nil
}

// recentPingKeys returns the acknowledgements stored since `since` under
// the keys the batch's pings carry; seqOf names the heartbeat of the i-th
// ping (0 for none).
func (db *DB) recentPingKeys(ctx context.Context, tx queryer, batch []heartbeat.Arrival, seqOf func(i int) int64, since time.Time) (map[pingblock.Key]heartbeat.Ack, error) {
	var seqs, keys []any
	for i, in := range batch {
		if in.Key == "" {
			continue
		}
		if seq := seqOf(i); seq != 0 {
			seqs, keys = append(seqs, seq), append(keys, in.Key)
		}
	}
	out := map[pingblock.Key]heartbeat.Ack{}
	if len(seqs) == 0 {
		return out, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT heartbeat_seq, idem_key, ack FROM ping_keys
		WHERE heartbeat_seq IN (`+placeholders(1, len(seqs))+`) AND idem_key IN (`+placeholders(len(seqs)+1, len(keys))+`)
		AND at >= $`+strconv.Itoa(2*len(seqs)+1), append(append(seqs, keys...), micros(since))...)
	err = each(rows, err, func(r rowScanner) error { return scanPingKey(r, out) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanPingKey reads a row of (heartbeat_seq, idem_key, ack) into keys.
func scanPingKey(row rowScanner, keys map[pingblock.Key]heartbeat.Ack) error {
	var (
		k   pingblock.Key
		ack string
		a   heartbeat.Ack
	)
	if err := row.Scan(&k.Seq, &k.Key, &ack); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(ack), &a); err != nil {
		return err
	}
	keys[k] = a
	return nil
}

func (db *DB) insertPingKeys(ctx context.Context, tx *sql.Tx, newKeys []pingblock.Key, acks map[pingblock.Key]heartbeat.Ack) error {
	for _, k := range newKeys {
		ack := acks[k]
		b, err := json.Marshal(ack)
		if err != nil {
			return err
		}
		// An expired record under the same key is replaced.
		if _, err := tx.ExecContext(ctx, `INSERT INTO ping_keys (heartbeat_seq, idem_key, at, ack) VALUES ($1, $2, $3, $4)
			ON CONFLICT (heartbeat_seq, idem_key) DO UPDATE SET at = excluded.at, ack = excluded.ack`,
			k.Seq, k.Key, micros(ack.ReceivedAt), string(b)); err != nil {
			return err
		}
	}
	return nil
}

// saveHBRuntimes writes the runtime rows a batch moved, in seq order,
// with the wake times their settings give them (SQLite; PostgreSQL writes
// them in one statement, pgSaveRuntimes).
func (db *DB) saveHBRuntimes(ctx context.Context, tx *sql.Tx, moved map[int64]*pingjournal.Moved) error {
	if len(moved) == 0 {
		return nil
	}
	seqs := make([]int64, 0, len(moved))
	for seq := range moved {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	st, err := db.txStmt(ctx, tx, hbRuntimeUpdate+` WHERE seq = $1`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, seq := range seqs {
		h := moved[seq]
		vals, err := hbRuntimeValues(h.Runtime, h.Settings)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, append([]any{seq}, vals...)...); err != nil {
			return err
		}
	}
	return nil
}

// DeletePingsBefore forgets pings older than pingsBefore, ping keys older
// than keysBefore, and service spans last seen before spansBefore.
func (db *DB) DeletePingsBefore(ctx context.Context, pingsBefore, keysBefore, spansBefore time.Time) (err error) {
	defer errs.Wrap(&err, "store.DeletePingsBefore")
	if _, err := db.w.ExecContext(ctx, `DELETE FROM ping_keys WHERE at < $1`, micros(keysBefore)); err != nil {
		return err
	}
	if _, err := db.w.ExecContext(ctx, `DELETE FROM ping_blocks WHERE last_at < $1`, micros(pingsBefore)); err != nil {
		return err
	}
	_, err = db.w.ExecContext(ctx, `DELETE FROM service_spans WHERE last_seen < $1`, micros(spansBefore))
	return err
}

// PingWriters is how many batches of pings RecordPings may store at once,
// given batches that share no heartbeat. On SQLite one: its journal takes
// one writer. On PostgreSQL one per CPU, and at least two: a batch's
// transaction spends much of its time waiting on its round trips and the
// commit's flush, and another batch can be stored meanwhile; more than
// the CPUs can serve only makes each batch smaller (docs/benchmarks.md,
// "Pings").
func (db *DB) PingWriters() int {
	if db.journal != nil {
		return 1
	}
	return min(max(2, runtime.GOMAXPROCS(0)), 8)
}
