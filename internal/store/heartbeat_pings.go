package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
)

// Pings: received in batches (group commit), each batch one transaction
// that stores the pings, replays retried ones, and moves each heartbeat's
// state machine.

// The SQLite ping writer's statements, prepared once (prepareWrites).
const (
	pingLookupSQLite = `SELECT ` + heartbeatColumns + `, h.token_hash` + heartbeatFrom + ` WHERE h.token_hash = $1`
	pingInsertSQLite = `INSERT INTO pings (heartbeat_seq, at, duration_us, signal, exit_code, body_truncated,
		ignored, run_id, user_agent, idem_key, method, client, body)
		VALUES ($1, $2, NULLIF($3, -1), $4, NULLIF($5, -1), $6, $7, $8, $9, $10, $11, $12, $13)`
)

// RecordPings stores a batch of pings in one transaction and returns each
// one's outcome and the state changes they made. Pings apply in the
// batch's order; a ping whose key the heartbeat saw within heartbeat.KeyTTL
// (earlier in the batch too) is replayed, not recorded again.
func (db *DB) RecordPings(ctx context.Context, batch []heartbeat.Arrival) (outs []heartbeat.Outcome, changes []StateChange, err error) {
	defer monitor.Wrap(&err, "store.RecordPings(%d)", len(batch))
	if len(batch) == 0 {
		return nil, nil, nil
	}
	if db.d.name != EnginePostgres {
		if err := db.prepareWrites(ctx, pingLookupSQLite, pingInsertSQLite, hbRuntimeUpdate+` WHERE seq = $1`); err != nil {
			return nil, nil, err
		}
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		outs, changes = make([]heartbeat.Outcome, len(batch)), changes[:0]
		hbs, err := db.lockByTokens(ctx, tx, batch)
		if err != nil {
			return err
		}
		keys, err := db.recentPingKeys(ctx, tx, batch, hbs, batch[0].Ping.At.Add(-heartbeat.KeyTTL))
		if err != nil {
			return err
		}
		var (
			rows    pingRows
			newKeys []pingKey
			moved   = map[int64]*hbRow{}
		)
		// In the order they arrived: handlers stamp a ping before queueing
		// it, so two may reach the queue out of order by a hair.
		order := make([]int, len(batch))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return batch[a].Ping.At.Compare(batch[b].Ping.At) })
		for _, i := range order {
			in := batch[i]
			h := hbs[string(in.TokenHash)]
			if h == nil {
				continue
			}
			outs[i].Found = true
			k := pingKey{h.Seq, in.Key}
			if ack, ok := keys[k]; in.Key != "" && ok {
				outs[i].Ack, outs[i].Replayed = ack, true
				continue
			}
			p := in.Ping
			ack := heartbeat.Ack{HeartbeatID: h.ID, Signal: p.Signal.String(), ExitCode: p.ExitCode, RunID: p.RunID,
				ReceivedAt: p.At, BodyTruncated: in.Truncated, DurationUs: -1}
			if h.Paused {
				ack.Ignored = true
			} else {
				settings, err := db.plans.settings(h.Heartbeat)
				if err != nil {
					return err
				}
				var (
					tr  *monitor.Transition
					dur time.Duration
				)
				h.Runtime, tr, dur = h.Runtime.Ping(p, settings)
				if dur >= 0 {
					ack.DurationUs = dur.Microseconds()
				}
				if tr != nil {
					changes = append(changes, StateChange{SubjectID: h.ID, Transition: *tr})
					if err := db.recordTransition(ctx, tx, h.ID, tr); err != nil {
						return err
					}
				}
				moved[h.Seq] = h
			}
			rows.add(h.Seq, in, ack)
			outs[i].Ack = ack
			if in.Key != "" {
				keys[k] = ack
				newKeys = append(newKeys, k)
			}
		}
		if err := db.saveHBRuntimes(ctx, tx, moved); err != nil {
			return err
		}
		if err := db.insertPings(ctx, tx, rows); err != nil {
			return err
		}
		return db.insertPingKeys(ctx, tx, newKeys, keys)
	})
	if err != nil {
		return nil, nil, err
	}
	return outs, changes, nil
}

