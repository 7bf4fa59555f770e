package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// Metrics: what a subject's state history, checks or pings, and
// incidents say of it over a window (package metrics holds the method).
// Durations come from the state history, which is kept whole, so they are
// exact over any window; counts and latencies from the raw rows and their
// rollups (plan).

// MetricsRequest is what a metrics query asks for.
type MetricsRequest struct {
	Window     string     // a name of metrics.Windows, or
	From, To   *time.Time // a span
	Resolution metrics.Resolution
	TZ         string // the IANA zone of the buckets' days; "" for UTC
}

// DefaultMetricsWindow is the window of a query that names none.
const DefaultMetricsWindow = "24h"

// Subject kinds.
const (
	KindMonitor   = "monitor"
	KindHeartbeat = "heartbeat"
)

// SubjectMetrics is one subject's figures over the window and, when a
// resolution was asked for, per bucket.
type SubjectMetrics struct {
	SubjectID, Kind, Name string
	From, To              time.Time
	Figures               Figures
	Series                []BucketFigures
	SLO                   *SLOFigures // nil: the subject has no objective (slo.go)
}

// BucketFigures are the figures of one bucket of a series.
type BucketFigures struct {
	metrics.Bucket
	Figures
}

// Figures are what a span says of a subject.
type Figures struct {
	Durations metrics.Durations
	Ratios    metrics.Ratios
	// Monitors: checks by result, and the latency of known checks.
	Checks  *metrics.Checks
	Latency *metrics.LatencySummary
	// Heartbeats: pings by signal, and the durations of runs that sent /start.
	Pings *PingCounts
	Runs  *metrics.LatencySummary
	// Incidents opened in the span; mean time to recovery over those of
	// them resolved, nil when none was.
	Incidents int
	MTTR      *time.Duration
}

// PingCounts counts a heartbeat's pings by signal.
type PingCounts struct{ Success, Start, Fail int64 }

// metricsSubject is what the figures of a subject start from.
type metricsSubject struct {
	id, kind, name string
	seq            int64
	created        time.Time
	state          monitor.State // now, for a subject whose history has no change
	slo            *monitor.SLO
}

// metricsSpan turns a request into its span and buckets. A span reaching
// back beyond the raw rows starts at the next whole UTC hour (beyond the
// hourly rollups, day): the rollups count whole buckets, so the answer is
// exact for the span it reports.
func (a *App) metricsSpan(req MetricsRequest) (metricsQuerySpan, error) {
	now := a.now()
	from, to, buckets, err := a.spanAt(req, now)
	return metricsQuerySpan{now: now, from: from, to: to, buckets: buckets}, err
}

// metricsQuerySpan is what a request asks figures of: [from, to) at now,
// and the buckets of its series (nil: none).
type metricsQuerySpan struct {
	now, from, to time.Time
	buckets       []metrics.Bucket
}

func (a *App) spanAt(req MetricsRequest, now time.Time) (from, to time.Time, buckets []metrics.Bucket, err error) {
	window := req.Window
	if window == "" && req.From == nil && req.To == nil {
		window = DefaultMetricsWindow
	}
	from, to, err = metrics.Span(window, req.From, req.To, now)
	var bad *metrics.SpanError
	if errors.As(err, &bad) {
		return from, to, nil, invalidQuery("query."+bad.Field, bad.Message)
	} else if err != nil {
		return from, to, nil, err
	}
	rawFrom := now.AddDate(0, 0, -a.cfg.RetentionDays)
	hoursFrom := now.AddDate(0, 0, -a.cfg.HourlyRetentionDays).Truncate(24 * time.Hour)
	if from.Before(rawFrom) {
		unit := time.Hour
		if from.Before(hoursFrom) {
			unit = 24 * time.Hour
		}
		if from = ceilTo(from, unit); !from.Before(to) {
			return from, to, nil, invalidQuery("query.from", fmt.Sprintf("spans older than %d days are answered by whole UTC hours, "+
				"and older than %d days by whole UTC days; this span holds none", a.cfg.RetentionDays, a.cfg.HourlyRetentionDays))
		}
	}
	if from.Before(hoursFrom) {
		switch {
		case req.Resolution == metrics.Hour:
			return from, to, nil, invalidQuery("query.resolution", fmt.Sprintf("hourly series reach back %d days; use resolution=day", a.cfg.HourlyRetentionDays))
		case req.Resolution == metrics.Day && req.TZ != "" && req.TZ != "UTC":
			return from, to, nil, invalidQuery("query.tz", fmt.Sprintf("days in a zone other than UTC reach back %d days; leave tz out for UTC days", a.cfg.HourlyRetentionDays))
		}
	}
	if req.Resolution == "" {
		if req.TZ != "" {
			return from, to, nil, invalidQuery("query.tz", "tz applies to a series: give resolution=hour or resolution=day too")
		}
		return from, to, nil, nil
	}
	loc := time.UTC
	if req.TZ != "" {
		if loc, err = time.LoadLocation(req.TZ); err != nil || req.TZ == "Local" {
			return from, to, nil, invalidQuery("query.tz", "unknown time zone "+strconv.Quote(req.TZ)+"; give an IANA zone name such as Europe/Berlin or America/New_York")
		}
	}
	buckets, err = metrics.Buckets(from, to, req.Resolution, loc)
	if err != nil {
		return from, to, nil, invalidQuery("query.resolution", err.Error())
	}
	return from, to, buckets, nil
}

