package app

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
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

// OverviewMaxAge is how long an overview's availability figures are kept
// while no subject of it changes state: the windows slide meanwhile, by
// less than a minute in 24 hours or 30 days.
const OverviewMaxAge = time.Minute

// WorkspaceOverview answers the overview of the actor's workspace's
// subjects of kind (KindMonitor or KindHeartbeat; "" for both) over
// windows. It asks for the same scopes as the state read and the
// metrics listing it stands for.
//
// The states are read every time. The figures are computed again when a
// subject is added or removed or changes state (on any node: the states
// come from the database), and otherwise at most every OverviewMaxAge;
// in between they come from memory, so a list of a thousand monitors does
// not read a month of their state changes on each view.
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
	key := overviewKey{workspace: actor.WorkspaceID, kind: kind, windows: strings.Join(windows, ",")}
	fp := fingerprint(out.States)
	if w, ok := a.overviews.get(key, fp, spans[0].now); ok {
		out.Windows = w
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
	a.overviews.put(key, fp, spans[0].now, out.Windows)
	return out, nil
}

// overviewCache keeps each workspace's latest overview figures, by kind
// and windows, with the fingerprint of the states they were computed
// from.
type overviewCache struct {
	mu      sync.Mutex
	entries map[overviewKey]overviewEntry
}

type overviewKey struct{ workspace, kind, windows string }

type overviewEntry struct {
	fp      uint64
	at      time.Time
	windows []OverviewWindow
}

func (c *overviewCache) get(k overviewKey, fp uint64, now time.Time) ([]OverviewWindow, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || e.fp != fp || now.Sub(e.at) >= OverviewMaxAge || now.Before(e.at) {
		return nil, false
	}
	return e.windows, true
}

func (c *overviewCache) put(k overviewKey, fp uint64, now time.Time, w []OverviewWindow) {
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
	c.entries[k] = overviewEntry{fp: fp, at: now, windows: w}
}

// fingerprint sums up what the figures depend on besides the time: which
// subjects there are, since when, and each one's state and since when.
func fingerprint(states []LiveState) uint64 {
	sorted := slices.Clone(states)
	slices.SortFunc(sorted, func(x, y LiveState) int { return strings.Compare(x.ID, y.ID) })
	h := fnv.New64a()
	var buf [8]byte
	for _, s := range sorted {
		h.Write([]byte(s.ID))
		h.Write([]byte(s.State))
		binary.LittleEndian.PutUint64(buf[:], uint64(s.Since.UnixMicro()))
		h.Write(buf[:])
		binary.LittleEndian.PutUint64(buf[:], uint64(s.Created.UnixMicro()))
		h.Write(buf[:])
	}
	return h.Sum64()
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
