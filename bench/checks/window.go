package checks

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
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
	if len(l) == 0 {
		return lags{}
	}
	s := slices.Sorted(slices.Values(l))
	q := func(p float64) time.Duration { return s[int(p*float64(len(s)-1)+0.5)] }
	return lags{N: len(s), P50: q(0.50), P99: q(0.99), Max: s[len(s)-1]}
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

// bareJob is what the bare loop does: the targets' GETs, and the window
// it reports on.
type bareJob struct {
	Targets  []monitorURL
	From, To time.Time
}

// runBare is the -bare-loop child: the same GETs of the same URLs on the
// same slots as the engine's checks, at most -concurrency in flight and a
// new connection each, the body read as the probe reads it; but no
// database. It reads its job as a line of JSON, prints "ready", and once
// the GETs due before the window's end are done, prints its figures and
// waits for its standard input to close.
func runBare(ctx context.Context, c config, stdin io.Reader, stdout io.Writer) error {
	var job bareJob
	if err := json.NewDecoder(stdin).Decode(&job); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "ready")
	type entry struct {
		url   string
		phase time.Duration
	}
	var entries []entry
	for _, t := range job.Targets {
		entries = append(entries, entry{t.URL, monitor.Phase(t.ID, c.interval)})
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.phase, b.phase) })
	client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{KeepAlive: -1}).DialContext,
		DisableKeepAlives: true, MaxResponseHeaderBytes: 64 << 10}}
	var (
		mu      sync.Mutex
		w       = window{From: job.From, To: job.To}
		lagList []time.Duration
		gets    sync.WaitGroup
		sem     = make(chan struct{}, c.concurrency)
	)
	in := func(t time.Time) bool { return !t.Before(job.From) && t.Before(job.To) }
	get := func(url string, due time.Time) {
		defer func() { <-sem }()
		start := time.Now()
		gctx, cancel := context.WithTimeout(ctx, time.Duration(c.timeout)*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(gctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			_, _ = io.ReadAll(io.LimitReader(resp.Body, monitor.MaxAssertedBody+1))
			resp.Body.Close()
		}
		mu.Lock()
		defer mu.Unlock()
		if in(start) {
			w.Started++
		}
		if in(due) {
			w.Done++
			lagList = append(lagList, start.Sub(due))
		}
	}
	// The slots in time order, each GET when due, until the window ends.
	iv := c.interval
	base := time.Unix(0, time.Now().UnixNano()/int64(iv)*int64(iv))
	i, _ := slices.BinarySearchFunc(entries, time.Since(base), func(e entry, d time.Duration) int { return cmp.Compare(e.phase, d) })
	if i == len(entries) {
		i, base = 0, base.Add(iv)
	}
	for due := base.Add(entries[i].phase); due.Before(job.To); due = base.Add(entries[i].phase) {
		if err := session.Sleep(ctx, time.Until(due)); err != nil {
			return err
		}
		sem <- struct{}{}
		url := entries[i].url
		gets.Go(func() { get(url, due) })
		if i++; i == len(entries) {
			i, base = 0, base.Add(iv)
		}
	}
	gets.Wait()
	for _, t := range job.Targets {
		for s := monitor.NextSlot(t.ID, iv, job.From.Add(-time.Nanosecond)); s.Before(job.To); s = s.Add(iv) {
			w.Due++
		}
	}
	w.Missing, w.Lag = max(w.Due-w.Done, 0), lagsOf(lagList)
	if err := json.NewEncoder(stdout).Encode(w); err != nil {
		return err
	}
	_, err := io.Copy(io.Discard, stdin) // alive, its CPU time and memory read, until the parent is done
	return err
}
