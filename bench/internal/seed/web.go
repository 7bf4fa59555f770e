package seed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/store"
)

// The web app benchmark's owner, who sets a password of their own in
// place of the one-time one.
const (
	OwnerEmail    = "owner@bench.test"
	OwnerPassword = "the owner's own password"
)

// Web says what WebApp writes.
type Web struct {
	Monitors int
	Interval time.Duration
	Target   string // the monitors' URL
	Logf     func(string, ...any)
}

// WebFixture is what the measurements need of a seeded database.
type WebFixture struct {
	Workspace string
	OwnerOTP  string // the owner's one-time password
	FirstID   string // the monitor whose page is measured
	FirstName string
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

// WebApp fills the database at dbURL through the store and the
// application: the owner as `tocsin user create` makes one (with a
// one-time password), and o.Monitors monitors aimed at o.Target (200)
// with 100 days of state changes, their checks and rollups.
func WebApp(ctx context.Context, dbURL, keys string, o Web) (fx WebFixture, err error) {
	db, a, err := openApp(ctx, seedingURL(dbURL), keys, time.Now, app.Config{})
	if err != nil {
		return fx, err
	}
	defer db.Close()
	owner, err := a.CreateUser(ctx, app.UserRequest{Email: OwnerEmail, Workspace: "webbench", Role: account.RoleOwner})
	if err != nil {
		return fx, err
	}
	if owner.GeneratedPassword == "" {
		return fx, errors.New("the owner got no one-time password")
	}
	fx.Workspace, fx.OwnerOTP = owner.Workspace.ID, owner.GeneratedPassword
	now := time.Now().UTC().Truncate(time.Second)
	rng := rand.New(rand.NewPCG(20, 1000))
	name := func(i int) string { return fmt.Sprintf("service %04d", i+1) }
	monitors, changes, err := WriteMonitors(ctx, db, Monitors{Workspace: fx.Workspace, Count: o.Monitors,
		Created: now.Add(-historyDays * Day), Now: now, Target: o.Target, Interval: int(o.Interval / time.Second),
		Name: name, Quota: o.Monitors, Rand: rng})
	if err != nil {
		return fx, err
	}
	fx.FirstID, fx.FirstName = monitors[0], name(0)
	o.Logf("wrote %d monitors and %d state changes; writing checks and rollups", o.Monitors, changes)
	if err := webChecks(ctx, db, a, monitors, now, rng, o); err != nil {
		return fx, fmt.Errorf("checks: %w", err)
	}
	return fx, nil
}

// webChecks writes the monitors' checks as the store holds them at now
// under the default retention (raw rows 30 days, hourly rollups 90, daily
// longer). Raw rows: the first monitor's whole 30 days, every other's at
// the hours the pages read raw (the edges of the 24-hour and 30-day
// windows, and the last two hours, not rolled up yet). Rollups: from the
// pool, hourly back 90 days (the other monitors' back 31, as far as the
// list reads them) and daily back to the monitors' creation;
// then the rollup job, as the server runs it, rolls up its 30 days from
// the raw rows where they are, over the pool's.
func webChecks(ctx context.Context, db *store.DB, a *app.App, monitors []string, now time.Time, rng *rand.Rand, o Web) error {
	seqOf, err := db.SubjectSeqsOf(ctx, monitors)
	if err != nil {
		return err
	}
	seqs := make([]int64, len(monitors))
	for i, id := range monitors {
		seqs[i] = seqOf[id]
	}
	probe, err := db.ProbeID(ctx, "bench", "")
	if err != nil {
		return err
	}
	every := o.Interval
	w := NewWriter(db, probe)
	monthAgo, dayAgo := now.AddDate(0, 0, -30), now.Add(-Day)
	for i, seq := range seqs {
		spans := [][2]time.Time{{monthAgo.Add(-time.Hour), monthAgo.Add(time.Hour)}, {dayAgo.Add(-time.Hour), dayAgo.Add(time.Hour)}, {now.Add(-2 * time.Hour), now}}
		if i == 0 {
			spans = [][2]time.Time{{monthAgo.Add(-time.Hour), now}}
		}
		for _, sp := range spans {
			if err := w.Every(ctx, rng, seq, sp[0].Truncate(every), sp[1], every, nil); err != nil {
				return err
			}
		}
	}
	if err := w.Flush(ctx); err != nil {
		return err
	}
	pool, err := NewPool(rng, every, 256, 64)
	if err != nil {
		return err
	}
	jobStart := monthAgo.Truncate(Day) // where the rollup job begins on a database it never ran on
	// The other monitors' hours no page reads (older than the list's 30
	// days, and on PostgreSQL packed into a row a day) are left out, for
	// a quicker setup.
	hours, err := putRollups(ctx, db, pool, store.TierHour, seqs, now.AddDate(0, 0, -90).Truncate(Day),
		now.Add(-app.RollupSettle).Truncate(time.Hour), jobStart, func(i int, d time.Time) bool { return i == 0 || !d.Before(jobStart.Add(-Day)) })
	if err != nil {
		return err
	}
	days, err := putRollups(ctx, db, pool, store.TierDay, seqs, now.Add(-historyDays*Day).Truncate(Day), jobStart, time.Time{}, nil)
	if err != nil {
		return err
	}
	o.Logf("wrote %d checks, %d hourly and %d daily rollup rows; rolling up the last 30 days as the job does", w.Written, hours, days)
	for n := 1; n > 0; {
		if n, err = a.Rollup(ctx, "bench"); err != nil {
			return err
		}
	}
	return nil
}
