package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store/pingblock"
)

// Pings on PostgreSQL: one transaction per batch, in three round trips
// whatever the batch holds. Its statements are sent in two pipelines (pgx
// batches) rather than a round trip each: a round trip costs about as
// much CPU, on either side, as storing a few pings (docs/benchmarks.md,
// "Pings").
//
//	pipeline: BEGIN, lock the heartbeats named, take ping ids, read
//	          retried keys
//	Go:       move each heartbeat's state machine; state changes, which
//	          are rare, write their events and incidents here, statement
//	          by statement, on the same connection
//	pipeline: update the runtime rows, insert the blocks, store the keys
//	COMMIT
//
// Several batches may be stored at once (PingWriters), each by its own
// transaction; those sharing a heartbeat wait on its runtime row's lock,
// and take their ids after it, so a heartbeat's blocks never overlap.

const (
	// pgLockPings reads what a ping needs of its heartbeat: its id,
	// schedule and runtime (scanPingRow).
	pgLockPings = `SELECT h.id, h.period_s, h.cron, h.timezone, h.grace_s, h.max_runtime_s, ` + hbRuntimeColumns +
		`, h.token_hash` + heartbeatFrom + `
		WHERE h.token_hash = ANY($1::bytea[]) ORDER BY r.seq FOR UPDATE OF r`
	pgTakePingIDs = `SELECT nextval('ping_ids') FROM generate_series(1, $1::int)`
	// pgRecentKeys reads the acknowledgements stored under any of the keys
	// for any of the heartbeats; the pairs are matched in Go.
	pgRecentKeys = `SELECT k.heartbeat_seq, k.idem_key, k.ack FROM ping_keys k
		JOIN heartbeat_runtime r ON r.seq = k.heartbeat_seq JOIN heartbeats h ON h.id = r.heartbeat_id
		WHERE h.token_hash = ANY($1::bytea[]) AND k.idem_key = ANY($2::text[]) AND k.at >= $3`
	pgSaveRuntimes = `UPDATE heartbeat_runtime r SET state = v.state, state_since = v.state_since,
		last_ping_at = v.last_ping_at, last_start_at = v.last_start_at, last_completion = v.last_completion,
		last_exit_code = v.last_exit_code, last_duration_us = v.last_duration_us, open_runs = v.open_runs,
		expected_at = v.expected_at, deadline_at = v.deadline_at, window_start = v.window_start, wake_at = v.wake_at,
		interrupted = v.interrupted, version = r.version + 1, sweep_owner = NULL, sweep_until = 0
		FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::int[],
			$8::bigint[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[])
		AS v(seq, state, state_since, last_ping_at, last_start_at, last_completion, last_exit_code, last_duration_us,
			open_runs, expected_at, deadline_at, window_start, wake_at, interrupted)
		WHERE r.seq = v.seq`
	pgInsertBlocks = `INSERT INTO ping_blocks (heartbeat_seq, first_id, last_id, first_at, last_at, n, pings)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::int[], $7::text[])`
	// pgSaveKeys stores the batch's new keys; an expired record under the
	// same key is replaced. A batch holds each key once.
	pgSaveKeys = `INSERT INTO ping_keys (heartbeat_seq, idem_key, at, ack)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[])
		ON CONFLICT (heartbeat_seq, idem_key) DO UPDATE SET at = excluded.at, ack = excluded.ack`
)

