package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The check scheduler's records: each monitor's runtime row (schedule,
// lease, state machine, latest check), its observations, and its state
// history. What a finished check moves is decided above the store
// (app/record_checks.go); these are the reads and writes it is made of.
//
// A due check is claimed with a lease before it runs, so several nodes on
// one PostgreSQL run each check once: the claim takes rows FOR UPDATE SKIP
// LOCKED there, and is a compare-and-set on lease_until under SQLite's one
// writer. The lease ends when the check's observation is recorded, which
// also moves next_due_at to the monitor's next slot; a node that dies
// leaves its leases to lapse, and another node then takes the checks over.

// StateChange is monitor.StateChange, under the name the store's own
// recorders (pings, sweeps) return it by.
type StateChange = monitor.StateChange

// pausedDue is next_due_at of a paused monitor: never due.
const pausedDue int64 = math.MaxInt64

// Runtime is one monitor_runtime row.
type Runtime struct {
	Seq       int64
	MonitorID string
	Interval  time.Duration
	// NextDue is the next slot; zero while paused (never due).
	NextDue time.Time
	// LeaseOwner holds the claimed check until LeaseUntil; "" and zero
	// when nobody does.
	LeaseOwner string
	LeaseUntil time.Time
	Tracker    monitor.Tracker
	Last       monitor.LastCheck
}

const runtimeColumns = `seq, monitor_id, interval_us, next_due_at, lease_owner, lease_until, state, state_since,
	downs, ups, last_known_at, last_known, last_check_at, last_result, last_reason, last_latency_us, last_status,
	last_cert_expiry, downs_from, ups_from`

func scanRuntime(row rowScanner) (Runtime, error) {
	var (
		rt                                    Runtime
		interval, since, lastKnown, lastCheck int64
		next, until, latency, certExpiry      int64
		downsFrom, upsFrom                    int64
		owner                                 sql.NullString
		state, lastKnownResult, lastResult    string
	)
	err := row.Scan(&rt.Seq, &rt.MonitorID, &interval, &next, &owner, &until, &state, &since,
		&rt.Tracker.Downs, &rt.Tracker.Ups, &lastKnown, &lastKnownResult, &lastCheck, &lastResult,
		&rt.Last.Reason, &latency, &rt.Last.StatusCode, &certExpiry, &downsFrom, &upsFrom)
	if err != nil {
		return Runtime{}, classify(err)
	}
	rt.Interval = time.Duration(interval) * time.Microsecond
	if next != pausedDue {
		rt.NextDue = fromMicros(next)
	}
	rt.LeaseOwner = owner.String
	if until != 0 {
		rt.LeaseUntil = fromMicros(until)
	}
	rt.Tracker.State, rt.Tracker.Since = monitor.State(state), fromMicros(since)
	rt.Tracker.Last = monitor.Result(lastKnownResult)
	if lastKnown != 0 {
		rt.Tracker.LastKnown = fromMicros(lastKnown)
	}
	if downsFrom != 0 {
		rt.Tracker.DownsFrom = fromMicros(downsFrom)
	}
	if upsFrom != 0 {
		rt.Tracker.UpsFrom = fromMicros(upsFrom)
	}
	if lastCheck != 0 {
		rt.Last.At = fromMicros(lastCheck)
	}
	rt.Last.Result = monitor.Result(lastResult)
	rt.Last.Latency = time.Duration(latency) * time.Microsecond
	if certExpiry != 0 {
		rt.Last.CertExpiry = fromMicros(certExpiry)
	}
	return rt, nil
}

func zeroMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return micros(t)
}

// LockRuntime reads monitorID's runtime row, locked until the transaction
// ends.
func (tx *Tx) LockRuntime(ctx context.Context, monitorID string) (Runtime, error) {
	return scanRuntime(tx.c.QueryRowContext(ctx, `SELECT `+runtimeColumns+` FROM monitor_runtime
		WHERE monitor_id = $1`+tx.db.d.forUpdate, monitorID))
}