func invalidQuery(pointer, msg string) error {
	return &errs.Error{Kind: errs.KindInvalid, Message: msg, Fields: []errs.FieldError{{Pointer: pointer, Message: msg}}}
}

// MonitorMetrics answers a monitor's metrics.
func (a *App) MonitorMetrics(ctx context.Context, actor Actor, id string, req MetricsRequest) (SubjectMetrics, error) {
	out, err := a.MonitorMetricsEach(ctx, actor, id, req)
	if err != nil {
		return SubjectMetrics{}, err
	}
	return out[0], nil
}

// MonitorMetricsEach answers a monitor's metrics for each request, in
// order, at one instant: what does not depend on the window (the monitor,
// the rollups' progress, its objective's budget) is read once.
func (a *App) MonitorMetricsEach(ctx context.Context, actor Actor, id string, reqs ...MetricsRequest) ([]SubjectMetrics, error) {
	if err := actor.Require(account.ScopeMetricsRead); err != nil {
		return nil, err
	}
	m, err := a.store.GetMonitor(ctx, actor.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	return a.metricsEach(ctx, actor, metricsSubject{id: m.ID, kind: KindMonitor, name: m.Name,
		created: m.CreatedAt, state: m.State, slo: m.SLO}, reqs)
}

// HeartbeatMetrics answers a heartbeat's metrics.
func (a *App) HeartbeatMetrics(ctx context.Context, actor Actor, id string, req MetricsRequest) (SubjectMetrics, error) {
	out, err := a.HeartbeatMetricsEach(ctx, actor, id, req)
	if err != nil {
		return SubjectMetrics{}, err
	}
	return out[0], nil
}

// HeartbeatMetricsEach is MonitorMetricsEach for a heartbeat.
func (a *App) HeartbeatMetricsEach(ctx context.Context, actor Actor, id string, reqs ...MetricsRequest) ([]SubjectMetrics, error) {
	if err := actor.Require(account.ScopeMetricsRead); err != nil {
		return nil, err
	}
	h, _, err := a.store.GetHeartbeat(ctx, actor.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	return a.metricsEach(ctx, actor, metricsSubject{id: h.ID, kind: KindHeartbeat, name: h.Name,
		created: h.CreatedAt, state: h.Runtime.State, slo: h.SLO}, reqs)
}

// metricsEach answers one subject's metrics for each request, all at the
// same instant. Each request is a response of its own to the budget, and
// the actor pays for all of them before any is read (metrics_budget.go).
func (a *App) metricsEach(ctx context.Context, actor Actor, s metricsSubject, reqs []MetricsRequest) ([]SubjectMetrics, error) {
	now := a.now()
	spans := make([]metricsQuerySpan, len(reqs))
	points := 0
	for i, req := range reqs {
		from, to, buckets, err := a.spanAt(req, now)
		if err != nil {
			return nil, err
		}
		spans[i] = metricsQuerySpan{now: now, from: from, to: to, buckets: buckets}
		p := seriesPoints(len(buckets))
		if p > a.cfg.MetricsPointsPerResponse {
			return nil, a.overBudget(p)
		}
		points += p
	}
	var each [][]SubjectMetrics
	err := a.priced(ctx, actor, points, func() (err error) {
		each, err = a.subjectMetricsEach(ctx, actor.WorkspaceID, []metricsSubject{s}, spans)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]SubjectMetrics, len(each))
	for i, e := range each {
		out[i] = e[0]
	}
	return out, nil
}

// subjectMetrics computes the figures of subjects of the workspace wsID,
// all of one kind or mixed, in the order given, over span.
func (a *App) subjectMetrics(ctx context.Context, wsID string, subjects []metricsSubject, span metricsQuerySpan) ([]SubjectMetrics, error) {
	out, err := a.subjectMetricsEach(ctx, wsID, subjects, []metricsQuerySpan{span})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// subjectMetricsEach is subjectMetrics over each of spans, which share
// their now: the subjects' seqs, the rollups' progress and the objectives'
// budgets are read once for all of them.
func (a *App) subjectMetricsEach(ctx context.Context, wsID string, subjects []metricsSubject, spans []metricsQuerySpan) ([][]SubjectMetrics, error) {
	ids := make([]string, len(subjects))
	for i, s := range subjects {
		ids[i] = s.id
	}
	seqOf, err := a.store.SubjectSeqsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	progress, err := a.store.RollupProgress(ctx)
	if err != nil {
		return nil, err
	}
	var monitors, heartbeats []int64
	for i := range subjects {
		subjects[i].seq = seqOf[subjects[i].id]
		if subjects[i].kind == KindMonitor {
			monitors = append(monitors, subjects[i].seq)
		} else {
			heartbeats = append(heartbeats, subjects[i].seq)
		}
	}
	slos, err := a.sloFigures(ctx, subjects, spans[0].now)
	if err != nil {
		return nil, err
	}
	out := make([][]SubjectMetrics, len(spans))
	for k, span := range spans {
		if out[k], err = a.spanMetrics(ctx, wsID, subjects, ids, span, progress, monitors, heartbeats, slos); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// spanMetrics is subjectMetricsEach's work for one span.
func (a *App) spanMetrics(ctx context.Context, wsID string, subjects []metricsSubject, ids []string, span metricsQuerySpan,
	progress map[string]time.Time, monitors, heartbeats []int64, slos map[string]*SLOFigures) ([]SubjectMetrics, error) {
	from, to, buckets := span.from, span.to, span.buckets
	hist, err := a.store.StateHistories(ctx, ids, from, to)
	if err != nil {
		return nil, err
	}
	incs, err := a.store.IncidentSpans(ctx, wsID, ids, from, to)
	if err != nil {
		return nil, err
	}
	incsOf := map[string][]store.IncidentSpan{}
	for _, s := range incs {
		incsOf[s.SubjectID] = append(incsOf[s.SubjectID], s)
	}
	// The spans whose counts are asked: the window, or each bucket.
	spans := []metrics.Bucket{{Start: from, End: to}}
	if buckets != nil {
		spans = buckets
	}
	checks, err := a.checkCounts(ctx, monitors, spans, progress)
	if err != nil {
		return nil, err
	}
	pings, err := a.pingCounts(ctx, heartbeats, spans, progress)
	if err != nil {
		return nil, err
	}
	out := make([]SubjectMetrics, len(subjects))
	for i, s := range subjects {
		tl := timeline(s, hist[s.id], from)
		// figures of span k; the counts of the whole window, with a series,
		// are its buckets' merged, never read twice.
		var (
			allChecks metrics.Checks
			allPings  PingCounts
			allLat    = metrics.NewLatency()
		)
		figures := func(k int, start, end time.Time) (Figures, error) {
			f := Figures{Durations: tl.Durations(start, end)}
			f.Ratios = f.Durations.Ratios()
			f.Incidents, f.MTTR = incidentFigures(incsOf[s.id], start, end)
			if s.kind == KindMonitor {
				c := checks[s.seq][k]
				f.Checks, f.Latency = &c.checks, summary(&c.latency)
				allChecks = allChecks.Add(c.checks)
				return f, allLat.Merge(&c.latency)
			}
			p := pings[s.seq][k]
			f.Pings, f.Runs = &p.counts, summary(&p.runs)
			allPings.Success, allPings.Start, allPings.Fail = allPings.Success+p.counts.Success, allPings.Start+p.counts.Start, allPings.Fail+p.counts.Fail
			return f, allLat.Merge(&p.runs)
		}
		sm := SubjectMetrics{SubjectID: s.id, Kind: s.kind, Name: s.name, From: from, To: to, SLO: slos[s.id]}
		if buckets == nil {
			if sm.Figures, err = figures(0, from, to); err != nil {
				return nil, err
			}
		} else {
			sm.Series = make([]BucketFigures, len(buckets))
			for k, b := range buckets {
				f, err := figures(k, b.Start, b.End)
				if err != nil {
					return nil, err
				}
				sm.Series[k] = BucketFigures{Bucket: b, Figures: f}
			}
			f := Figures{Durations: tl.Durations(from, to)}
			f.Ratios = f.Durations.Ratios()
			f.Incidents, f.MTTR = incidentFigures(incsOf[s.id], from, to)
			if s.kind == KindMonitor {
				f.Checks, f.Latency = &allChecks, summary(allLat)
			} else {
				f.Pings, f.Runs = &allPings, summary(allLat)
			}
			sm.Figures = f
		}
		out[i] = sm
	}
	return out, nil
}

// timeline is a subject's state history from the window's start.
func timeline(s metricsSubject, h *store.History, from time.Time) metrics.Timeline {
	tl := metrics.Timeline{Created: s.created, Start: s.state}
	if h == nil {
		return tl
	}
	switch {
	case h.Before != nil:
		tl.Start = *h.Before
	case len(h.Changes) > 0:
		tl.Start = h.Changes[0].From
	}
	for _, c := range h.Changes {
		tl.Changes = append(tl.Changes, metrics.Change{At: c.At, To: c.To})
	}
	return tl
}

// incidentFigures counts the incidents opened in [from, to) and their
// mean time to recovery, over those of them resolved.
func incidentFigures(incs []store.IncidentSpan, from, to time.Time) (int, *time.Duration) {
	n, resolved := 0, 0
	var total time.Duration
	for _, s := range incs {
		if s.Started.Before(from) || !s.Started.Before(to) {
			continue
		}
		n++
		if !s.Resolved.IsZero() {
			resolved++
			total += s.Resolved.Sub(s.Started)
		}
	}
	if resolved == 0 {
		return n, nil
	}
	mttr := (total / time.Duration(resolved)).Round(time.Microsecond)
	return n, &mttr
}

func summary(l *metrics.Latency) *metrics.LatencySummary {
	s := l.Summary()
	return &s
}

// Rollup progress names.
const (
	rollupObservationsHour = "observations/hour"
	rollupObservationsDay  = "observations/day"
	rollupPingsHour        = "pings/hour"
	rollupPingsDay         = "pings/day"
)

// checkCounts counts the checks of the monitors seqs in each span (in
// order and adjacent, as a series' buckets are), from rollups where they
// are written and raw rows elsewhere, a few queries whatever the number
// of spans (runs).
func (a *App) checkCounts(ctx context.Context, seqs []int64, spans []metrics.Bucket, progress map[string]time.Time) (map[int64][]checkAgg, error) {
	out := make(map[int64][]checkAgg, len(seqs))
	if len(seqs) == 0 {
		return out, nil
	}
	for _, s := range seqs {
		out[s] = make([]checkAgg, len(spans))
	}
	for _, seg := range runs(spans, progress[rollupObservationsHour], progress[rollupObservationsDay]) {
		err := a.readChecks(ctx, seqs, seg.start, seg.end, seg.src, func(seq int64, at time.Time) *checkAgg { return &out[seq][spanOf(spans, at)] })
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pingCounts is checkCounts for the pings of the heartbeats seqs.
func (a *App) pingCounts(ctx context.Context, seqs []int64, spans []metrics.Bucket, progress map[string]time.Time) (map[int64][]pingAgg, error) {
	out := make(map[int64][]pingAgg, len(seqs))
	if len(seqs) == 0 {
		return out, nil
	}
	for _, s := range seqs {
		out[s] = make([]pingAgg, len(spans))
	}
	for _, seg := range runs(spans, progress[rollupPingsHour], progress[rollupPingsDay]) {
		err := a.readPings(ctx, seqs, seg.start, seg.end, seg.src, func(seq int64, at time.Time) *pingAgg { return &out[seq][spanOf(spans, at)] })
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MetricsFilter selects the subjects of a workspace listing: a kind
// ("" for both), and the filters of the monitor and heartbeat lists. A
// monitor type or a name filter leaves heartbeats out when no kind is
// given (heartbeats have no type, and are not searched by name).
type MetricsFilter struct {
	Kind    string
	Monitor MonitorFilter
	States  []monitor.State
}

// ListMetrics pages through the metrics of every monitor and heartbeat of
// the workspace, by id: heartbeats (hb_…) first, then monitors (mon_…).
func (a *App) ListMetrics(ctx context.Context, actor Actor, f MetricsFilter, p PageRequest, req MetricsRequest) (Page[SubjectMetrics], error) {
	if err := actor.Require(account.ScopeMetricsRead); err != nil {
		return Page[SubjectMetrics]{}, err
	}
	f.Monitor.States = f.States
	mf, problems := f.Monitor.normalize()
	if f.Kind != "" && f.Kind != KindMonitor && f.Kind != KindHeartbeat {
		problems = append(problems, errs.FieldError{Pointer: "query.kind", Message: "must be monitor or heartbeat"})
	}
	after, limit, err := p.decode()
	if err := pageProblems(problems, err); err != nil {
		return Page[SubjectMetrics]{}, err
	}
	span, err := a.metricsSpan(req) // before reading a page
	if err != nil {
		return Page[SubjectMetrics]{}, err
	}
	// A page holds as many subjects as the budget of a response allows.
	each := seriesPoints(len(span.buckets))
	if each > a.cfg.MetricsPointsPerResponse {
		return Page[SubjectMetrics]{}, a.overBudget(each)
	}
	limit = min(limit, a.cfg.MetricsPointsPerResponse/each)
	withHeartbeats := f.Kind == KindHeartbeat || (f.Kind == "" && len(mf.Types) == 0 && mf.Name == "")
	withMonitors := f.Kind != KindHeartbeat
	var (
		subjects []metricsSubject
		total    int
	)
	if withHeartbeats {
		q := store.HeartbeatQuery{States: mf.States, Limit: limit + 1}
		if strings.HasPrefix(after, ids.Heartbeat+"_") {
			q.AfterID = after
		}
		if after == "" || q.AfterID != "" {
			rows, err := a.store.ListHeartbeats(ctx, actor.WorkspaceID, q)
			if err != nil {
				return Page[SubjectMetrics]{}, err
			}
			for _, r := range rows {
				subjects = append(subjects, metricsSubject{id: r.ID, kind: KindHeartbeat, name: r.Name, created: r.CreatedAt, state: r.Runtime.State, slo: r.SLO})
			}
		}
		n, err := a.store.CountMatchingHeartbeats(ctx, actor.WorkspaceID, q)
		if err != nil {
			return Page[SubjectMetrics]{}, err
		}
		total += n
	}
	if withMonitors {
		q := store.MonitorQuery{States: mf.States, Types: mf.Types, NameContains: strings.ToLower(mf.Name), Limit: limit + 1 - len(subjects)}
		if strings.HasPrefix(after, ids.Monitor+"_") {
			q.AfterID = after
		}
		if q.Limit > 0 {
			ms, err := a.store.ListMonitors(ctx, actor.WorkspaceID, q)
			if err != nil {
				return Page[SubjectMetrics]{}, err
			}
			for _, m := range ms {
				subjects = append(subjects, metricsSubject{id: m.ID, kind: KindMonitor, name: m.Name, created: m.CreatedAt, state: m.State, slo: m.SLO})
			}
		}
		n, err := a.store.CountMatchingMonitors(ctx, actor.WorkspaceID, q)
		if err != nil {
			return Page[SubjectMetrics]{}, err
		}
		total += n
	}
	page := Page[SubjectMetrics]{Total: total, HasTotal: true}
	if len(subjects) > limit {
		subjects = subjects[:limit]
		page.NextCursor = encodeCursor(subjects[limit-1].id)
	}
	err = a.priced(ctx, actor, len(subjects)*each, func() (err error) {
		page.Items, err = a.subjectMetrics(ctx, actor.WorkspaceID, subjects, span)
		return err
	})
	if err != nil {
		return Page[SubjectMetrics]{}, err
	}
	return page, nil
}
