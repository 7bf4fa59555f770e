package checks

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// The bare loop is the baseline: the same GETs of the same targets on the
// same slots as the engine's checks (each target's phase comes from its
// monitor's id), with the same bound on GETs in flight and, like the probe,
// a new connection for each GET and the body read; but no database, no
// leases, no observations, no tracing of phases.

// benchTarget is one monitor's id and URL; the parent writes them to a
// file, one "id url" a line.
type benchTarget struct {
	ID  string
	URL string
}

func writeTargets(path string, ts []benchTarget) error {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%s %s\n", t.ID, t.URL)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func readTargets(path string) ([]benchTarget, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ts []benchTarget
	s := bufio.NewScanner(f)
	for s.Scan() {
		id, url, ok := strings.Cut(strings.TrimSpace(s.Text()), " ")
		if !ok {
			continue
		}
		ts = append(ts, benchTarget{ID: id, URL: url})
	}
	return ts, s.Err()
}

// bareRecorder keeps the figures of the window [from, to); to is zero
// while the window is open.
type bareRecorder struct {
	mu       sync.Mutex
	from, to time.Time
	started  int // GETs started in the window: what the CPU time is spent on
	done     int // GETs due in the window that finished
	failed   int // of which failed (error or status other than 200)
	lags     []time.Duration
}

func (r *bareRecorder) in(t time.Time) bool {
	return !r.from.IsZero() && !t.Before(r.from) && (r.to.IsZero() || t.Before(r.to))
}

func (r *bareRecorder) start(at time.Time) {
	r.mu.Lock()
	if r.in(at) {
		r.started++
	}
	r.mu.Unlock()
}

func (r *bareRecorder) finish(due, start time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.in(due) {
		return
	}
	r.done++
	if !ok {
		r.failed++
	}
	r.lags = append(r.lags, start.Sub(due))
}

// serveBare is the -bare-loop mode.
func serveBare(ctx context.Context, o childOptions, stdin io.Reader, stdout io.Writer) error {
	targets, err := readTargets(o.targets)
	if err != nil {
		return err
	}
	type entry struct {
		benchTarget
		phase time.Duration
	}
	entries := make([]entry, len(targets))
	for i, t := range targets {
		entries[i] = entry{t, monitor.Phase(t.ID, o.interval)}
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.phase, b.phase) })

	client := &http.Client{Transport: &http.Transport{
		Proxy:                  nil,
		DialContext:            (&net.Dialer{KeepAlive: -1}).DialContext,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 64 << 10,
	}}
	rec := &bareRecorder{}
	sem := make(chan struct{}, o.concurrency)
	loopCtx, stopLoop := context.WithCancel(context.WithoutCancel(ctx))
	var gets sync.WaitGroup
	get := func(url string, due time.Time) {
		defer gets.Done()
		defer func() { <-sem }()
		start := time.Now()
		rec.start(start)
		gctx, cancel := context.WithTimeout(loopCtx, o.timeout)
		defer cancel()
		ok := false
		req, err := http.NewRequestWithContext(gctx, http.MethodGet, url, nil)
		if err == nil {
			req.Header.Set("User-Agent", "checkbench-bare/1")
			var resp *http.Response
			if resp, err = client.Do(req); err == nil {
				_, err = io.ReadAll(io.LimitReader(resp.Body, monitor.MaxAssertedBody+1))
				resp.Body.Close()
				ok = err == nil && resp.StatusCode == http.StatusOK
			}
		}
		rec.finish(due, start, ok)
	}
	loopDone := make(chan struct{})
	go func() { // the loop: the slots in time order, each GET when due
		defer close(loopDone)
		iv := o.interval
		base := time.Unix(0, time.Now().UnixNano()/int64(iv)*int64(iv))
		i, _ := slices.BinarySearchFunc(entries, time.Since(base), func(e entry, d time.Duration) int { return cmp.Compare(e.phase, d) })
		timer := time.NewTimer(0)
		<-timer.C
		for {
			for ; i < len(entries); i++ {
				due := base.Add(entries[i].phase)
				if d := time.Until(due); d > 0 {
					timer.Reset(d)
					select {
					case <-loopCtx.Done():
						return
					case <-timer.C:
					}
				}
				select {
				case sem <- struct{}{}:
				case <-loopCtx.Done():
					return
				}
				gets.Add(1)
				go get(entries[i].URL, due)
			}
			i, base = 0, base.Add(iv)
		}
	}()

	// The window's ends are set under the recorder's lock, so no GET falls
	// between the parent's word and the window.
	start := func() {
		rec.mu.Lock()
		rec.from = time.Now()
		rec.mu.Unlock()
	}
	end := func() {
		rec.mu.Lock()
		rec.to = time.Now()
		rec.mu.Unlock()
	}
	err = drive(ctx, stdin, stdout, start, end)
	stopLoop()
	<-loopDone
	gets.Wait()
	if err != nil {
		return err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	w := &windowStats{From: rec.from, To: rec.to, Done: rec.done, Results: map[string]int{"ok": rec.done - rec.failed}}
	if rec.failed > 0 {
		w.Results["failed"] = rec.failed
	}
	for _, e := range entries {
		w.Due += countSlots(e.ID, o.interval, rec.from, rec.to)
	}
	w.Missing = max(w.Due-w.Done, 0)
	w.Lag = lagsOf(rec.lags)
	w.Started = rec.started
	if rec.to.IsZero() {
		return fmt.Errorf("stopped before the window ended")
	}
	return json.NewEncoder(stdout).Encode(w)
}

// countSlots counts the monitor's slots in [from, to).
func countSlots(id string, interval time.Duration, from, to time.Time) int {
	n := 0
	for s := monitor.NextSlot(id, interval, from.Add(-time.Nanosecond)); s.Before(to); s = s.Add(interval) {
		n++
	}
	return n
}
