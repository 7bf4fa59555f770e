package seed

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// Year is what the metrics benchmark reads: one monitor checked every
// Interval for Days, and Monitors more checked every 60 s for
// MonitorDays, the last RawDays of them raw and rolled up by the rollup
// job, the older days written as the hourly and daily rollups the job
// would have left. Every monitor is paused, so a server on the database
// runs no checks and leaves the figures as written.
type Year struct {
	Days, Monitors, MonitorDays, RawDays int
	Interval                             time.Duration
	Window                               func(f func()) session.Share // runs f, the machine's CPU split over it (session.Window)
	Logf                                 func(string, ...any)
}

// YearResult is what the queries need, and what writing cost.
type YearResult struct {
	Key, YearID, DenseID string // an API key of the owner; the year monitor; one of the others
	// RollYear is the job over the year monitor alone; RollDay over every
	// monitor's raw days, each hour holding every monitor's checks.
	RollYear, RollDay Rollup
	// HourBytes/DayBytes: what each tier of the other monitors' rollups
	// added to the table.
	HourBytes, HourRows, DayBytes, DayRows int64
}

// Rollup is one run of the rollup job until it had caught up: its CPU in
// this process and in PostgreSQL, and the observations it rolled up.
type Rollup struct {
	Observations int64
	Wall, CPU    time.Duration
	PG           time.Duration
}

// PerObservation is the job's CPU, PostgreSQL's included, per observation.
func (r Rollup) PerObservation() time.Duration {
	return (r.CPU + r.PG) / time.Duration(max(r.Observations, 1))
}

// RollupSettle is how long the rollup job leaves an hour before it rolls
// it up.
const RollupSettle = app.RollupSettle

const (
	denseEvery = 60 * time.Second
	hourRollup = "observations/hour"
)

