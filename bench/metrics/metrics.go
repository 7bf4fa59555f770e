// Package metrics measures how fast `tocsin serve` answers metrics over a
// day, a month and a year of seeded history, and what the rollups cost;
// docs/benchmarks.md ("Metrics") tells the method.
package metrics

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
)

// The targets.
const (
	yearTarget    = 50 * time.Millisecond  // a 365-day answer, median
	yearVsDay     = 3.0                    // … at most this times the 24-hour one
	listingTarget = 200 * time.Millisecond // 100 monitors over 30 days, median
	rollupShare   = 0.05                   // the rollups' CPU per observation over a check's
	storageTarget = 5e9                    // bytes: a year of rollups of 10,000 monitors at 60 s
	fleet         = 10000
)

type config struct {
	seed.Year
	reps, warmup     int
	sqliteCPU, pgCPU time.Duration // the check engine's CPU per check
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var c config
	fs.IntVar(&c.Days, "days", 365, "days of checks of the year monitor")
	fs.DurationVar(&c.Interval, "interval", 30*time.Second, "the year monitor's interval")
	fs.IntVar(&c.Monitors, "monitors", 1000, "other monitors of the workspace, checked every 60 s")
	fs.IntVar(&c.MonitorDays, "monitor-days", 90, "days of checks of the other monitors")
	fs.IntVar(&c.RawDays, "raw-days", 1, "of them, the last whole UTC days (and today) written raw and rolled up by the job; the older days are written as rollups")
	fs.IntVar(&c.reps, "reps", 30, "measured answers per query")
	fs.IntVar(&c.warmup, "warmup-reps", 5, "unmeasured answers per query before")
	// The check engine's CPU per check (docs/benchmarks.md, "Check engine").
	fs.DurationVar(&c.sqliteCPU, "check-cpu-sqlite", 566*time.Microsecond, "the check engine's CPU per check on SQLite, which the rollups' CPU per observation is compared with")
	fs.DurationVar(&c.pgCPU, "check-cpu-postgres", 578*time.Microsecond, "the same on PostgreSQL, its own CPU included")
	return func(ctx context.Context, e session.Env) error {
		switch {
		case c.Days < 2 || c.Days > 3650 || c.Interval < time.Second:
			return errors.New("-days must be from 2 to 3650, -interval at least 1s")
		case c.Monitors < 100:
			return errors.New("-monitors must be at least 100: the listing reads 100")
		case c.RawDays < 1 || c.MonitorDays <= max(c.RawDays+1, 31) || c.MonitorDays > 90:
			return errors.New("-raw-days must be at least 1, and -monitor-days more than -raw-days + 1 and 31 (the listing asks for 30 days), at most 90")
		case c.reps < 1 || c.warmup < 0:
			return errors.New("-reps must be at least 1 and -warmup-reps not negative")
		}
		return session.Measure(ctx, "metrics", e, false, "Metrics", func(s *session.Session) session.Bench { return &bench{Session: s, c: c} })
	}
}

type bench struct {
	*session.Session
	c       config
	results []*result
}

type result struct {
	engine  string
	year    seed.YearResult
	queries []*query
	cpu     session.Share
	peak    int64
}

// query is one GET whose answers are timed.
type query struct {
	name, path string
	times      []time.Duration // sorted once measured
	bytes      int             // the last answer's size, and as sent, gzipped
	gzipped    int
}

func (q *query) p(x float64) time.Duration { return session.Percentile(q.times, x) }

func (r *result) query(name string) *query {
	for _, q := range r.queries {
		if q.name == name {
			return q
		}
	}
	return &query{}
}

