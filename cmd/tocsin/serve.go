package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/deliver"
	"github.com/tocsin/tocsin/internal/httpapi"
	"github.com/tocsin/tocsin/internal/mailer"
	"github.com/tocsin/tocsin/internal/netguard"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/probe"
	"github.com/tocsin/tocsin/internal/scheduler"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/web/console"
	"github.com/tocsin/tocsin/internal/web/public"
)

func newLogger(c config.Config, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openStore opens and migrates the configured database. serve claims a
// SQLite database first, before it migrates or listens: one server per
// file, and a second one exits at once. Operator commands (claim false)
// work beside it.
func openStore(ctx context.Context, c config.Config, log *slog.Logger, claim bool) (*store.DB, error) {
	if err := privateDataDir(c.DataDir, log); err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, c.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if claim {
		if err := db.Claim("tocsin serve"); err != nil {
			db.Close()
			return nil, err
		}
	}
	n, err := db.Migrate(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("migrating the database: %w", err)
	}
	if n > 0 {
		log.Info("database migrated", "applied", n, "engine", db.Engine())
	}
	return db, nil
}

// privateDataDir makes an existing data dir this user's alone (0700): it
// holds the database and the key file. Whatever creates it creates it 0700;
// one left open by an earlier version or by hand is tightened, once, with a
// line in the log.
func privateDataDir(dir string, log *slog.Logger) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(dir, fi.Mode().Perm()&0o700); err != nil {
		return fmt.Errorf("making the data dir %s private: %w", dir, err)
	}
	log.Info("made the data dir private to this user", "dir", dir, "was", fi.Mode().Perm().String())
	return nil
}

// sealPlaintext is the migration step that SQL cannot do, run by serve
// and migrate after the SQL migrations: header values and webhook URLs'
// queries that earlier versions kept in plaintext are sealed with the
// keyring. Once done it only looks.
func sealPlaintext(ctx context.Context, a *app.App, log *slog.Logger) error {
	n, err := a.SealPlaintextHeaders(ctx)
	if err != nil {
		return fmt.Errorf("migrating the database: %w", err)
	}
	if n > 0 {
		log.Info("sealed header values stored in plaintext", "monitors", n)
	}
	if n, err = a.SealChannelQueries(ctx); err != nil {
		return fmt.Errorf("migrating the database: %w", err)
	}
	if n > 0 {
		log.Info("sealed the queries of channel URLs stored in plaintext", "channels", n)
	}
	return nil
}

// keyFile is where a single SQLite node keeps its generated key.
func keyFile(c config.Config) string { return filepath.Join(c.DataDir, "secret.key") }

// keyring loads TOCSIN_SECRET_KEYS, or for a single SQLite node a key file
// generated in the data dir on first start.
func keyring(c config.Config, log *slog.Logger) (*secrets.Keyring, error) {
	if c.SecretKeys != "" {
		return secrets.ParseKeyring(c.SecretKeys)
	}
	path := keyFile(c)
	kr, created, err := secrets.LoadOrCreateKeyFile(path)
	if err != nil {
		return nil, err
	}
	if created {
		log.Warn("generated a key for secrets at rest; back it up with the database", "path", path)
	}
	return kr, nil
}

// newMailer is the SMTP sender, nil when no server is configured. The
// server is the operator's, so the outbound policy for users' targets does
// not apply to it; it is still dialled through the one dialer.
func newMailer(c config.Config) (deliver.Mailer, error) {
	if c.SMTPURL == "" {
		return nil, nil
	}
	d := netguard.Policy{}.Dialer(notify.AttemptTimeout)
	m, err := mailer.New(mailer.Config{URL: c.SMTPURL, From: c.SMTPFrom}, d.DialContext, nil)
	if err != nil {
		return nil, err
	}
	return deliver.SMTP(m), nil
}

// listen binds addr, saying what to do when it cannot.
func listen(addr, flagName string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen tcp %s: address already in use: stop what uses that port, or pass %s with a free address", addr, flagName)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: pass %s with an address this user may listen on", err, flagName)
	}
	return ln, nil
}

