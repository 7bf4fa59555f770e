package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/racedetector"
)

// heaviestMetrics is the heaviest metrics request the budget allows: the
// listing of 100 monitors by hour over 90 days, which the budget answers
// 4 subjects a page (8,644 points, 4.6 MB of JSON), each bucket of each
// read from the hourly rollups.
const heaviestMetrics = "/api/v1/metrics?window=90d&resolution=hour&limit=100"

// TestMetricsHammerTiming: while one key of workspace A hammers the
// heaviest allowed metrics request with 8 clients, which honour
// Retry-After as API clients do, the p95 latency of workspace B's API
// stays within 2× of its quiet p95, on both engines. Quiet and loaded
// spells take turns, so what else the machine runs weighs on both.
func TestMetricsHammerTiming(t *testing.T) {
	racedetector.Skip(t, "measures latency")
	forEachEngine(t, func(t *testing.T, e *env) {
		now := time.Now().UTC().Truncate(time.Hour)
		seedHistory(t, e, e.wsA.ID, 100, 5, 91, now)
		bMons := seedHistory(t, e, e.wsB.ID, 5, 0, 2, now)
		hammerKey := e.ownerKey()
		var bKeys []string
		for range 8 { // 50 requests a second in all, well inside each key's 600 a minute
			bKeys = append(bKeys, e.key(e.ownerB, e.wsB.ID, false, account.Scopes...))
		}
		if p, r := listPage(t, e, hammerKey, heaviestMetrics[len("/api/v1/metrics?"):]); r.status != 200 || len(p.Data) != 4 || p.points() != 4*(90*24+1) {
			t.Fatalf("the heaviest allowed request: %d, %d subjects, %d points", r.status, len(p.Data), p.points())
		}

		// B's API, as one client sees it: a monitor and its figures of the
		// day, in turn, every 20 ms.
		probeClient := &http.Client{Transport: &http.Transport{}}
		var probeN int
		probe := func(ctx context.Context) []time.Duration {
			var out []time.Duration
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return out
				case <-tick.C:
				}
				path := "/api/v1/monitors/" + bMons[probeN%len(bMons)]
				if probeN%2 == 1 {
					path += "/metrics?window=24h"
				}
				req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
				req.Header.Set("Authorization", "Bearer "+bKeys[probeN%len(bKeys)])
				probeN++
				begin := time.Now()
				resp, err := probeClient.Do(req)
				if err != nil {
					t.Error(err)
					return out
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				out = append(out, time.Since(begin))
				if resp.StatusCode != 200 {
					t.Errorf("B's %s: %d", path, resp.StatusCode)
					return out
				}
			}
		}

		// A's 8 clients: the heaviest request again and again, waiting
		// Retry-After when refused; each finishes its request in flight
		// when told to stop, so no query of A outlives its spell.
		var answered [600]atomic.Int64 // by status
		hammer := func(stop <-chan struct{}) *sync.WaitGroup {
			var wg sync.WaitGroup
			client := &http.Client{Transport: &http.Transport{}}
			for range 8 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						req, _ := http.NewRequest("GET", e.srv.URL+heaviestMetrics, nil)
						req.Header.Set("Authorization", "Bearer "+hammerKey)
						req.Header.Set("Accept-Encoding", "gzip")
						resp, err := client.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						answered[resp.StatusCode].Add(1)
						if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
							select {
							case <-stop:
								return
							case <-time.After(time.Duration(secs) * time.Second):
							}
						}
					}
				})
			}
			return &wg
		}

		var quiet, loaded []time.Duration
		for range 4 {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			quiet = append(quiet, probe(ctx)...)
			cancel()
			stop := make(chan struct{})
			wg := hammer(stop)
			ctx, cancel = context.WithTimeout(context.Background(), 6*time.Second)
			loaded = append(loaded, probe(ctx)...)
			cancel()
			close(stop)
			wg.Wait()
		}
		q, l := p95(quiet), p95(loaded)
		t.Logf("B's API p95: quiet %s (%d requests), while A hammers %s (%d requests); A's heavy requests: %d answered, %d refused (429), %d busy (503)",
			q, len(quiet), l, len(loaded), answered[200].Load(), answered[429].Load(), answered[503].Load())
		if answered[200].Load() < 4 {
			t.Fatalf("A's clients had %d heavy requests answered: the load never was", answered[200].Load())
		}
		if l > 2*q {
			t.Errorf("B's API p95 rose from %s to %s while A hammered the heaviest metrics request: more than 2×", q, l)
		}
	})
}

func p95(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	return s[len(s)*95/100]
}
