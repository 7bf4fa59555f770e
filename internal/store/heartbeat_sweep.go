package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The heartbeat deadline sweeper, and the record of when this service was
// receiving pings that lets it tell a late job from its own outage.

// TouchSpan records that node is up and receiving pings at now. id is the
// node's current span (0 for none) and lastSeen when it was last touched;
// after more than gap, or with no span, a new span starts. It returns the
// span's id.
func (db *DB) TouchSpan(ctx context.Context, node string, id int64, lastSeen, now time.Time, gap time.Duration) (_ int64, err error) {
	defer errs.Wrap(&err, "store.TouchSpan")
	if id != 0 && now.Sub(lastSeen) <= gap {
		if err := oneRow(db.w.ExecContext(ctx, `UPDATE service_spans SET last_seen = $2 WHERE id = $1 AND last_seen <= $2`,
			id, micros(now))); err == nil {
			return id, nil
		}
	}
	err = db.w.QueryRowContext(ctx, `INSERT INTO service_spans (node, started_at, last_seen) VALUES ($1, $2, $2) RETURNING id`,
		node, micros(now)).Scan(&id)
	return id, err
}

// OutageBefore reports whether no node was receiving pings just before
// start, when the span with this id began, and if so since when (from,
// the last time another span was seen). A span seen within gap of start
// may be a node still up, which records itself every few seconds: it
// counts as receiving pings until start. With no span before this one,
// nothing is known of the time before, and there is no outage to record.
func (db *DB) OutageBefore(ctx context.Context, id int64, start time.Time, gap time.Duration) (from time.Time, outage bool, err error) {
	defer errs.Wrap(&err, "store.OutageBefore")
	var last sql.NullInt64
	err = db.w.QueryRowContext(ctx, `SELECT MAX(last_seen) FROM service_spans WHERE id <> $1 AND started_at < $2`,
		id, micros(start)).Scan(&last)
	if err != nil || !last.Valid {
		return time.Time{}, false, err
	}
	from = fromMicros(last.Int64)
	return from, from.Before(start.Add(-gap)), nil
}

// OutageHeartbeat is a heartbeat an outage of this service may have
// cost a ping, locked, with its runtime.
type OutageHeartbeat struct {
	Seq int64
	heartbeat.Heartbeat
}

// LockOutageHeartbeats locks and reads, in seq order, up to limit of the
// heartbeats after seq after that are UP or DOWN and have heard nothing
// since to, neither a ping nor a change of state: those an outage of this
// service that ended at to may have cost a ping. Run it in HeartbeatTx,
// which on SQLite applies the ping journal first.
func (tx *Tx) LockOutageHeartbeats(ctx context.Context, to time.Time, after int64, limit int) ([]OutageHeartbeat, error) {
	rows, err := tx.c.QueryContext(ctx, `SELECT `+heartbeatColumns+heartbeatFrom+`
		WHERE r.seq > $1 AND r.state IN ('UP', 'DOWN') AND r.state_since < $2 AND r.last_ping_at < $2
		ORDER BY r.seq LIMIT $3`+tx.db.d.forUpdateOf("r"), after, micros(to), limit)
	return collect(rows, err, func(r rowScanner) (OutageHeartbeat, error) {
		h, err := scanHeartbeat(r)
		return OutageHeartbeat{Seq: h.Seq, Heartbeat: h.Heartbeat}, err
	})
}

// spans returns the service spans that overlap [from, to], by start.
func (db *DB) spans(ctx context.Context, q queryer, from, to time.Time) ([][2]time.Time, error) {
	rows, err := q.QueryContext(ctx, `SELECT started_at, last_seen FROM service_spans
		WHERE last_seen >= $1 AND started_at <= $2 ORDER BY started_at`, micros(from), micros(to))
	return collect(rows, err, func(r rowScanner) ([2]time.Time, error) {
		var a, b int64
		err := r.Scan(&a, &b)
		return [2]time.Time{fromMicros(a), fromMicros(b)}, err
	})
}

// storeVerdict stores a sweep's verdict on h if the row is as it was
// judged (version) and still leased to owner, and its state changes,
// which it adds to made.
func (db *DB) storeVerdict(ctx context.Context, tx *sql.Tx, owner string, h hbRow, settings heartbeat.Settings,
	trs []monitor.Transition, made *[]StateChange) error {
	vals, err := hbRuntimeValues(h.Runtime, settings)
	if err != nil {
		return err
	}
	n := len(vals) + 1
	res, err := tx.ExecContext(ctx, hbRuntimeUpdate+` WHERE seq = $1 AND version = $`+strconv.Itoa(n+1)+
		` AND sweep_owner = $`+strconv.Itoa(n+2), append(append([]any{h.Seq}, vals...), h.Version, owner)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err // a ping moved it meanwhile, or another node took it over: theirs stands
	}
	for i := range trs {
		tr := trs[i]
		*made = append(*made, StateChange{SubjectID: h.ID, Transition: tr})
		if err := db.recordTransition(ctx, tx, h.ID, &tr); err != nil {
			return err
		}
	}
	return nil
}

