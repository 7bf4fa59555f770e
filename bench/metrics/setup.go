package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/tocsin/tocsin/bench/internal/pgfresh"
	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
)

// What the database holds when the server starts, and how it got there:
// written through the store with the benchmark's clock, as `tocsin serve`
// would have written it over the months before.

const (
	day        = 24 * time.Hour
	denseEvery = 60 * time.Second // the other monitors' interval
	owner      = "metricsbench"   // the rollup job's node name here
	probeName  = "metricsbench"
)

// fixture is what the queries need of a seeded database.
type fixture struct {
	key       string // an API key of the workspace's owner
	yearID    string // the monitor with -days of checks at -interval
	denseID   string // one of the other monitors
	yearCount int64  // the year monitor's observations written
}

// freshDatabase makes an empty database for one engine and returns its URL
// and how to remove it.
func (b *bench) freshDatabase(ctx context.Context, engine string) (dbURL string, drop func(), err error) {
	if engine == "sqlite" {
		return "sqlite:" + filepath.Join(b.Dir, "sqlite", "tocsin.db"), func() {}, nil // removed with the work directory
	}
	return pgfresh.Create(ctx, b.c.pgURL, pgfresh.Name("tocsin_metricsbench", 0), b.c.keep, b.Logf)
}

// clock is the benchmark's clock for the app it runs: real time, or a
// fixed moment while the rollup job catches up to it.
type clock struct{ fixed time.Time }

func (c *clock) now() time.Time {
	if c.fixed.IsZero() {
		return time.Now()
	}
	return c.fixed
}

// seeder writes one engine's data.
type seeder struct {
	b      *bench
	engine string
	db     *store.DB
	raw    *rawDB
	app    *app.App
	clock  *clock
	wsID   string
	probe  int
	now    time.Time // when seeding began: the histories end here
	rng    *rand.Rand
	res    *engineResult
	pool   *seed.Pool
	denses []monitorRef
}

type monitorRef struct {
	id  string
	seq int64
}

// prepare fills the database at dbURL and returns what the queries need.
// It measures the rollup job on the way (res.rollups) and the bytes of
// each table (res.storage).
func (b *bench) prepare(ctx context.Context, engine, dbURL, keys string, res *engineResult) (fixture, error) {
	kr, err := secrets.ParseKeyring(keys)
	if err != nil {
		return fixture{}, err
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return fixture{}, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return fixture{}, err
	}
	raw, err := openRaw(engine, dbURL)
	if err != nil {
		return fixture{}, err
	}
	defer raw.Close()
	s := &seeder{b: b, engine: engine, db: db, raw: raw, clock: &clock{}, now: time.Now().UTC().Truncate(time.Second),
		rng: rand.New(rand.NewPCG(1, 2)), res: res}
	// The app as the rollup job runs it: raw rows kept back to the year's
	// start, so the job begins there.
	s.app = app.New(db, kr, s.clock.now, slog.New(slog.DiscardHandler), app.Config{DefaultMaxMonitors: b.c.monitors + 1,
		RetentionDays: b.c.days + 1, HourlyRetentionDays: b.c.days + 1, DailyRetentionDays: b.c.days + 1})
	return s.run(ctx)
}

