package seed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/statuspage"
)

const (
	historyDays = 100 // the monitors' age: more than the bars' 90 days
	// MainSlug is the main status page's; Groups how many groups its
	// components come in.
	MainSlug = "main"
	Groups   = 5
)

// Pages is what the status page benchmark needs of a seeded database.
type Pages struct {
	MainSlug  string
	ColdSlugs []string
}

// StatusPages fills the database at dbURL through the store and the
// application, with a clock it sets so incidents are written on the days
// they happened: the workspace `tocsin serve` makes on
// an empty database; -components HTTP monitors aimed at target (which
// answers 200, so their first checks under the server change nothing),
// UP now, each with historyDays of state changes; public incidents with
// updates over those days, one still open, and a public maintenance
// window ahead; and the main status page with every monitor as a
// component in 5 groups, and -cold-pages more like it.
func StatusPages(ctx context.Context, dbURL, keys, target string, components, coldPages int) (fx Pages, err error) {
	now := time.Now().UTC().Truncate(time.Second)
	clk := &clock{}
	clk.set(now)
	n := components
	db, a, err := openApp(ctx, dbURL, keys, clk.now, app.Config{DefaultMaxMonitors: n + 1,
		DefaultMaxStatusPages: coldPages + 1})
	if err != nil {
		return fx, err
	}
	defer db.Close()
	boot, err := a.Bootstrap(ctx)
	if err != nil {
		return fx, err
	}
	if boot == nil {
		return fx, errors.New("the database was not empty")
	}
	actor := app.Actor{WorkspaceID: boot.WorkspaceID, Role: account.RoleOwner}

	rng := rand.New(rand.NewPCG(18, 90))
	monitors, _, err := WriteMonitors(ctx, db, Monitors{Workspace: boot.WorkspaceID, Count: n,
		Created: now.Add(-historyDays * Day), Now: now, Target: target, Interval: monitor.MaxIntervalSeconds,
		Name: func(i int) string { return fmt.Sprintf("internal service %02d", i) }, Quota: n + 1, Rand: rng})
	if err != nil {
		return fx, err
	}

	// Public incidents every twelve days or so, each on two or three
	// components, with the stages an operator posts; the last still open.
	for i := 0; i < 8; i++ {
		start := now.Add(-time.Duration(i*12+1)*Day - time.Duration(rng.IntN(12))*time.Hour)
		affected := []string{monitors[rng.IntN(n)], monitors[rng.IntN(n)], monitors[rng.IntN(n)]}
		affected = affected[:2+rng.IntN(2)]
		slices.Sort(affected)
		affected = slices.Compact(affected)
		clk.set(start)
		inc, err := a.CreateIncident(ctx, actor, app.IncidentDraft{Title: fmt.Sprintf("Elevated errors (%d)", i+1),
			Message: "We are looking into reports of failed requests.", AffectedMonitors: affected, Public: true,
			PublicTitle: fmt.Sprintf("Degraded service in region %d", i%3+1)})
		if err != nil {
			return fx, fmt.Errorf("creating an incident: %w", err)
		}
		if i == 0 {
			continue // open
		}
		at := start
		for _, s := range []struct {
			after  time.Duration
			status incident.Status
			msg    string
		}{{25 * time.Minute, incident.Identified, "The cause is a faulty deployment; rolling back."},
			{70 * time.Minute, incident.Monitoring, "The rollback is complete; error rates are back to normal."}} {
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
		Description: "Short interruptions are expected.", StartsAt: now.Add(3 * Day).Truncate(time.Hour),
		EndsAt: now.Add(3*Day + 2*time.Hour).Truncate(time.Hour), MonitorIDs: monitors[:n/5], Public: true})
	if err != nil {
		return fx, fmt.Errorf("creating a maintenance window: %w", err)
	}

	// The pages, through the status page use case as the API would.
	draft := PageDraft(monitors)
	fx.MainSlug = MainSlug
	for i := 0; i <= coldPages; i++ {
		d := draft
		d.Slug = MainSlug
		if i > 0 {
			d.Slug = fmt.Sprintf("cold-%03d", i)
			fx.ColdSlugs = append(fx.ColdSlugs, d.Slug)
		}
		if _, err := a.CreateStatusPage(ctx, actor, d); err != nil {
			return fx, fmt.Errorf("creating status page %s: %w", d.Slug, err)
		}
	}
	return fx, nil
}

// PageDraft is a public page of every monitor, in groups of equal size.
func PageDraft(monitors []string) app.StatusPageDraft {
	d := app.StatusPageDraft{Title: "Example Cloud status", Description: "Live status of Example Cloud's services.",
		ShowUptime: true, ShowIncidents: true, ShowMaintenance: true,
		FooterLinks: []statuspage.Link{{Label: "Home", URL: "https://example.com/"}}}
	per := (len(monitors) + Groups - 1) / Groups
	for g := range Groups {
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

// Fresh is an empty database of engine for one phase, as
// session.FreshDB makes it, and a Target for its monitors until s closes.
func Fresh(ctx context.Context, s *session.Session, engine string) (dbURL, keyring string, t *Target, err error) {
	if t, err = StartTarget(); err == nil {
		s.Undo(t.Close)
		dbURL, keyring, err = s.FreshDB(ctx, engine)
	}
	return dbURL, keyring, t, err
}
