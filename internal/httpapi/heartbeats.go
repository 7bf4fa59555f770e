package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/stamp"
)

// HeartbeatSchedule says when a heartbeat's job runs: every periodSeconds,
// or by a cron expression in a time zone; either way a run may report up to
// graceSeconds late.
type HeartbeatSchedule struct {
	PeriodSeconds int    `json:"periodSeconds,omitempty" doc:"The job runs every this many seconds (60 to 365 days). Give this or cron."`
	Cron          string `json:"cron,omitempty" doc:"The job's cron expression: five fields (minute hour day-of-month month day-of-week) or a macro such as @daily. Give this or periodSeconds."`
	Timezone      string `json:"timezone,omitempty" doc:"IANA time zone the cron expression is read in (cron only); default UTC."`
	GraceSeconds  *int   `json:"graceSeconds,omitempty" doc:"How late a run may report before it counts as late; absent or 0: the default, 300."`
}

// Heartbeat is a job that reports in by calling its ping URL.
type Heartbeat struct {
	ID                string            `json:"id" doc:"hb_…"`
	Name              string            `json:"name"`
	PingURL           string            `json:"pingUrl" doc:"The job calls this URL (GET or POST) when it succeeds; add /start when it begins, /fail when it fails, or /<exit code>. Optional query: key (makes a retry a no-op for 24 hours), rid (pairs a start with its end). Secret: anyone with it can report for the job. Rotate it with POST /heartbeats/{id}/rotate-token."`
	Schedule          HeartbeatSchedule `json:"schedule"`
	MaxRuntimeSeconds int               `json:"maxRuntimeSeconds" doc:"A run that began with /start and has not ended after this long is an overrun (DOWN); 0: no limit."`
	Paused            bool              `json:"paused"`
	State             string            `json:"state" enum:"PENDING,UP,DOWN,UNKNOWN,PAUSED,MAINTENANCE" doc:"PENDING until the first ping; DOWN when late, failed or overrun; UNKNOWN from the start of a span in which this service itself was not receiving pings, until a ping or a deadline says more."`
	StateSince        stamp.Time        `json:"stateSince"`
	LastPingAt        *stamp.Time       `json:"lastPingAt" nullable:"true" doc:"The last ping of any kind, ignored ones excepted."`
	LastStartAt       *stamp.Time       `json:"lastStartAt" nullable:"true"`
	LastResult        *string           `json:"lastResult" nullable:"true" doc:"What the last completed run reported: success or fail; null before the first."`
	LastExitCode      *int              `json:"lastExitCode,omitempty" doc:"The exit code the last completed run reported, if it gave one."`
	LastDurationMs    *float64          `json:"lastDurationMs" nullable:"true" doc:"How long the last completed run took, from its /start; null when it sent no start."`
	NextDeadline      *stamp.Time       `json:"nextDeadline" nullable:"true" doc:"When the heartbeat becomes late (or a started run overruns) if no ping comes; null when nothing is expected: before the first ping, while paused, and after a missed deadline made it DOWN (until the next ping). After a failure the next run is still expected."`
	CreatedAt         stamp.Time        `json:"createdAt"`
	UpdatedAt         stamp.Time        `json:"updatedAt"`
	SLO               *Objective        `json:"slo" doc:"The heartbeat's objective; null: none."`
}

// HeartbeatCreate is the body of POST /api/v1/heartbeats.
type HeartbeatCreate struct {
	Name              string            `json:"name"`
	Schedule          HeartbeatSchedule `json:"schedule"`
	MaxRuntimeSeconds int               `json:"maxRuntimeSeconds,omitempty" doc:"0 or absent: no overrun check."`
	Paused            bool              `json:"paused,omitempty" doc:"Create it paused."`
	SLO               *Objective        `json:"slo,omitempty" doc:"An objective; absent: none."`
}

// HeartbeatPatch is the body of PATCH /api/v1/heartbeats/{id}: fields given
// replace the stored ones; a schedule given replaces the whole schedule.
type HeartbeatPatch struct {
	Name              *string            `json:"name,omitempty"`
	Schedule          *HeartbeatSchedule `json:"schedule,omitempty"`
	MaxRuntimeSeconds *int               `json:"maxRuntimeSeconds,omitempty"`
	SLO               ObjectivePatch     `json:"slo,omitempty"`
}

func (s HeartbeatSchedule) domain() heartbeat.Schedule {
	out := heartbeat.Schedule{PeriodSeconds: s.PeriodSeconds, Cron: s.Cron, Timezone: s.Timezone}
	if s.GraceSeconds != nil {
		out.GraceSeconds = *s.GraceSeconds
	}
	return out
}

