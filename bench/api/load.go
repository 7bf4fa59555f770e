package api

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// workload makes the requests of one target.
type workload interface {
	// request returns worker w's next request, or nil when the target can
	// take no more (the POST targets' monitor quota is used up).
	request(w int) *http.Request
	// answered is told about every response before its body is read.
	answered(w int, req *http.Request, resp *http.Response)
	// failed is told about every request that got no response.
	failed(w int, req *http.Request)
}

// newTransport is the one transport every target shares: keep-alive, at
// most one connection per client, none closed for being idle too long.
func newTransport(concurrency int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: concurrency,
		MaxConnsPerHost:     concurrency,
		IdleConnTimeout:     5 * time.Minute,
		DisableCompression:  true,
	}
}

// phase is the outcome of one closed-loop run.
type phase struct {
	ok, errors int
	elapsed    time.Duration
	latencies  []time.Duration // of every request, in no order
	statuses   map[string]int  // non-2xx statuses and transport errors
	exhausted  bool            // the workload ran out before the time did
	cpu        cpuShare        // who used the machine meanwhile; set by the caller
}

func (p phase) rate() float64 { return float64(p.ok+p.errors) / p.elapsed.Seconds() }

// load runs concurrency clients, each sending its next request as soon as
// the previous one is answered, until d has passed.
func load(ctx context.Context, rt http.RoundTripper, wl workload, concurrency int, d time.Duration) phase {
	type result struct {
		ok, errors int
		lat        []time.Duration
		statuses   map[string]int
		exhausted  bool
	}
	results := make([]result, concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := range concurrency {
		wg.Go(func() {
			r := &results[w]
			r.lat = make([]time.Duration, 0, 4096)
			r.statuses = map[string]int{}
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(deadline) {
					return
				}
				req := wl.request(w)
				if req == nil {
					r.exhausted = true
					return
				}
				resp, err := rt.RoundTrip(req)
				if err != nil {
					wl.failed(w, req)
					r.errors++
					r.statuses[fmt.Sprintf("transport: %v", err)]++
					r.lat = append(r.lat, time.Since(t0))
					continue
				}
				wl.answered(w, req, resp)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				r.lat = append(r.lat, time.Since(t0))
				if resp.StatusCode/100 == 2 {
					r.ok++
				} else {
					r.errors++
					r.statuses[resp.Status]++
				}
			}
		})
	}
	wg.Wait()
	p := phase{elapsed: time.Since(start), statuses: map[string]int{}}
	for _, r := range results {
		p.ok += r.ok
		p.errors += r.errors
		p.latencies = append(p.latencies, r.lat...)
		p.exhausted = p.exhausted || r.exhausted
		for k, v := range r.statuses {
			p.statuses[k] += v
		}
	}
	return p
}
