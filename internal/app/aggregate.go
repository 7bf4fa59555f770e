package app

import (
	"context"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// Aggregates of checks and pings, built the same way by a query
// (metrics.go) and by the rollup job (rollup.go): point by point from raw
// rows, or merged from rollup rows.

// checkAgg is the checks of one monitor over a span. The zero value is
// empty and ready to use.
type checkAgg struct {
	checks  metrics.Checks
	latency metrics.Latency // of known checks
}

func (g *checkAgg) point(p store.ObservationPoint) {
	switch p.Result {
	case monitor.ResultUp:
		g.checks.Up++
	case monitor.ResultDegraded:
		g.checks.Degraded++
	case monitor.ResultDown:
		g.checks.Down++
	default:
		g.checks.Unknown++
	}
	if p.Result.Known() {
		g.latency.Add(p.Latency)
	}
}

func (g *checkAgg) rollup(r store.ObservationRollup) error {
	g.checks = g.checks.Add(metrics.Checks{Up: r.Up, Degraded: r.Degraded, Down: r.Down, Unknown: r.Unknown})
	return g.latency.MergeEncoded(r.Latency)
}

func (g *checkAgg) row(seq int64, bucket time.Time) store.ObservationRollup {
	return store.ObservationRollup{Seq: seq, Bucket: bucket, Up: g.checks.Up, Degraded: g.checks.Degraded,
		Down: g.checks.Down, Unknown: g.checks.Unknown, Latency: g.latency.Encode()}
}

// readChecks feeds the checks of the monitors seqs in [start, end), read
// from src, into the aggregate agg returns for each monitor and the time
// a check or a rollup row starts at.
func (a *App) readChecks(ctx context.Context, seqs []int64, start, end time.Time, src source, agg func(seq int64, at time.Time) *checkAgg) error {
	if src == fromRaw {
		return a.store.EachObservation(ctx, seqs, start, end, func(p store.ObservationPoint) error {
			agg(p.Seq, p.At).point(p)
			return nil
		})
	}
	return a.store.EachObservationRollup(ctx, tierOf(src), seqs, start, end, func(r store.ObservationRollup) error {
		return agg(r.Seq, r.Bucket).rollup(r)
	})
}

// pingAgg is the pings of one heartbeat over a span. The zero value is
// empty and ready to use.
type pingAgg struct {
	counts PingCounts
	runs   metrics.Latency // durations of runs that sent /start
}

func (g *pingAgg) point(p store.PingPoint) {
	switch p.Signal {
	case heartbeat.SignalStart:
		g.counts.Start++
	case heartbeat.SignalFail:
		g.counts.Fail++
	default:
		g.counts.Success++
	}
	if p.RunDuration >= 0 {
		g.runs.Add(p.RunDuration)
	}
}

func (g *pingAgg) rollup(r store.PingRollup) error {
	g.counts.Success += r.Success
	g.counts.Start += r.Start
	g.counts.Fail += r.Fail
	return g.runs.MergeEncoded(r.Runs)
}

func (g *pingAgg) row(seq int64, bucket time.Time) store.PingRollup {
	return store.PingRollup{Seq: seq, Bucket: bucket, Success: g.counts.Success, Start: g.counts.Start,
		Fail: g.counts.Fail, Runs: g.runs.Encode()}
}

// readPings feeds the pings of the heartbeats seqs in [start, end), read
// from src, into the aggregate agg returns for each heartbeat and the
// time a ping or a rollup row starts at.
func (a *App) readPings(ctx context.Context, seqs []int64, start, end time.Time, src source, agg func(seq int64, at time.Time) *pingAgg) error {
	if src == fromRaw {
		return a.store.EachPing(ctx, seqs, start, end, func(p store.PingPoint) error {
			agg(p.Seq, p.At).point(p)
			return nil
		})
	}
	return a.store.EachPingRollup(ctx, tierOf(src), seqs, start, end, func(r store.PingRollup) error {
		return agg(r.Seq, r.Bucket).rollup(r)
	})
}