func (c *HeartbeatCreate) draft() heartbeat.Draft {
	return heartbeat.Draft{Name: c.Name, Schedule: c.Schedule.domain(), MaxRuntimeSeconds: c.MaxRuntimeSeconds, Paused: c.Paused,
		SLO: c.SLO.domain()}
}

// Resolve runs the domain's rules after the schema's, so one 422 lists
// every failing field: huma calls it even when schema validation failed.
func (c *HeartbeatCreate) Resolve(huma.Context) []error {
	d := c.draft()
	return fieldDetails(append(d.Normalize(), app.SLOProblems(d.SLO)...))
}

// Resolve checks the fields a patch gives against the domain's rules (a
// schedule is checked whole, since it replaces the stored one); the merged
// result is validated again when the patch is applied.
func (p *HeartbeatPatch) Resolve(huma.Context) []error {
	d := heartbeat.Draft{Name: "n", Schedule: heartbeat.Schedule{PeriodSeconds: heartbeat.MinPeriodSeconds}}
	if p.Name != nil {
		d.Name = *p.Name
	}
	if p.Schedule != nil {
		d.Schedule = p.Schedule.domain()
	}
	if p.MaxRuntimeSeconds != nil {
		d.MaxRuntimeSeconds = *p.MaxRuntimeSeconds
	}
	return fieldDetails(append(d.Normalize(), app.SLOProblems(p.SLO.Value.domain())...))
}

func fieldDetails(fs []errs.FieldError) []error {
	var problems []error
	for _, f := range fs {
		problems = append(problems, &huma.ErrorDetail{Location: f.Pointer, Message: f.Message})
	}
	return problems
}

func (s *Server) toHeartbeat(h heartbeat.Heartbeat) Heartbeat {
	rt := h.Runtime
	grace := h.Schedule.GraceSeconds
	out := Heartbeat{ID: h.ID, Name: h.Name, PingURL: s.pingURL(h.Token),
		Schedule: HeartbeatSchedule{PeriodSeconds: h.Schedule.PeriodSeconds, Cron: h.Schedule.Cron,
			Timezone: h.Schedule.Timezone, GraceSeconds: &grace},
		MaxRuntimeSeconds: h.MaxRuntimeSeconds, Paused: h.Paused, State: string(rt.State), StateSince: stamp.Of(rt.Since),
		LastPingAt: stamp.Ptr(timePtr(rt.LastPing)), LastStartAt: stamp.Ptr(timePtr(rt.LastStart)), NextDeadline: stamp.Ptr(timePtr(h.NextDeadline())),
		CreatedAt: stamp.Of(h.CreatedAt), UpdatedAt: stamp.Of(h.UpdatedAt), SLO: toObjective(h.SLO)}
	if rt.LastCompletion != 0 {
		r := rt.LastCompletion.String()
		out.LastResult = &r
		if rt.LastExitCode >= 0 {
			code := rt.LastExitCode
			out.LastExitCode = &code
		}
	}
	if rt.LastDuration >= 0 && rt.LastCompletion != 0 {
		d := ms(rt.LastDuration)
		out.LastDurationMs = &d
	}
	return out
}

// pingURL is the full ping URL of a token.
func (s *Server) pingURL(token string) string {
	return strings.TrimSuffix(s.baseURL, "/") + "/ping/" + token
}

// Ping is one received ping, as listed.
type Ping struct {
	ReceivedAt    stamp.Time `json:"receivedAt"`
	Signal        string     `json:"signal" enum:"success,start,fail"`
	ExitCode      *int       `json:"exitCode,omitempty"`
	RunID         string     `json:"runId,omitempty"`
	DurationMs    *float64   `json:"durationMs,omitempty" doc:"For the end of a run that sent /start: how long it took."`
	Method        string     `json:"method" enum:"GET,POST"`
	ClientAddress string     `json:"clientAddress"`
	UserAgent     string     `json:"userAgent,omitempty"`
	Key           string     `json:"key,omitempty" doc:"The ?key= it carried."`
	Body          string     `json:"body,omitempty" doc:"The POST body, kept as the run's log: at most 10 KiB (bytes that are not UTF-8 are replaced)."`
	BodyTruncated bool       `json:"bodyTruncated,omitempty" doc:"The body was longer and was cut at 10 KiB."`
	Ignored       bool       `json:"ignored,omitempty" doc:"Received while the heartbeat was paused: kept, but it changed nothing."`
}

func toPing(p heartbeat.PingRecord) Ping {
	out := Ping{ReceivedAt: stamp.Of(p.At), Signal: p.Signal.String(), RunID: p.RunID, Method: p.Method, ClientAddress: p.Client,
		UserAgent: p.UserAgent, Key: p.Key, Body: strings.ToValidUTF8(string(p.Body), "\uFFFD"),
		BodyTruncated: p.Truncated, Ignored: p.Ignored}
	if p.ExitCode >= 0 {
		code := p.ExitCode
		out.ExitCode = &code
	}
	if p.Duration >= 0 {
		d := ms(p.Duration)
		out.DurationMs = &d
	}
	return out
}