// LockRuntimes reads the runtime rows of seqs (ascending, each once),
// locked until the transaction ends, in seq order: nodes that lock rows
// in the same order never deadlock. Rows of deleted monitors are missing.
func (tx *Tx) LockRuntimes(ctx context.Context, seqs []int64) ([]Runtime, error) {
	args := make([]any, len(seqs))
	for i, s := range seqs {
		args[i] = s
	}
	rows, err := tx.c.QueryContext(ctx, `SELECT `+runtimeColumns+` FROM monitor_runtime
		WHERE seq IN (`+placeholders(1, len(args))+`) ORDER BY seq`+tx.db.d.forUpdate, args...)
	// Sized once: a batch's rows grown by append cost more than the rest
	// of what the batch allocates.
	out := make([]Runtime, 0, len(seqs))
	err = each(rows, err, func(r rowScanner) error {
		rt, err := scanRuntime(r)
		out = append(out, rt)
		return err
	})
	return out, err
}

// StaleRuntimes reads the runtime rows, locked until the transaction ends,
// of the monitors in a checked state (PENDING, UP, DEGRADED, DOWN) with no
// known result for two intervals at now, but some check within them: a
// monitor with none (never checked, or no node running its checks) is not
// among them. On PostgreSQL rows another node holds locked are left to it.
func (tx *Tx) StaleRuntimes(ctx context.Context, now time.Time) ([]Runtime, error) {
	skip := tx.db.d.skipLocked
	rows, err := tx.c.QueryContext(ctx, `SELECT `+runtimeColumns+` FROM monitor_runtime
		WHERE state IN ('PENDING', 'UP', 'DEGRADED', 'DOWN')
		AND (CASE WHEN last_known_at > state_since THEN last_known_at ELSE state_since END) + 2 * interval_us <= $1
		AND last_check_at + 2 * interval_us > $1`+skip,
		micros(now))
	return collect(rows, err, scanRuntime)
}

const saveRuntimeSQL = `UPDATE monitor_runtime SET next_due_at = $2, lease_owner = $3, lease_until = $4,
	state = $5, state_since = $6, downs = $7, ups = $8, last_known_at = $9, last_known = $10,
	last_check_at = $11, last_result = $12, last_reason = $13, last_latency_us = $14, last_status = $15,
	last_cert_expiry = $16, downs_from = $17, ups_from = $18
	WHERE seq = $1`

// SaveRuntime writes rt over its row.
func (tx *Tx) SaveRuntime(ctx context.Context, rt Runtime) error {
	_, err := tx.c.ExecContext(ctx, saveRuntimeSQL, runtimeArgs(rt)...)
	return err
}

// SaveRuntimes writes the runtime rows a batch moved. PostgreSQL takes
// them in one statement (a round trip per row cost more than the rest of
// the batch); SQLite, in process, runs one statement prepared once per batch.
// A row given twice is written once, as it was given last.
func (tx *Tx) SaveRuntimes(ctx context.Context, rows []*Runtime) error {
	seen := make(map[int64]bool, len(rows))
	uniq := rows[:0:0]
	for i := len(rows) - 1; i >= 0; i-- {
		if !seen[rows[i].Seq] {
			seen[rows[i].Seq] = true
			uniq = append(uniq, rows[i])
		}
	}
	if len(uniq) == 0 {
		return nil
	}
	if tx.db.d.arrayBatches {
		cols := make([][]any, 18)
		for _, rt := range uniq {
			for i, v := range runtimeArgs(*rt) {
				cols[i] = append(cols[i], v)
			}
		}
		_, err := tx.c.ExecContext(ctx, `UPDATE monitor_runtime r SET next_due_at = v.next_due_at,
			lease_owner = v.lease_owner, lease_until = v.lease_until, state = v.state, state_since = v.state_since,
			downs = v.downs, ups = v.ups, last_known_at = v.last_known_at, last_known = v.last_known,
			last_check_at = v.last_check_at, last_result = v.last_result, last_reason = v.last_reason,
			last_latency_us = v.last_latency_us, last_status = v.last_status, last_cert_expiry = v.last_cert_expiry,
			downs_from = v.downs_from, ups_from = v.ups_from
			FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::bigint[],
				$7::int[], $8::int[], $9::bigint[], $10::text[], $11::bigint[], $12::text[], $13::text[],
				$14::bigint[], $15::int[], $16::bigint[], $17::bigint[], $18::bigint[])
			AS v(seq, next_due_at, lease_owner, lease_until, state, state_since, downs, ups, last_known_at,
				last_known, last_check_at, last_result, last_reason, last_latency_us, last_status, last_cert_expiry,
				downs_from, ups_from)
			WHERE r.seq = v.seq`,
			int64s(cols[0]), int64s(cols[1]), nullStrings(cols[2]), int64s(cols[3]), strs(cols[4]), int64s(cols[5]),
			int64s(cols[6]), int64s(cols[7]), int64s(cols[8]), strs(cols[9]), int64s(cols[10]), strs(cols[11]),
			strs(cols[12]), int64s(cols[13]), int64s(cols[14]), int64s(cols[15]), int64s(cols[16]), int64s(cols[17]))
		return err
	}
	// Prepared on the transaction: SQLite's writer pool has one
	// connection, which the transaction holds.
	st, err := tx.c.PrepareContext(ctx, saveRuntimeSQL)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, rt := range uniq {
		if _, err := st.ExecContext(ctx, runtimeArgs(*rt)...); err != nil {
			return err
		}
	}
	return nil
}

