// HTTP as the areas use it: GETs timed over keep-alive loopback
// connections, JSON requests to a server's API, and the bare handler, the
// baseline a run measures Tocsin against: this binary re-executed as a
// child answering every request with the bytes and headers Tocsin sent.

package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
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

// Client sends JSON requests to Base + a path with Header, over HTTP
// (nil: http.DefaultClient).
type Client struct {
	Base   string
	Header http.Header
	HTTP   *http.Client
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
	req.Header = c.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/json")
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
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

// captured is a response as Tocsin sent it, what the bare handler answers.
type captured struct {
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// BareHeader is what of Tocsin's headers the bare handler sends: all but
// those net/http writes itself.
func BareHeader(h http.Header) http.Header {
	out := h.Clone()
	out.Del("Date")
	out.Del("Content-Length")
	return out
}

// BareChild starts a bare handler, a child answering every request with
// body and header (BareHeader's); Close stops it.
func (s *Session) BareChild(ctx context.Context, name string, header http.Header, body []byte) (*Process, error) {
	path, err := s.Save(name+".json", captured{Header: header, Body: body})
	if err != nil {
		return nil, err
	}
	return s.Child(ctx, name, "http://", "-bare-serve", "-bare-page", path)
}

// serveBare is the bare handler, with the settings of `tocsin serve`'s
// server and nothing else: it reads each request's body (at most 10 KiB,
// as the ping handler) and answers the page saved at path.
func serveBare(ctx context.Context, path string, stdin io.Reader, stdout io.Writer) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var pg captured
	if err := json.Unmarshal(b, &pg); err != nil {
		return err
	}
	header, length := BareHeader(pg.Header), strconv.Itoa(len(pg.Body))
	return ServeChild(ctx, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 10<<10+1))
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", length)
		_, _ = w.Write(pg.Body)
	}), stdin, stdout)
}

// ServeChild is a served child's side: it serves h on a free loopback
// port with the settings of `tocsin serve`'s server, prints its URL as
// its first line, and shuts down, draining requests, at EOF on stdin (the
// parent closed it, or died) or when ctx ends.
func ServeChild(ctx context.Context, h http.Handler, stdin io.Reader, stdout io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if _, err := fmt.Fprintln(stdout, "http://"+ln.Addr().String()); err != nil {
		return err
	}
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	case <-eof:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