// lockByTokens reads, with their runtime rows locked in seq order, the
// heartbeats the batch's tokens name, by token hash.
func (db *DB) lockByTokens(ctx context.Context, tx *sql.Tx, batch []heartbeat.Arrival) (map[string]*hbRow, error) {
	seen := map[string]bool{}
	var hashes [][]byte
	for _, in := range batch {
		if !seen[string(in.TokenHash)] {
			seen[string(in.TokenHash)] = true
			hashes = append(hashes, in.TokenHash)
		}
	}
	var (
		rows *sql.Rows
		err  error
	)
	if db.d.name == EnginePostgres {
		rows, err = tx.QueryContext(ctx, `SELECT `+heartbeatColumns+`, h.token_hash`+heartbeatFrom+`
			WHERE h.token_hash = ANY($1::bytea[]) ORDER BY r.seq FOR UPDATE OF r`, hashes)
	} else {
		// SQLite: one cached statement run per token is cheaper than
		// parsing an IN list of a different length every batch, and the
		// write transaction already excludes every other writer.
		st, err := db.txStmt(ctx, tx, pingLookupSQLite)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		out := make(map[string]*hbRow, len(hashes))
		for _, hash := range hashes {
			var got []byte
			h, err := scanHeartbeat(st.QueryRowContext(ctx, hash), &got)
			switch {
			case errors.Is(err, sql.ErrNoRows), errors.Is(err, monitor.ErrNotFound):
			case err != nil:
				return nil, err
			default:
				out[string(hash)] = &h
			}
		}
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]*hbRow, len(hashes))
	for rows.Next() {
		var hash []byte
		h, err := scanHeartbeat(rows, &hash)
		if err != nil {
			return nil, err
		}
		out[string(hash)] = &h
	}
	return out, rows.Err()
}

type pingKey struct {
	seq int64
	key string
}

