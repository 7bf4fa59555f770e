// HTTP as the areas use it: GETs timed over keep-alive loopback
// connections, JSON requests to a server's API, and the load of many
// clients, their outcomes counted.

package session

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Transport keeps up to conns connections alive for the whole run.
func Transport(conns int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     5 * time.Minute,
		DisableCompression:  true,
	}
}

// Fetch GETs url with header (nil: none) and reads the whole answer; the
// duration runs from sending the request to reading the answer's last
// byte. A status other than 200 is an error.
func Fetch(ctx context.Context, rt http.RoundTripper, url string, header http.Header) (body []byte, h http.Header, d time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, 0, err
	}
	for k, v := range header {
		req.Header[k] = v
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

// Sequential GETs url n times, one after the other over one keep-alive
// connection, and returns the times sorted; it stops early once limit has
// passed (limit ≤ 0: never), after one GET at least.
func Sequential(ctx context.Context, rt http.RoundTripper, url string, header http.Header, n int, limit time.Duration) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	end := time.Now().Add(limit)
	for len(lat) < n && (limit <= 0 || len(lat) == 0 || time.Now().Before(end)) {
		_, _, d, err := Fetch(ctx, rt, url, header)
		if err != nil {
			return nil, err
		}
		lat = append(lat, d)
	}
	slices.Sort(lat)
	return lat, nil
}

// Client sends JSON requests to Base + a path with Header.
type Client struct {
	Base   string
	Header http.Header
}

// API is a client of the API at base with an API key.
func API(base, key string) Client {
	return Client{Base: base + "/api/v1", Header: http.Header{"Authorization": {"Bearer " + key}}}
}

// Post sends in as JSON to path and decodes the answer into out.
func (c Client) Post(ctx context.Context, path string, in, out any) error {
	return c.Do(ctx, http.MethodPost, path, in, out)
}

// Do sends in (nil: no body) as JSON and decodes the answer into out
// (nil: none); an answer other than 2xx is an error with its start.
func (c Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, body)
	if err != nil {
		return err
	}
	maps.Copy(req.Header, c.Header)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch {
	case err != nil:
		return err
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("%s %s: %s: %.300s", method, path, resp.Status, bytes.TrimSpace(raw))
	case out == nil:
		return nil
	}
	return json.Unmarshal(raw, out)
}

// Shows makes sure a page is the one a benchmark means to measure.
func Shows(body []byte, words ...string) error {
	for _, w := range words {
		if !bytes.Contains(body, []byte(w)) {
			return fmt.Errorf("the page does not show %q", w)
		}
	}
	return nil
}

// Outcome counts what requests came to: the answers that were what the
// load wanted (OK, with their latencies), and the others by kind.
type Outcome struct {
	OK      int
	Failed  map[string]int // by status, or by kind of transport error
	Lat     []time.Duration
	Elapsed time.Duration
	CPU     Share // who used the machine meanwhile; set by the caller
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
	case err != nil: // counted by kind, without its addresses
		kind := err.Error()
		for _, k := range []string{"connection refused", "connection reset", "broken pipe", "EOF", "timeout", "canceled"} {
			if strings.Contains(kind, k) {
				kind = k
				break
			}
		}
		o.Failed[kind]++
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
