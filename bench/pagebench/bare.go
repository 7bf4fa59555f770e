package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/bench/internal/child"
)

// The bare handler, the baseline, is this binary's child mode: it listens
// on 127.0.0.1:0, prints its URL as the first line on stdout, and stops,
// draining requests, at EOF on stdin or SIGTERM. It answers every GET with
// the page Tocsin served (-bare-page names a file holding it): the same
// bytes and the same headers, written from memory.

// capturedPage is a response as Tocsin sent it, what the bare handler
// answers.
type capturedPage struct {
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// bareHeader is what of Tocsin's headers the bare handler sends: all but
// those net/http writes itself.
func bareHeader(h http.Header) http.Header {
	out := h.Clone()
	out.Del("Date")
	out.Del("Content-Length")
	return out
}

// serveBare is the -bare-serve mode: the baseline, with the same server
// settings as Tocsin and nothing else.
func serveBare(ctx context.Context, pagePath string, stdin io.Reader, stdout io.Writer) error {
	b, err := os.ReadFile(pagePath)
	if err != nil {
		return err
	}
	var pg capturedPage
	if err := json.Unmarshal(b, &pg); err != nil {
		return err
	}
	header := bareHeader(pg.Header)
	length := strconv.Itoa(len(pg.Body))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		for k, v := range header {
			hd[k] = v
		}
		hd.Set("Content-Length", length)
		_, _ = w.Write(pg.Body)
	})
	log := slog.New(slog.DiscardHandler)
	return child.ServeUntilEOF(ctx, newServer(h, log), ln, "http://"+ln.Addr().String(), stdin, stdout)
}

// newServer has the settings of `tocsin serve`'s server.
func newServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
