package app

import (
	"context"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// Scrape: what a Prometheus server reads of a workspace on every scrape,
// each monitor's and heartbeat's state now, its last check or ping, and
// its availability over a few windows, under metrics:read alone.

// ScrapeWindows are the windows whose availability a scrape answers.
var ScrapeWindows = []string{"24h", "30d"}

// maxScrapeSubjects bounds a scrape: quotas keep workspaces well below it,
// but a lowered quota leaves what was made before, so the bound is ours.
const maxScrapeSubjects = 10000

// scrapeChunk is how many subjects one figures query reads.
const scrapeChunk = 100

// ScrapeSubject is one monitor or heartbeat as a scrape reports it.
type ScrapeSubject struct {
	ID, Kind, Name string
	Type           monitor.Type  // monitors only
	State          monitor.State // now
	// Monitors: the latest check; its At is zero before the first.
	LastCheck monitor.LastCheck
	// Heartbeats: the latest ping of any signal; zero before the first.
	LastPing time.Time
	// Availability over each of ScrapeWindows, in order; nil where
	// nothing is known.
	Availability []*float64
}

// ScrapeMetrics reads every monitor and heartbeat of the actor's
// workspace, heartbeats first, each by id, up to maxScrapeSubjects.
func (a *App) ScrapeMetrics(ctx context.Context, actor Actor) ([]ScrapeSubject, error) {
	if err := actor.Require(account.ScopeMetricsRead); err != nil {
		return nil, err
	}
	var (
		out      []ScrapeSubject
		subjects []metricsSubject
	)
	for after := ""; len(out) < maxScrapeSubjects; {
		rows, err := a.store.ListHeartbeats(ctx, actor.WorkspaceID, store.HeartbeatQuery{AfterID: after, Limit: min(scrapeChunk, maxScrapeSubjects-len(out))})
		if err != nil {
			return nil, err
		}
		for _, h := range rows {
			out = append(out, ScrapeSubject{ID: h.ID, Kind: KindHeartbeat, Name: h.Name, State: h.Runtime.State, LastPing: h.Runtime.LastPing})
			subjects = append(subjects, metricsSubject{id: h.ID, kind: KindHeartbeat, name: h.Name, created: h.CreatedAt, state: h.Runtime.State})
		}
		if len(rows) < scrapeChunk {
			break
		}
		after = rows[len(rows)-1].ID
	}
	for after := ""; len(out) < maxScrapeSubjects; {
		ms, err := a.store.ListMonitors(ctx, actor.WorkspaceID, store.MonitorQuery{AfterID: after, Limit: min(scrapeChunk, maxScrapeSubjects-len(out))})
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			out = append(out, ScrapeSubject{ID: m.ID, Kind: KindMonitor, Name: m.Name, Type: m.Type, State: m.State, LastCheck: m.Last})
			subjects = append(subjects, metricsSubject{id: m.ID, kind: KindMonitor, name: m.Name, created: m.CreatedAt, state: m.State})
		}
		if len(ms) < scrapeChunk {
			break
		}
		after = ms[len(ms)-1].ID
	}
	for i := range out {
		out[i].Availability = make([]*float64, len(ScrapeWindows))
	}
	// The same figures as ListMetrics answers for each window.
	err := a.priced(ctx, actor, scrapePoints(len(subjects)), func() error {
		for w, window := range ScrapeWindows {
			span, err := a.metricsSpan(MetricsRequest{Window: window})
			if err != nil {
				return err
			}
			for start := 0; start < len(subjects); start += scrapeChunk {
				chunk := append([]metricsSubject(nil), subjects[start:min(start+scrapeChunk, len(subjects))]...)
				figures, err := a.subjectMetrics(ctx, actor.WorkspaceID, chunk, span)
				if err != nil {
					return err
				}
				for i, f := range figures {
					out[start+i].Availability[w] = f.Figures.Ratios.Availability
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