// pgPings is RecordPings on PostgreSQL.
func (db *DB) pgPings(ctx context.Context, steps *PingSteps, batch []heartbeat.Arrival) (outs []heartbeat.Outcome, changes []StateChange, err error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	// The transaction is begun and committed by the pipelines, so
	// database/sql does not know of it: on an error it is rolled back
	// here, or the connection is not returned to the pool.
	defer func() {
		if err != nil {
			abandonTx(conn)
		}
	}()

	// The first pipeline.
	hashes := distinctTokens(batch)
	var keyNames []string
	for _, in := range batch {
		if in.Key != "" {
			keyNames = append(keyNames, in.Key)
		}
	}
	hbs := make(map[string]*hbRow, len(hashes))
	keys := map[pingblock.Key]heartbeat.Ack{}
	var ids []int64
	err = pipeline(ctx, conn, func(b *pgx.Batch) {
		b.Queue(`BEGIN`)
		b.Queue(pgLockPings, hashes).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				h, hash, err := scanPingRow(rows)
				if err != nil {
					return err
				}
				hbs[string(hash)] = h
			}
			return rows.Err()
		})
		// After the locks: a later batch of the same heartbeat gets
		// higher ids.
		b.Queue(pgTakePingIDs, len(batch)).Query(func(rows pgx.Rows) error {
			ids = make([]int64, 0, len(batch))
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					return err
				}
				ids = append(ids, id)
			}
			slices.Sort(ids)
			return rows.Err()
		})
		if len(keyNames) > 0 {
			b.Queue(pgRecentKeys, hashes, keyNames, micros(batch[0].Ping.At.Add(-steps.KeyTTL))).Query(func(rows pgx.Rows) error {
				for rows.Next() {
					if err := scanPingKey(rows, keys); err != nil {
						return err
					}
				}
				return rows.Err()
			})
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if len(ids) != len(batch) {
		return nil, nil, fmt.Errorf("took %d ping ids for %d pings", len(ids), len(batch))
	}

	outs = make([]heartbeat.Outcome, len(batch))
	var (
		blocks  pingblock.Set
		newKeys []pingblock.Key
		moved   = map[int64]movedRow{} // by seq
	)
	for _, i := range pingblock.ArrivalOrder(batch) {
		in := batch[i]
		h := hbs[string(in.TokenHash)]
		if h == nil {
			continue
		}
		outs[i].Found = true
		k := pingblock.Key{Seq: h.Seq, Key: in.Key}
		if ack, ok := keys[k]; in.Key != "" && ok {
			outs[i].Ack, outs[i].Replayed = ack, true
			continue
		}
		settings, err := steps.Settings(h.Heartbeat)
		if err != nil {
			return nil, nil, err
		}
		rec := pingblock.Record(ids[0], in)
		ids = ids[1:]
		var tr *monitor.Transition
		h.Runtime, tr = steps.Ping(h.Runtime, &rec, settings)
		if tr != nil {
			changes = append(changes, StateChange{SubjectID: h.ID, Transition: *tr})
			if err := steps.Record(ctx, &Tx{db: db, c: conn}, h.ID, *tr); err != nil {
				return nil, nil, err
			}
		}
		if !rec.Ignored {
			moved[h.Seq] = movedRow{h, settings}
		}
		blocks.Add(h.Seq, &rec)
		outs[i].Ack = pingblock.AckOf(h.ID, &rec)
		if in.Key != "" {
			keys[k] = outs[i].Ack
			newKeys = append(newKeys, k)
		}
	}

	// The second pipeline.
	runtimes, err := runtimeArrays(moved)
	if err != nil {
		return nil, nil, err
	}
	keyArgs, err := keyArrays(newKeys, keys)
	if err != nil {
		return nil, nil, err
	}
	err = pipeline(ctx, conn, func(b *pgx.Batch) {
		if len(moved) > 0 {
			b.Queue(pgSaveRuntimes, runtimes...)
		}
		if bs := blocks.Blocks(); len(bs) > 0 {
			b.Queue(pgInsertBlocks, blockArrays(bs)...)
		}
		if len(newKeys) > 0 {
			b.Queue(pgSaveKeys, keyArgs...)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	// COMMIT on its own, once the writes have succeeded: sent in their
	// pipeline, it would commit them even after this side gave up (a
	// write held up past the deadline runs on when it can, and finds the
	// COMMIT waiting), and the pings were answered 503 yet stored.
	if err := withPgx(conn, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, `COMMIT`)
		if err == nil && tag.String() != "COMMIT" {
			err = fmt.Errorf("the transaction ended with %q, not COMMIT", tag)
		}
		return err
	}); err != nil {
		return nil, nil, err
	}
	return outs, changes, nil
}

// pipeline sends the statements fill queues as one pipeline on conn's
// PostgreSQL connection and runs their callbacks on the answers.
func pipeline(ctx context.Context, conn *sql.Conn, fill func(*pgx.Batch)) error {
	b := &pgx.Batch{}
	fill(b)
	if b.Len() == 0 {
		return nil
	}
	return withPgx(conn, func(c *pgx.Conn) error { return c.SendBatch(ctx, b).Close() })
}

// withPgx runs f on conn's pgx connection. An error that wraps
// driver.ErrBadConn closes conn instead of returning it to the pool.
func withPgx(conn *sql.Conn, f func(*pgx.Conn) error) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("%T is not a pgx connection: %w", dc, driver.ErrBadConn)
		}
		return f(c.Conn())
	})
}

