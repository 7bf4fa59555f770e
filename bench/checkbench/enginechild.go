package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tocsin/tocsin/internal/engine"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/probe"
	"github.com/tocsin/tocsin/internal/store"
)

// serveEngine is the -engine-serve mode: the check engine as `tocsin serve`
// composes it (the real prober, Prometheus metrics, slog at info), on the
// database the parent prepared, with nothing else in the process.
func serveEngine(ctx context.Context, o childOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	db, err := store.Open(ctx, o.dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	reg := prometheus.NewRegistry()
	prober := probe.New(probe.Options{ProbeID: "checkbench", Region: "local"})
	st := &benchStore{DB: db, pace: o.writerPace, claimDelay: o.claimDelay}
	e := engine.New(engine.Options{Node: "checkbench", Region: "local", Store: st, Checker: prober,
		OpenAuth: func(string, []byte) (*monitor.Auth, error) {
			return nil, errors.New("the benchmark's monitors have no credentials")
		},
		Log: log.With("component", "engine"), Metrics: engine.NewMetrics(reg), Concurrency: o.concurrency})

	runCtx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	engineDone := make(chan struct{})
	go func() {
		defer close(engineDone)
		e.Run(runCtx)
	}()

	r := childReport{Kind: "engine"}
	var (
		mu          sync.Mutex
		at0         counters
		watching    bool
		maxQ, maxIF float64
		prof        = profiler{path: o.profile}
	)
	watchDone := make(chan struct{})
	go func() { // the gauges, once a second, while the window is open
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-watchDone:
				return
			case <-t.C:
			}
			c := gather(reg)
			mu.Lock()
			if watching {
				maxQ, maxIF = max(maxQ, c.queued), max(maxIF, c.inFlight)
			}
			mu.Unlock()
		}
	}()
	start := func() {
		if err := prof.start(); err != nil {
			log.Error("cpu profile", "err", err)
		}
		c := gather(reg)
		mu.Lock()
		at0, watching = c, true
		mu.Unlock()
		r.Start = sampleUsage()
		st.window(true)
	}
	end := func() {
		c := gather(reg)
		r.endWindow()
		r.Claims = lagsOf(st.window(false))
		prof.stop()
		mu.Lock()
		defer mu.Unlock()
		watching = false
		r.Checks = map[string]float64{}
		for k, v := range c.checks {
			if d := v - at0.checks[k]; d > 0 {
				r.Checks[k] = d
			}
		}
		r.Missed = c.missed - at0.missed
		r.Written = c.written - at0.written
		r.WriteErrors = c.writeErrors - at0.writeErrors
		r.Batches = c.batches - at0.batches
		r.BatchSeconds = c.batchSeconds - at0.batchSeconds
		r.MaxQueued, r.MaxInFlight = maxQ, maxIF
	}
	err = drive(ctx, stdin, stdout, start, end)
	close(watchDone)
	stopEngine()
	<-engineDone
	if err != nil {
		return err
	}
	return r.print(stdout)
}

// counters are the engine's metrics at one moment.
type counters struct {
	checks                       map[string]float64
	missed, written, writeErrors float64
	batches, batchSeconds        float64
	queued, inFlight             float64
}

func gather(reg *prometheus.Registry) counters {
	c := counters{checks: map[string]float64{}}
	mfs, err := reg.Gather()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gathering metrics:", err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch mf.GetName() {
			case "tocsin_checks_total":
				result := ""
				for _, l := range m.GetLabel() {
					if l.GetName() == "result" {
						result = l.GetValue()
					}
				}
				c.checks[result] += m.GetCounter().GetValue()
			case "tocsin_checks_missed_total":
				c.missed = m.GetCounter().GetValue()
			case "tocsin_observations_written_total":
				c.written = m.GetCounter().GetValue()
			case "tocsin_observation_write_errors_total":
				c.writeErrors = m.GetCounter().GetValue()
			case "tocsin_observation_batch_seconds":
				c.batches = float64(m.GetHistogram().GetSampleCount())
				c.batchSeconds = m.GetHistogram().GetSampleSum()
			case "tocsin_observations_queued":
				c.queued = m.GetGauge().GetValue()
			case "tocsin_checks_in_flight":
				c.inFlight = m.GetGauge().GetValue()
			}
		}
	}
	return c
}
