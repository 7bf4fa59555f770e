package seed

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// Checks: monitors' observations as the engine writes them, and rollup
// rows as the rollup job writes them, for a database that holds months of
// checks without a benchmark writing every one.

// Observation is one check at at of a healthy HTTP endpoint on the same
// network: latencies spread log-normally around 60 ms, a new connection
// each, and a rare failure; with down, the endpoint answers 503.
func Observation(rng *rand.Rand, at time.Time, down bool) monitor.Observation {
	lat := time.Duration(float64(60*time.Millisecond) * math.Exp(0.35*rng.NormFloat64()))
	o := monitor.Observation{StartedAt: at, Due: at.Add(-time.Duration(rng.IntN(2000)) * time.Microsecond),
		Result: monitor.ResultUp, Latency: lat, StatusCode: 200,
		Phases: monitor.Phases{Connect: lat / 20, FirstByte: lat * 9 / 10}}
	switch r := rng.IntN(10000); {
	case down:
		o.Result, o.StatusCode, o.Reason, o.Phases = monitor.ResultDown, 503, "status 503, expected 2xx", monitor.Phases{Connect: lat / 20}
	case r < 5:
		o.Result, o.StatusCode, o.Reason, o.Latency, o.Phases = monitor.ResultDown, 0, "connection refused", lat/20, monitor.Phases{}
	case r < 6:
		o.Result, o.StatusCode, o.Reason, o.Latency, o.Phases = monitor.ResultUnknown, 0, "probe overloaded", 0, monitor.Phases{}
	}
	return o
}

// Writer writes observations in transactions of 5,000, in statements of
// 50 rows on SQLite (a statement's cost there grows with the square of
// its parameters) and the store's 500 on PostgreSQL. Flush writes the
// rest.
type Writer struct {
	db        *store.DB
	probe     int
	per       int
	parts     []*store.Observations
	n, inPart int
	Written   int64
}

const rowsPerTx = 5000

// NewWriter writes observations as the probe the store numbered probe.
func NewWriter(db *store.DB, probe int) *Writer {
	per := 500
	if db.Engine() == store.EngineSQLite {
		per = 50
	}
	return &Writer{db: db, probe: probe, per: per}
}

// Add writes o of the monitor seq, in a later transaction.
func (w *Writer) Add(ctx context.Context, seq int64, o monitor.Observation) error {
	if len(w.parts) == 0 || w.inPart == w.per {
		w.parts = append(w.parts, &store.Observations{})
		w.inPart = 0
	}
	w.parts[len(w.parts)-1].Add(seq, o, w.probe)
	w.inPart++
	if w.n++; w.n == rowsPerTx {
		return w.Flush(ctx)
	}
	return nil
}

// Every writes the monitor seq's checks every interval from from until
// to, the endpoint down when down (nil: never) says so.
func (w *Writer) Every(ctx context.Context, rng *rand.Rand, seq int64, from, to time.Time, every time.Duration, down func(time.Time) bool) error {
	for at := from; at.Before(to); at = at.Add(every) {
		if err := w.Add(ctx, seq, Observation(rng, at, down != nil && down(at))); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes what Add has gathered.
func (w *Writer) Flush(ctx context.Context) error {
	if w.n == 0 {
		return nil
	}
	err := w.db.InTx(ctx, func(tx *store.Tx) error {
		for _, p := range w.parts {
			if err := tx.InsertObservations(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	w.Written += int64(w.n)
	w.parts, w.n, w.inPart = nil, 0, 0
	return err
}

// Pool is a set of hourly and daily rollup rows of a monitor checked every
// interval as the rollup job writes them, reused across monitors and
// buckets: their bytes and counts are what the readers pay for, and a
// sketch built per row would take longer than writing it.
type Pool struct {
	Hours, Days []store.ObservationRollup
	next        int
}

// NewPool builds hours rows of an hour's checks every interval, and days
// rows of 24 of those hours each.
func NewPool(rng *rand.Rand, interval time.Duration, hours, days int) (*Pool, error) {
	p := &Pool{}
	perHour := max(int(time.Hour/interval), 1)
	hourly := make([]*metrics.Latency, hours)
	for i := range hourly {
		l := metrics.NewLatency()
		var r store.ObservationRollup
		for range perHour {
			o := Observation(rng, time.Time{}, false)
			switch o.Result {
			case monitor.ResultUp:
				r.Up++
			case monitor.ResultDown:
				r.Down++
			default:
				r.Unknown++
			}
			if o.Result.Known() {
				l.Add(o.Latency)
			}
		}
		hourly[i] = l
		r.Latency = l.Encode()
		p.Hours = append(p.Hours, r)
	}
	for range days {
		l := metrics.NewLatency()
		var r store.ObservationRollup
		for range 24 {
			k := rng.IntN(len(hourly))
			if err := l.Merge(hourly[k]); err != nil {
				return nil, err
			}
			h := p.Hours[k]
			r.Up, r.Down, r.Unknown = r.Up+h.Up, r.Down+h.Down, r.Unknown+h.Unknown
		}
		r.Latency = l.Encode()
		p.Days = append(p.Days, r)
	}
	return p, nil
}

// putRollups writes the pool's rows of tier for each monitor seqs[i] and
// bucket in [from, to) that keep allows (nil: all), a day's at a time, on
// SQLite 50 a statement (see Writer); and once a day's hours are written,
// packs those of the days before packTo, as the job does once it rolled a
// day up. It returns the rows written.
func putRollups(ctx context.Context, db *store.DB, p *Pool, tier int, seqs []int64, from, to, packTo time.Time, keep func(i int, day time.Time) bool) (n int64, err error) {
	step, pool := time.Hour, p.Hours
	if tier == store.TierDay {
		step, pool = Day, p.Days
	}
	for d := from; d.Before(to); d = d.Add(Day) {
		var rows []store.ObservationRollup
		for i, seq := range seqs {
			if keep != nil && !keep(i, d) {
				continue
			}
			for b := d; b.Before(d.Add(Day)) && b.Before(to); b = b.Add(step) {
				r := pool[p.next%len(pool)]
				p.next++
				r.Seq, r.Bucket = seq, b
				rows = append(rows, r)
			}
		}
		per := len(rows)
		if db.Engine() == store.EngineSQLite {
			per = 50
		}
		for part := range slices.Chunk(rows, max(per, 1)) {
			if err := db.PutObservationRollups(ctx, tier, part); err != nil {
				return n, err
			}
		}
		n += int64(len(rows))
		if d.Before(packTo) {
			if err := db.PackHours(ctx, false, seqs, d); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}