func (s *seeder) run(ctx context.Context) (fixture, error) {
	c := s.b.c
	var fx fixture
	boot, err := s.app.Bootstrap(ctx)
	if err != nil {
		return fx, err
	}
	if boot == nil {
		return fx, fmt.Errorf("the database was not empty")
	}
	s.wsID = boot.WorkspaceID
	key, err := s.app.CreateKeyForUser(ctx, app.OperatorKeyRequest{Email: app.BootstrapEmail, Workspace: "default",
		Scopes: []string{string(account.ScopeMetricsRead), string(account.ScopeMonitorsRead)}, Name: "metricsbench"})
	if err != nil {
		return fx, err
	}
	fx.key = key.Secret
	if s.probe, err = s.db.ProbeID(ctx, probeName, ""); err != nil {
		return fx, err
	}
	// The other monitors' ids sort before the year monitor's, so the
	// listing's first 100 are theirs.
	denseFrom := s.now.Truncate(day).AddDate(0, 0, -c.monitorDays)
	rawFrom := s.now.Truncate(day).AddDate(0, 0, -c.rawDays)
	yearFrom := s.now.Add(-time.Duration(c.days) * day)
	for i := range c.monitors {
		s.denses = append(s.denses, monitorRef{id: ids.New(ids.Monitor, denseFrom.Add(time.Duration(i)*time.Millisecond))})
	}
	fx.denseID = s.denses[0].id
	year := monitorRef{id: ids.New(ids.Monitor, s.now)}
	fx.yearID = year.id

	// The year monitor alone, rolled up by the job up to the other
	// monitors' raw days: a year of one subject's hours.
	s.b.Logf("%s: writing %d days of checks every %s of one monitor", s.engine, c.days, c.interval)
	begin := time.Now()
	if year.seq, err = s.createMonitor(ctx, year.id, "year monitor", yearFrom, c.interval); err != nil {
		return fx, err
	}
	if fx.yearCount, err = s.writeYear(ctx, year, yearFrom); err != nil {
		return fx, err
	}
	s.res.seedRaw += time.Since(begin)
	s.clock.fixed = rawFrom.Add(app.RollupSettle) // the job then stops at rawFrom
	if s.res.rollYear, err = s.rollUp(ctx, "year"); err != nil {
		return fx, err
	}

	// The other monitors: their last days raw, rolled up by the job with
	// the year monitor's (every hour has every monitor's checks).
	s.b.Logf("%s: creating %d monitors and writing their checks since %s", s.engine, c.monitors, rawFrom.Format(time.DateTime))
	begin = time.Now()
	for i := range s.denses {
		if s.denses[i].seq, err = s.createMonitor(ctx, s.denses[i].id, fmt.Sprintf("monitor %04d", i), denseFrom, denseEvery); err != nil {
			return fx, err
		}
	}
	// Raw rows around the raw retention's edge too, which a 30-day window
	// reads from its first, partial hour: older raw rows are gone.
	edge := s.now.AddDate(0, 0, -30)
	if err := s.writeDense(ctx, edge.Add(-time.Hour), edge.Add(2*time.Hour)); err != nil {
		return fx, err
	}
	if err := s.writeDense(ctx, rawFrom, s.now); err != nil {
		return fx, err
	}
	s.res.seedRaw += time.Since(begin)
	if s.res.rawBytes, s.res.rawRows, err = s.raw.tableBytes(ctx, "observations"); err != nil {
		return fx, err
	}
	s.clock.fixed = time.Time{}
	if s.res.rollDay, err = s.rollUp(ctx, "days"); err != nil {
		return fx, err
	}

	// What the server's housekeeping would have done: raw rows beyond the
	// default retention deleted once rolled up, hourly rollups beyond 90
	// days too.
	s.b.Logf("%s: housekeeping with the default retention", s.engine)
	begin = time.Now()
	keeper := app.New(s.db, nil, time.Now, slog.New(slog.DiscardHandler), app.Config{})
	if err := keeper.Housekeeping(ctx); err != nil {
		return fx, err
	}
	s.res.housekeeping = time.Since(begin)

	// The older days of the other monitors as rollups, their bytes
	// measured tier by tier.
	begin = time.Now()
	if err := s.writeRollups(ctx, denseFrom, rawFrom); err != nil {
		return fx, err
	}
	s.res.seedRollups = time.Since(begin)
	s.res.rollupDays = rawFrom.Sub(denseFrom).Hours() / 24
	return fx, nil
}

// createMonitor stores a paused HTTP monitor, UP since created: paused so
// the server runs no checks while it is measured, which leaves its figures
// as they are (they come from the rows written here).
func (s *seeder) createMonitor(ctx context.Context, id, name string, created time.Time, every time.Duration) (int64, error) {
	m := monitor.Monitor{ID: id, WorkspaceID: s.wsID, Type: monitor.TypeHTTP, Name: name,
		Config:          monitor.Config{URL: "http://127.0.0.1:9/health", TimeoutSeconds: 10},
		IntervalSeconds: int(every / time.Second), Paused: true, State: monitor.StateUp, StateSince: created,
		CreatedAt: created, UpdatedAt: created}
	if err := s.db.CreateMonitor(ctx, m, store.Sealed{}, s.b.c.monitors+1); err != nil {
		return 0, err
	}
	seqs, err := s.db.SubjectSeqsOf(ctx, []string{id})
	if err != nil {
		return 0, err
	}
	return seqs[id], nil
}

