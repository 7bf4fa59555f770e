package api

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// bareBody is the bare handler's answer: about the size and shape of a
// monitor, so the baseline moves as many bytes as a GET of one.
var bareBody = []byte(`{"id":"mon_01M7ZZ0000000000000000000","type":"http","name":"bare baseline",` +
	`"config":{"url":"http://127.0.0.1:9/health","method":"GET","timeoutSeconds":10,"followRedirects":true,` +
	`"expectedStatusCodes":["200-399"],"headers":{"Accept":"application/json"}},"intervalSeconds":60,` +
	`"state":"PENDING","stateSince":"2026-01-01T00:00:00.000000Z","paused":false,` +
	`"createdAt":"2026-01-01T00:00:00.000000Z","updatedAt":"2026-01-01T00:00:00.000000Z",` +
	`"padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}` + "\n")

// serveBare is the -bare-serve mode: the baseline server, in its own
// process like tocsin, with the same server timeouts.
func serveBare(ctx context.Context, addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	length := strconv.Itoa(len(bareBody))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", length)
		_, _ = w.Write(bareBody)
	})
	srv := &http.Server{
		Addr:              addr,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
