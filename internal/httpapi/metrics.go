package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/stamp"
)

// Metrics: availability, coverage, durations by state, checks or pings,
// latencies or run durations, and incidents, of a subject over a window,
// and per bucket when a resolution is asked for. Every response carries
// the methodology.

// MetricsSubject names what the figures are of.
type MetricsSubject struct {
	ID   string `json:"id" doc:"The monitor (mon_…) or heartbeat (hb_…)."`
	Kind string `json:"kind" enum:"monitor,heartbeat"`
	Name string `json:"name"`
}

// StateDurations is the time spent in each state, in seconds; with
// beforeCreation they add up to the span exactly.
type StateDurations struct {
	Pending        float64 `json:"pending" doc:"Seconds PENDING: created, no known result yet."`
	Up             float64 `json:"up" doc:"Seconds UP."`
	Degraded       float64 `json:"degraded" doc:"Seconds DEGRADED."`
	Down           float64 `json:"down" doc:"Seconds DOWN: the downtime."`
	Unknown        float64 `json:"unknown" doc:"Seconds UNKNOWN, including spans in which no Tocsin node was checking."`
	Paused         float64 `json:"paused" doc:"Seconds PAUSED."`
	Maintenance    float64 `json:"maintenance" doc:"Seconds in a maintenance window."`
	BeforeCreation float64 `json:"beforeCreation" doc:"Seconds of the span before the subject was created."`
}

// CheckCounts counts a monitor's checks by result.
type CheckCounts struct {
	Up       int64 `json:"up"`
	Degraded int64 `json:"degraded"`
	Down     int64 `json:"down"`
	Unknown  int64 `json:"unknown" doc:"Checks whose probe could not tell; never counted as up or down."`
	Total    int64 `json:"total"`
}

// PingCounts counts a heartbeat's pings by signal.
type PingCounts struct {
	Success int64 `json:"success" doc:"Pings that reported success (no suffix, or exit code 0)."`
	Start   int64 `json:"start" doc:"/start pings."`
	Fail    int64 `json:"fail" doc:"/fail pings and non-zero exit codes."`
	Total   int64 `json:"total"`
}

// IncidentFigures summarise a subject's automatic incidents.
type IncidentFigures struct {
	Count           int      `json:"count" doc:"Incidents opened in the span."`
	DowntimeSeconds float64  `json:"downtimeSeconds" doc:"Seconds DOWN in the span (durations.down)."`
	MTTRSeconds     *float64 `json:"mttrSeconds" nullable:"true" doc:"Mean time to recovery of the incidents opened in the span and resolved since, in seconds; null when none is."`
}

// MetricFigures are what a span says of a subject.
type MetricFigures struct {
	Availability           *float64                `json:"availability" nullable:"true" doc:"(up + degraded) / known time; null when nothing is known."`
	UnadjustedAvailability *float64                `json:"unadjustedAvailability" nullable:"true" doc:"(up + degraded) / the time the subject existed; null when it did not exist in the span."`
	Coverage               *float64                `json:"coverage" nullable:"true" doc:"Known time / (the time the subject existed − paused − maintenance); null when nothing was monitored."`
	Durations              StateDurations          `json:"durations"`
	Checks                 *CheckCounts            `json:"checks,omitempty" doc:"Monitors: checks by result."`
	LatencyMs              *metrics.LatencySummary `json:"latencyMs,omitempty" doc:"Monitors: latency of known checks, in milliseconds."`
	Pings                  *PingCounts             `json:"pings,omitempty" doc:"Heartbeats: pings by signal."`
	RunDurationMs          *metrics.LatencySummary `json:"runDurationMs,omitempty" doc:"Heartbeats: durations of runs that sent /start, in milliseconds."`
	Incidents              IncidentFigures         `json:"incidents"`
}

// MetricsBucket is one bucket of a series.
type MetricsBucket struct {
	Start stamp.Time `json:"start" doc:"The bucket's start; the first bucket starts at from."`
	End   stamp.Time `json:"end" doc:"The bucket's end (exclusive); the last bucket ends at to."`
	MetricFigures
}

// SubjectMetrics is one subject's figures over [from, to).
type SubjectMetrics struct {
	Subject    MetricsSubject `json:"subject"`
	From       stamp.Time     `json:"from" doc:"Start of the span answered."`
	To         stamp.Time     `json:"to" doc:"End of the span answered (exclusive); a to after now is answered up to now."`
	Resolution string         `json:"resolution,omitempty" enum:"hour,day" doc:"The series' bucket size, when asked for."`
	TZ         string         `json:"tz,omitempty" doc:"The zone whose days and hours the buckets follow."`
	MetricFigures
	Series []MetricsBucket `json:"series,omitempty" doc:"The figures per bucket, when a resolution was asked for."`
	SLO    *SLOFigures     `json:"slo,omitempty" doc:"Subjects with an objective: its error budget over the objective's own period ending now."`
}

