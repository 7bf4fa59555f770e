package pings

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/bench/internal/child"
)

// The bare handler, the baseline, is this binary's child mode: it listens
// on 127.0.0.1:0, prints its URL as the first line on stdout, and stops,
// draining requests, at EOF on stdin or SIGTERM.

// bareAck is the bare handler's answer, the size and shape of Tocsin's.
var bareAck = []byte(`{"ok":true,"signal":"success","receivedAt":"2026-01-01T00:00:00.123456Z"}` + "\n")

// maxBareBody is what the bare handler reads of a body, like the ping
// handler's 10 KiB.
const maxBareBody = 10<<10 + 1

// serveBare is the -bare-serve mode: the baseline, with the same server
// settings as Tocsin and nothing else: it reads the request's body and
// answers the same headers and a fixed acknowledgement.
func serveBare(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	length := strconv.Itoa(len(bareAck))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxBareBody))
		hd := w.Header()
		hd.Set("Content-Type", "application/json")
		hd.Set("Content-Length", length)
		hd.Set("Cache-Control", "no-store")
		_, _ = w.Write(bareAck)
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
