package pings

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
)

// ackPrefix starts every acknowledgement, Tocsin's and the bare handler's.
var ackPrefix = []byte(`{"ok":true`)

// outcome counts what requests came to.
type outcome struct {
	ok       int            // acknowledged: 200 with an acknowledgement
	statuses map[int]int    // other answers, by status (200 without an acknowledgement as 0)
	errors   map[string]int // no answer, by kind
	lat      []time.Duration
}

func newOutcome() outcome {
	return outcome{statuses: map[int]int{}, errors: map[string]int{}}
}

func (o *outcome) add(x outcome) {
	o.ok += x.ok
	for k, v := range x.statuses {
		o.statuses[k] += v
	}
	for k, v := range x.errors {
		o.errors[k] += v
	}
	o.lat = append(o.lat, x.lat...)
}

// failures counts the requests not acknowledged.
func (o *outcome) failures() int {
	n := 0
	for _, v := range o.statuses {
		n += v
	}
	for _, v := range o.errors {
		n += v
	}
	return n
}

// percentile is the q-quantile (0 < q ≤ 1) of the latencies of the
// acknowledged pings, by the nearest-rank method; lat must be sorted.
func (o *outcome) percentile(q float64) time.Duration {
	return figure.Percentile(o.lat, q)
}

// ping sends one GET ping and counts how it went; the latency is of
// acknowledged pings only, from sending to reading the whole answer. It
// reports whether the ping got no answer.
func ping(ctx context.Context, rt http.RoundTripper, url string, o *outcome) (failed bool) {
	return pingSince(ctx, rt, url, o, time.Now())
}

// pingSince is ping with the latency counted from t0, which may be
// before the request is sent.
func pingSince(ctx context.Context, rt http.RoundTripper, url string, o *outcome, t0 time.Time) (failed bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		o.errors[err.Error()]++
		return true
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		o.errors[errKind(err)]++
		return true
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch {
	case err != nil:
		o.errors[errKind(err)]++
		return true
	case resp.StatusCode != http.StatusOK:
		o.statuses[resp.StatusCode]++
	case !bytes.HasPrefix(body, ackPrefix):
		o.statuses[0]++
	default:
		o.ok++
		o.lat = append(o.lat, time.Since(t0))
	}
	return false
}

// errKind names a transport error without its addresses, to count it.
func errKind(err error) string {
	s := err.Error()
	for _, k := range []string{"connection refused", "connection reset", "broken pipe", "EOF", "timeout", "canceled"} {
		if strings.Contains(s, k) {
			return k
		}
	}
	return s
}

// phase is one measured window of sustained load.
type phase struct {
	outcome
	round   int
	elapsed time.Duration
	cpu     cpuShare
	commits int64 // -1: not known (SQLite)
}

// rate is acknowledged pings per second.
func (p *phase) rate() float64 { return float64(p.ok) / p.elapsed.Seconds() }

// newTransport keeps one connection per client alive for the whole run.
func newTransport(conns int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     5 * time.Minute,
		DisableCompression:  true,
	}
}

// sustained warms t up and then measures it: clients keep-alive clients,
// each sending its next ping when the previous answer is read.
func sustained(ctx context.Context, t *target, clients int, warmup, d time.Duration) (*phase, error) {
	tr := newTransport(clients)
	defer tr.CloseIdleConnections()
	if warmup > 0 {
		w := load(ctx, tr, t, clients, warmup)
		t.acked += w.ok
	}
	var p *phase
	w, err := measure(ctx, t, func() { p = load(ctx, tr, t, clients, d) })
	if err != nil {
		return nil, err
	}
	p.cpu, p.commits = w.cpu, w.commits
	t.acked += p.ok
	return p, ctx.Err()
}

// window is what measure saw of a measured window besides the pings.
type window struct {
	cpu     cpuShare
	commits int64 // transactions committed in the benchmark's database; -1 unknown or SQLite
}

// measure runs the window run and samples around it the CPU and, on
// PostgreSQL, the transactions committed.
func measure(ctx context.Context, t *target, run func()) (window, error) {
	w := window{commits: -1}
	pg, err := t.raw.pgProcesses(ctx)
	if err != nil {
		return w, err
	}
	x0, err := t.raw.commits(ctx)
	if err != nil {
		return w, err
	}
	c0 := sampleCPU()
	run()
	c1 := sampleCPU()
	// Backends that connected during the window count too.
	more, err := t.raw.pgProcesses(ctx)
	if err != nil {
		return w, err
	}
	for pid := range more { // nil on SQLite
		pg[pid] = true
	}
	w.cpu = share(c0, c1, t.srv.Pid(), pg)
	x1, err := t.raw.commits(ctx)
	if err != nil {
		return w, err
	}
	if x0 >= 0 && x1 >= 0 {
		w.commits = x1 - x0
	}
	return w, nil
}

