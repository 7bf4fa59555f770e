package checks

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/pgfresh"
	"github.com/tocsin/tocsin/internal/monitor"
)

// windowStats compares the slots due in a window with what was done.
type windowStats struct {
	From, To time.Time
	// Due counts the monitors' slots in [From, To); Done those with at
	// least one observation (or, for the bare loop, a finished GET);
	// Missing those with none.
	Due, Done, Missing int
	// Duplicates counts observations beyond the first of a slot; OffSlot
	// those whose due time is more than a millisecond from any slot.
	Duplicates, OffSlot int
	// Started counts the bare loop's GETs started in the window.
	Started int `json:",omitempty"`
	// Results counts the window's observations by result.
	Results map[string]int
	// The unknowns by reason: could not start before the deadline, cut
	// short by shutdown, anything else.
	MissedStart, ShuttingDown, OtherUnknown int
	Lag                                     lagStats
}

// lagStats summarise durations: the checks' start minus due time, or the
// engine's claims.
type lagStats struct {
	N                        int
	P50, P90, P99, P999, Max time.Duration
}

func lagsOf(l []time.Duration) lagStats {
	if len(l) == 0 {
		return lagStats{}
	}
	s := slices.Sorted(slices.Values(l))
	q := func(p float64) time.Duration { return s[int(p*float64(len(s)-1)+0.5)] }
	return lagStats{N: len(s), P50: q(0.50), P90: q(0.90), P99: q(0.99), P999: q(0.999), Max: s[len(s)-1]}
}

// rawDB is a plain connection to the benchmark's database, for what the
// store has no method for: moving the first slots, and reading the
// observations table and its size directly.
type rawDB struct {
	engine string
	path   string // SQLite file
	db     *sql.DB
}

func openRaw(engine, url string) (*rawDB, error) {
	r := &rawDB{engine: engine}
	var err error
	if engine == "sqlite" {
		r.path = sqlitePath(url)
		r.db, err = sql.Open("sqlite", r.path+"?_pragma=busy_timeout(10000)")
	} else {
		r.db, err = sql.Open("pgx", url)
	}
	if err != nil {
		return nil, err
	}
	r.db.SetMaxOpenConns(1)
	return r, nil
}

func (r *rawDB) Close() error { return r.db.Close() }

// rebase moves every monitor's next check to its first slot after start,
// so that the engine begins on schedule however long the monitors took to
// create, rather than with a burst of overdue checks.
func (r *rawDB) rebase(ctx context.Context, ts []benchTarget, interval time.Duration, start time.Time) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `UPDATE monitor_runtime SET next_due_at = $1 WHERE monitor_id = $2`)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if _, err := stmt.ExecContext(ctx, monitor.NextSlot(t.ID, interval, start).UnixMicro(), t.ID); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// slotKey names one slot of one monitor: the monitor's runtime seq and
// the slot's number since the Unix epoch.
type slotKey struct {
	seq  int64
	slot int64
}