// MetricsResponse is one subject's metrics with the methodology.
type MetricsResponse struct {
	SubjectMetrics
	Methodology metrics.Methodology `json:"methodology"`
}

// MetricsList is a page of the workspace's metrics with the methodology.
type MetricsList struct {
	List[SubjectMetrics]
	Methodology metrics.Methodology `json:"methodology"`
}

func seconds(d time.Duration) float64 { return d.Seconds() }

func toFigures(f app.Figures) MetricFigures {
	d := f.Durations
	out := MetricFigures{
		Availability: f.Ratios.Availability, UnadjustedAvailability: f.Ratios.UnadjustedAvailability, Coverage: f.Ratios.Coverage,
		Durations: StateDurations{Pending: seconds(d.Pending), Up: seconds(d.Up), Degraded: seconds(d.Degraded), Down: seconds(d.Down),
			Unknown: seconds(d.Unknown), Paused: seconds(d.Paused), Maintenance: seconds(d.Maintenance), BeforeCreation: seconds(d.BeforeCreation)},
		LatencyMs: f.Latency, RunDurationMs: f.Runs,
		Incidents: IncidentFigures{Count: f.Incidents, DowntimeSeconds: seconds(d.Down)},
	}
	if f.MTTR != nil {
		s := seconds(*f.MTTR)
		out.Incidents.MTTRSeconds = &s
	}
	if c := f.Checks; c != nil {
		out.Checks = &CheckCounts{Up: c.Up, Degraded: c.Degraded, Down: c.Down, Unknown: c.Unknown, Total: c.Total()}
	}
	if p := f.Pings; p != nil {
		out.Pings = &PingCounts{Success: p.Success, Start: p.Start, Fail: p.Fail, Total: p.Success + p.Start + p.Fail}
	}
	return out
}

func toSubjectMetrics(req app.MetricsRequest) func(app.SubjectMetrics) SubjectMetrics {
	return func(m app.SubjectMetrics) SubjectMetrics {
		out := SubjectMetrics{Subject: MetricsSubject{ID: m.SubjectID, Kind: m.Kind, Name: m.Name},
			From: stamp.Of(m.From), To: stamp.Of(m.To), MetricFigures: toFigures(m.Figures), SLO: toSLOFigures(m.SLO)}
		if req.Resolution != "" {
			out.Resolution, out.TZ = string(req.Resolution), req.TZ
			if out.TZ == "" {
				out.TZ = "UTC"
			}
			out.Series = make([]MetricsBucket, len(m.Series))
			for i, b := range m.Series {
				out.Series[i] = MetricsBucket{Start: stamp.Of(b.Start), End: stamp.Of(b.End), MetricFigures: toFigures(b.Figures)}
			}
		}
		return out
	}
}

// MetricsQuery is the span and series a metrics request asks for.
type MetricsQuery struct {
	Window     string    `query:"window" enum:"1h,24h,7d,30d,90d,365d" doc:"A window ending now. Give either window or from and to; neither answers the last 24 hours."`
	From       time.Time `query:"from" doc:"Start of the span (RFC 3339), with to; at most 400 days before it."`
	To         time.Time `query:"to" doc:"End of the span (RFC 3339, exclusive), with from; a time after now is answered up to now."`
	Resolution string    `query:"resolution" enum:"hour,day" doc:"Also answer a series of buckets of this size (what uptime bars and latency charts draw)."`
	TZ         string    `query:"tz" maxLength:"64" doc:"IANA time zone whose days and hours the buckets follow, such as Europe/Berlin; UTC when absent."`
}

func (q MetricsQuery) request() app.MetricsRequest {
	r := app.MetricsRequest{Window: q.Window, Resolution: metrics.Resolution(q.Resolution), TZ: q.TZ}
	if !q.From.IsZero() {
		r.From = &q.From
	}
	if !q.To.IsZero() {
		r.To = &q.To
	}
	return r
}

type monitorMetricsInput struct {
	MonitorID
	MetricsQuery
}

type heartbeatMetricsInput struct {
	HeartbeatID
	MetricsQuery
}

