package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
)

// newTransport keeps up to conns connections alive for the whole run.
func newTransport(conns int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     5 * time.Minute,
		DisableCompression:  true,
	}
}

// fetch GETs url and reads the whole answer; the duration runs from
// sending the request to reading the answer's last byte. A status other
// than 200 is an error.
func fetch(ctx context.Context, rt http.RoundTripper, url string) (body []byte, h http.Header, d time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, 0, err
	}
	t0 := time.Now()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, nil, 0, err
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	d = time.Since(t0)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, resp.Header, d, err
}

// sequential GETs url n times, one after the other over one keep-alive
// connection, and returns the times sorted.
func sequential(ctx context.Context, rt http.RoundTripper, url string, n int) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	for range n {
		_, _, d, err := fetch(ctx, rt, url)
		if err != nil {
			return nil, err
		}
		lat = append(lat, d)
	}
	slices.Sort(lat)
	return lat, nil
}

// round is one measured window of concurrent load on one server.
type round struct {
	n       int // the round, from 1
	ok      int // 200s read whole
	failed  int
	elapsed time.Duration
	cpu     cpuShare
}

// rate is 200s a second.
func (r *round) rate() float64 { return float64(r.ok) / r.elapsed.Seconds() }

// perRequest is the server's CPU time per answer.
func (r *round) perRequest() time.Duration {
	if r.ok == 0 {
		return 0
	}
	return r.cpu.ServerTime / time.Duration(r.ok)
}

// closedLoop runs clients keep-alive clients against url for d, each
// sending its next GET once the previous answer is read, and counts the
// answers.
func closedLoop(ctx context.Context, rt http.RoundTripper, url string, clients int, d time.Duration) (ok, failed int) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for range clients {
		wg.Go(func() {
			var o, f int
			for ctx.Err() == nil {
				if _, _, _, err := fetch(ctx, rt, url); err != nil {
					if ctx.Err() == nil {
						f++
					}
					continue
				}
				o++
			}
			mu.Lock()
			ok, failed = ok+o, failed+f
			mu.Unlock()
		})
	}
	wg.Wait()
	return ok, failed
}

// load warms url's server up for warmup and then measures it for d with
// clients clients, sampling the CPU counters at both ends of the window.
func load(ctx context.Context, url string, clients int, warmup, d time.Duration, serverPID int, pg map[int]bool) (*round, error) {
	tr := newTransport(clients)
	defer tr.CloseIdleConnections()
	if warmup > 0 {
		closedLoop(ctx, tr, url, clients, warmup)
	}
	a := host.TakeSample()
	t0 := time.Now()
	ok, failed := closedLoop(ctx, tr, url, clients, d)
	elapsed := time.Since(t0)
	b := host.TakeSample()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &round{ok: ok, failed: failed, elapsed: elapsed, cpu: share(a, b, serverPID, pg)}, nil
}

// cpuShare is a window's CPU use: percentages of the whole machine (100%
// = all CPUs), and the server's and PostgreSQL's CPU time.
type cpuShare = host.Share

// share is host.Split: the window's CPU by process.
func share(a, b host.Sample, serverPID int, pg map[int]bool) cpuShare {
	return host.Split(a, b, serverPID, pg)
}
