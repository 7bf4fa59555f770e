package store

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
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

// Sweep is a deadline sweep under way (SweepHeartbeats): what it may do
// while pings are held off.
type Sweep struct {
	db *DB
	// onClaim, with a journal, applies pending pings that moved a claimed
	// heartbeat before it is read.
	onClaim func(seqs []int64) error
}

// SweepHeartbeats runs sweep, which claims the heartbeats whose deadline
// or overrun has come by now and stores verdicts on them, with pings held
// off. Pings of SQLite's journal not applied yet may have moved what is
// due: they are applied first if a heartbeat they moved is due, and again
// once the sweep has claimed one they moved; steps replay what a stopped
// process left (FlushPings).
func (db *DB) SweepHeartbeats(ctx context.Context, steps *PingSteps, now time.Time, sweep func(*Sweep) error) (err error) {
	defer errs.Wrap(&err, "store.SweepHeartbeats")
	if db.journal == nil {
		return sweep(&Sweep{db: db})
	}
	return db.journal.Sweep(ctx, steps.journal(), now, func(onClaim func(seqs []int64) error) error {
		return sweep(&Sweep{db: db, onClaim: onClaim})
	})
}

// ClaimedHeartbeat is a heartbeat a sweep claimed, as read once claimed:
// storing a verdict on it checks that its runtime row is still at
// Version.
type ClaimedHeartbeat struct {
	heartbeat.Heartbeat
	Seq     int64
	Version int64
}

// Claim leases to owner, until lease past now, up to limit heartbeats
// whose deadline or overrun has come by now (other nodes skip them), and
// reads them, by seq.
func (s *Sweep) Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]ClaimedHeartbeat, error) {
	db := s.db
	rows, err := db.w.QueryContext(ctx, db.d.claims.sweeps, owner, micros(now), micros(now.Add(lease)), limit)
	seqs, err := collect(rows, err, scanValue[int64])
	if err != nil || len(seqs) == 0 {
		return nil, err
	}
	if s.onClaim != nil {
		if err := s.onClaim(seqs); err != nil {
			return nil, err
		}
	}
	args := make([]any, len(seqs))
	for i, s := range seqs {
		args[i] = s
	}
	rows, err = db.w.QueryContext(ctx, `SELECT `+heartbeatColumns+heartbeatFrom+`
		WHERE r.seq IN (`+placeholders(1, len(seqs))+`) ORDER BY r.seq`, args...)
	return collect(rows, err, func(r rowScanner) (ClaimedHeartbeat, error) {
		h, err := scanHeartbeat(r)
		return ClaimedHeartbeat{Heartbeat: h.Heartbeat, Seq: h.Seq, Version: h.Version}, err
	})
}

// Spans returns when this service was receiving pings between from and
// to: the service spans that overlap them, each [start, last seen], by
// start.
func (s *Sweep) Spans(ctx context.Context, from, to time.Time) ([][2]time.Time, error) {
	return s.db.spans(ctx, s.db.w, from, to)
}

// Store runs write, which stores the sweep's verdicts, in one
// transaction. One heartbeat whose verdict the database refuses for its
// content is set aside (its lease keeps it until it is judged again), not
// every verdict of the sweep with it: write runs again with each
// heartbeat isolated (Isolated.Subject), and refused (a *RefusedError)
// names what was set aside.
func (s *Sweep) Store(ctx context.Context, write func(*Isolated) error) (refused, err error) {
	return s.db.isolating(ctx, func(w *isolation) error { return write(&Isolated{db: s.db, w: w}) })
}

// Isolated is a transaction that writes many subjects' rows, straight or
// each subject in a savepoint (isolate.go).
type Isolated struct {
	db *DB
	w  *isolation
}

// Subject writes one subject's rows with write, in the transaction.
// Isolating, a data error rolls them back alone and is noted; it reports
// whether they were written.
func (i *Isolated) Subject(ctx context.Context, what string, write func(*Tx) error) (bool, error) {
	return i.w.subject(ctx, what, func() error { return write(&Tx{db: i.db, c: i.w.tx}) })
}

// SaveSweptRuntime writes rt as the runtime row seq, with the wake time s
// gives it, if the row is still at version and leased to owner. It
// reports whether it was: a ping moved it meanwhile, or another node took
// it over, and theirs stands.
func (tx *Tx) SaveSweptRuntime(ctx context.Context, owner string, seq, version int64, rt heartbeat.Runtime, s heartbeat.Settings) (bool, error) {
	vals, err := hbRuntimeValues(rt, s)
	if err != nil {
		return false, err
	}
	n := len(vals) + 1
	res, err := tx.c.ExecContext(ctx, hbRuntimeUpdate+` WHERE seq = $1 AND version = $`+strconv.Itoa(n+1)+
		` AND sweep_owner = $`+strconv.Itoa(n+2), append(append([]any{seq}, vals...), version, owner)...)
	if err != nil {
		return false, err
	}
	affected, err := res.RowsAffected()
	return affected > 0, err
}
