package app

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// What a status page shows (DESIGN §7a) is assembled here from the
// page's configuration, its components' states and state histories, and
// the public incidents and maintenance windows that touch them. Only what
// the operator wrote for the page leaves: display names, public
// descriptions, public incidents' titles and updates. Never a monitor's
// name, target, headers or failure reasons.

// maintenanceHorizon is how far ahead a page lists scheduled maintenance.
const maintenanceHorizon = 14 * 24 * time.Hour

// publicIncidentLimit bounds the incidents a page reads for its bars and
// its list of open incidents.
const publicIncidentLimit = 200

// pageSubjects are a page's components by subject, and the subjects.
type pageSubjects struct {
	refs        []SubjectRef
	ids         []string
	componentOf map[string][]string // subject id → component ids
	nameOf      map[string]string   // component id → display name
}

func subjectsOf(cfg PublicPageConfig) pageSubjects {
	ps := pageSubjects{componentOf: map[string][]string{}, nameOf: map[string]string{}}
	for _, g := range cfg.Groups {
		for _, c := range g.Components {
			if _, seen := ps.componentOf[c.SubjectID]; !seen {
				ps.refs = append(ps.refs, SubjectRef{Type: c.SubjectType, ID: c.SubjectID})
				ps.ids = append(ps.ids, c.SubjectID)
			}
			ps.componentOf[c.SubjectID] = append(ps.componentOf[c.SubjectID], c.ID)
			ps.nameOf[c.ID] = c.Name
		}
	}
	return ps
}

// StatusView is what a page shows now: the page, and its public incidents
// of the bar's days (open and resolved, newest first) for its feed.
type StatusView struct {
	Page   statuspage.Page
	Recent []statuspage.Incident
}

// StatusPageView is what the page cfg shows now. It reads the store a
// fixed number of times whatever the number of components.
func (a *App) StatusPageView(ctx context.Context, cfg PublicPageConfig) (v StatusView, err error) {
	now := a.now().UTC()
	p := pageHeader(cfg, now)
	ps := subjectsOf(cfg)
	states, err := a.store.SubjectStates(ctx, cfg.WorkspaceID, ps.ids)
	if err != nil {
		return v, err
	}
	barFrom, from := pageDays(p)
	hist, err := a.store.StateHistories(ctx, ps.ids, from, now)
	if err != nil {
		return v, err
	}
	incs, err := a.PublicIncidents(ctx, cfg.WorkspaceID, ps.refs, from, publicIncidentLimit)
	if err != nil {
		return v, err
	}
	public := make([]statuspage.Incident, 0, len(incs))
	for _, inc := range incs {
		public = append(public, publicIncident(inc, ps))
	}
	if cfg.ShowIncidents {
		v.Recent = public
		for _, inc := range public {
			if inc.ResolvedAt.IsZero() {
				p.Incidents = append(p.Incidents, inc)
			}
		}
	}
	if cfg.ShowMaintenance {
		ws, err := a.PublicMaintenance(ctx, cfg.WorkspaceID, ps.refs, now, maintenanceHorizon)
		if err != nil {
			return v, err
		}
		for _, w := range ws {
			m := statuspage.Maintenance{ID: w.ID, Title: w.Name, Description: w.Description,
				StartsAt: w.StartsAt, EndsAt: w.EndsAt, Active: w.Active}
			for _, s := range w.Subjects {
				m.ComponentIDs = append(m.ComponentIDs, ps.componentOf[s.ID]...)
			}
			p.Maintenance = append(p.Maintenance, m)
		}
	}
	for _, g := range cfg.Groups {
		group := statuspage.Group{Name: g.Name}
		for _, c := range g.Components {
			st, ok := states[c.SubjectID]
			if !ok {
				continue // deleted since the page was read
			}
			if st.State == monitor.StatePaused && cfg.PausedComponents != statuspage.ShowPaused {
				continue
			}
			tl := timeline(metricsSubject{id: c.SubjectID, created: st.Created, state: st.State}, hist[c.SubjectID], from)
			comp := statuspage.Component{ID: c.ID, Name: c.Name, Description: c.Description, Status: statuspage.StatusOf(st.State),
				Uptime24h: availability(tl, now.Add(-24*time.Hour), now),
				Uptime7d:  availability(tl, now.Add(-7*24*time.Hour), now),
				Uptime30d: availability(tl, now.Add(-30*24*time.Hour), now)}
			if p.ShowUptime {
				comp.Uptime = availability(tl, barFrom, now)
				comp.Days = bar(tl, barFrom, p.BarDays, now, c.ID, public)
			}
			group.Components = append(group.Components, comp)
		}
		if len(group.Components) > 0 {
			p.Groups = append(p.Groups, group)
		}
	}
	v.Page = p
	return v, nil
}

