package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"time"

	"github.com/tocsin/tocsin/bench/internal/pgfresh"
	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
)

// What the database holds when the server starts, and how it got there:
// written through the store and the app, as `tocsin serve` would have
// written it over the months before.

const (
	day         = seed.Day
	historyDays = 100 // the monitors' age: more than the monitor page's 90 days
	ownerEmail  = "owner@webbench.test"
	// ownerPassword is the password the owner sets in place of the
	// one-time one; viewers are made with viewerPassword.
	ownerPassword  = "the owner's own password"
	viewerPassword = "a viewer's password"
	perPerson      = 10 // live streams one person may open on a node
	liveInterval   = monitor.MinIntervalSeconds
	probeName      = "webbench"
	rollupOwner    = "webbench"
)

// fixture is what the measurements need of a seeded database.
type fixture struct {
	workspace   string
	ownerOTP    string   // the owner's one-time password
	viewers     []string // e-mails
	firstID     string   // the monitor whose page is measured
	firstName   string
	liveID      string // the monitor the flipped target turns DOWN and UP
	changes     int    // state changes written
	checks      int64  // raw checks written
	hourRows    int64  // hourly rollup rows written from the pool
	dayRows     int64
	rollBuckets int // buckets the rollup job wrote
}

// freshDatabase makes an empty database and returns its URL and how to
// remove it.
func (b *bench) freshDatabase(ctx context.Context, engine string) (dbURL string, drop func(), err error) {
	if engine == "sqlite" {
		return "sqlite:" + filepath.Join(b.Dir, "sqlite", "tocsin.db"), func() {}, nil // removed with the work directory
	}
	return pgfresh.Create(ctx, b.c.pgURL, pgfresh.Name("tocsin_webbench", 0), b.c.keep, b.Logf)
}

// seedingURL is the database's URL for seeding it: on PostgreSQL, its
// commits do not wait for the disk (the server's do; the data is on disk
// before it starts, at the latest at its first checkpoint, and a crash
// would fail the run anyway). Hundreds of thousands of autocommitted rollup
// statements would otherwise wait for as many flushes.
func seedingURL(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return dbURL
	}
	q := u.Query()
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}

// seed fills the database at dbURL: the people, -monitors monitors aimed
// at steady (200) with 100 days of state changes, their checks and
// rollups, and the live monitor aimed at flip.
func (b *bench) seed(ctx context.Context, dbURL, keys, steady, flip string) (fixture, error) {
	var fx fixture
	kr, err := secrets.ParseKeyring(keys)
	if err != nil {
		return fx, err
	}
	db, err := store.Open(ctx, seedingURL(dbURL))
	if err != nil {
		return fx, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return fx, err
	}
	a := app.New(db, kr, time.Now, slog.New(slog.DiscardHandler), app.Config{})
	// The owner as `tocsin user create` makes one: a one-time password,
	// to be changed at the first sign-in.
	owner, err := a.CreateUser(ctx, app.UserRequest{Email: ownerEmail, Workspace: "webbench", Role: account.RoleOwner})
	if err != nil {
		return fx, err
	}
	if owner.GeneratedPassword == "" {
		return fx, errors.New("the owner got no one-time password")
	}
	fx.workspace, fx.ownerOTP = owner.Workspace.ID, owner.GeneratedPassword
	for i := range (b.c.streams + perPerson - 1) / perPerson {
		email := fmt.Sprintf("viewer-%02d@webbench.test", i+1)
		if _, err := a.CreateUser(ctx, app.UserRequest{Email: email, Password: viewerPassword, Workspace: fx.workspace,
			Role: account.RoleViewer}); err != nil {
			return fx, err
		}
		fx.viewers = append(fx.viewers, email)
	}

	now := time.Now().UTC().Truncate(time.Second)
	n := b.c.monitors
	rng := rand.New(rand.NewPCG(20, 1000))
	name := func(i int) string { return fmt.Sprintf("service %04d", i+1) }
	monitors, changes, err := seed.WriteMonitors(ctx, db, seed.Monitors{Workspace: fx.workspace, Count: n,
		Created: now.Add(-historyDays * day), Now: now, Target: steady, Interval: int(b.c.interval / time.Second),
		Name: name, Quota: n + 1, Rand: rng})
	if err != nil {
		return fx, err
	}
	live, liveChanges, err := seed.WriteMonitors(ctx, db, seed.Monitors{Workspace: fx.workspace, Count: 1,
		Created: now.Add(-historyDays*day + time.Hour), Now: now, Target: flip, Interval: liveInterval,
		Name: func(int) string { return "flipped service" }, Quota: n + 1, Rand: rng, Confirmations: 1})
	if err != nil {
		return fx, err
	}
	fx.firstID, fx.firstName, fx.liveID, fx.changes = monitors[0], name(0), live[0], changes+liveChanges
	b.Logf("wrote %d monitors and %d state changes; writing checks and rollups", n+1, fx.changes)
	if err := b.seedChecks(ctx, db, a, append(monitors, live...), now, rng, &fx); err != nil {
		return fx, fmt.Errorf("checks: %w", err)
	}
	return fx, nil
}