type metricsListInput struct {
	InWorkspace
	MetricsQuery
	Cursor string        `query:"cursor" maxLength:"512" doc:"nextCursor from the previous page."`
	Limit  int           `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100."`
	Kind   string        `query:"kind" enum:"monitor,heartbeat" doc:"Only monitors, or only heartbeats; both when absent."`
	State  []StateFilter `query:"state,explode" doc:"Only subjects now in one of these states; repeat for several."`
	Type   []TypeFilter  `query:"type,explode" doc:"Only monitors of one of these types (leaves heartbeats out)."`
	Q      NameQuery     `query:"q" doc:"Only monitors whose name contains this text, ignoring case (leaves heartbeats out)."`
}

var tagsMetrics = []string{"Metrics"}

var metricsDescription = "Durations by state come from the state history, exact over any window; check counts and latencies from raw observations and their hourly and daily rollups. The methodology object states every formula. " +
	metricsPrice

// metricsPrice is what every metrics operation costs (app/metrics_budget.go).
var metricsPrice = fmt.Sprintf("Price: a subject's figures are 1 point, and each bucket of its series 1 more. "+
	"A response holds at most %s points (by default): a listing answers fewer subjects, with nextCursor, and one subject over it alone is a 422 naming query.resolution. "+
	"An API key spends at most %s points a minute (by default); past it, 429 rate_limited with Retry-After (X-RateLimit-* keep describing the request limit). "+
	"A query of %s points or more waits for one of the server's slots for large queries, at most %d seconds, then answers 503 unavailable with Retry-After.",
	thousands(app.MetricsPointsPerResponse), thousands(app.MetricsPointsPerMinute), thousands(app.HeavyMetricsPoints), int(app.HeavyMetricsWait/time.Second))

// thousands writes n with a comma between thousands: 10,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

var opGetMonitorMetrics = op(huma.Operation{OperationID: "getMonitorMetrics", Method: http.MethodGet, Path: Prefix + "/monitors/{id}/metrics",
	Summary: "Get a monitor's metrics", Description: "Availability, coverage, durations by state, checks by result, latency percentiles and incidents over a window, optionally per hour or day. " + metricsDescription,
	Tags: tagsMetrics},
	account.ScopeMetricsRead, http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusServiceUnavailable)

func (s *Server) getMonitorMetrics(ctx context.Context, in *monitorMetricsInput) (*struct{ Body MetricsResponse }, error) {
	req := in.request()
	m, err := s.app.MonitorMetrics(ctx, actorFrom(ctx), in.ID, req)
	if err != nil {
		return nil, err
	}
	return &struct{ Body MetricsResponse }{Body: MetricsResponse{SubjectMetrics: toSubjectMetrics(req)(m), Methodology: metrics.Method()}}, nil
}

var opGetHeartbeatMetrics = op(huma.Operation{OperationID: "getHeartbeatMetrics", Method: http.MethodGet, Path: Prefix + "/heartbeats/{id}/metrics",
	Summary: "Get a heartbeat's metrics", Description: "Availability, coverage, durations by state, pings by signal, run durations and incidents over a window, optionally per hour or day. " + metricsDescription,
	Tags: tagsMetrics},
	account.ScopeMetricsRead, http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusServiceUnavailable)

func (s *Server) getHeartbeatMetrics(ctx context.Context, in *heartbeatMetricsInput) (*struct{ Body MetricsResponse }, error) {
	req := in.request()
	m, err := s.app.HeartbeatMetrics(ctx, actorFrom(ctx), in.ID, req)
	if err != nil {
		return nil, err
	}
	return &struct{ Body MetricsResponse }{Body: MetricsResponse{SubjectMetrics: toSubjectMetrics(req)(m), Methodology: metrics.Method()}}, nil
}

var opListMetrics = op(huma.Operation{OperationID: "listMetrics", Method: http.MethodGet, Path: Prefix + "/metrics",
	Summary: "List the metrics of every monitor and heartbeat", Description: "One page of subjects by id, heartbeats (hb_…) first, then monitors (mon_…), each with its figures over the window. " + metricsDescription,
	Tags: tagsMetrics},
	account.ScopeMetricsRead, http.StatusUnprocessableEntity, http.StatusServiceUnavailable)

func (s *Server) listMetrics(ctx context.Context, in *metricsListInput) (*struct{ Body MetricsList }, error) {
	req := in.request()
	f := app.MetricsFilter{Kind: in.Kind, States: convert[monitor.State](in.State),
		Monitor: app.MonitorFilter{Types: convert[monitor.Type](in.Type), Name: string(in.Q)}}
	p, err := s.app.ListMetrics(ctx, actorFrom(ctx), f, app.PageRequest{Cursor: in.Cursor, Limit: in.Limit}, req)
	if err != nil {
		return nil, err
	}
	return &struct{ Body MetricsList }{Body: MetricsList{List: toList(p, toSubjectMetrics(req)), Methodology: metrics.Method()}}, nil
}
