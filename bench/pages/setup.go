package pages

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/load"
	"github.com/tocsin/tocsin/bench/internal/pgfresh"
	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/statuspage"
	"github.com/tocsin/tocsin/internal/store"
)

// What the database holds when the server starts, and how it got there:
// written through the store and the app with the benchmark's clock, as
// `tocsin serve` would have written it over the months before.

const (
	day         = seed.Day
	historyDays = 100 // the monitors' age: more than the bars' 90 days
	mainSlug    = "main"
	groups      = 5
)

// fixture is what the measurements need of a seeded database.
type fixture struct {
	mainSlug    string
	coldSlugs   []string
	componentID string // a component of the main page, for its badge
	changes     int    // state changes written
	incidents   int    // public incidents written
}

// freshDatabase makes an empty database and returns its URL and how to
// remove it.
func (b *bench) freshDatabase(ctx context.Context, engine string) (dbURL string, drop func(), err error) {
	if engine == "sqlite" {
		return "sqlite:" + filepath.Join(b.Dir, "sqlite", "tocsin.db"), func() {}, nil // removed with the work directory
	}
	return pgfresh.Create(ctx, b.c.pgURL, pgfresh.Name("tocsin_pagebench", 0), b.c.keep, b.Logf)
}

// clock is the seeding app's clock: a moment the seeder sets, so
// incidents are written on the days they happened.
type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.at = t
	c.mu.Unlock()
}

// seed fills the database at dbURL: the workspace `tocsin serve` makes on
// an empty database; -components HTTP monitors aimed at target (which
// answers 200, so their first checks under the server change nothing),
// UP now, each with historyDays of state changes; public incidents with
// updates over those days, one still open, and a public maintenance
// window ahead; and the main status page with every monitor as a
// component in 5 groups, and -cold-pages more like it.
func (b *bench) seed(ctx context.Context, dbURL, keys, target string) (fixture, error) {
	var fx fixture
	kr, err := secrets.ParseKeyring(keys)
	if err != nil {
		return fx, err
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return fx, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return fx, err
	}
	now := time.Now().UTC().Truncate(time.Second)
	clk := &clock{at: now}
	n := b.c.components
	a := app.New(db, kr, clk.now, slog.New(slog.DiscardHandler), app.Config{DefaultMaxMonitors: n + 1,
		DefaultMaxStatusPages: b.c.coldPages + 1})
	boot, err := a.Bootstrap(ctx)
	if err != nil {
		return fx, err
	}
	if boot == nil {
		return fx, errors.New("the database was not empty")
	}
	actor := app.Actor{WorkspaceID: boot.WorkspaceID, Role: account.RoleOwner}

	rng := rand.New(rand.NewPCG(18, 90))
	monitors, changes, err := seed.WriteMonitors(ctx, db, seed.Monitors{Workspace: boot.WorkspaceID, Count: n,
		Created: now.Add(-historyDays * day), Now: now, Target: target, Interval: monitor.MaxIntervalSeconds,
		Name: func(i int) string { return fmt.Sprintf("internal service %02d", i) }, Quota: n + 1, Rand: rng})
	if err != nil {
		return fx, err
	}
	fx.changes = changes

	// Public incidents every twelve days or so, each on two or three
	// components, with the stages an operator posts; the last still open.
	for i := 0; i < 8; i++ {
		start := now.Add(-time.Duration(i*12+1)*day - time.Duration(rng.IntN(12))*time.Hour)
		affected := []string{monitors[rng.IntN(n)], monitors[rng.IntN(n)], monitors[rng.IntN(n)]}
		affected = dedupe(affected[:2+rng.IntN(2)])
		clk.set(start)
		inc, err := a.CreateIncident(ctx, actor, app.IncidentDraft{Title: fmt.Sprintf("Elevated errors (%d)", i+1),
			Message: "We are looking into reports of failed requests.", AffectedMonitors: affected, Public: true,
			PublicTitle: fmt.Sprintf("Degraded service in region %d", i%3+1)})
		if err != nil {
			return fx, fmt.Errorf("creating an incident: %w", err)
		}
		fx.incidents++
		if i == 0 {
			continue // open
		}
		steps := []struct {
			after  time.Duration
			status incident.Status
			msg    string
		}{
			{25 * time.Minute, incident.Identified, "The cause is a faulty deployment; rolling back."},
			{70 * time.Minute, incident.Monitoring, "The rollback is complete; error rates are back to normal."},
		}
		at := start
		for _, s := range steps {
			at = at.Add(s.after)
			clk.set(at)
			if _, err := a.PostIncidentUpdate(ctx, actor, inc.ID, s.status, s.msg); err != nil {
				return fx, fmt.Errorf("updating an incident: %w", err)
			}
		}
		clk.set(at.Add(45 * time.Minute))
		if _, err := a.ResolveIncident(ctx, actor, inc.ID, "Resolved: every request succeeds again."); err != nil {
			return fx, fmt.Errorf("resolving an incident: %w", err)
		}
	}
	clk.set(now)
	_, err = a.CreateMaintenanceWindow(ctx, actor, app.MaintenanceDraft{Name: "Database upgrade",
		Description: "Short interruptions are expected.", StartsAt: now.Add(3 * day).Truncate(time.Hour),
		EndsAt: now.Add(3*day + 2*time.Hour).Truncate(time.Hour), MonitorIDs: monitors[:n/5], Public: true})
	if err != nil {
		return fx, fmt.Errorf("creating a maintenance window: %w", err)
	}

	// The pages, through the status page use case as the API would.
	draft := pageDraft(monitors)
	fx.mainSlug = mainSlug
	for i := 0; i <= b.c.coldPages; i++ {
		d := draft
		d.Slug = mainSlug
		if i > 0 {
			d.Slug = fmt.Sprintf("cold-%03d", i)
			fx.coldSlugs = append(fx.coldSlugs, d.Slug)
		}
		p, err := a.CreateStatusPage(ctx, actor, d)
		if err != nil {
			return fx, fmt.Errorf("creating status page %s: %w", d.Slug, err)
		}
		if i == 0 {
			fx.componentID = p.Groups[0].Components[0].ID
		}
	}
	return fx, nil
}

