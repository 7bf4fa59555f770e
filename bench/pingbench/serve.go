package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/engine"
	"github.com/tocsin/tocsin/internal/httpapi"
	"github.com/tocsin/tocsin/internal/netguard"
	"github.com/tocsin/tocsin/internal/probe"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
)

// The servers under test, each the child mode of a process of its own.
// Both listen on 127.0.0.1:0, print their URL as the first line on
// stdout, and stop, draining requests, at EOF on stdin.

// keysEnv carries the keyring to the Tocsin child, out of its command line.
const keysEnv = "PINGBENCH_SECRET_KEYS"

// profileEnv names the file a child writes its CPU profile to, from start
// to stop (-cpuprofile); its allocations go beside it, in <name>.allocs.pprof.
const profileEnv = "PINGBENCH_CPUPROFILE"

// startProfile profiles this process into the file profileEnv names, if
// any, and returns how to stop.
func startProfile() (stop func(), err error) {
	path := os.Getenv(profileEnv)
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
			// And what was allocated, from start to stop, beside it.
			if a, err := os.Create(strings.TrimSuffix(path, ".pprof") + ".allocs.pprof"); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(a, 0)
				a.Close()
			}
		})
	}
	// The parent ends a Tocsin server with SIGKILL, to count its pings as
	// a crash leaves them; SIGUSR1 first writes the profile out.
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		<-usr1
		stop()
	}()
	return stop, nil
}

// serveTocsin is the -serve mode: the HTTP side of `tocsin serve` as
// cmd/tocsin/serve.go composes it, on a database the parent migrated and
// filled. cmd/tocsin is a main package, so the composition is repeated
// here; keep the two alike.
func serveTocsin(ctx context.Context, dbURL, keys string, stdin io.Reader, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	kr, err := secrets.ParseKeyring(keys)
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return err
	}
	outbound := netguard.Policy{}
	prober := probe.New(probe.Options{Policy: outbound, ProbeID: "pingbench", Region: "local"})
	a := app.New(db, kr, time.Now, log, app.Config{Outbound: outbound, Checker: prober})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	api := httpapi.New(a, log, httpapi.Options{BaseURL: base})
	root := http.NewServeMux()
	root.Handle(httpapi.Prefix+"/", api)
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok\n")
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	root.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	root.Handle("/", api) // the ping URLs
	checks := engine.New(engine.Options{Node: "pingbench", Region: "local", Store: db, Checker: prober,
		OpenAuth: a.OpenMonitorAuth, OpenHeaders: a.OpenMonitorHeaders, Log: log.With("component", "engine"), Metrics: engine.NewMetrics(reg)})
	srv := newServer(httpapi.Observe(log, root), log)

	bgCtx, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBackground()
	go a.RunHousekeeping(bgCtx, 10*time.Minute)
	go a.RunHeartbeats(bgCtx, "pingbench")
	engineDone := make(chan struct{})
	go func() {
		defer close(engineDone)
		checks.Run(bgCtx)
	}()
	defer func() {
		stopBackground()
		<-engineDone
	}()
	// The ping writers stop once the server has (serve's order).
	pingCtx, stopPings := context.WithCancel(context.WithoutCancel(ctx))
	pingsDone := make(chan struct{})
	go func() {
		defer close(pingsDone)
		_ = a.RunPings(pingCtx)
	}()
	defer func() {
		stopPings()
		<-pingsDone
	}()
	return serveUntilEOF(ctx, srv, ln, base, stdin, stdout)
}

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
	return serveUntilEOF(ctx, newServer(h, log), ln, "http://"+ln.Addr().String(), stdin, stdout)
}

// newServer has the settings of `tocsin serve`.
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

// serveUntilEOF serves on ln, prints base, and shuts down at EOF on stdin
// (the parent closed it, or died) or when ctx ends.
func serveUntilEOF(ctx context.Context, srv *http.Server, ln net.Listener, base string, stdin io.Reader, stdout io.Writer) error {
	stopProfile, err := startProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if _, err := fmt.Fprintln(stdout, base); err != nil {
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
