package scheduler

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the check scheduler's figures for the operator's /metrics.
type Metrics struct {
	lag          prometheus.Histogram
	checks       *prometheus.CounterVec
	missed       prometheus.Counter
	inflight     prometheus.Gauge
	backlog      prometheus.Gauge
	written      prometheus.Counter
	writeErrors  prometheus.Counter
	refused      prometheus.Counter
	dropped      prometheus.Counter
	batchSeconds prometheus.Histogram
}

// NewMetrics makes the check scheduler's metrics and registers them with reg (nil:
// not registered, for tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tocsin_check_lag_seconds",
			Help:    "Delay between a check's due time and its start.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tocsin_checks_total",
			Help: "Checks run, by result.",
		}, []string{"result"}),
		missed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tocsin_checks_missed_total",
			Help: "Checks that could not start before their deadline (recorded as unknown).",
		}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tocsin_checks_in_flight",
			Help: "Checks running now.",
		}),
		backlog: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tocsin_observations_queued",
			Help: "Observations waiting for the writer.",
		}),
		written: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tocsin_observations_written_total",
			Help: "Observations stored.",
		}),
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tocsin_observation_write_errors_total",
			Help: "Failed batch writes: retried, or split when the database refused a row.",
		}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tocsin_observations_refused_total",
			Help: "Observations the database refused for what they carried, stored as unknown instead.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tocsin_observations_dropped_total",
			Help: "Observations dropped because the database refused them even as unknown.",
		}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tocsin_observation_batch_seconds",
			Help:    "Time to store one batch of observations.",
			Buckets: prometheus.DefBuckets,
		}),
	}
	if reg != nil {
		reg.MustRegister(m.lag, m.checks, m.missed, m.inflight, m.backlog, m.written, m.writeErrors, m.refused, m.dropped, m.batchSeconds)
	}
	return m
}