// Column converters for SaveRuntimes' arrays.
func int64s(vs []any) []int64 {
	out := make([]int64, len(vs))
	for i, v := range vs {
		switch n := v.(type) {
		case int64:
			out[i] = n
		case int:
			out[i] = int64(n)
		}
	}
	return out
}

func strs(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i], _ = v.(string)
	}
	return out
}

func nullStrings(vs []any) []*string {
	out := make([]*string, len(vs))
	for i, v := range vs {
		if s, ok := v.(string); ok {
			out[i] = &s
		}
	}
	return out
}

func runtimeArgs(rt Runtime) []any {
	t := rt.Tracker
	next := pausedDue
	if !rt.NextDue.IsZero() {
		next = micros(rt.NextDue)
	}
	return []any{rt.Seq, next, nullString(rt.LeaseOwner), zeroMicros(rt.LeaseUntil),
		string(t.State), micros(t.Since), t.Downs, t.Ups, zeroMicros(t.LastKnown), string(t.Last),
		zeroMicros(rt.Last.At), string(rt.Last.Result), rt.Last.Reason, rt.Last.Latency.Microseconds(), rt.Last.StatusCode,
		zeroMicros(rt.Last.CertExpiry), zeroMicros(t.DownsFrom), zeroMicros(t.UpsFrom)}
}

// ClaimDue leases up to limit checks due at or before horizon whose lease
// has lapsed by now, earliest first, to owner for lease beyond their due
// time. Checks already leased by a live node are skipped, never waited for.
func (db *DB) ClaimDue(ctx context.Context, owner string, now, horizon time.Time, lease time.Duration, limit int) (due []monitor.DueCheck, err error) {
	defer errs.Wrap(&err, "store.ClaimDue")
	q := db.d.claims.checks
	rows, err := db.w.QueryContext(ctx, q, owner, micros(horizon), micros(now), lease.Microseconds(), limit)
	due, err = collect(rows, err, func(r rowScanner) (d monitor.DueCheck, err error) {
		var dueAt, until int64
		err = r.Scan(&d.Seq, &d.Monitor.ID, &dueAt, &until)
		d.Due, d.LeaseUntil = fromMicros(dueAt), fromMicros(until)
		return d, err
	})
	if err != nil || len(due) == 0 {
		return nil, err
	}
	// The monitors themselves, read in one query.
	byID := make(map[string]int, len(due))
	args := make([]any, 0, len(due))
	for i, d := range due {
		byID[d.Monitor.ID] = i
		args = append(args, d.Monitor.ID)
	}
	rows, err = db.r.QueryContext(ctx, `SELECT id, workspace_id, type, name, config, interval_seconds, auth_sealed, headers_sealed
		FROM monitors WHERE id IN (`+placeholders(1, len(args))+`)`, args...)
	found := 0
	err = each(rows, err, func(r rowScanner) error {
		var (
			m             monitor.Monitor
			config        string
			auth, headers []byte
			err           error
		)
		if err = r.Scan(&m.ID, &m.WorkspaceID, &m.Type, &m.Name, &config, &m.IntervalSeconds, &auth, &headers); err != nil {
			return err
		}
		if m.Config, err = db.configs.decode(m.ID, config); err != nil {
			return err
		}
		i := byID[m.ID]
		due[i].Monitor, due[i].SealedAuth, due[i].SealedHeaders = m, auth, headers
		found++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found < len(due) { // deleted between the two queries
		due = slices.DeleteFunc(due, func(d monitor.DueCheck) bool { return d.Monitor.WorkspaceID == "" })
	}
	slices.SortFunc(due, func(a, b monitor.DueCheck) int { return a.Due.Compare(b.Due) })
	return due, nil
}

// placeholders returns "$from, $from+1, …" for n arguments.
func placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(from + i))
	}
	return b.String()
}

