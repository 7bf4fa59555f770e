package pages

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/bench/internal/load"
)

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
				if _, _, _, err := load.Fetch(ctx, rt, url, nil); err != nil {
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
func loadRound(ctx context.Context, url string, clients int, warmup, d time.Duration, serverPID int, pg map[int]bool) (*round, error) {
	tr := load.Transport(clients)
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