// analyzeWindow reads the observations of the slots due in [from, to).
// An observation stores when the check started (at) and its lag behind
// the due time (lag_us), so its due time is at - lag_us.
func (r *rawDB) analyzeWindow(ctx context.Context, ts []benchTarget, interval time.Duration, from, to time.Time) (*windowStats, error) {
	phase := make(map[string]time.Duration, len(ts))
	for _, t := range ts {
		phase[t.ID] = monitor.Phase(t.ID, interval)
	}
	seqs := map[int64]string{}
	rows, err := r.db.QueryContext(ctx, `SELECT seq, monitor_id FROM monitor_runtime`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var (
			seq int64
			id  string
		)
		if err := rows.Scan(&seq, &id); err != nil {
			rows.Close()
			return nil, err
		}
		seqs[seq] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	w := &windowStats{From: from, To: to, Results: map[string]int{}}
	count := map[slotKey]int{}
	var lags []time.Duration
	iv := int64(interval)
	rows, err = r.db.QueryContext(ctx, `SELECT monitor_seq, at, lag_us, result, COALESCE(reason, '')
		FROM observations WHERE at >= $1`, from.Add(-time.Second).UnixMicro())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			seq, at, lagUS int64
			result         int
			reason         string
		)
		if err := rows.Scan(&seq, &at, &lagUS, &result, &reason); err != nil {
			return nil, err
		}
		id, ok := seqs[seq]
		if !ok {
			continue
		}
		due := (at - lagUS) * 1000 // ns
		p := int64(phase[id])
		k := (due - p + iv/2) / iv
		slot := p + k*iv
		if slot < from.UnixNano() || slot >= to.UnixNano() {
			continue
		}
		if d := due - slot; d > int64(time.Millisecond) || d < -int64(time.Millisecond) {
			w.OffSlot++
		}
		count[slotKey{seq, k}]++
		lags = append(lags, time.Duration(lagUS)*time.Microsecond)
		name := resultName(result)
		w.Results[name]++
		if name == string(monitor.ResultUnknown) {
			switch {
			case reason == monitor.ReasonMissedStart, strings.HasPrefix(reason, monitor.GapCausePrefix):
				w.MissedStart++ // late by more than an interval, it names the gap
			case reason == monitor.ReasonShuttingDown:
				w.ShuttingDown++
			default:
				w.OtherUnknown++
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for seq, id := range seqs {
		p := int64(phase[id])
		for s := monitor.NextSlot(id, interval, from.Add(-time.Nanosecond)); s.Before(to); s = s.Add(interval) {
			w.Due++
			k := (s.UnixNano() - p) / iv
			switch n := count[slotKey{seq, k}]; {
			case n == 0:
				w.Missing++
			case n > 1:
				w.Duplicates += n - 1
			}
		}
	}
	w.Done = w.Due - w.Missing
	w.Lag = lagsOf(lags)
	return w, nil
}

func resultName(code int) string {
	switch code {
	case 1:
		return string(monitor.ResultUp)
	case 2:
		return string(monitor.ResultDegraded)
	case 3:
		return string(monitor.ResultDown)
	case 4:
		return string(monitor.ResultUnknown)
	}
	return fmt.Sprintf("result %d", code)
}

// sizeSample is the observations table at one moment.
type sizeSample struct {
	Rows int64
	// Bytes is the table with its primary key: SQLite's pages of the
	// WITHOUT ROWID b-tree (dbstat), PostgreSQL's pg_total_relation_size
	// (heap, index, free-space and visibility maps, TOAST).
	Bytes int64
	// PostgreSQL only: the heap and the index apart, the WAL position
	// (cluster-wide), and the transactions of the server's other databases,
	// which say whether the WAL figure is ours alone.
	Heap, Index, WAL, OtherXacts int64
}

func (r *rawDB) size(ctx context.Context) (s sizeSample, err error) {
	if r.engine == "sqlite" {
		tx, err := r.db.BeginTx(ctx, nil) // one snapshot for both figures
		if err != nil {
			return s, err
		}
		defer tx.Rollback()
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM observations`).Scan(&s.Rows); err != nil {
			return s, err
		}
		err = tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name = 'observations'`).Scan(&s.Bytes)
		return s, err
	}
	err = r.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM observations),
		pg_total_relation_size('observations'), pg_relation_size('observations'), pg_indexes_size('observations'),
		pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint,
		(SELECT COALESCE(SUM(xact_commit + xact_rollback), 0)::bigint FROM pg_stat_database
			WHERE datname IS DISTINCT FROM current_database())`).Scan(&s.Rows, &s.Bytes, &s.Heap, &s.Index, &s.WAL, &s.OtherXacts)
	return s, err
}

// pgProcesses lists the PostgreSQL processes that work for the benchmark:
// the backends connected to its database (but this connection's) and the
// cluster's background processes. Nil on SQLite.
func (r *rawDB) pgProcesses(ctx context.Context) (map[int]bool, error) {
	if r.engine == "sqlite" {
		return nil, nil
	}
	return pgfresh.Processes(ctx, r.db)
}

// databaseSize is the whole database on disk once the engine has stopped:
// SQLite's file after a checkpoint that empties the WAL, PostgreSQL's
// pg_database_size.
func (r *rawDB) databaseSize(ctx context.Context) (int64, error) {
	if r.engine == "sqlite" {
		if _, err := r.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			return 0, err
		}
		var total int64
		for _, p := range []string{r.path, r.path + "-wal"} {
			if fi, err := os.Stat(p); err == nil {
				total += fi.Size()
			}
		}
		return total, nil
	}
	var n int64
	err := r.db.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&n)
	return n, err
}
