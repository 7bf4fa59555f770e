package app

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
)

// Overview is a workspace's monitors or heartbeats at a glance: each
// one's live state, and how available each one and all of them together
// were over a few windows. It is what a list page shows above and beside
// its rows, read in two queries however many subjects there are: the
// states, and the state changes of the widest window.
type Overview struct {
	States  []LiveState
	Windows []OverviewWindow
}

// OverviewWindow is the availability over one window ("24h", "30d", as
// metrics requests name them): of all the subjects together (their
// durations added up, then divided) and of each by id. Nil: nothing
// known in the window.
type OverviewWindow struct {
	Window string
	All    *float64
	Of     map[string]*float64
}

// OverviewMaxAge is how long an overview keeps a subject's figures while
// its state does not change: the windows slide meanwhile, by less than a
// minute in 24 hours or 30 days.
const OverviewMaxAge = time.Minute

// WorkspaceOverview answers the overview of the actor's workspace's
// subjects of kind (KindMonitor or KindHeartbeat; "" for both) over
// windows. It asks for the same scopes as the state read and the
// metrics listing it stands for.
//
// The states are read every time. Every subject's figures are computed
// afresh at most every OverviewMaxAge; in between, only those of a
// subject that is new or whose state changed (on any node: the states
// come from the database) are, and the others come from memory, so a
// list of a thousand monitors does not read a month of their state
// changes on each view.
func (a *App) WorkspaceOverview(ctx context.Context, actor Actor, kind string, windows ...string) (Overview, error) {
	if err := actor.Require(account.ScopeMetricsRead); err != nil {
		return Overview{}, err
	}
	spans := make([]metricsQuerySpan, len(windows))
	for i, w := range windows {
		span, err := a.metricsSpan(MetricsRequest{Window: w})
		if err != nil {
			return Overview{}, err
		}
		spans[i] = span
	}
	all, err := a.WorkspaceStates(ctx, actor)
	if err != nil {
		return Overview{}, err
	}
	var out Overview
	for _, s := range all {
		if kind == "" || s.Kind == kind {
			out.States = append(out.States, s)
		}
	}
	if len(spans) == 0 {
		return out, nil
	}
	now := spans[0].now
	key := overviewKey{workspace: actor.WorkspaceID, kind: kind, windows: strings.Join(windows, ",")}
	kept, keptAt := a.overviews.get(key, now)
	var stale []LiveState
	for _, s := range out.States {
		if f, ok := kept[s.ID]; !ok || f.sig != sigOf(s) {
			stale = append(stale, s)
		}
	}
	fresh, err := a.subjectDurations(ctx, stale, spans)
	if err != nil {
		return Overview{}, err
	}
	figures := kept
	if len(stale) > 0 || len(kept) != len(out.States) {
		figures = make(map[string]subjectFigures, len(out.States))
		for _, s := range out.States {
			if f, ok := fresh[s.ID]; ok {
				figures[s.ID] = f
			} else {
				figures[s.ID] = kept[s.ID]
			}
		}
		if kept == nil {
			keptAt = now
		}
		a.overviews.put(key, keptAt, figures, now)
	}
	sums := make([]metrics.Durations, len(spans))
	out.Windows = make([]OverviewWindow, len(spans))
	for i := range spans {
		out.Windows[i] = OverviewWindow{Window: windows[i], Of: make(map[string]*float64, len(out.States))}
	}
	for _, s := range out.States {
		for i, d := range figures[s.ID].windows {
			sums[i] = sums[i].Add(d)
			out.Windows[i].Of[s.ID] = d.Ratios().Availability
		}
	}
	for i := range spans {
		out.Windows[i].All = sums[i].Ratios().Availability
	}
	return out, nil
}

// subjectDurations reads the state changes of subjects over the widest of
// spans and integrates each subject's into its durations in each span.
func (a *App) subjectDurations(ctx context.Context, subjects []LiveState, spans []metricsQuerySpan) (map[string]subjectFigures, error) {
	if len(subjects) == 0 {
		return nil, nil
	}
	from, to := spans[0].from, spans[0].to
	for _, s := range spans[1:] {
		from, to = earliest(from, s.from), latest(to, s.to)
	}
	ids := make([]string, len(subjects))
	for i, s := range subjects {
		ids[i] = s.ID
	}
	hist, err := a.store.StateHistories(ctx, ids, from, to)
	if err != nil {
		return nil, err
	}
	out := make(map[string]subjectFigures, len(subjects))
	for _, s := range subjects {
		// One timeline from the widest window's start serves every window.
		tl := timeline(metricsSubject{created: s.Created, state: s.State}, hist[s.ID], from)
		f := subjectFigures{sig: sigOf(s), windows: make([]metrics.Durations, len(spans))}
		for i, span := range spans {
			f.windows[i] = tl.Durations(span.from, span.to)
		}
		out[s.ID] = f
	}
	return out, nil
}

// overviewCache keeps each workspace's latest overview figures, by kind
// and windows: each subject's durations in each window, with what they
// were computed from.
type overviewCache struct {
	mu      sync.Mutex
	entries map[overviewKey]overviewEntry
}

type overviewKey struct{ workspace, kind, windows string }

type overviewEntry struct {
	at       time.Time // when every subject's figures were computed afresh
	subjects map[string]subjectFigures
}

// subjectFigures are a subject's durations in each window of an
// overview, and the state they were computed in. They are never changed
// once made: a cache entry's map is replaced, not written to.
type subjectFigures struct {
	sig     subjectSig
	windows []metrics.Durations
}

// subjectSig is what a subject's figures depend on besides the time.
type subjectSig struct {
	state          monitor.State
	since, created time.Time
}

func sigOf(s LiveState) subjectSig {
	return subjectSig{state: s.State, since: s.Since, created: s.Created}
}

// get returns the figures kept for k and when they were all computed
// afresh; nil if none are, or they are OverviewMaxAge old.
func (c *overviewCache) get(k overviewKey, now time.Time) (map[string]subjectFigures, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || now.Sub(e.at) >= OverviewMaxAge || now.Before(e.at) {
		return nil, time.Time{}
	}
	return e.subjects, e.at
}

func (c *overviewCache) put(k overviewKey, at time.Time, subjects map[string]subjectFigures, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[overviewKey]overviewEntry{}
	}
	// Old entries go as new ones come, so the cache holds the workspaces
	// viewed in the last minute, however many there are in all.
	for key, e := range c.entries {
		if now.Sub(e.at) >= OverviewMaxAge {
			delete(c.entries, key)
		}
	}
	c.entries[k] = overviewEntry{at: at, subjects: subjects}
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