// writeYear writes the year monitor's checks from from to now, with a
// 10-minute outage every week in its checks and its state history, and
// returns how many it wrote.
func (s *seeder) writeYear(ctx context.Context, m monitorRef, from time.Time) (int64, error) {
	var (
		batch   = seed.NewWriter(s.db, s.probe)
		n       int64
		changes []monitor.Transition
	)
	const outage = 10 * time.Minute
	for at := from; at.Before(s.now); at = at.Add(s.b.c.interval) {
		since := at.Sub(from) % (7 * day)
		down := since >= 3*day && since < 3*day+outage
		if since >= 3*day && since < 3*day+s.b.c.interval {
			changes = append(changes, monitor.Transition{From: monitor.StateUp, To: monitor.StateDown, At: at, Cause: "status 503, expected 2xx"})
		}
		if since >= 3*day+outage && since < 3*day+outage+s.b.c.interval {
			changes = append(changes, monitor.Transition{From: monitor.StateDown, To: monitor.StateUp, At: at, Cause: "status 200"})
		}
		if err := batch.Add(ctx, m.seq, seed.Observation(s.rng, at, down)); err != nil {
			return n, err
		}
		n++
	}
	if err := batch.Flush(ctx); err != nil {
		return n, err
	}
	return n, s.db.InTx(ctx, func(tx *store.Tx) error {
		for _, c := range changes {
			if err := tx.AppendStateChange(ctx, m.id, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeDense writes every other monitor's checks in [from, to), one minute
// of all of them after another, as the engine writes them.
func (s *seeder) writeDense(ctx context.Context, from, to time.Time) error {
	batch := seed.NewWriter(s.db, s.probe)
	for minute := from.Truncate(denseEvery); minute.Before(to); minute = minute.Add(denseEvery) {
		for i, m := range s.denses {
			at := minute.Add(time.Duration(i) * denseEvery / time.Duration(len(s.denses))) // spread over the minute
			if at.Before(from) || !at.Before(to) {
				continue
			}
			if err := batch.Add(ctx, m.seq, seed.Observation(s.rng, at, false)); err != nil {
				return err
			}
		}
	}
	return batch.Flush(ctx)
}

// writeRollups writes the other monitors' hourly, then daily, rollups of
// the days in [from, to), and measures what each tier added to the table.
func (s *seeder) writeRollups(ctx context.Context, from, to time.Time) error {
	var err error
	if s.pool, err = seed.NewPool(s.rng, denseEvery, 512, 128); err != nil {
		return err
	}
	if err := s.raw.compact(ctx, "observation_rollups"); err != nil {
		return err
	}
	before, _, err := s.raw.tableBytes(ctx, "observation_rollups")
	if err != nil {
		return err
	}
	s.b.Logf("%s: writing hourly rollups of %d monitors from %s to %s", s.engine, len(s.denses), from.Format(time.DateOnly), to.Format(time.DateOnly))
	for d := from; d.Before(to); d = d.Add(day) {
		rows := make([]store.ObservationRollup, 0, 24*len(s.denses))
		for _, m := range s.denses {
			for h := range 24 {
				rows = append(rows, s.pool.Row(store.TierHour, m.seq, d.Add(time.Duration(h)*time.Hour)))
			}
		}
		if err := seed.PutRollups(ctx, s.db, store.TierHour, rows); err != nil {
			return err
		}
		s.res.hourRows += int64(len(rows))
	}
	if s.res.hourSketch, err = s.raw.sketchBytes(ctx, store.TierHour); err != nil {
		return err
	}
	// As the rollup job does once a day is rolled up: each monitor's 24
	// hourly rows of the day packed into one.
	seqs := make([]int64, len(s.denses))
	for i, m := range s.denses {
		seqs[i] = m.seq
	}
	for d := from; d.Before(to); d = d.Add(day) {
		if err := s.db.PackHours(ctx, false, seqs, d); err != nil {
			return err
		}
	}
	// The hourly rows' room is reused by the next days' rows in service.
	if err := s.raw.compact(ctx, "observation_rollups"); err != nil {
		return err
	}
	mid, _, err := s.raw.tableBytes(ctx, "observation_rollups")
	if err != nil {
		return err
	}
	s.b.Logf("%s: writing daily rollups", s.engine)
	for d := from; d.Before(to); d = d.Add(day) {
		rows := make([]store.ObservationRollup, 0, len(s.denses))
		for _, m := range s.denses {
			rows = append(rows, s.pool.Row(store.TierDay, m.seq, d))
		}
		if err := seed.PutRollups(ctx, s.db, store.TierDay, rows); err != nil {
			return err
		}
		s.res.dayRows += int64(len(rows))
	}
	after, _, err := s.raw.tableBytes(ctx, "observation_rollups")
	if err != nil {
		return err
	}
	s.res.hourBytes, s.res.dayBytes = mid-before, after-mid
	s.res.daySketch, err = s.raw.sketchBytes(ctx, store.TierDay)
	return err
}
