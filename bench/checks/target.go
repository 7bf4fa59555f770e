package checks

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/child"
)

// targetBody is the target's answer: about 100 bytes, like a small health
// endpoint.
var targetBody = []byte(`{"status":"ok","service":"checkbench-target","version":"1.0.0","checks":{"db":"ok","cache":"ok"}}` + "\n")

// serveTarget is the -target-serve mode: a plain net/http server on a free
// loopback port answering every request 200 with targetBody. It prints its
// base URL on stdout and stops when stdin closes.
func serveTarget(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	length := strconv.Itoa(len(targetBody))
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Content-Length", length)
			_, _ = w.Write(targetBody)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       30 * time.Second,
	}
	return child.ServeUntilEOF(ctx, srv, ln, "http://"+ln.Addr().String(), stdin, stdout)
}

// targetURL is monitor i's URL: one path per monitor, so every check is a
// request of its own.
func targetURL(base string, i int) string {
	return strings.TrimSuffix(base, "/") + "/m/" + strconv.Itoa(i)
}
