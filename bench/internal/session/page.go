// Package pageload times GETs of a page over keep-alive loopback
// connections, and serves the baseline the page benchmarks measure Tocsin
// against: a bare net/http handler, the benchmark binary re-executed in
// its child mode, answering every GET with the bytes and headers Tocsin
// sent (Captured), written from memory.

package session

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
// connection, and returns the times sorted.
func Sequential(ctx context.Context, rt http.RoundTripper, url string, header http.Header, n int) ([]time.Duration, error) {
	return SequentialWithin(ctx, rt, url, header, n, 0)
}

// SequentialWithin is Sequential that stops early, once limit has passed
// (limit ≤ 0: none); it makes at least one GET.
func SequentialWithin(ctx context.Context, rt http.RoundTripper, url string, header http.Header, n int, limit time.Duration) ([]time.Duration, error) {
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

// Captured is a response as Tocsin sent it, what the bare handler
// answers.
type Captured struct {
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// Save writes the captured page to path, for the bare handler's -bare-page.
func (c Captured) Save(path string) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// BareHeader is what of Tocsin's headers the bare handler sends: all but
// those net/http writes itself.
func BareHeader(h http.Header) http.Header {
	out := h.Clone()
	out.Del("Date")
	out.Del("Content-Length")
	return out
}

// ServeBare is an area's bare handler, a child: it answers every GET with
// the page Tocsin sent, saved at pagePath (BareHeader's headers).
func ServeBare(ctx context.Context, pagePath string, stdin io.Reader, stdout io.Writer) error {
	b, err := os.ReadFile(pagePath)
	if err != nil {
		return err
	}
	var pg Captured
	if err := json.Unmarshal(b, &pg); err != nil {
		return err
	}
	return ServeFixed(ctx, BareHeader(pg.Header), pg.Body, stdin, stdout)
}

// ServeFixed is a child's baseline server, with the settings of `tocsin
// serve`'s and nothing else: on a free loopback port it reads each
// request's body (at most 10 KiB, as the ping handler), answers header
// and body, prints its URL first on stdout, and stops, draining requests,
// at EOF on stdin or when ctx ends.
func ServeFixed(ctx context.Context, header http.Header, body []byte, stdin io.Reader, stdout io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	length := strconv.Itoa(len(body))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 10<<10+1))
		hd := w.Header()
		for k, v := range header {
			hd[k] = v
		}
		hd.Set("Content-Length", length)
		_, _ = w.Write(body)
	})
	return ServeUntilEOF(ctx, NewServer(h), ln, "http://"+ln.Addr().String(), stdin, stdout)
}

// NewServer has the settings of `tocsin serve`'s server.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(slog.DiscardHandler, slog.LevelWarn),
	}
}

// BarePage registers the child flags of an area whose baseline answers a
// page Tocsin sent (BareChild), and returns run, or that child when the
// flags ask for it.
func BarePage(fs *flag.FlagSet, run Run) Run {
	on := fs.Bool("bare-serve", false, "internal: serve the bare handler")
	page := fs.String("bare-page", "", "internal: the page the bare handler serves")
	return func(ctx context.Context, e Env) error {
		if *on {
			return ServeBare(ctx, *page, e.Stdin, e.Stdout)
		}
		return run(ctx, e)
	}
}

// BareChild starts the area's bare handler (see BarePage) answering body
// and header, as Tocsin answered them; Close stops it.
func (s *Session) BareChild(ctx context.Context, name string, header http.Header, body []byte) (*Process, error) {
	path := filepath.Join(s.Dir, name+".json")
	if err := (Captured{Header: header, Body: body}).Save(path); err != nil {
		return nil, err
	}
	return s.Child(ctx, name, "-bare-serve", "-bare-page", path)
}