// valueRows is "(CAST($from AS TEXT)), …" for n text parameters: the
// rows of a VALUES list whose one column both engines name column1.
func valueRows(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(CAST($")
		b.WriteString(strconv.Itoa(from + i))
		b.WriteString(" AS TEXT))")
	}
	return b.String()
}

// Observations is a batch of observations for InsertObservations, its
// statements' arguments built as each is added.
type Observations struct {
	args []any
	n    int
}

// InsertObservations stores obs in multi-row statements; an observation
// already stored (same monitor, same start) is left as it is.
func (tx *Tx) InsertObservations(ctx context.Context, obs *Observations) error {
	return obs.exec(ctx, tx.c)
}

const observationCols = 12

var resultCodes = map[monitor.Result]int{monitor.ResultUp: 1, monitor.ResultDegraded: 2, monitor.ResultDown: 3, monitor.ResultUnknown: 4}

func resultOf(code int) monitor.Result {
	for r, c := range resultCodes {
		if c == code {
			return r
		}
	}
	return monitor.ResultUnknown
}

// clampMicros keeps a duration within a 32-bit column.
func clampMicros(d time.Duration) int64 {
	return min(max(d.Microseconds(), 0), math.MaxInt32)
}

func nullPhase(d time.Duration) any {
	if d <= 0 {
		return nil
	}
	return clampMicros(d)
}

// Add adds o, of the monitor whose runtime row is seq, by the probe
// that ProbeID numbered probe.
func (b *Observations) Add(seq int64, o monitor.Observation, probe int) {
	var status, reason any
	if o.StatusCode != 0 {
		status = o.StatusCode
	}
	if o.Reason != "" {
		reason = o.Reason
	}
	lag := time.Duration(0)
	if !o.Due.IsZero() {
		lag = o.StartedAt.Sub(o.Due)
	}
	b.args = append(b.args, seq, micros(o.StartedAt), resultCodes[o.Result], clampMicros(o.Latency), clampMicros(lag),
		status, nullPhase(o.Phases.DNS), nullPhase(o.Phases.Connect), nullPhase(o.Phases.TLS),
		nullPhase(o.Phases.FirstByte), probe, reason)
	b.n++
}

func (b *Observations) exec(ctx context.Context, tx txConn) error {
	const perStatement = 500 // well under both engines' parameter limits
	for start := 0; start < b.n; start += perStatement {
		n := min(perStatement, b.n-start)
		var q strings.Builder
		q.WriteString(`INSERT INTO observations (monitor_seq, at, result, latency_us, lag_us, status,
			dns_us, connect_us, tls_us, ttfb_us, probe, reason) VALUES `)
		for i := range n {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(" + placeholders(i*observationCols+1, observationCols) + ")")
		}
		q.WriteString(` ON CONFLICT DO NOTHING`)
		args := b.args[start*observationCols : (start+n)*observationCols]
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// ProbeID numbers a probe (name and region) once; observations store the
// number. It writes outside any transaction (SQLite's writer connection
// would be the transaction's), and only the first time.
func (db *DB) ProbeID(ctx context.Context, name, region string) (int, error) {
	key := name + "\x00" + region
	if id, ok := db.probes.Load(key); ok {
		return id.(int), nil
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO probes (name, region) VALUES ($1, $2)
		ON CONFLICT (name, region) DO NOTHING`, name, region); err != nil {
		return 0, fmt.Errorf("naming probe %q: %w", name, err)
	}
	var id int
	if err := db.w.QueryRowContext(ctx, `SELECT id FROM probes WHERE name = $1 AND region = $2`, name, region).Scan(&id); err != nil {
		return 0, fmt.Errorf("naming probe %q: %w", name, err)
	}
	db.probes.Store(key, id)
	return id, nil
}

// probeNames maps probe numbers back to names for listings.
func (db *DB) probeNames(ctx context.Context) (map[int][2]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, region FROM probes`)
	out := map[int][2]string{}
	err = each(rows, err, func(r rowScanner) error {
		var (
			id           int
			name, region string
		)
		err := r.Scan(&id, &name, &region)
		out[id] = [2]string{name, region}
		return err
	})
	return out, err
}

// ObservationQuery selects a monitor's observations, newest first.
type ObservationQuery struct {
	From, To time.Time      // [From, To); zero = unbounded
	Result   monitor.Result // "" = any
	Before   time.Time      // cursor: only observations that started before it
	Limit    int
}

// ListObservations returns observations of a monitor of the workspace.
func (db *DB) ListObservations(ctx context.Context, wsID, monitorID string, q ObservationQuery) (obs []monitor.Observation, err error) {
	defer errs.Wrap(&err, "store.ListObservations(%s)", monitorID)
	if q.Limit <= 0 {
		return nil, errors.New("limit must be positive")
	}
	seq, err := db.monitorSeq(ctx, wsID, monitorID)
	if err != nil {
		return nil, err
	}
	sqlq := `SELECT at, result, latency_us, lag_us, status, dns_us, connect_us, tls_us, ttfb_us, probe, reason
		FROM observations WHERE monitor_seq = $1`
	args := []any{seq}
	add := func(cond string, v any) {
		args = append(args, v)
		sqlq += " AND " + cond + " $" + strconv.Itoa(len(args))
	}
	if !q.From.IsZero() {
		add("at >=", micros(q.From))
	}
	if !q.To.IsZero() {
		add("at <", micros(q.To))
	}
	if !q.Before.IsZero() {
		add("at <", micros(q.Before))
	}
	if q.Result != "" {
		add("result =", resultCodes[q.Result])
	}
	args = append(args, q.Limit)
	sqlq += " ORDER BY at DESC LIMIT $" + strconv.Itoa(len(args))
	names, err := db.probeNames(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, sqlq, args...)
	return collect(rows, err, func(r rowScanner) (monitor.Observation, error) {
		return scanObservation(r, monitorID, names)
	})
}

// scanObservation reads a row of ListObservations' query; names maps its
// probe number back to name and region.
func scanObservation(r rowScanner, monitorID string, names map[int][2]string) (monitor.Observation, error) {
	var (
		at, latency, lag                int64
		result, probe                   int
		status, dns, connect, tls, ttfb sql.NullInt64
		reason                          sql.NullString
	)
	if err := r.Scan(&at, &result, &latency, &lag, &status, &dns, &connect, &tls, &ttfb, &probe, &reason); err != nil {
		return monitor.Observation{}, err
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	o := monitor.Observation{
		MonitorID:  monitorID,
		StartedAt:  fromMicros(at),
		Result:     resultOf(result),
		Reason:     reason.String,
		Latency:    us(latency),
		StatusCode: int(status.Int64),
		Phases: monitor.Phases{DNS: us(dns.Int64), Connect: us(connect.Int64),
			TLS: us(tls.Int64), FirstByte: us(ttfb.Int64)},
		Probe:  names[probe][0],
		Region: names[probe][1],
	}
	o.Due = o.StartedAt.Add(-us(lag))
	return o, nil
}

func (db *DB) monitorSeq(ctx context.Context, wsID, monitorID string) (seq int64, err error) {
	err = db.queryRow(ctx, db.r, `SELECT r.seq FROM monitors m JOIN monitor_runtime r ON r.monitor_id = m.id
		WHERE m.workspace_id = $1 AND m.id = $2`, wsID, monitorID).Scan(&seq)
	return seq, classify(err)
}

// ListStateChanges returns a monitor's or a heartbeat's state history,
// newest first, with changes before the time before (zero: from the
// newest).
func (db *DB) ListStateChanges(ctx context.Context, wsID, subjectID string, before time.Time, limit int) ([]monitor.Transition, error) {
	rows, err := db.StateChangesBefore(ctx, wsID, subjectID, StateCursor{At: before}, limit)
	out := make([]monitor.Transition, len(rows))
	for i, r := range rows {
		out[i] = r.Transition
	}
	return out, err
}

// StateCursor is a place in a state history read newest first: changes
// before it began earlier, or at the same time and were written earlier.
// Zero: the newest end.
type StateCursor struct {
	At time.Time
	ID int64
}

// StateChangeRow is a stored state change with its id, the order it was
// written in.
type StateChangeRow struct {
	ID int64
	monitor.Transition
}

// StateChangesBefore returns a monitor's or a heartbeat's state history,
// newest first (by time, then by the order written), from the change
// before the cursor before. A change is never dated before the latest
// one of its subject (monitor.Tracker keeps it so), so one written after
// a reader's page is read sorts above that page, never below its cursor.
func (db *DB) StateChangesBefore(ctx context.Context, wsID, subjectID string, before StateCursor, limit int) (out []StateChangeRow, err error) {
	defer errs.Wrap(&err, "store.StateChangesBefore(%s)", subjectID)
	if strings.HasPrefix(subjectID, ids.Heartbeat+"_") {
		if err := db.flushPings(ctx); err != nil {
			return nil, err
		}
		err = db.r.QueryRowContext(ctx, `SELECT id FROM heartbeats WHERE workspace_id = $1 AND id = $2`,
			wsID, subjectID).Scan(new(string))
		err = classify(err)
	} else {
		_, err = db.monitorSeq(ctx, wsID, subjectID)
	}
	if err != nil {
		return nil, err
	}
	at := int64(math.MaxInt64)
	if !before.At.IsZero() {
		at = micros(before.At)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, at, confirmed_at, from_state, to_state, cause FROM state_changes
		WHERE subject_id = $1 AND (at < $2 OR (at = $2 AND id < $3)) ORDER BY at DESC, id DESC LIMIT $4`,
		subjectID, at, before.ID, limit)
	return collect(rows, err, func(r rowScanner) (sc StateChangeRow, err error) {
		var (
			at, confirmed int64
			from, to      string
		)
		err = r.Scan(&sc.ID, &at, &confirmed, &from, &to, &sc.Cause)
		sc.At, sc.From, sc.To = fromMicros(at), monitor.State(from), monitor.State(to)
		if confirmed > at {
			sc.ConfirmedAt = fromMicros(confirmed)
		}
		return sc, err
	})
}

// DeleteObservationsBefore removes observations that started before cutoff
// (the retention setting), one monitor at a time so each delete is a short
// range of the primary key. It returns how many rows went.
func (db *DB) DeleteObservationsBefore(ctx context.Context, cutoff time.Time) (deleted int64, err error) {
	defer errs.Wrap(&err, "store.DeleteObservationsBefore")
	rows, err := db.r.QueryContext(ctx, `SELECT seq FROM monitor_runtime ORDER BY seq`)
	seqs, err := collect(rows, err, scanValue[int64])
	if err != nil {
		return 0, err
	}
	for _, s := range seqs {
		res, err := db.w.ExecContext(ctx, `DELETE FROM observations WHERE monitor_seq = $1 AND at < $2`, s, micros(cutoff))
		if err != nil {
			return deleted, err
		}
		n, _ := res.RowsAffected()
		deleted += n
	}
	return deleted, nil
}

// ReleaseLeases gives back checks that owner claimed but will not run (it
// is stopping), so another node takes them at once rather than when the
// leases lapse.
func (db *DB) ReleaseLeases(ctx context.Context, owner string, seqs []int64) (err error) {
	defer errs.Wrap(&err, "store.ReleaseLeases(%d)", len(seqs))
	for start := 0; start < len(seqs); start += 500 {
		part := seqs[start:min(start+500, len(seqs))]
		args := []any{owner}
		for _, s := range part {
			args = append(args, s)
		}
		_, err := db.w.ExecContext(ctx, `UPDATE monitor_runtime SET lease_owner = NULL, lease_until = 0
			WHERE lease_owner = $1 AND seq IN (`+placeholders(2, len(part))+`)`, args...)
		if err != nil {
			return err
		}
	}
	return nil
}