// WriteYear fills the empty database at dbURL through the store and the
// application with the benchmark's clock, as `tocsin serve` would have
// written it over the months before.
func WriteYear(ctx context.Context, dbURL, keyring string, o Year) (res YearResult, err error) {
	clk := &clock{} // real time, or fixed while the job catches up to it
	// Raw rows kept back to the year's start, so the job begins there.
	db, a, err := openApp(ctx, dbURL, keyring, clk.now, app.Config{DefaultMaxMonitors: o.Monitors + 1,
		RetentionDays: o.Days + 1, HourlyRetentionDays: o.Days + 1, DailyRetentionDays: o.Days + 1})
	if err != nil {
		return res, err
	}
	defer db.Close()
	raw, err := OpenRaw(dbURL)
	if err != nil {
		return res, err
	}
	defer raw.Close()
	boot, err := a.Bootstrap(ctx)
	if err != nil || boot == nil {
		return res, fmt.Errorf("bootstrap on a database not empty: %v", err)
	}
	key, err := a.CreateKeyForUser(ctx, app.OperatorKeyRequest{Email: app.BootstrapEmail, Workspace: "default",
		Scopes: []string{string(account.ScopeMetricsRead), string(account.ScopeMonitorsRead)}, Name: "bench"})
	if err != nil {
		return res, err
	}
	res.Key = key.Secret
	probe, err := db.ProbeID(ctx, "bench", "")
	if err != nil {
		return res, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now().UTC().Truncate(time.Second)
	denseFrom, rawFrom := now.Truncate(Day).AddDate(0, 0, -o.MonitorDays), now.Truncate(Day).AddDate(0, 0, -o.RawDays)
	yearFrom := now.Add(-time.Duration(o.Days) * Day)
	create := func(id, name string, created time.Time, every time.Duration) (int64, error) {
		m := monitor.Monitor{ID: id, WorkspaceID: boot.WorkspaceID, Type: monitor.TypeHTTP, Name: name,
			Config:          monitor.Config{URL: "http://127.0.0.1:9/health", TimeoutSeconds: 10},
			IntervalSeconds: int(every / time.Second), Paused: true, State: monitor.StateUp, StateSince: created, CreatedAt: created, UpdatedAt: created}
		if err := db.CreateMonitor(ctx, m, store.Sealed{}, o.Monitors+1); err != nil {
			return 0, err
		}
		seqs, err := db.SubjectSeqsOf(ctx, []string{id})
		return seqs[id], err
	}
	rollUp := func(what string) (r Rollup, err error) {
		o.Logf("rolling up %s as the job does", what)
		p0, err := db.RollupProgress(ctx)
		if err != nil {
			return r, err
		}
		begin := time.Now()
		cpu := o.Window(func() {
			for n := 1; n > 0 && err == nil; {
				n, err = a.Rollup(ctx, "bench")
			}
		})
		if err != nil {
			return r, err
		}
		r.Wall, r.CPU, r.PG = time.Since(begin), cpu.SelfTime, cpu.PostgresTime
		p1, err := db.RollupProgress(ctx)
		if err != nil {
			return r, err
		}
		err = raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM observations WHERE at >= $1 AND at < $2`,
			p0[hourRollup].UnixMicro(), p1[hourRollup].UnixMicro()).Scan(&r.Observations)
		o.Logf("rolled up %d observations in %s: %s per observation", r.Observations, r.Wall.Round(time.Millisecond), r.PerObservation())
		return r, err
	}

	// The year monitor alone, with a 10-minute outage every week, rolled
	// up by the job up to the other monitors' raw days. The other
	// monitors' ids sort before its, so the listing's first 100 are theirs.
	dense := make([]string, o.Monitors)
	seqs := make([]int64, o.Monitors)
	for i := range dense {
		dense[i] = ids.New(ids.Monitor, denseFrom.Add(time.Duration(i)*time.Millisecond))
	}
	res.DenseID, res.YearID = dense[0], ids.New(ids.Monitor, now)
	o.Logf("writing %d days of checks every %s of one monitor", o.Days, o.Interval)
	yearSeq, err := create(res.YearID, "year monitor", yearFrom, o.Interval)
	if err != nil {
		return res, err
	}
	var changes []monitor.Transition
	outage := func(at time.Time) bool {
		since := at.Sub(yearFrom) % (7 * Day)
		down := since >= 3*Day && since < 3*Day+10*time.Minute
		if was := len(changes)%2 == 1; down != was {
			tr := monitor.Transition{From: monitor.StateUp, To: monitor.StateDown, At: at, Cause: "status 503, expected 2xx"}
			if was {
				tr = monitor.Transition{From: monitor.StateDown, To: monitor.StateUp, At: at, Cause: "status 200"}
			}
			changes = append(changes, tr)
		}
		return down
	}
	w := NewWriter(db, probe)
	if err := w.Every(ctx, rng, yearSeq, yearFrom, now, o.Interval, outage); err != nil {
		return res, err
	}
	if err := w.Flush(ctx); err != nil {
		return res, err
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		for _, c := range changes {
			if err := tx.AppendStateChange(ctx, res.YearID, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	clk.set(rawFrom.Add(app.RollupSettle)) // the job then stops at rawFrom
	if res.RollYear, err = rollUp("the year monitor"); err != nil {
		return res, err
	}

	// The other monitors: their last days raw (and the hours around the
	// raw retention's edge, which a 30-day window reads), spread over each
	// minute, rolled up by the job with the year monitor's.
	o.Logf("creating %d monitors and writing their checks since %s", o.Monitors, rawFrom.Format(time.DateTime))
	for i := range dense {
		if seqs[i], err = create(dense[i], fmt.Sprintf("monitor %04d", i), denseFrom, denseEvery); err != nil {
			return res, err
		}
	}
	edge := now.AddDate(0, 0, -30)
	for _, span := range [][2]time.Time{{edge.Add(-time.Hour), edge.Add(2 * time.Hour)}, {rawFrom, now}} {
		for minute := span[0].Truncate(denseEvery); minute.Before(span[1]); minute = minute.Add(denseEvery) {
			for i, seq := range seqs {
				at := minute.Add(time.Duration(i) * denseEvery / time.Duration(len(seqs)))
				if !at.Before(span[0]) && at.Before(span[1]) {
					if err := w.Add(ctx, seq, Observation(rng, at, false)); err != nil {
						return res, err
					}
				}
			}
		}
	}
	if err := w.Flush(ctx); err != nil {
		return res, err
	}
	clk.set(time.Time{})
	if res.RollDay, err = rollUp("every monitor's raw days"); err != nil {
		return res, err
	}
	// What the server's housekeeping would have done with the default
	// retention.
	if err := app.New(db, nil, time.Now, slog.New(slog.DiscardHandler), app.Config{}).Housekeeping(ctx); err != nil {
		return res, err
	}

	// The older days as rollups, their bytes measured tier by tier with
	// the table compacted before and after (a running database reuses
	// the room of deleted rows).
	pool, err := NewPool(rng, denseEvery, 512, 128)
	if err != nil {
		return res, err
	}
	q, vacuum := `SELECT pg_total_relation_size('observation_rollups')`, `VACUUM FULL observation_rollups`
	if strings.HasPrefix(dbURL, "sqlite:") {
		q, vacuum = `SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_schema WHERE tbl_name = 'observation_rollups')`, `VACUUM`
	}
	o.Logf("writing hourly and daily rollups of %d monitors over %.0f days", o.Monitors, rawFrom.Sub(denseFrom).Hours()/24)
	var sizes [3]int64
	var rows [2]int64
	for i, tier := range []int{store.TierHour, store.TierDay, 0} {
		if _, err := raw.ExecContext(ctx, vacuum); err != nil {
			return res, err
		}
		if err := raw.QueryRowContext(ctx, q).Scan(&sizes[i]); err != nil {
			return res, err
		} else if tier == 0 {
			break
		}
		packTo := rawFrom // the hours of a rolled-up day, as the job packs them
		if tier == store.TierDay {
			packTo = time.Time{}
		}
		if rows[i], err = putRollups(ctx, db, pool, tier, seqs, denseFrom, rawFrom, packTo, nil); err != nil {
			return res, err
		}
	}
	res.HourRows, res.DayRows = rows[0], rows[1]
	res.HourBytes, res.DayBytes = sizes[1]-sizes[0], sizes[2]-sizes[1]
	return res, nil
}

// OpenRaw is a plain connection to the database at dbURL, for what a
// report reads beside the server: table sizes, progress, counts.
func OpenRaw(dbURL string) (*sql.DB, error) {
	if path, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(30000)")
		db.SetMaxOpenConns(1)
		return db, err
	}
	db, err := sql.Open("pgx", dbURL)
	db.SetMaxOpenConns(1) // one backend of ours
	return db, err
}
