package app

import (
	"context"
	"time"

	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
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

// WorkspaceOverview answers the overview of the actor's workspace's
// subjects of kind (KindMonitor or KindHeartbeat; "" for both) over
// windows. It asks for the same scopes as the state read and the
// metrics listing it stands for.
func (a *App) WorkspaceOverview(ctx context.Context, actor Actor, kind string, windows ...string) (Overview, error) {
	if err := actor.Require(monitor.ScopeMetricsRead); err != nil {
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
	from, to := spans[0].from, spans[0].to
	for _, s := range spans[1:] {
		from, to = earliest(from, s.from), latest(to, s.to)
	}
	ids := make([]string, len(out.States))
	for i, s := range out.States {
		ids[i] = s.ID
	}
	hist := map[string]*store.History{}
	if len(ids) > 0 {
		if hist, err = a.store.StateHistories(ctx, ids, from, to); err != nil {
			return Overview{}, err
		}
	}
	sums := make([]metrics.Durations, len(spans))
	out.Windows = make([]OverviewWindow, len(spans))
	for i := range spans {
		out.Windows[i] = OverviewWindow{Window: windows[i], Of: make(map[string]*float64, len(ids))}
	}
	for _, s := range out.States {
		// One timeline from the widest window's start serves every window.
		tl := timeline(metricsSubject{created: s.Created, state: s.State}, hist[s.ID], from)
		for i, span := range spans {
			d := tl.Durations(span.from, span.to)
			sums[i] = sums[i].Add(d)
			out.Windows[i].Of[s.ID] = d.Ratios().Availability
		}
	}
	for i := range spans {
		out.Windows[i].All = sums[i].Ratios().Availability
	}
	return out, nil
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
