package checks

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/monitor"
)

// window compares the slots due in [From, To) with what was done.
type window struct {
	From, To time.Time
	// Due counts the monitors' slots in the window; Done those with an
	// observation (the bare loop: a finished GET); Missing those with none;
	// Duplicates the observations beyond a slot's first; Started the
	// checks (the bare loop's GETs) started in the window.
	Due, Done, Missing, Duplicates, Started int
	// MissedStart counts the unknowns that could not start in time.
	MissedStart int
	Lag         lags
}

// lags summarise the checks' start minus due time.
type lags struct {
	N             int
	P50, P99, Max time.Duration
}

func lagsOf(l []time.Duration) lags {
	slices.Sort(l)
	return lags{N: len(l), P50: session.Percentile(l, 0.5), P99: session.Percentile(l, 0.99), Max: session.Percentile(l, 1)}
}

// analyze reads the observations of the slots due in [from, to). An
// observation stores when the check started (at) and its lag behind the
// due time, so its due time is at − lag.
func analyze(ctx context.Context, db *sql.DB, ts []monitorURL, interval time.Duration, from, to time.Time) (*window, error) {
	phase := map[string]time.Duration{}
	for _, t := range ts {
		phase[t.ID] = monitor.Phase(t.ID, interval)
	}
	seqs := map[int64]string{}
	rows, err := db.QueryContext(ctx, `SELECT seq, monitor_id FROM monitor_runtime`)
	for err == nil && rows.Next() {
		var seq int64
		var id string
		err = rows.Scan(&seq, &id)
		seqs[seq] = id
	}
	if err != nil {
		return nil, err
	}
	rows.Close()
	w := &window{From: from, To: to}
	type slot struct{ seq, k int64 }
	count := map[slot]int{}
	var lagList []time.Duration
	iv := int64(interval)
	rows, err = db.QueryContext(ctx, `SELECT monitor_seq, at, lag_us, result, COALESCE(reason, '') FROM observations WHERE at >= $1`,
		from.Add(-time.Second).UnixMicro())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq, at, lagUS int64
		var result int
		var reason string
		if err := rows.Scan(&seq, &at, &lagUS, &result, &reason); err != nil {
			return nil, err
		}
		id, ok := seqs[seq]
		if !ok {
			continue
		}
		if at >= from.UnixMicro() && at < to.UnixMicro() {
			w.Started++
		}
		due, p := (at-lagUS)*1000, int64(phase[id])
		k := (due - p + iv/2) / iv
		s := p + k*iv
		if s < from.UnixNano() || s >= to.UnixNano() {
			continue
		}
		count[slot{seq, k}]++
		lagList = append(lagList, time.Duration(lagUS)*time.Microsecond)
		if result == 4 && (reason == monitor.ReasonMissedStart || strings.HasPrefix(reason, monitor.GapCausePrefix)) {
			w.MissedStart++ // unknown: late by more than an interval, it names the gap
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for seq, id := range seqs {
		p := int64(phase[id])
		for s := monitor.NextSlot(id, interval, from.Add(-time.Nanosecond)); s.Before(to); s = s.Add(interval) {
			w.Due++
			switch n := count[slot{seq, (s.UnixNano() - p) / iv}]; {
			case n == 0:
				w.Missing++
			case n > 1:
				w.Duplicates += n - 1
			}
		}
	}
	w.Done, w.Lag = w.Due-w.Missing, lagsOf(lagList)
	return w, nil
}