func (b *bench) Engine(ctx context.Context, e string) error {
	r := &result{engine: e}
	b.results = append(b.results, r)
	dbURL, keys, err := b.FreshDB(ctx, e)
	if err != nil {
		return err
	}
	o := b.c.Year
	o.Logf = func(f string, args ...any) { b.Logf(e+": "+f, args...) }
	o.Window = func(f func()) session.Share { return b.Window(ctx, 0, dbURL, f) }
	if r.year, err = seed.WriteYear(ctx, dbURL, keys, o); err != nil {
		return err
	}
	srv, err := b.Serve(ctx, "tocsin-"+e, dbURL, "--rate-limit", "1000000",
		"--metrics-points-per-minute", "100000000", // the queries are timed back to back, far past a key's budget
		"--observation-retention-days", "30", "--hourly-rollup-retention-days", "90", "--daily-rollup-retention-days", "400")
	if err != nil {
		return err
	}
	raw, err := seed.OpenRaw(dbURL)
	if err != nil {
		return err
	}
	defer raw.Close()
	// The server's own rollup loop has nothing left to do once the hourly
	// rollup has reached the last settled hour and the daily one the day
	// it ends in, twice in a row a second apart.
	steady := 0
	err = session.Poll(ctx, time.Second, 5*time.Minute, func() (bool, error) {
		var hour, day int64
		err := raw.QueryRowContext(ctx, `SELECT COALESCE(MAX(CASE WHEN name = 'observations/hour' THEN done_until END), 0),
			COALESCE(MAX(CASE WHEN name = 'observations/day' THEN done_until END), 0) FROM rollup_progress`).Scan(&hour, &day)
		h, d := time.UnixMicro(hour).UTC(), time.UnixMicro(day).UTC()
		if steady++; h.Before(time.Now().Add(-seed.RollupSettle).Truncate(time.Hour)) || d.Before(h.Truncate(seed.Day)) {
			steady = 0
		}
		return steady == 2, err
	})
	if err != nil {
		return fmt.Errorf("the server's rollups did not catch up: %w", err)
	}
	year, dense := "/api/v1/monitors/"+r.year.YearID+"/metrics?", "/api/v1/monitors/"+r.year.DenseID+"/metrics?"
	r.queries = []*query{
		{name: "year monitor, 24 h", path: year + "window=24h"},
		{name: "year monitor, 30 d", path: year + "window=30d"},
		{name: "year monitor, 365 d", path: year + "window=365d"},
		{name: "year monitor, 90 days by day", path: year + "window=90d&resolution=day"},
		{name: "60 s monitor, 24 h", path: dense + "window=24h"},
		{name: "60 s monitor, 30 d", path: dense + "window=30d"},
		{name: "listing, 100 monitors, 30 d", path: "/api/v1/metrics?window=30d&limit=100&kind=monitor"},
		{name: "heaviest allowed: listing by hour over 90 d", path: "/api/v1/metrics?window=90d&resolution=hour&limit=100&kind=monitor"},
	}
	client := session.Transport(1)
	defer client.CloseIdleConnections()
	for range b.c.warmup {
		for _, q := range r.queries {
			if _, err := get(ctx, client, srv.Base, r.year.Key, q); err != nil {
				return err
			}
		}
	}
	r.cpu = b.Window(ctx, srv.Pid(), dbURL, func() {
		for range b.c.reps {
			for _, q := range r.queries {
				d, gerr := get(ctx, client, srv.Base, r.year.Key, q)
				err = errors.Join(err, gerr)
				q.times = append(q.times, d)
			}
		}
	})
	for _, q := range r.queries {
		slices.Sort(q.times)
		b.Logf("%s: %-45s median %-9s p90 %s", e, q.name, session.Dur(q.p(0.5)), session.Dur(q.p(0.9)))
	}
	r.peak = session.PeakRSS(srv.Pid())
	return err
}

// get times one answer, from sending the request to reading it whole,
// gzipped as a client library asks.
func get(ctx context.Context, rt http.RoundTripper, base, key string, q *query) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	body, h, took, err := session.Fetch(ctx, rt, base+q.path, http.Header{"Authorization": {"Bearer " + key}, "Accept-Encoding": {"gzip"}})
	if err != nil {
		return 0, fmt.Errorf("%w: %.300s", err, body)
	}
	if q.gzipped = len(body); h.Get("Content-Encoding") == "gzip" {
		var plain bytes.Buffer
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			_, err = plain.ReadFrom(zr)
		}
		if err != nil {
			return 0, err
		}
		body = plain.Bytes()
	}
	q.bytes = len(body)
	return took, json.Unmarshal(body, new(any))
}