// abandonTx rolls back the transaction a pipeline left open on conn, if
// any; a connection it cannot roll back is closed rather than returned
// to the pool. The caller's context may have ended: it has its own.
func abandonTx(conn *sql.Conn) {
	_ = withPgx(conn, func(c *pgx.Conn) error {
		if c.PgConn().TxStatus() == 'I' {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := c.Exec(ctx, `ROLLBACK`); err != nil || c.PgConn().TxStatus() != 'I' {
			return driver.ErrBadConn
		}
		return nil
	})
}

// distinctTokens are the token hashes of batch, each once.
func distinctTokens(batch []heartbeat.Arrival) [][]byte {
	seen := make(map[string]bool, len(batch))
	hashes := make([][]byte, 0, len(batch))
	for _, in := range batch {
		if !seen[string(in.TokenHash)] {
			seen[string(in.TokenHash)] = true
			hashes = append(hashes, in.TokenHash)
		}
	}
	return hashes
}

// scanPingRow reads a row of pgLockPings: a heartbeat with only what a
// ping needs of it, and its token hash.
func scanPingRow(rows pgx.Rows) (*hbRow, []byte, error) {
	var (
		h    hbRow
		rc   runtimeCols
		hash []byte
	)
	dest := append([]any{&h.ID, &h.Schedule.PeriodSeconds, &h.Schedule.Cron, &h.Schedule.Timezone,
		&h.Schedule.GraceSeconds, &h.MaxRuntimeSeconds}, rc.dest(&h)...)
	if err := rows.Scan(append(dest, &hash)...); err != nil {
		return nil, nil, err
	}
	return &h, hash, rc.fill(&h)
}

// movedRow is a heartbeat whose runtime a batch moved, with the settings
// its pings were applied with (and its wake time is computed with).
type movedRow struct {
	h        *hbRow
	settings heartbeat.Settings
}

// runtimeArrays are pgSaveRuntimes's arguments: the moved rows' columns,
// in seq order.
func runtimeArrays(moved map[int64]movedRow) ([]any, error) {
	seqs := make([]int64, 0, len(moved))
	for seq := range moved {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	n := len(seqs)
	var (
		state, completion, open, interrupted = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		since, lastPing, lastStart, duration = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		expected, deadline, window, wake     = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		exitCode                             = make([]int32, n)
	)
	for i, seq := range seqs {
		m := moved[seq]
		rt := &m.h.Runtime
		var err error
		if open[i], err = openRunsJSON(rt.Open); err != nil {
			return nil, err
		}
		state[i], completion[i], interrupted[i] = string(rt.State), completionText(rt.LastCompletion), string(rt.Interrupted)
		since[i], lastPing[i], lastStart[i], duration[i] = micros(rt.Since), zeroMicros(rt.LastPing), zeroMicros(rt.LastStart), durationMicros(rt.LastDuration)
		expected[i], deadline[i], window[i], wake[i] = zeroMicros(rt.Expected), zeroMicros(rt.Deadline), zeroMicros(rt.WindowStart), micros(rt.Wake(m.settings))
		exitCode[i] = int32(rt.LastExitCode)
	}
	return []any{seqs, state, since, lastPing, lastStart, completion, exitCode, duration, open, expected, deadline, window, wake, interrupted}, nil
}

// blockArrays are pgInsertBlocks's arguments.
func blockArrays(blocks []*pingblock.Block) []any {
	n := len(blocks)
	seq, first, last, firstAt, lastAt, count := make([]int64, n), make([]int64, n), make([]int64, n),
		make([]int64, n), make([]int64, n), make([]int64, n)
	text := make([]string, n)
	for i, b := range blocks {
		seq[i], first[i], last[i], firstAt[i], lastAt[i], count[i] = b.Seq, b.FirstID, b.LastID, b.FirstAt, b.LastAt, int64(b.N)
		text[i] = b.JSON()
	}
	return []any{seq, first, last, firstAt, lastAt, count, text}
}

// keyArrays are pgSaveKeys's arguments.
func keyArrays(newKeys []pingblock.Key, acks map[pingblock.Key]heartbeat.Ack) ([]any, error) {
	seqs, names, ats, texts := make([]int64, len(newKeys)), make([]string, len(newKeys)),
		make([]int64, len(newKeys)), make([]string, len(newKeys))
	for i, k := range newKeys {
		ack := acks[k]
		b, err := json.Marshal(ack)
		if err != nil {
			return nil, err
		}
		seqs[i], names[i], ats[i], texts[i] = k.Seq, k.Key, micros(ack.ReceivedAt), string(b)
	}
	return []any{seqs, names, ats, texts}, nil
}
