package session

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Outcome counts what requests came to: the answers that were what the
// load wanted (OK, with their latencies), and the others by kind.
type Outcome struct {
	OK        int
	Failed    map[string]int // by status, or by kind of transport error
	Lat       []time.Duration
	Elapsed   time.Duration
	Exhausted bool  // the load ran out of requests before the time did
	CPU       Share // who used the machine meanwhile; set by the caller
}

// Add adds x's counts to o.
func (o *Outcome) Add(x Outcome) {
	o.OK += x.OK
	if o.Failed == nil {
		o.Failed = map[string]int{}
	}
	for k, v := range x.Failed {
		o.Failed[k] += v
	}
	o.Lat = append(o.Lat, x.Lat...)
	o.Exhausted = o.Exhausted || x.Exhausted
}

// Failures counts the requests that failed.
func (o *Outcome) Failures() int {
	n := 0
	for _, v := range o.Failed {
		n += v
	}
	return n
}

// Rate is answers wanted a second.
func (o *Outcome) Rate() float64 { return float64(o.OK) / o.Elapsed.Seconds() }

// P is the q-quantile of the latencies, which must be sorted.
func (o *Outcome) P(q float64) time.Duration { return Percentile(o.Lat, q) }

// PerOK is a CPU time per answer wanted.
func (o *Outcome) PerOK(d time.Duration) time.Duration {
	if o.OK == 0 {
		return 0
	}
	return d / time.Duration(o.OK)
}

// FailedString lists the failures by kind, most first; "0" for none.
func (o *Outcome) FailedString() string {
	keys := slices.SortedFunc(maps.Keys(o.Failed), func(a, b string) int {
		return cmp.Or(cmp.Compare(o.Failed[b], o.Failed[a]), strings.Compare(a, b))
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, o.Failed[k]))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

// Want says whether an answer is what the load wants; nil wants any 2xx.
type Want func(w int, resp *http.Response, body []byte) bool

// Do sends req, reads the whole answer and counts it in o, its latency
// from t0 (which may be before the request is sent). It reports whether
// the request got no answer.
func Do(rt http.RoundTripper, req *http.Request, w int, want Want, o *Outcome, t0 time.Time) (failed bool) {
	if o.Failed == nil {
		o.Failed = map[string]int{}
	}
	resp, err := rt.RoundTrip(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	switch {
	case err != nil:
		o.Failed[errKind(err)]++
		return true
	case want == nil && resp.StatusCode/100 == 2, want != nil && want(w, resp, body):
		o.OK++
		o.Lat = append(o.Lat, time.Since(t0))
	case resp.StatusCode/100 == 2:
		o.Failed[resp.Status+" not as wanted"]++
	default:
		o.Failed[resp.Status]++
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

// Closed runs clients keep-alive clients for d, each sending its next
// request (next(w, i): client w's i-th; nil when the load can take no
// more) as soon as the previous answer is read. The latencies come back
// sorted.
func Closed(ctx context.Context, rt http.RoundTripper, clients int, d time.Duration, next func(w, i int) *http.Request, want Want) Outcome {
	parts := make([]Outcome, clients)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := range clients {
		wg.Go(func() {
			o := &parts[w]
			o.Lat = make([]time.Duration, 0, 4096)
			for i := 0; ctx.Err() == nil && time.Now().Before(deadline); i++ {
				req := next(w, i)
				if req == nil {
					o.Exhausted = true
					return
				}
				if Do(rt, req.WithContext(ctx), w, want, o, time.Now()) {
					time.Sleep(time.Millisecond) // no busy loop on a dead server
				}
			}
		})
	}
	wg.Wait()
	return Pool(parts, time.Since(start))
}

// Pool adds up outcomes, over elapsed, with the latencies sorted.
func Pool(parts []Outcome, elapsed time.Duration) Outcome {
	out := Outcome{Elapsed: elapsed, Failed: map[string]int{}}
	for _, p := range parts {
		out.Add(p)
	}
	slices.Sort(out.Lat)
	return out
}

// Rates are the outcomes' rates.
func Rates(os []Outcome) []float64 {
	r := make([]float64, len(os))
	for i, o := range os {
		r[i] = o.Rate()
	}
	return r
}

// Ratios are the rates of a over those of b, round by round.
func Ratios(a, b []Outcome) []float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		r = append(r, a[i].Rate()/b[i].Rate())
	}
	return r
}

// Get is a GET of url, for next.
func Get(url string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		panic(err) // the benchmark made the URL
	}
	return req
}
