package httpapi

import (
	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The lists' filters. Each query parameter's choices come from the
// domain's list, as the bodies' bounds do (rules.go); app checks the
// values again for every caller, the web app included. A parameter that
// takes several values is repeated: ?state=DOWN&state=DEGRADED.

// StateFilter is one value of ?state=.
type StateFilter string

func (StateFilter) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Enum: choices(monitor.States)}
}

// TypeFilter is one value of ?type=.
type TypeFilter string

func (TypeFilter) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Enum: choices(monitor.Types)}
}

func choices[T ~string](cs []T) []any {
	out := make([]any, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

// IncidentStatusFilter is ?status= of the incidents.
type IncidentStatusFilter string

func (IncidentStatusFilter) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Enum: choices(app.IncidentStatusFilters)}
}

// NameQuery is ?q=.
type NameQuery string

func (NameQuery) Schema(huma.Registry) *huma.Schema {
	hi := app.MaxNameQueryLen
	return &huma.Schema{Type: huma.TypeString, MaxLength: &hi}
}

// The list inputs repeat listInput's fields: huma reads no parameters
// from an embedded struct of an unexported type.
type monitorListInput struct {
	InWorkspace
	Cursor string        `query:"cursor" maxLength:"512" doc:"nextCursor from the previous page."`
	Limit  int           `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100."`
	State  []StateFilter `query:"state,explode" doc:"Only monitors in one of these states; repeat for several (state=DOWN&state=DEGRADED)."`
	Type   []TypeFilter  `query:"type,explode" doc:"Only monitors of one of these types; repeat for several."`
	Q      NameQuery     `query:"q" doc:"Only monitors whose name contains this text, ignoring case."`
}

func (in *monitorListInput) filter() app.MonitorFilter {
	return app.MonitorFilter{States: convert[monitor.State](in.State), Types: convert[monitor.Type](in.Type), Name: string(in.Q)}
}

type heartbeatListInput struct {
	InWorkspace
	Cursor string        `query:"cursor" maxLength:"512" doc:"nextCursor from the previous page."`
	Limit  int           `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100."`
	State  []StateFilter `query:"state,explode" doc:"Only heartbeats in one of these states; repeat for several (state=DOWN&state=PAUSED)."`
}

func convert[T, F ~string](in []F) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = T(v)
	}
	return out
}