// pageDraft is a public page of every monitor, in groups of equal size.
func pageDraft(monitors []string) app.StatusPageDraft {
	d := app.StatusPageDraft{Title: "Example Cloud status", Description: "Live status of Example Cloud's services.",
		ShowUptime: true, ShowIncidents: true, ShowMaintenance: true,
		FooterLinks: []statuspage.Link{{Label: "Home", URL: "https://example.com/"}}}
	per := (len(monitors) + groups - 1) / groups
	for g := range groups {
		grp := app.StatusPageGroupDraft{Name: fmt.Sprintf("Region %d", g+1)}
		for i := g * per; i < min((g+1)*per, len(monitors)); i++ {
			grp.Components = append(grp.Components, app.StatusPageComponentDraft{MonitorID: monitors[i],
				Name: fmt.Sprintf("Service %02d", i+1), Description: "Serves the public API."})
		}
		if len(grp.Components) > 0 {
			d.Groups = append(d.Groups, grp)
		}
	}
	return d
}

func dedupe(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// quietSpell is longer than the bound a status page is served within
// (5 s): a reader after it waits for the page to be checked.
const quietSpell = 6 * time.Second

// afterQuiet reads each of slugs once after a quiet spell in which nothing
// changed (the reader waits for the page's stamp), then once more after
// another quiet spell in which another writer touched every page's
// configuration, as a second node would (the reader waits for a new
// render). It returns both sets of times, sorted.
func (b *bench) afterQuiet(ctx context.Context, engine, dbURL string, rt http.RoundTripper, base string, slugs []string) (quiet, touched []time.Duration, err error) {
	read := func(what string) ([]time.Duration, error) {
		if err := session.Sleep(ctx, quietSpell); err != nil {
			return nil, err
		}
		var out []time.Duration
		for _, slug := range slugs {
			_, _, d, err := load.Fetch(ctx, rt, base+slug, nil)
			if err != nil {
				return nil, fmt.Errorf("a read after a quiet spell (%s): %w", what, err)
			}
			out = append(out, d)
		}
		slices.Sort(out)
		b.Logf("%s: %d reads after a quiet spell, %s: median %s, max %s", engine, len(out), what,
			figure.Dur(figure.Percentile(out, 0.5)), figure.Dur(out[len(out)-1]))
		return out, nil
	}
	if quiet, err = read("nothing changed"); err != nil {
		return nil, nil, err
	}
	driver, dsn := "pgx", dbURL
	if path, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		driver, dsn = "sqlite", path+"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `UPDATE status_pages SET updated_at = updated_at + 1`); err != nil {
		return nil, nil, fmt.Errorf("touching the pages: %w", err)
	}
	touched, err = read("every page changed")
	return quiet, touched, err
}
