package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/stamp"
)

// Check is one observation: what one check of a monitor found.
type Check struct {
	StartedAt  stamp.Time   `json:"startedAt" doc:"When the check began."`
	DueAt      *stamp.Time  `json:"dueAt,omitempty" doc:"When the schedule wanted it to begin; the difference is the scheduling lag. Absent for a test run."`
	Result     string       `json:"result" enum:"up,degraded,down,unknown" doc:"unknown: the probe could not tell (its own network, overload, shutdown); never counted as up or down."`
	Reason     string       `json:"reason,omitempty" doc:"Why the result is not up, in a few words."`
	LatencyMs  float64      `json:"latencyMs" doc:"The whole check, in milliseconds."`
	Phases     *CheckPhases `json:"phases,omitempty" doc:"Parts of the latency that happened, in milliseconds."`
	StatusCode int          `json:"statusCode,omitempty" doc:"http: the response status."`
	Probe      string       `json:"probe" doc:"The node that ran the check."`
	Region     string       `json:"region"`
}

// CheckPhases split a check's latency; an absent phase did not happen.
type CheckPhases struct {
	DNSMs       *float64 `json:"dnsMs,omitempty"`
	ConnectMs   *float64 `json:"connectMs,omitempty"`
	TLSMs       *float64 `json:"tlsMs,omitempty"`
	FirstByteMs *float64 `json:"firstByteMs,omitempty" doc:"From the start of the check to the first byte of the response."`
}

// StateChange is one entry of a monitor's or a heartbeat's state history.
type StateChange struct {
	At          stamp.Time `json:"at" doc:"When the new state began. A monitor's confirmed outage begins at the first failed check of the streak that confirmed it, and its recovery at the first passing check of its streak; a heartbeat goes DOWN at its deadline."`
	ConfirmedAt stamp.Time `json:"confirmedAt" doc:"When the change was confirmed (and its event sent): the check that completed the streak, or for a span no node was checking, the check that ended it. Equal to at when the change took effect at once."`
	From        string     `json:"from" enum:"PENDING,UP,DEGRADED,DOWN,UNKNOWN,PAUSED,MAINTENANCE"`
	To          string     `json:"to" enum:"PENDING,UP,DEGRADED,DOWN,UNKNOWN,PAUSED,MAINTENANCE"`
	Cause       string     `json:"cause"`
}

// CheckTest is the result of POST /monitors/test.
type CheckTest struct {
	Check
	Assertions []AssertionOutcome `json:"assertions" doc:"Each assertion's verdict; the response body itself is never returned."`
}

// AssertionOutcome is one assertion's verdict.
type AssertionOutcome struct {
	Kind   string `json:"kind" enum:"status,keyword,json"`
	Index  int    `json:"index" doc:"Position in its list (keywordAssertions, jsonAssertions); 0 for status."`
	Passed bool   `json:"passed"`
	Reason string `json:"reason,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func msPtr(d time.Duration) *float64 {
	if d <= 0 {
		return nil
	}
	v := ms(d)
	return &v
}

func toCheck(o monitor.Observation) Check {
	c := Check{StartedAt: stamp.Of(o.StartedAt), Result: string(o.Result), Reason: o.Reason, LatencyMs: ms(o.Latency),
		StatusCode: o.StatusCode, Probe: o.Probe, Region: o.Region}
	if !o.Due.IsZero() {
		due := o.Due
		c.DueAt = stamp.Ptr(&due)
	}
	p := CheckPhases{DNSMs: msPtr(o.Phases.DNS), ConnectMs: msPtr(o.Phases.Connect), TLSMs: msPtr(o.Phases.TLS),
		FirstByteMs: msPtr(o.Phases.FirstByte)}
	if p != (CheckPhases{}) {
		c.Phases = &p
	}
	return c
}

func toStateChange(t monitor.Transition) StateChange {
	return StateChange{At: stamp.Of(t.At), ConfirmedAt: stamp.Of(t.Confirmed()), From: string(t.From), To: string(t.To), Cause: t.Cause}
}

type checksInput struct {
	MonitorID
	Cursor string    `query:"cursor" maxLength:"512" doc:"nextCursor from the previous page."`
	Limit  int       `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100."`
	From   time.Time `query:"from" doc:"Only checks that started at or after this time (RFC 3339)."`
	To     time.Time `query:"to" doc:"Only checks that started before this time (RFC 3339)."`
	Result string    `query:"result" enum:"up,degraded,down,unknown" doc:"Only checks with this result."`
}

type statesInput struct {
	MonitorID
	Cursor string `query:"cursor" maxLength:"512" doc:"nextCursor from the previous page."`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100."`
}

type testMonitorInput struct {
	InWorkspace
	Body MonitorCreate
}

var opListMonitorChecks = op(huma.Operation{OperationID: "listMonitorChecks", Method: http.MethodGet, Path: Prefix + "/monitors/{id}/checks",
	Summary: "List a monitor's checks", Description: "Observations, newest first. Raw observations are kept for the retention the operator sets (30 days by default).", Tags: tagsMonitors},
	account.ScopeMonitorsRead, http.StatusNotFound, http.StatusUnprocessableEntity)

func (s *Server) listMonitorChecks(ctx context.Context, in *checksInput) (*struct{ Body List[Check] }, error) {
	p, err := s.app.ListChecks(ctx, actorFrom(ctx), in.ID, app.CheckQuery{
		PageRequest: app.PageRequest{Cursor: in.Cursor, Limit: in.Limit},
		From:        in.From, To: in.To, Result: monitor.Result(in.Result)})
	if err != nil {
		return nil, err
	}
	return &struct{ Body List[Check] }{Body: toList(p, toCheck)}, nil
}

var opListMonitorStates = op(huma.Operation{OperationID: "listMonitorStates", Method: http.MethodGet, Path: Prefix + "/monitors/{id}/states",
	Summary: "List a monitor's state history", Description: "Every change of state with its cause, newest first.", Tags: tagsMonitors},
	account.ScopeMonitorsRead, http.StatusNotFound, http.StatusUnprocessableEntity)

func (s *Server) listMonitorStates(ctx context.Context, in *statesInput) (*struct{ Body List[StateChange] }, error) {
	p, err := s.app.ListStates(ctx, actorFrom(ctx), in.ID, app.PageRequest{Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	return &struct{ Body List[StateChange] }{Body: toList(p, toStateChange)}, nil
}

var opTestMonitor = op(huma.Operation{OperationID: "testMonitor", Method: http.MethodPost, Path: Prefix + "/monitors/test",
	Summary:     "Run one check of a monitor configuration now",
	Description: "Runs one check of the draft (the body of a create) and returns what it found, with each assertion's verdict, without saving anything. The response body of the target is never returned.",
	Tags:        tagsMonitors},
	account.ScopeMonitorsWrite, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)

func (s *Server) testMonitor(ctx context.Context, in *testMonitorInput) (*struct{ Body CheckTest }, error) {
	d, err := in.Body.draft()
	if err != nil {
		return nil, err
	}
	o, err := s.app.TestMonitor(ctx, actorFrom(ctx), d)
	if err != nil {
		return nil, err
	}
	out := CheckTest{Check: toCheck(o), Assertions: []AssertionOutcome{}}
	for _, a := range o.Assertions {
		out.Assertions = append(out.Assertions, AssertionOutcome{Kind: a.Kind, Index: a.Index, Passed: a.Passed, Reason: a.Reason})
	}
	return &struct{ Body CheckTest }{Body: out}, nil
}
