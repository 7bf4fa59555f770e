package checks

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The engine's figures come from the server's own GET /metrics, as an
// operator's Prometheus reads them: its counters at both ends of the
// window, and its gauges once a second in between.

// metrics is one scrape: every sample, by its name with its labels as
// the server writes them (tocsin_checks_total{result="up"}).
type metrics map[string]float64

func scrape(ctx context.Context, base string) (metrics, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	m := metrics{}
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		line := s.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); i > 0 && err == nil {
			m[line[:i]] = v
		}
	}
	return m, s.Err()
}

// checks is tocsin_checks_total by result.
func (m metrics) checks() map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if rest, ok := strings.CutPrefix(k, `tocsin_checks_total{result="`); ok {
			out[strings.TrimSuffix(rest, `"}`)] += v
		}
	}
	return out
}

// engineFigures are the engine's counters over the window, and what the
// Go runtime reported of the server process.
type engineFigures struct {
	Checks                 map[string]float64 // tocsin_checks_total by result
	Missed                 float64            // tocsin_checks_missed_total
	Written, WriteErrors   float64            // observations
	Batches, BatchSeconds  float64            // tocsin_observation_batch_seconds count and sum
	MaxQueued, MaxInFlight float64            // the gauges' highest, read once a second
	GCs, Allocated         float64            // go_gc_duration_seconds_count, go_memstats_alloc_bytes_total
	HeapInuse, Goroutines  float64            // at the end
}

func figuresOf(a, b metrics, maxQueued, maxInFlight float64) *engineFigures {
	d := func(name string) float64 { return b[name] - a[name] }
	f := &engineFigures{Checks: map[string]float64{}, Missed: d("tocsin_checks_missed_total"),
		Written: d("tocsin_observations_written_total"), WriteErrors: d("tocsin_observation_write_errors_total"),
		Batches: d("tocsin_observation_batch_seconds_count"), BatchSeconds: d("tocsin_observation_batch_seconds_sum"),
		MaxQueued: maxQueued, MaxInFlight: maxInFlight,
		GCs: d("go_gc_duration_seconds_count"), Allocated: d("go_memstats_alloc_bytes_total"),
		HeapInuse: b["go_memstats_heap_inuse_bytes"], Goroutines: b["go_goroutines"]}
	before := a.checks()
	for k, v := range b.checks() {
		if n := v - before[k]; n > 0 {
			f.Checks[k] = n
		}
	}
	return f
}

// gauges reads the engine's queue and checks in flight once a second
// until stop is called, which returns their highest values.
func gauges(ctx context.Context, base string) (stop func() (maxQueued, maxInFlight float64)) {
	done := make(chan struct{})
	var (
		wg       sync.WaitGroup
		queued   float64
		inFlight float64
	)
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if m, err := scrape(ctx, base); err == nil {
				queued = max(queued, m["tocsin_observations_queued"])
				inFlight = max(inFlight, m["tocsin_checks_in_flight"])
			}
		}
	})
	return func() (float64, float64) {
		close(done)
		wg.Wait()
		return queued, inFlight
	}
}