// SweptHeartbeat is a heartbeat a sweep claimed, as read once claimed,
// with its compiled schedule.
type SweptHeartbeat struct {
	heartbeat.Heartbeat
	Settings heartbeat.Settings
}

// SweepJudge gives the verdict on a claimed heartbeat, knowing when this
// service was receiving pings (the service spans, each [start, last seen],
// by start): its runtime after, and the state changes that makes. The
// sweep's caller decides it (app); the store stores it.
type SweepJudge func(h SweptHeartbeat, spans [][2]time.Time) (heartbeat.Runtime, []monitor.Transition)

// SweepHeartbeats has judge give its verdict on up to limit heartbeats
// whose deadline or overrun has come by now: it leases them to owner
// (other nodes skip them), reads them and when this service was receiving
// pings, and stores each verdict with a compare-and-set on the row's
// version, so a ping that arrived meanwhile wins. The caller must have
// touched its own span at now. It returns the state changes stored and
// how many heartbeats were claimed; a verdict the database refuses for
// its content is set aside, the others stored, and the error (a
// *RefusedError, IsDataError) names it.
func (db *DB) SweepHeartbeats(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int,
	judge SweepJudge) (changes []StateChange, claimed int, err error) {
	defer errs.Wrap(&err, "store.SweepHeartbeats")
	if db.journal == nil {
		return db.sweepHeartbeats(ctx, owner, now, lease, limit, judge, nil)
	}
	// Pings not applied yet may have moved what is due: the journal holds
	// them off, and applies them if a heartbeat they moved is due or
	// claimed.
	err = db.journal.Sweep(ctx, now, func(onClaim func(seqs []int64) error) error {
		changes, claimed, err = db.sweepHeartbeats(ctx, owner, now, lease, limit, judge, onClaim)
		return err
	})
	return changes, claimed, err
}

// sweepHeartbeats is SweepHeartbeats with the ping journal, if any, held
// off: onClaim (nil without a journal) is told what the sweep claimed
// before it reads them.
func (db *DB) sweepHeartbeats(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int,
	judge SweepJudge, onClaim func(seqs []int64) error) (changes []StateChange, claimed int, err error) {
	q := db.d.claims.sweeps
	rows, err := db.w.QueryContext(ctx, q, owner, micros(now), micros(now.Add(lease)), limit)
	seqs, err := collect(rows, err, scanValue[int64])
	if err != nil || len(seqs) == 0 {
		return nil, 0, err
	}
	if onClaim != nil {
		if err := onClaim(seqs); err != nil {
			return nil, 0, err
		}
	}
	args := make([]any, len(seqs))
	for i, s := range seqs {
		args[i] = s
	}

	// Judged outside any transaction.
	rows, err = db.w.QueryContext(ctx, `SELECT `+heartbeatColumns+heartbeatFrom+`
		WHERE r.seq IN (`+placeholders(1, len(seqs))+`) ORDER BY r.seq`, args...)
	hbs, err := collect(rows, err, func(r rowScanner) (hbRow, error) { return scanHeartbeat(r) })
	if err != nil {
		return nil, 0, err
	}
	earliest := now
	for _, h := range hbs {
		if ws := h.Runtime.WindowStart; !ws.IsZero() && ws.Before(earliest) {
			earliest = ws
		}
		for _, run := range h.Runtime.Open {
			if run.StartedAt.Before(earliest) {
				earliest = run.StartedAt
			}
		}
	}
	spans, err := db.spans(ctx, db.w, earliest, now)
	if err != nil {
		return nil, 0, err
	}
	type verdict struct {
		h        hbRow
		settings heartbeat.Settings
		trs      []monitor.Transition
	}
	var verdicts []verdict
	for _, h := range hbs {
		settings, err := db.settings(h.Heartbeat)
		if err != nil {
			return nil, 0, err
		}
		var trs []monitor.Transition
		h.Runtime, trs = judge(SweptHeartbeat{h.Heartbeat, settings}, spans)
		verdicts = append(verdicts, verdict{h, settings, trs})
	}

	// One heartbeat whose verdict the database refuses for its content is
	// set aside (its lease keeps it until it is judged again), not every
	// verdict of the sweep with it.
	refused, err := db.isolating(ctx, func(w *isolation) error {
		changes = changes[:0]
		for _, v := range verdicts {
			var made []StateChange
			ok, err := w.subject(ctx, "the verdict on heartbeat "+v.h.ID, func() error {
				made = made[:0]
				return db.storeVerdict(ctx, w.tx, owner, v.h, v.settings, v.trs, &made)
			})
			if err != nil {
				return err
			}
			if ok {
				changes = append(changes, made...)
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, len(seqs), err // nothing was stored
	case refused != nil:
		err = fmt.Errorf("judging heartbeat deadlines: %w", refused)
	}
	slices.SortStableFunc(changes, func(a, b StateChange) int { return a.At.Compare(b.At) })
	return changes, len(seqs), err
}
