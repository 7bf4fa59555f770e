package store

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store/pingblock"
)

// What metrics read: raw observations and pings point by point, their
// hourly and daily rollups, the state history, and how far each rollup has
// gone. The aggregating is the application's (package metrics); these
// read and write rows, and decide nothing.

// Rollup tiers: the bucket size of a rollup row.
const (
	TierHour = 1
	TierDay  = 2
)

// writeChunk bounds the rows one INSERT writes: SQLite resolves a
// statement's parameters in time growing with the square of their number
// (500 rows of 8 were half the rollup job's CPU; 50 rows cost a tenth as
// much per row).
const writeChunk = 50

// seqChunk bounds the subjects one query names, so a statement stays
// small on both engines and each subject is a range of its index.
const seqChunk = 500

// ObservationPoint is one check as metrics count it.
type ObservationPoint struct {
	Seq     int64
	At      time.Time
	Result  monitor.Result
	Latency time.Duration
}

// EachObservation calls fn for every observation of the monitors seqs
// that started in [from, to), by monitor, then start time.
func (db *DB) EachObservation(ctx context.Context, seqs []int64, from, to time.Time, fn func(ObservationPoint) error) (err error) {
	defer errs.Wrap(&err, "store.EachObservation(%d)", len(seqs))
	for part := range chunks(seqs) {
		rows, err := db.r.QueryContext(ctx, `SELECT monitor_seq, at, result, latency_us FROM observations
			WHERE monitor_seq IN (`+placeholders(3, len(part))+`) AND at >= $1 AND at < $2
			ORDER BY monitor_seq, at`, append([]any{micros(from), micros(to)}, part...)...)
		err = each(rows, err, func(r rowScanner) error {
			var (
				p          ObservationPoint
				at, lat    int64
				resultCode int
			)
			if err := r.Scan(&p.Seq, &at, &resultCode, &lat); err != nil {
				return err
			}
			p.At, p.Result, p.Latency = fromMicros(at), resultOf(resultCode), time.Duration(lat)*time.Microsecond
			return fn(p)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// chunks yields seqs in parts of at most seqChunk.
func chunks(seqs []int64) func(func([]any) bool) {
	return func(yield func([]any) bool) {
		for start := 0; start < len(seqs); start += seqChunk {
			part := seqs[start:min(start+seqChunk, len(seqs))]
			args := make([]any, len(part))
			for i, s := range part {
				args[i] = s
			}
			if !yield(args) {
				return
			}
		}
	}
}

// ObservationRollup is a monitor's checks in one bucket of a tier:
// counts by result and the encoded latency summary of its known checks.
type ObservationRollup struct {
	Seq                         int64
	Bucket                      time.Time
	Up, Degraded, Down, Unknown int64
	Latency                     []byte
}

// EachObservationRollup calls fn for every rollup row of tier of the
// monitors seqs whose bucket starts in [from, to); the hourly tier's
// packed days are unpacked into their hours (rollup_pack.go).
func (db *DB) EachObservationRollup(ctx context.Context, tier int, seqs []int64, from, to time.Time, fn func(ObservationRollup) error) (err error) {
	defer errs.Wrap(&err, "store.EachObservationRollup(%d, %d)", tier, len(seqs))
	return db.eachRollup(ctx, observationRollups, tier, seqs, from, to, func(r rollupRow) error {
		return fn(ObservationRollup{Seq: r.seq, Bucket: fromMicros(r.bucket), Up: r.counts[0], Degraded: r.counts[1],
			Down: r.counts[2], Unknown: r.counts[3], Latency: r.blob})
	})
}

// PutObservationRollups writes rows of tier, replacing any row of the
// same monitor and bucket: writing a bucket twice leaves it as once.
func (db *DB) PutObservationRollups(ctx context.Context, tier int, rows []ObservationRollup) (err error) {
	defer errs.Wrap(&err, "store.PutObservationRollups(%d, %d)", tier, len(rows))
	generic := make([]rollupRow, len(rows))
	for i, r := range rows {
		generic[i] = rollupRow{seq: r.Seq, bucket: micros(r.Bucket), counts: [4]int64{r.Up, r.Degraded, r.Down, r.Unknown}, blob: r.Latency}
	}
	return putRollups(ctx, db.w, observationRollups, tier, generic)
}

// PingPoint is one ping as metrics count it; RunDuration is how long the
// run took, on the end of a run that sent /start.
type PingPoint struct {
	Seq         int64
	At          time.Time
	Signal      heartbeat.Signal
	RunDuration time.Duration // -1: not the end of a started run
	Ignored     bool
}

// EachPing calls fn for every ping of the heartbeats seqs received in
// [from, to), by heartbeat, then time. Pings still in the SQLite journal
// are applied first.
func (db *DB) EachPing(ctx context.Context, seqs []int64, from, to time.Time, fn func(PingPoint) error) (err error) {
	defer errs.Wrap(&err, "store.EachPing(%d)", len(seqs))
	if err := db.flushPings(ctx); err != nil {
		return err
	}
	for part := range chunks(seqs) {
		rows, err := db.r.QueryContext(ctx, `SELECT heartbeat_seq, pings FROM ping_blocks
			WHERE heartbeat_seq IN (`+placeholders(3, len(part))+`) AND last_at >= $1 AND first_at < $2
			ORDER BY heartbeat_seq, first_id`, append([]any{micros(from), micros(to)}, part...)...)
		err = each(rows, err, func(r rowScanner) error {
			var (
				seq  int64
				text string
			)
			if err := r.Scan(&seq, &text); err != nil {
				return err
			}
			pings, err := pingblock.Decode(text)
			if err != nil {
				return err
			}
			for _, p := range pings {
				if p.At.Before(from) || !p.At.Before(to) {
					continue
				}
				pt := PingPoint{Seq: seq, At: p.At, Signal: p.Signal, RunDuration: p.Duration, Ignored: p.Ignored}
				if err := fn(pt); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// PingRollup is a heartbeat's pings in one bucket of a tier: counts by
// signal and the encoded summary of the run durations measured.
type PingRollup struct {
	Seq                  int64
	Bucket               time.Time
	Success, Start, Fail int64
	Runs                 []byte
}

// EachPingRollup calls fn for every rollup row of tier of the heartbeats
// seqs whose bucket starts in [from, to); the hourly tier's packed days
// are unpacked into their hours.
func (db *DB) EachPingRollup(ctx context.Context, tier int, seqs []int64, from, to time.Time, fn func(PingRollup) error) (err error) {
	defer errs.Wrap(&err, "store.EachPingRollup(%d, %d)", tier, len(seqs))
	return db.eachRollup(ctx, pingRollups, tier, seqs, from, to, func(r rollupRow) error {
		return fn(PingRollup{Seq: r.seq, Bucket: fromMicros(r.bucket), Success: r.counts[0], Start: r.counts[1],
			Fail: r.counts[2], Runs: r.blob})
	})
}

// PutPingRollups writes rows of tier, replacing any row of the same
// heartbeat and bucket.
func (db *DB) PutPingRollups(ctx context.Context, tier int, rows []PingRollup) (err error) {
	defer errs.Wrap(&err, "store.PutPingRollups(%d, %d)", tier, len(rows))
	generic := make([]rollupRow, len(rows))
	for i, r := range rows {
		generic[i] = rollupRow{seq: r.Seq, bucket: micros(r.Bucket), counts: [4]int64{r.Success, r.Start, r.Fail}, blob: r.Runs}
	}
	return putRollups(ctx, db.w, pingRollups, tier, generic)
}

// SubjectSeqs returns the seqs of every monitor (heartbeats: every
// heartbeat) after afterSeq, at most limit, in order: what a rollup walks.
func (db *DB) SubjectSeqs(ctx context.Context, heartbeats bool, afterSeq int64, limit int) (seqs []int64, err error) {
	defer errs.Wrap(&err, "store.SubjectSeqs")
	table := "monitor_runtime"
	if heartbeats {
		table = "heartbeat_runtime"
	}
	rows, err := db.r.QueryContext(ctx, `SELECT seq FROM `+table+` WHERE seq > $1 ORDER BY seq LIMIT $2`, afterSeq, limit)
	return collect(rows, err, scanValue[int64])
}

// TakeRollupTurn leases the rollup name to owner until now+lease, unless
// another node holds it, and returns how far it has gone. A rollup never
// run starts at start.
func (db *DB) TakeRollupTurn(ctx context.Context, name, owner string, now time.Time, lease time.Duration, start time.Time) (doneUntil time.Time, ok bool, err error) {
	defer errs.Wrap(&err, "store.TakeRollupTurn(%s)", name)
	if _, err := db.w.ExecContext(ctx, `INSERT INTO rollup_progress (name, done_until) VALUES ($1, $2)
		ON CONFLICT (name) DO NOTHING`, name, micros(start)); err != nil {
		return time.Time{}, false, err
	}
	rows, err := db.w.QueryContext(ctx, `UPDATE rollup_progress SET lease_owner = $2, lease_until = $3
		WHERE name = $1 AND (lease_until < $4 OR lease_owner = $2) RETURNING done_until`,
		name, owner, micros(now.Add(lease)), micros(now))
	done, err := collect(rows, err, scanValue[int64])
	if err != nil || len(done) == 0 {
		return time.Time{}, false, err
	}
	return fromMicros(done[0]), true, nil
}

// AdvanceRollup records that owner's turn of the rollup name has written
// every bucket before doneUntil. It reports false when owner no longer
// holds the turn (its lease lapsed and another node took it).
func (db *DB) AdvanceRollup(ctx context.Context, name, owner string, doneUntil time.Time) (ok bool, err error) {
	defer errs.Wrap(&err, "store.AdvanceRollup(%s)", name)
	res, err := db.w.ExecContext(ctx, `UPDATE rollup_progress SET done_until = $3
		WHERE name = $1 AND lease_owner = $2 AND done_until <= $3`, name, owner, micros(doneUntil))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// EndRollupTurn gives the rollup name back, so another node may take it
// at once.
func (db *DB) EndRollupTurn(ctx context.Context, name, owner string) (err error) {
	defer errs.Wrap(&err, "store.EndRollupTurn(%s)", name)
	_, err = db.w.ExecContext(ctx, `UPDATE rollup_progress SET lease_owner = '', lease_until = 0
		WHERE name = $1 AND lease_owner = $2`, name, owner)
	return err
}

// RollupProgress returns how far each rollup has gone: every bucket
// before its time is written.
func (db *DB) RollupProgress(ctx context.Context) (out map[string]time.Time, err error) {
	defer errs.Wrap(&err, "store.RollupProgress")
	rows, err := db.r.QueryContext(ctx, `SELECT name, done_until FROM rollup_progress`)
	out = map[string]time.Time{}
	err = each(rows, err, func(r rowScanner) error {
		var (
			name string
			at   int64
		)
		if err := r.Scan(&name, &at); err != nil {
			return err
		}
		out[name] = fromMicros(at)
		return nil
	})
	return out, err
}

// History is a subject's state history as a window needs it: the state
// the last change before the window left it in (nil: no change before),
// and the changes inside the window, in order.
type History struct {
	Before  *monitor.State
	Changes []monitor.Transition
}

// StateHistories returns the state history of each subject over
// [from, to). Subjects with no change at all are absent.
func (db *DB) StateHistories(ctx context.Context, subjectIDs []string, from, to time.Time) (out map[string]*History, err error) {
	defer errs.Wrap(&err, "store.StateHistories(%d)", len(subjectIDs))
	// A heartbeat's changes may still be in the SQLite ping journal.
	if slices.ContainsFunc(subjectIDs, func(id string) bool { return strings.HasPrefix(id, ids.Heartbeat+"_") }) {
		if err := db.flushPings(ctx); err != nil {
			return nil, err
		}
	}
	out = make(map[string]*History, len(subjectIDs))
	get := func(id string) *History {
		h := out[id]
		if h == nil {
			h = &History{}
			out[id] = h
		}
		return h
	}
	for start := 0; start < len(subjectIDs); start += seqChunk {
		part := subjectIDs[start:min(start+seqChunk, len(subjectIDs))]
		idArgs := make([]any, len(part))
		for i, id := range part {
			idArgs[i] = id
		}
		// The last change before the window, per subject: the newest by
		// time, then by id (a backdated change is inserted after later ones).
		// One index probe per subject, driven by the list of ids: a search
		// correlated with every change of the subjects costs as many
		// probes as they have changes.
		rows, err := db.r.QueryContext(ctx, `SELECT s.subject_id, s.to_state FROM state_changes s WHERE s.id IN (
			SELECT (SELECT p.id FROM state_changes p WHERE p.subject_id = ids.column1 AND p.at < $1
				ORDER BY p.at DESC, p.id DESC LIMIT 1) FROM (VALUES `+valueRows(2, len(idArgs))+`) AS ids)`,
			append([]any{micros(from)}, idArgs...)...)
		err = each(rows, err, func(r rowScanner) error {
			var id, state string
			if err := r.Scan(&id, &state); err != nil {
				return err
			}
			s := monitor.State(state)
			get(id).Before = &s
			return nil
		})
		if err != nil {
			return nil, err
		}
		rows, err = db.r.QueryContext(ctx, `SELECT subject_id, at, from_state, to_state, cause FROM state_changes
			WHERE subject_id IN (`+placeholders(3, len(idArgs))+`) AND at >= $1 AND at < $2 ORDER BY subject_id, at, id`,
			append([]any{micros(from), micros(to)}, idArgs...)...)
		err = each(rows, err, func(r rowScanner) error {
			var (
				id, fromState, toState string
				tr                     monitor.Transition
				at                     int64
			)
			if err := r.Scan(&id, &at, &fromState, &toState, &tr.Cause); err != nil {
				return err
			}
			tr.At, tr.From, tr.To = fromMicros(at), monitor.State(fromState), monitor.State(toState)
			h := get(id)
			h.Changes = append(h.Changes, tr)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SubjectSeqsOf returns the seq of each monitor and heartbeat of ids that
// exists: what their observations, pings and rollups are keyed by.
func (db *DB) SubjectSeqsOf(ctx context.Context, subjectIDs []string) (out map[string]int64, err error) {
	defer errs.Wrap(&err, "store.SubjectSeqsOf(%d)", len(subjectIDs))
	out = make(map[string]int64, len(subjectIDs))
	for start := 0; start < len(subjectIDs); start += seqChunk {
		part := subjectIDs[start:min(start+seqChunk, len(subjectIDs))]
		idArgs := make([]any, len(part))
		for i, id := range part {
			idArgs[i] = id
		}
		in := placeholders(1, len(idArgs))
		rows, err := db.r.QueryContext(ctx, `SELECT monitor_id, seq FROM monitor_runtime WHERE monitor_id IN (`+in+`)
			UNION ALL SELECT heartbeat_id, seq FROM heartbeat_runtime WHERE heartbeat_id IN (`+in+`)`, idArgs...)
		err = each(rows, err, func(r rowScanner) error {
			var (
				id  string
				seq int64
			)
			if err := r.Scan(&id, &seq); err != nil {
				return err
			}
			out[id] = seq
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// IncidentSpan is when an automatic incident of a subject was open;
// Resolved is zero while it is.
type IncidentSpan struct {
	SubjectID         string
	Started, Resolved time.Time
}

// IncidentSpans returns the automatic incidents of the workspace's
// subjects that were open at some time in [from, to), by subject, then
// start.
func (db *DB) IncidentSpans(ctx context.Context, wsID string, subjectIDs []string, from, to time.Time) (out []IncidentSpan, err error) {
	defer errs.Wrap(&err, "store.IncidentSpans(%d)", len(subjectIDs))
	for start := 0; start < len(subjectIDs); start += seqChunk {
		part := subjectIDs[start:min(start+seqChunk, len(subjectIDs))]
		args := []any{wsID, micros(from), micros(to)}
		for _, id := range part {
			args = append(args, id)
		}
		rows, err := db.r.QueryContext(ctx, `SELECT subject_id, started_at, resolved_at FROM incidents
			WHERE workspace_id = $1 AND subject_id IN (`+placeholders(4, len(part))+`)
			AND started_at < $3 AND (resolved_at = 0 OR resolved_at >= $2)
			ORDER BY subject_id, started_at`, args...)
		spans, err := collect(rows, err, func(r rowScanner) (s IncidentSpan, err error) {
			var started, resolved int64
			err = r.Scan(&s.SubjectID, &started, &resolved)
			s.Started = fromMicros(started)
			if resolved != 0 {
				s.Resolved = fromMicros(resolved)
			}
			return s, err
		})
		if err != nil {
			return nil, err
		}
		out = append(out, spans...)
	}
	return out, nil
}

// DeleteRollupsBefore removes the rollup rows of tier, of observations
// and pings, whose bucket starts before cutoff: one subject at a time, so
// each delete is a short range of the primary key.
func (db *DB) DeleteRollupsBefore(ctx context.Context, tier int, cutoff time.Time) (err error) {
	defer errs.Wrap(&err, "store.DeleteRollupsBefore(%d)", tier)
	for _, t := range []struct{ table, seq, subjects string }{
		{"observation_rollups", "monitor_seq", "monitor_runtime"},
		{"ping_rollups", "heartbeat_seq", "heartbeat_runtime"},
	} {
		// Rows of deleted subjects go with them; the seqs of those that remain.
		rows, err := db.r.QueryContext(ctx, `SELECT seq FROM `+t.subjects+` ORDER BY seq`)
		seqs, err := collect(rows, err, scanValue[int64])
		if err != nil {
			return err
		}
		for _, s := range seqs {
			// The hourly tier's packed days go with it.
			if _, err := db.w.ExecContext(ctx, `DELETE FROM `+t.table+` WHERE `+t.seq+` = $1 AND tier IN ($2, $3) AND bucket < $4`,
				s, tier, packedAlso(tier), micros(cutoff)); err != nil {
				return err
			}
		}
	}
	return nil
}

// packedAlso is the tier stored with tier: the packed days of hours.
func packedAlso(tier int) int {
	if tier == TierHour {
		return tierPacked
	}
	return tier
}