// metricsServer puts /metrics on the main mux, or, given its own listener
// (--metrics-listen), on a server of its own that serves nothing else.
func metricsServer(root *http.ServeMux, ln net.Listener, h http.Handler, log *slog.Logger) *http.Server {
	if ln == nil {
		root.Handle("GET /metrics", h)
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 60 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := config.Parse("serve", args, getenv, toStderr(stderr, nil))
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	// Report every problem at once: those found parsing and validating.
	if err := errors.Join(err, c.Validate()); err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	log := newLogger(c, stderr)
	log.Info("starting tocsin", "config", c.Redacted())
	// The port first: a busy one stops serve before the first run's setup
	// (data dir, database, key file, owner) leaves anything behind.
	ln, err := listen(c.Listen, "--listen (TOCSIN_LISTEN)")
	if err != nil {
		return err
	}
	defer ln.Close()
	var metricsLn net.Listener
	if c.MetricsListen != "" {
		if metricsLn, err = listen(c.MetricsListen, "--metrics-listen (TOCSIN_METRICS_LISTEN)"); err != nil {
			return err
		}
		defer metricsLn.Close()
	}
	kr, err := keyring(c, log)
	if err != nil {
		return err
	}
	db, err := openStore(ctx, c, log, true)
	if err != nil {
		return err
	}
	defer db.Close()
	outbound := netguard.Policy{BlockPrivate: c.BlockPrivateTargets}
	prober := probe.New(probe.Options{Policy: outbound, ProbeID: c.NodeName, Region: c.Region, Canaries: c.Canaries})
	mail, err := newMailer(c)
	if err != nil {
		return err
	}
	a := app.New(db, kr, time.Now, log, withQuotas(c, app.Config{RatePerMinute: c.RatePerMinute, Outbound: outbound,
		MetricsPointsPerResponse: c.MetricsPointsPerResponse, MetricsPointsPerMinute: c.MetricsPointsPerMinute, HeavyMetricsQueries: c.MetricsHeavyQueries,
		Checker: prober, RetentionDays: c.RetentionDays, HourlyRetentionDays: c.HourlyRetentionDays,
		DailyRetentionDays: c.DailyRetentionDays, EmailEnabled: mail != nil}))
	if err := sealPlaintext(ctx, a, log); err != nil {
		return err
	}
	boot, err := a.Bootstrap(ctx)
	if err != nil {
		return err
	}

	if strings.HasSuffix(c.BaseURL, ":0") {
		// Listening on port 0 (tests): name the port the system chose.
		c.BaseURL = "http://" + ln.Addr().String()
	}
	if boot != nil {
		fmt.Fprintf(stdout, `Tocsin created an owner account and the workspace "default" on this empty database.
  Sign in at:          %s/sign-in
  E-mail:              %s
  One-time password:   %s
  (shown only now; you choose your own password at first sign-in)
API keys are made in the web app under "API keys", or for scripts:
  %s key create%s --email %s --workspace default --scope monitors:read --scope monitors:write
`, strings.TrimRight(c.BaseURL, "/"), boot.Email, boot.Password, self, databaseFlags(c, getenv), boot.Email)
	}
	api := httpapi.New(a, log, httpapi.Options{BaseURL: c.BaseURL, TrustedProxies: c.TrustedProxies})
	pages := public.New(a, log.With("component", "status-pages"), public.Options{BaseURL: c.BaseURL,
		TrustedProxies: c.TrustedProxies, PerMinute: c.PageRatePerMinute, Burst: max(c.PageRatePerMinute/4, 1)})
	root := http.NewServeMux()
	root.Handle(httpapi.Prefix+"/", api)
	root.Handle(public.StatusPrefix, pages)
	webApp := console.New(a, log.With("component", "web"), console.Options{BaseURL: c.BaseURL, TrustedProxies: c.TrustedProxies})
	webApp.Mount(root)
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok\n")
	})
	root.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		pctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain")
		if err := db.Ping(pctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "database unavailable\n")
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "tocsin_workspace_state_reads_total",
			Help: "Reads of a workspace's states: the web app's live views' polls and its lists' overviews.",
		}, func() float64 { return float64(a.StateReads()) }))
	metricsSrv := metricsServer(root, metricsLn, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), log)
	if metricsSrv != nil {
		log.Info("serving /metrics", "addr", "http://"+metricsLn.Addr().String()+"/metrics")
	}
	root.Handle("/", api) // the ping URLs, and the API's JSON 404 for unknown paths

	srv := &http.Server{
		// The API's paths go to it directly: root, a ServeMux, would
		// redirect an unclean one (/api/v1//monitors) with an HTML body.
		Handler: httpapi.Observe(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if pages.ServeDomain(w, r) {
				return // a status page's custom domain
			}
			if r.URL.Path == httpapi.Prefix || strings.HasPrefix(r.URL.Path, httpapi.Prefix+"/") {
				api.ServeHTTP(w, r)
				return
			}
			root.ServeHTTP(w, r)
		})),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(webApp.Close) // live streams end on their own only when their browser goes
	log.Info("listening", "addr", "http://"+ln.Addr().String(), "engine", db.Engine())

	// Every runner is owned here: started in one group, stopped by its
	// context, and awaited before the database closes (deferred above).
	// The first to fail stops the rest. The ping writers stop last of the
	// request path, once the HTTP server has shut down, so every ping a
	// request brought is stored; the check scheduler stops first, so checks
	// in flight are recorded as unknown rather than cut off.
	// Before a request is served: this node records that it receives
	// pings, and the outage of the service before it, if any, so no ping
	// comes before that outage on a heartbeat's history.
	heartbeats := scheduler.StartHeartbeats(ctx, a, c.NodeName, log)
	pings := &scheduler.Pings{App: a, Log: log}
	runners := []scheduler.Runner{
		scheduler.New(scheduler.Options{Node: c.NodeName, Region: c.Region, App: a, Checker: prober,
			OpenAuth: a.OpenMonitorAuth, OpenHeaders: a.OpenMonitorHeaders, Log: log.With("component", "scheduler"),
			Metrics: scheduler.NewMetrics(reg), Concurrency: c.CheckConcurrency}),
		heartbeats,
		&scheduler.Maintenance{App: a, Log: log.With("component", "scheduler")},
		&scheduler.Rollups{App: a, Owner: c.NodeName, Log: log},
		&scheduler.SLOAlerts{App: a, Owner: c.NodeName, Log: log},
		&scheduler.Housekeeping{App: a, Log: log},
		deliver.New(deliver.Options{App: a, Node: c.NodeName, Policy: outbound, Mailer: mail,
			Log: log.With("component", "deliver"), Metrics: deliver.NewMetrics(reg)}),
	}
	g, gctx := errgroup.WithContext(ctx)
	pingCtx, stopPings := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPings()
	g.Go(func() error { return pings.Run(pingCtx) })
	for _, r := range runners {
		g.Go(func() error { return r.Run(gctx) })
	}
	g.Go(func() error { return pages.Run(gctx) })
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	if metricsSrv != nil {
		g.Go(func() error {
			if err := metricsSrv.Serve(metricsLn); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
		g.Go(func() error {
			<-gctx.Done()
			return metricsSrv.Close()
		})
	}
	g.Go(func() error {
		defer stopPings()
		<-gctx.Done()
		if ctx.Err() != nil {
			log.Info("shutting down: draining in-flight requests and checks", "timeout", c.ShutdownTimeout)
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.ShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