// pageDays are the first day of p's bars and the start of what the page
// reads: its bars' days, or the last 30 days when those are fewer.
func pageDays(p statuspage.Page) (barFrom, from time.Time) {
	now := p.GeneratedAt
	barFrom = now.Truncate(24*time.Hour).AddDate(0, 0, -(p.BarDays - 1))
	return barFrom, earliest(barFrom, now.Add(-30*24*time.Hour))
}

// pageHeader is the part of a page its configuration alone decides, all a
// password form may show of it.
func pageHeader(cfg PublicPageConfig, now time.Time) statuspage.Page {
	p := statuspage.Page{Slug: cfg.Slug, Title: cfg.Title, Description: cfg.Description, Accent: cfg.Accent,
		LogoVersion: cfg.LogoVersion, ShowUptime: cfg.ShowUptime, BarDays: cfg.UptimeDays, GeneratedAt: now}
	if p.BarDays <= 0 {
		p.BarDays = 90
	}
	p.FooterLinks = cfg.FooterLinks
	return p
}

// StatusPageHeader is the page's header alone: what a password form shows.
func (a *App) StatusPageHeader(cfg PublicPageConfig) statuspage.Page {
	return pageHeader(cfg, a.now().UTC())
}

// StatusPageHistory is one UTC month of the page's past public incidents.
func (a *App) StatusPageHistory(ctx context.Context, cfg PublicPageConfig, month time.Time) (statuspage.History, error) {
	h := statuspage.History{Page: pageHeader(cfg, a.now().UTC()),
		Month: time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, time.UTC)}
	if !cfg.ShowIncidents {
		return h, nil
	}
	ps := subjectsOf(cfg)
	incs, older, newer, err := a.PublicIncidentMonths(ctx, cfg.WorkspaceID, ps.refs, h.Month)
	if err != nil {
		return h, err
	}
	h.Older, h.Newer = older, newer
	for _, inc := range incs {
		h.Incidents = append(h.Incidents, publicIncident(inc, ps))
	}
	return h, nil
}

func availability(tl metrics.Timeline, from, to time.Time) *float64 {
	return tl.Durations(from, to).Ratios().Availability
}

// bar is a component's days from the first, oldest first; today's ends now.
func bar(tl metrics.Timeline, first time.Time, days int, now time.Time, componentID string, incs []statuspage.Incident) []statuspage.Day {
	out := make([]statuspage.Day, 0, days)
	for d := range days {
		start := first.AddDate(0, 0, d)
		end := earliest(start.Add(24*time.Hour), now)
		du := tl.Durations(start, end)
		day := statuspage.Day{Date: start, Availability: du.Ratios().Availability,
			Down: du.Down, Degraded: du.Degraded, Maintenance: du.Maintenance}
		for _, inc := range incs {
			if !slices.Contains(inc.ComponentIDs, componentID) || !inc.StartedAt.Before(end) ||
				(!inc.ResolvedAt.IsZero() && inc.ResolvedAt.Before(start)) {
				continue
			}
			day.Incidents = append(day.Incidents, inc.Title)
		}
		out = append(out, day)
	}
	return out
}

// publicIncident is inc as a page shows it: the public reads have left
// out the updates Tocsin wrote (they name the monitor and what failed), so
// what remains is what people wrote for readers. An automatic incident's
// own title names the monitor: readers see its public title, or one made
// of the components' display names.
func publicIncident(inc *incident.Incident, ps pageSubjects) statuspage.Incident {
	out := statuspage.Incident{ID: inc.ID, Title: inc.Title, Stage: statuspage.Stage(inc.Status),
		StartedAt: inc.StartedAt, UpdatedAt: inc.UpdatedAt}
	if inc.ResolvedAt != nil {
		out.ResolvedAt = *inc.ResolvedAt
	}
	for _, s := range inc.Touches() {
		out.ComponentIDs = append(out.ComponentIDs, ps.componentOf[s]...)
	}
	switch {
	case inc.PublicTitle != "":
		out.Title = inc.PublicTitle
	case inc.Origin == incident.Automatic:
		names := make([]string, 0, len(out.ComponentIDs))
		for _, id := range out.ComponentIDs {
			if n := ps.nameOf[id]; !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		out.Title = strings.Join(names, ", ") + " outage"
	}
	for _, u := range inc.Updates {
		if u.Automatic {
			continue // the public reads drop them; never show one if they did not
		}
		out.Updates = append(out.Updates, statuspage.Update{Stage: statuspage.Stage(u.Status), Message: u.Message, At: u.At})
	}
	return out
}

// StatusPagePreview is what page id of the actor's workspace shows now,
// as its public page would render it: for the web app's editor, to any
// member who may read the workspace's pages, whatever the page's
// visibility.
func (a *App) StatusPagePreview(ctx context.Context, actor Actor, id string) (StatusView, error) {
	p, err := a.GetStatusPage(ctx, actor, id)
	if err != nil {
		return StatusView{}, err
	}
	return a.StatusPageView(ctx, publicConfig(p))
}