// seedChecks writes the monitors' checks as the store holds them at now
// under the default retention (raw rows 30 days, hourly rollups 90, daily
// longer). Raw rows: the first monitor's whole 30 days, every other's at
// the hours the pages read raw (the edges of the 24-hour and 30-day
// windows, and the last two hours, not rolled up yet). Rollups: from the
// pool, hourly back 90 days (the other monitors' back 31, as far as the
// list reads them) and daily back to the monitors' creation;
// then the rollup job, as the server runs it, rolls up its 30 days from
// the raw rows where they are, over the pool's.
func (b *bench) seedChecks(ctx context.Context, db *store.DB, a *app.App, monitors []string, now time.Time, rng *rand.Rand, fx *fixture) error {
	seqOf, err := db.SubjectSeqsOf(ctx, monitors)
	if err != nil {
		return err
	}
	seqs := make([]int64, len(monitors))
	for i, id := range monitors {
		seqs[i] = seqOf[id]
	}
	probe, err := db.ProbeID(ctx, probeName, "")
	if err != nil {
		return err
	}
	every := b.c.interval
	w := seed.NewWriter(db, probe)
	write := func(seq int64, from, to time.Time) error {
		for at := from.Truncate(every); at.Before(to); at = at.Add(every) {
			if err := w.Add(ctx, seq, seed.Observation(rng, at, false)); err != nil {
				return err
			}
		}
		return nil
	}
	monthAgo, dayAgo := now.AddDate(0, 0, -30), now.Add(-day)
	for i, seq := range seqs {
		if i == 0 {
			if err := write(seq, monthAgo.Add(-time.Hour), now); err != nil {
				return err
			}
			continue
		}
		for _, win := range [][2]time.Time{{monthAgo.Add(-time.Hour), monthAgo.Add(time.Hour)},
			{dayAgo.Add(-time.Hour), dayAgo.Add(time.Hour)}, {now.Add(-2 * time.Hour), now}} {
			if err := write(seq, win[0], win[1]); err != nil {
				return err
			}
		}
	}
	if err := w.Flush(ctx); err != nil {
		return err
	}
	fx.checks = w.Written
	b.Logf("wrote %d checks; writing rollups", fx.checks)

	pool, err := seed.NewPool(rng, every, 256, 64)
	if err != nil {
		return err
	}
	hoursFrom := now.AddDate(0, 0, -90).Truncate(day)
	hoursDone := now.Add(-app.RollupSettle).Truncate(time.Hour)
	jobStart := monthAgo.Truncate(day) // where the rollup job begins on a database it never ran on
	for d := hoursFrom; d.Before(hoursDone); d = d.Add(day) {
		rows := make([]store.ObservationRollup, 0, 24*len(seqs))
		for i, seq := range seqs {
			if i > 0 && d.Before(jobStart.Add(-day)) {
				// Hours no page reads of the other monitors (older
				// than the list's 30 days, and on PostgreSQL packed
				// into a row a day): left out, for a quicker setup.
				continue
			}
			for h := d; h.Before(d.Add(day)) && h.Before(hoursDone); h = h.Add(time.Hour) {
				rows = append(rows, pool.Row(store.TierHour, seq, h))
			}
		}
		if err := seed.PutRollups(ctx, db, store.TierHour, rows); err != nil {
			return err
		}
		fx.hourRows += int64(len(rows))
	}
	for d := now.Add(-historyDays * day).Truncate(day); d.Before(jobStart); d = d.Add(day) {
		rows := make([]store.ObservationRollup, 0, len(seqs))
		for _, seq := range seqs {
			rows = append(rows, pool.Row(store.TierDay, seq, d))
		}
		if err := seed.PutRollups(ctx, db, store.TierDay, rows); err != nil {
			return err
		}
		fx.dayRows += int64(len(rows))
		if !d.Before(hoursFrom) {
			// As the job does once a day is rolled up (PostgreSQL only).
			if err := db.PackHours(ctx, false, seqs, d); err != nil {
				return err
			}
		}
	}
	b.Logf("wrote %d hourly and %d daily rollup rows; rolling up the last 30 days as the job does", fx.hourRows, fx.dayRows)
	for {
		n, err := a.Rollup(ctx, rollupOwner)
		if err != nil {
			return err
		}
		fx.rollBuckets += n
		if n == 0 {
			return nil
		}
	}
}