type HeartbeatID struct {
	InWorkspace
	ID string `path:"id" maxLength:"64" doc:"Heartbeat id (hb_…)."`
}

type heartbeatBody struct {
	Body Heartbeat
}

type createdHeartbeat struct {
	Location string `header:"Location" doc:"URL of the new heartbeat."`
	Body     Heartbeat
}

type patchHeartbeatInput struct {
	HeartbeatID
	Body HeartbeatPatch
}

type heartbeatStatesInput struct {
	HeartbeatID
	Cursor string `query:"cursor" maxLength:"512" doc:"nextCursor from the previous page."`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100."`
}

type pingsInput struct {
	HeartbeatID
	Cursor string    `query:"cursor" maxLength:"512" doc:"nextCursor from the previous page."`
	Limit  int       `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100."`
	From   time.Time `query:"from" doc:"Only pings received at or after this time (RFC 3339)."`
	To     time.Time `query:"to" doc:"Only pings received before this time (RFC 3339)."`
}

var tagsHeartbeats = []string{"Heartbeats"}

var opCreateHeartbeat = idempotent(op(huma.Operation{OperationID: "createHeartbeat", Method: http.MethodPost, Path: Prefix + "/heartbeats",
	Summary: "Create a heartbeat", Description: "The response holds the ping URL the job must call.", Tags: tagsHeartbeats,
	DefaultStatus: http.StatusCreated},
	account.ScopeMonitorsWrite, http.StatusPaymentRequired, http.StatusConflict, http.StatusRequestEntityTooLarge,
	http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity))

func (s *Server) createHeartbeat(ctx context.Context, in *createInput[HeartbeatCreate]) (*createdHeartbeat, error) {
	h, err := s.app.CreateHeartbeat(ctx, actorFrom(ctx), in.Body.draft())
	if err != nil {
		return nil, err
	}
	return &createdHeartbeat{Location: Prefix + "/heartbeats/" + h.ID, Body: s.toHeartbeat(h)}, nil
}

var opListHeartbeats = op(huma.Operation{OperationID: "listHeartbeats", Method: http.MethodGet, Path: Prefix + "/heartbeats",
	Summary: "List heartbeats", Description: "Heartbeats in creation order, oldest first, narrowed by the filters given; total counts those that match.", Tags: tagsHeartbeats},
	account.ScopeMonitorsRead, http.StatusUnprocessableEntity)