// recentPingKeys returns the acknowledgements stored since `since` under
// the keys the batch's pings carry.
func (db *DB) recentPingKeys(ctx context.Context, tx *sql.Tx, batch []heartbeat.Arrival, hbs map[string]*hbRow, since time.Time) (map[pingKey]heartbeat.Ack, error) {
	var seqs, keys []any
	for _, in := range batch {
		if h := hbs[string(in.TokenHash)]; h != nil && in.Key != "" {
			seqs, keys = append(seqs, h.Seq), append(keys, in.Key)
		}
	}
	out := map[pingKey]heartbeat.Ack{}
	if len(seqs) == 0 {
		return out, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT heartbeat_seq, idem_key, ack FROM ping_keys
		WHERE heartbeat_seq IN (`+placeholders(1, len(seqs))+`) AND idem_key IN (`+placeholders(len(seqs)+1, len(keys))+`)
		AND at >= $`+strconv.Itoa(2*len(seqs)+1), append(append(seqs, keys...), micros(since))...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k   pingKey
			ack string
			a   heartbeat.Ack
		)
		if err := rows.Scan(&k.seq, &k.key, &ack); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(ack), &a); err != nil {
			return nil, err
		}
		out[k] = a
	}
	return out, rows.Err()
}

func (db *DB) insertPingKeys(ctx context.Context, tx *sql.Tx, newKeys []pingKey, acks map[pingKey]heartbeat.Ack) error {
	for _, k := range newKeys {
		ack := acks[k]
		b, err := json.Marshal(ack)
		if err != nil {
			return err
		}
		// An expired record under the same key is replaced.
		if _, err := tx.ExecContext(ctx, `INSERT INTO ping_keys (heartbeat_seq, idem_key, at, ack) VALUES ($1, $2, $3, $4)
			ON CONFLICT (heartbeat_seq, idem_key) DO UPDATE SET at = excluded.at, ack = excluded.ack`,
			k.seq, k.key, micros(ack.ReceivedAt), string(b)); err != nil {
			return err
		}
	}
	return nil
}

// pingRows are the columns of pings to insert.
type pingRows struct {
	seq, at, duration, signal, exit []int64
	truncated, ignored              []bool
	runID, userAgent, key           []*string
	method, client                  []string
	body                            [][]byte
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (r *pingRows) add(seq int64, in heartbeat.Arrival, ack heartbeat.Ack) {
	r.seq = append(r.seq, seq)
	r.at = append(r.at, micros(in.Ping.At))
	r.duration = append(r.duration, ack.DurationUs)
	r.signal = append(r.signal, int64(in.Ping.Signal))
	r.exit = append(r.exit, int64(in.Ping.ExitCode))
	r.truncated = append(r.truncated, in.Truncated)
	r.ignored = append(r.ignored, ack.Ignored)
	r.runID = append(r.runID, optional(in.Ping.RunID))
	r.userAgent = append(r.userAgent, optional(in.UserAgent))
	r.key = append(r.key, optional(in.Key))
	r.method = append(r.method, in.Method)
	r.client = append(r.client, in.Client)
	r.body = append(r.body, in.Body)
}

// insertPings stores the rows: on PostgreSQL one statement over arrays,
// on SQLite one prepared statement per row. A -1 duration or exit code is
// stored as NULL.
func (db *DB) insertPings(ctx context.Context, tx *sql.Tx, r pingRows) error {
	if len(r.seq) == 0 {
		return nil
	}
	if db.d.name == EnginePostgres {
		_, err := tx.ExecContext(ctx, `INSERT INTO pings (heartbeat_seq, at, duration_us, signal, exit_code, body_truncated,
			ignored, run_id, user_agent, idem_key, method, client, body)
			SELECT seq, at, NULLIF(duration, -1), signal, NULLIF(exit, -1), truncated, ignored, run_id, user_agent, idem_key,
				method, client, body
			FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::smallint[], $5::smallint[], $6::bool[], $7::bool[],
				$8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::bytea[])
			AS v(seq, at, duration, signal, exit, truncated, ignored, run_id, user_agent, idem_key, method, client, body)`,
			r.seq, r.at, r.duration, r.signal, r.exit, r.truncated, r.ignored, r.runID, r.userAgent, r.key, r.method,
			r.client, r.body)
		return err
	}
	st, err := db.txStmt(ctx, tx, pingInsertSQLite)
	if err != nil {
		return err
	}
	defer st.Close()
	for i := range r.seq {
		if _, err := st.ExecContext(ctx, r.seq[i], r.at[i], r.duration[i], r.signal[i], r.exit[i], r.truncated[i],
			r.ignored[i], r.runID[i], r.userAgent[i], r.key[i], r.method[i], r.client[i], nullBytes(r.body[i])); err != nil {
			return err
		}
	}
	return nil
}

// saveHBRuntimes writes the runtime rows a batch moved, in seq order.
func (db *DB) saveHBRuntimes(ctx context.Context, tx *sql.Tx, moved map[int64]*hbRow) error {
	if len(moved) == 0 {
		return nil
	}
	seqs := make([]int64, 0, len(moved))
	for seq := range moved {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	if db.d.name != EnginePostgres {
		st, err := db.txStmt(ctx, tx, hbRuntimeUpdate+` WHERE seq = $1`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, seq := range seqs {
			h := moved[seq]
			settings, err := db.plans.settings(h.Heartbeat)
			if err != nil {
				return err
			}
			vals, err := hbRuntimeValues(h.Runtime, settings)
			if err != nil {
				return err
			}
			if _, err := st.ExecContext(ctx, append([]any{seq}, vals...)...); err != nil {
				return err
			}
		}
		return nil
	}
	cols := make([][]any, 13)
	for _, seq := range seqs {
		h := moved[seq]
		settings, err := db.plans.settings(h.Heartbeat)
		if err != nil {
			return err
		}
		vals, err := hbRuntimeValues(h.Runtime, settings)
		if err != nil {
			return err
		}
		for i, v := range append([]any{seq}, vals...) {
			cols[i] = append(cols[i], v)
		}
	}
	_, err := tx.ExecContext(ctx, `UPDATE heartbeat_runtime r SET state = v.state, state_since = v.state_since,
		last_ping_at = v.last_ping_at, last_start_at = v.last_start_at, last_completion = v.last_completion,
		last_exit_code = v.last_exit_code, last_duration_us = v.last_duration_us, open_runs = v.open_runs,
		expected_at = v.expected_at, deadline_at = v.deadline_at, window_start = v.window_start, wake_at = v.wake_at,
		version = r.version + 1, sweep_owner = NULL, sweep_until = 0
		FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::int[],
			$8::bigint[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[])
		AS v(seq, state, state_since, last_ping_at, last_start_at, last_completion, last_exit_code, last_duration_us,
			open_runs, expected_at, deadline_at, window_start, wake_at)
		WHERE r.seq = v.seq`,
		int64s(cols[0]), strs(cols[1]), int64s(cols[2]), int64s(cols[3]), int64s(cols[4]), strs(cols[5]),
		int64s(cols[6]), int64s(cols[7]), strs(cols[8]), int64s(cols[9]), int64s(cols[10]), int64s(cols[11]),
		int64s(cols[12]))
	return err
}

// PingQuery selects a heartbeat's pings, newest first: at in [From, To)
// (zero: unbounded), before the (BeforeAt, BeforeID) position of a
// previous page, at most Limit.
type PingQuery struct {
	From, To time.Time
	BeforeAt time.Time
	BeforeID int64
	Limit    int
}

// ListPings returns a heartbeat's pings, newest first.
func (db *DB) ListPings(ctx context.Context, wsID, id string, q PingQuery) (out []heartbeat.PingRecord, err error) {
	defer monitor.Wrap(&err, "store.ListPings(%s)", id)
	var seq int64
	if err := db.r.QueryRowContext(ctx, `SELECT r.seq`+heartbeatFrom+` WHERE h.workspace_id = $1 AND h.id = $2`,
		wsID, id).Scan(&seq); err != nil {
		return nil, classify(err)
	}
	where := []string{"heartbeat_seq = $1"}
	args := []any{seq}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if !q.From.IsZero() {
		where = append(where, "at >= "+arg(micros(q.From)))
	}
	if !q.To.IsZero() {
		where = append(where, "at < "+arg(micros(q.To)))
	}
	if q.BeforeID != 0 {
		at := arg(micros(q.BeforeAt))
		where = append(where, "(at < "+at+" OR (at = "+at+" AND id < "+arg(q.BeforeID)+"))")
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, at, signal, COALESCE(exit_code, -1), COALESCE(run_id, ''),
		COALESCE(duration_us, -1), method, client, COALESCE(user_agent, ''), COALESCE(idem_key, ''), body,
		body_truncated, ignored FROM pings WHERE `+strings.Join(where, " AND ")+`
		ORDER BY at DESC, id DESC LIMIT `+arg(q.Limit), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			p       heartbeat.PingRecord
			at, dur int64
			signal  int
		)
		if err := rows.Scan(&p.ID, &at, &signal, &p.ExitCode, &p.RunID, &dur, &p.Method, &p.Client, &p.UserAgent,
			&p.Key, &p.Body, &p.Truncated, &p.Ignored); err != nil {
			return nil, err
		}
		p.At, p.Signal = fromMicros(at), heartbeat.Signal(signal)
		p.Duration = time.Duration(dur) * time.Microsecond
		if dur < 0 {
			p.Duration = -1
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// SpanRetention is how long service spans are kept: longer than the
// longest heartbeat period plus grace.
const SpanRetention = 2 * 366 * 24 * time.Hour

// DeletePingsBefore forgets pings older than cutoff, ping keys past their
// time to live at now, and service spans past SpanRetention.
func (db *DB) DeletePingsBefore(ctx context.Context, cutoff, now time.Time) (err error) {
	defer monitor.Wrap(&err, "store.DeletePingsBefore")
	if _, err := db.w.ExecContext(ctx, `DELETE FROM ping_keys WHERE at < $1`, micros(now.Add(-heartbeat.KeyTTL))); err != nil {
		return err
	}
	if _, err := db.w.ExecContext(ctx, `DELETE FROM pings WHERE at < $1`, micros(cutoff)); err != nil {
		return err
	}
	// Service spans say whether a deadline fell in an outage, back to a
	// heartbeat's last ping: a year, for the longest period.
	_, err = db.w.ExecContext(ctx, `DELETE FROM service_spans WHERE last_seen < $1`, micros(now.Add(-SpanRetention)))
	return err
}