// load runs the closed loop for d. Client w's i-th ping goes to heartbeat
// (w + i·clients) mod n, so every heartbeat gets its share.
func load(ctx context.Context, rt http.RoundTripper, t *target, clients int, d time.Duration) *phase {
	parts := make([]outcome, clients)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := range clients {
		wg.Go(func() {
			o := newOutcome()
			o.lat = make([]time.Duration, 0, 1<<14)
			for i := 0; ctx.Err() == nil && time.Now().Before(deadline); i++ {
				if ping(ctx, rt, t.srv.Base+"/ping/"+t.tokens[(w+i*clients)%len(t.tokens)], &o) {
					time.Sleep(time.Millisecond) // no busy loop on a dead server
				}
			}
			parts[w] = o
		})
	}
	wg.Wait()
	p := &phase{outcome: newOutcome(), elapsed: time.Since(start)}
	for _, o := range parts {
		p.add(o)
	}
	slices.Sort(p.lat)
	return p
}

// offeredResult is what a window of load at a fixed rate came to.
type offeredResult struct {
	outcome
	rate    float64       // offered, pings/s
	sent    int           // pings scheduled in the window
	elapsed time.Duration // from the first ping's schedule to the last answer
	cpu     cpuShare
	commits int64 // -1: not known (SQLite)
}

// behindLimit is how far behind its schedule the load generator may fall
// before it stops sending a ping and counts it as not acknowledged.
const behindLimit = 10 * time.Second

// offered warms t up and then measures it under an open loop: pings sent
// at rate per second on schedule, whether or not earlier ones have been
// answered, over up to conns keep-alive connections. A ping's latency is
// from when it was due, not from when a connection was free to send it,
// so a server falling behind shows as growing latencies rather than as a
// slower load (no coordinated omission).
func offered(ctx context.Context, t *target, rate float64, conns int, warmup, d time.Duration) (*offeredResult, error) {
	tr := newTransport(conns)
	defer tr.CloseIdleConnections()
	if warmup > 0 {
		w := openLoop(ctx, tr, t, rate, conns, warmup)
		t.acked += w.ok
	}
	var r *offeredResult
	w, err := measure(ctx, t, func() { r = openLoop(ctx, tr, t, rate, conns, d) })
	if err != nil {
		return nil, err
	}
	r.cpu, r.commits = w.cpu, w.commits
	t.acked += r.ok
	return r, ctx.Err()
}

// openLoop schedules rate pings a second for d, the i-th due at
// start + i/rate and going to heartbeat i mod n, and sends each on the
// first of conns senders free.
func openLoop(ctx context.Context, rt http.RoundTripper, t *target, rate float64, conns int, d time.Duration) *offeredResult {
	type due struct {
		i  int
		at time.Time
	}
	n := int(rate * d.Seconds())
	queue := make(chan due, n)
	parts := make([]outcome, conns)
	var wg sync.WaitGroup
	for c := range conns {
		wg.Go(func() {
			o := newOutcome()
			for p := range queue {
				if ctx.Err() != nil {
					continue
				}
				if time.Since(p.at) > behindLimit {
					o.errors["not sent: the load generator fell behind"]++
					continue
				}
				pingSince(ctx, rt, t.srv.Base+"/ping/"+t.tokens[p.i%len(t.tokens)], &o, p.at)
			}
			parts[c] = o
		})
	}
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if wait := time.Until(at); wait > time.Millisecond {
			time.Sleep(wait)
		}
		queue <- due{i, at}
	}
	close(queue)
	wg.Wait()
	r := &offeredResult{outcome: newOutcome(), rate: rate, sent: n, elapsed: time.Since(start)}
	for _, o := range parts {
		r.add(o)
	}
	slices.Sort(r.lat)
	return r
}

// burstResult is what a burst came to.
type burstResult struct {
	outcome
	sent  int
	conns int
	// warmFailed counts connections that could not be opened beforehand
	// (their pings were still sent, on new connections).
	warmFailed int
	// open is how long opening the connections took; all is from the
	// release to the last answer.
	open, all time.Duration
}

// burst opens conns connections to t (a request each), then releases them
// at once: each sends its share of n pings, one after the other.
func burst(ctx context.Context, t *target, n, conns int) (*burstResult, error) {
	type part struct {
		outcome
		warmErr error
		end     time.Time
	}
	parts := make([]part, conns)
	release := make(chan struct{})
	var ready, wg sync.WaitGroup
	ready.Add(conns)
	opening := make(chan struct{}, 64) // the listen backlog is finite
	begin := time.Now()
	for c := range conns {
		wg.Go(func() {
			p := &parts[c]
			p.outcome = newOutcome()
			tr := newTransport(1)
			defer tr.CloseIdleConnections()
			opening <- struct{}{}
			p.warmErr = warm(ctx, tr, t.srv.Base+"/healthz")
			<-opening
			ready.Done()
			<-release
			k := n / conns
			if c < n%conns {
				k++
			}
			for i := range k {
				ping(ctx, tr, t.srv.Base+"/ping/"+t.tokens[(c*(n/conns)+i)%len(t.tokens)], &p.outcome)
			}
			p.end = time.Now()
		})
	}
	ready.Wait()
	start := time.Now()
	close(release)
	wg.Wait()
	r := &burstResult{outcome: newOutcome(), sent: n, conns: conns, open: start.Sub(begin)}
	for _, p := range parts {
		r.add(p.outcome)
		if p.warmErr != nil {
			r.warmFailed++
		}
		r.all = max(r.all, p.end.Sub(start))
	}
	slices.Sort(r.lat)
	t.acked += r.ok
	return r, ctx.Err()
}

// warm opens tr's connection with a request that stores nothing.
func warm(ctx context.Context, tr http.RoundTripper, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}