func (b *bench) Report(w *session.Report) {
	c := b.c
	w.Printf("Data per engine: one monitor checked every %s for %d days; %d monitors checked every 60 s for %d days, the last %d whole UTC day(s) "+
		"and today raw and rolled up by the job, the days before as hourly and daily rollups. `tocsin serve` with the default retention "+
		"(raw 30 days, hourly rollups 90, daily 400); every monitor paused. %d measured answers per query after %d warm-up, one at a time, the queries taking turns.\n\n## Targets\n",
		c.Interval, c.Days, c.Monitors, c.MonitorDays, c.RawDays, c.reps, c.warmup)
	w.Table("engine", "target", "measured", "")
	for _, r := range b.results {
		y, d, l := r.query("year monitor, 365 d").p(0.5), r.query("year monitor, 24 h").p(0.5), r.query("listing, 100 monitors, 30 d").p(0.5)
		per, check := r.year.RollDay.PerObservation(), c.sqliteCPU
		if r.engine == "postgres" {
			check = c.pgCPU
		}
		hour := float64(r.year.HourBytes) / float64(max(r.year.HourRows, 1))
		day := float64(r.year.DayBytes) / float64(max(r.year.DayRows, 1))
		yearOfRollups := fleet * (90*24*hour + 365*day) // hourly rows kept 90 days, daily 365
		ratio := float64(y) / float64(max(d, 1))
		w.Target(r.engine, "365-day answer under 50 ms (median)", session.Dur(y), y < yearTarget)
		w.Target(r.engine, "365-day answer at most 3× the 24-hour one (medians)", fmt.Sprintf("%.2f×", ratio), ratio <= yearVsDay)
		w.Target(r.engine, "listing of 100 monitors over 30 days under 200 ms (median)", session.Dur(l), l < listingTarget)
		w.Target(r.engine, "rollups under 5% of the check engine's CPU", fmt.Sprintf("%s per observation, %.1f%% of %s per check",
			session.Dur(per), 100*float64(per)/float64(check), session.Dur(check)), float64(per) < rollupShare*float64(check))
		w.Target(r.engine, "a year of rollups of 10,000 monitors at most 5 GB", fmt.Sprintf("%.2f GB (hour row %.0f B, day row %.0f B)",
			yearOfRollups/1e9, hour, day), yearOfRollups <= storageTarget)
	}
	w.Printf("\n## Answers\n\nMedian and p90 from sending the request to reading the whole answer.\n")
	w.Table("engine", "query", "median:", "p90:", "answer:", "gzipped:")
	for _, r := range b.results {
		for _, q := range r.queries {
			w.Printf("| %s | %s (`%s`) | %s | %s | %d B | %d B |\n", r.engine, q.name, q.path[strings.IndexByte(q.path, '?')+1:],
				session.Dur(q.p(0.5)), session.Dur(q.p(0.9)), q.bytes, q.gzipped)
		}
	}
	w.Printf("\n## The rollup job, and the machine\n")
	w.Table("engine", "run", "observations:", "wall:", "CPU:", "in PostgreSQL:", "per observation:", "server peak RSS:", "other processes:")
	for _, r := range b.results {
		for i, run := range []seed.Rollup{r.year.RollYear, r.year.RollDay} {
			w.Printf("| %s | %s | %d | %s | %s | %s | %s | %s | %.0f%% |\n", r.engine, []string{"one monitor's year", "every monitor's raw days"}[i],
				run.Observations, session.Dur(run.Wall), session.Dur(run.CPU), session.Dur(run.PG), session.Dur(run.PerObservation()), session.MiB(r.peak, 0), r.cpu.Other)
		}
	}
	w.Printf("\nThe rollups' target is read on the second run, where every hour holds every monitor's checks, as in service.\n")
}