func (s *Server) listHeartbeats(ctx context.Context, in *heartbeatListInput) (*struct{ Body List[Heartbeat] }, error) {
	p, err := s.app.ListHeartbeats(ctx, actorFrom(ctx), app.HeartbeatFilter{States: convert[monitor.State](in.State)},
		app.PageRequest{Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	return &struct{ Body List[Heartbeat] }{Body: toList(p, s.toHeartbeat)}, nil
}

var opGetHeartbeat = op(huma.Operation{OperationID: "getHeartbeat", Method: http.MethodGet, Path: Prefix + "/heartbeats/{id}",
	Summary: "Get a heartbeat", Tags: tagsHeartbeats}, account.ScopeMonitorsRead, http.StatusNotFound)

func (s *Server) getHeartbeat(ctx context.Context, in *HeartbeatID) (*heartbeatBody, error) {
	return s.oneHeartbeat(s.app.GetHeartbeat(ctx, actorFrom(ctx), in.ID))
}

var opUpdateHeartbeat = op(huma.Operation{OperationID: "updateHeartbeat", Method: http.MethodPatch, Path: Prefix + "/heartbeats/{id}",
	Summary: "Update a heartbeat", Description: "Changes name, schedule or maximum runtime; the result is validated as a whole. A new schedule moves the next deadline to what it expects after the last ping.", Tags: tagsHeartbeats},
	account.ScopeMonitorsWrite, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge,
	http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)

func (s *Server) updateHeartbeat(ctx context.Context, in *patchHeartbeatInput) (*heartbeatBody, error) {
	p := in.Body
	return s.oneHeartbeat(s.app.UpdateHeartbeat(ctx, actorFrom(ctx), in.ID, func(cur heartbeat.Heartbeat) (heartbeat.Draft, error) {
		d := heartbeat.Draft{Name: cur.Name, Schedule: cur.Schedule, MaxRuntimeSeconds: cur.MaxRuntimeSeconds, Paused: cur.Paused,
			SLO: p.SLO.apply(cur.SLO)}
		if p.Name != nil {
			d.Name = *p.Name
		}
		if p.Schedule != nil {
			d.Schedule = p.Schedule.domain()
		}
		if p.MaxRuntimeSeconds != nil {
			d.MaxRuntimeSeconds = *p.MaxRuntimeSeconds
		}
		return d, nil
	}))
}

var opDeleteHeartbeat = op(huma.Operation{OperationID: "deleteHeartbeat", Method: http.MethodDelete, Path: Prefix + "/heartbeats/{id}",
	Summary: "Delete a heartbeat", Description: "Its ping URL stops working; its pings and state history are deleted.", Tags: tagsHeartbeats,
	DefaultStatus: http.StatusNoContent}, account.ScopeMonitorsWrite, http.StatusNotFound)

func (s *Server) deleteHeartbeat(ctx context.Context, in *HeartbeatID) (*struct{}, error) {
	return nil, s.app.DeleteHeartbeat(ctx, actorFrom(ctx), in.ID)
}

var opPauseHeartbeat = op(huma.Operation{OperationID: "pauseHeartbeat", Method: http.MethodPost, Path: Prefix + "/heartbeats/{id}/pause",
	Summary: "Pause a heartbeat: pings are acknowledged but ignored, and nothing alerts", Tags: tagsHeartbeats},
	account.ScopeMonitorsWrite, http.StatusNotFound)

func (s *Server) pauseHeartbeat(ctx context.Context, in *HeartbeatID) (*heartbeatBody, error) {
	return s.oneHeartbeat(s.app.SetHeartbeatPaused(ctx, actorFrom(ctx), in.ID, true))
}

var opResumeHeartbeat = op(huma.Operation{OperationID: "resumeHeartbeat", Method: http.MethodPost, Path: Prefix + "/heartbeats/{id}/resume",
	Summary: "Resume a paused heartbeat: PENDING, due by its next run if it has ever pinged", Tags: tagsHeartbeats},
	account.ScopeMonitorsWrite, http.StatusNotFound)

func (s *Server) resumeHeartbeat(ctx context.Context, in *HeartbeatID) (*heartbeatBody, error) {
	return s.oneHeartbeat(s.app.SetHeartbeatPaused(ctx, actorFrom(ctx), in.ID, false))
}

var opRotateHeartbeatToken = op(huma.Operation{OperationID: "rotateHeartbeatToken", Method: http.MethodPost,
	Path: Prefix + "/heartbeats/{id}/rotate-token", Summary: "Give a heartbeat a new ping URL",
	Description: "The old ping URL stops working at once; the response holds the new one.", Tags: tagsHeartbeats},
	account.ScopeMonitorsWrite, http.StatusNotFound)

func (s *Server) rotateHeartbeatToken(ctx context.Context, in *HeartbeatID) (*heartbeatBody, error) {
	return s.oneHeartbeat(s.app.RotateHeartbeatToken(ctx, actorFrom(ctx), in.ID))
}

var opListHeartbeatStates = op(huma.Operation{OperationID: "listHeartbeatStates", Method: http.MethodGet, Path: Prefix + "/heartbeats/{id}/states",
	Summary: "List a heartbeat's state history", Description: "Every change of state with its cause (late, overrun, failure, an outage of this service…), newest first.", Tags: tagsHeartbeats},
	account.ScopeMonitorsRead, http.StatusNotFound, http.StatusUnprocessableEntity)

func (s *Server) listHeartbeatStates(ctx context.Context, in *heartbeatStatesInput) (*struct{ Body List[StateChange] }, error) {
	p, err := s.app.ListStates(ctx, actorFrom(ctx), in.ID, app.PageRequest{Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	return &struct{ Body List[StateChange] }{Body: toList(p, toStateChange)}, nil
}

var opListHeartbeatPings = op(huma.Operation{OperationID: "listHeartbeatPings", Method: http.MethodGet, Path: Prefix + "/heartbeats/{id}/pings",
	Summary: "List a heartbeat's pings", Description: "Pings, newest first, with the body each POST carried.", Tags: tagsHeartbeats},
	account.ScopeMonitorsRead, http.StatusNotFound, http.StatusUnprocessableEntity)

func (s *Server) listHeartbeatPings(ctx context.Context, in *pingsInput) (*struct{ Body List[Ping] }, error) {
	p, err := s.app.ListPings(ctx, actorFrom(ctx), in.ID, app.PingQuery{
		PageRequest: app.PageRequest{Cursor: in.Cursor, Limit: in.Limit}, From: in.From, To: in.To})
	if err != nil {
		return nil, err
	}
	return &struct{ Body List[Ping] }{Body: toList(p, toPing)}, nil
}

// oneHeartbeat is the response of an operation that returns one heartbeat.
func (s *Server) oneHeartbeat(h heartbeat.Heartbeat, err error) (*heartbeatBody, error) {
	if err != nil {
		return nil, err
	}
	return &heartbeatBody{Body: s.toHeartbeat(h)}, nil
}
