package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
)

// InWorkspace is embedded in every authenticated input to document the
// header; the authenticate middleware reads it.
type InWorkspace struct {
	WorkspaceID string `header:"X-Workspace-Id" maxLength:"64" doc:"The workspace to act in. Required for account-wide keys; a workspace-bound key may omit it or must name its own workspace."`
}

type MonitorID struct {
	InWorkspace
	ID string `path:"id" maxLength:"64" doc:"Monitor id (mon_…)."`
}

type monitorBody struct {
	Body Monitor
}

// createInput is the input of every POST that creates: the workspace,
// an optional Idempotency-Key, and the body B.
type createInput[B any] struct {
	InWorkspace
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"Makes a retried create safe: the same key with the same body within 24 hours returns the stored response; with a different body, 409 idempotency_conflict."`
	Body           B
}

type createdMonitor struct {
	Location string `header:"Location" doc:"URL of the new monitor."`
	Body     Monitor
}

type listInput struct {
	InWorkspace
	Cursor string `query:"cursor" maxLength:"512" doc:"nextCursor from the previous page."`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100."`
}

// List is one page of a collection.
type List[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"nextCursor" nullable:"true" doc:"Pass as cursor to get the next page; null on the last page."`
	Total      *int    `json:"total,omitempty" doc:"Number of items in the whole collection, when cheap to know."`
}

func toList[D, W any](p app.Page[D], conv func(D) W) List[W] {
	out := List[W]{Data: make([]W, 0, len(p.Items))}
	for _, it := range p.Items {
		out.Data = append(out.Data, conv(it))
	}
	if p.NextCursor != "" {
		out.NextCursor = &p.NextCursor
	}
	if p.HasTotal {
		out.Total = &p.Total
	}
	return out
}

type monitorList struct {
	Body List[Monitor]
}

// MonitorPatch is the body of PATCH /api/v1/monitors/{id}.
type MonitorPatch struct {
	Name            *string        `json:"name,omitempty"`
	IntervalSeconds *int           `json:"intervalSeconds,omitempty"`
	SLO             ObjectivePatch `json:"slo,omitempty"`
	Config          map[string]any `json:"config,omitempty" doc:"A JSON merge patch (RFC 7396) of the monitor's config (see MonitorConfig): fields given replace the stored ones, null resets a field to its default, fields not given stay. config.auth absent keeps the stored credential, null removes it, an object replaces it whole. config.headers is merged into the stored headers: a header not named keeps its value, a string sets it, null removes it; config.headers null removes every header."`
}

type patchMonitorInput struct {
	MonitorID
	Body MonitorPatch
}

// op fills in what every authenticated operation shares. The result is a
// package-level descriptor that every Server registers, so the error list
// is clipped: huma appends to it at registration, and an append into
// spare capacity would write into the array all Servers share.
func op(o huma.Operation, scope account.Scope, problems ...int) huma.Operation {
	o.Metadata = map[string]any{metaScope: scope, metaIDs: idParams(o.Path)}
	o.Security = []map[string][]string{{"apiKey": {string(scope)}}}
	o.Errors = slices.Clip(append([]int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden,
		http.StatusTooManyRequests, http.StatusInternalServerError}, problems...))
	o.MaxBodyBytes = maxBodyBytes
	return o
}

// idempotent marks a create that honours Idempotency-Key.
func idempotent(o huma.Operation) huma.Operation {
	o.Metadata[metaIdempotent] = true
	return o
}

var tagsMonitors = []string{"Monitors"}

var opCreateMonitor = idempotent(op(huma.Operation{OperationID: "createMonitor", Method: http.MethodPost, Path: Prefix + "/monitors",
	Summary: "Create a monitor", Tags: tagsMonitors, DefaultStatus: http.StatusCreated},
	account.ScopeMonitorsWrite, http.StatusPaymentRequired, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity))

func (s *Server) createMonitor(ctx context.Context, in *createInput[MonitorCreate]) (*createdMonitor, error) {
	d, err := in.Body.draft()
	if err != nil {
		return nil, err
	}
	m, err := s.app.CreateMonitor(ctx, actorFrom(ctx), d)
	if err != nil {
		return nil, err
	}
	return &createdMonitor{Location: Prefix + "/monitors/" + m.ID, Body: toMonitor(m)}, nil
}

var opListMonitors = op(huma.Operation{OperationID: "listMonitors", Method: http.MethodGet, Path: Prefix + "/monitors",
	Summary: "List monitors", Description: "Monitors in creation order, oldest first, narrowed by the filters given; total counts those that match.", Tags: tagsMonitors},
	account.ScopeMonitorsRead, http.StatusUnprocessableEntity)

func (s *Server) listMonitors(ctx context.Context, in *monitorListInput) (*monitorList, error) {
	p, err := s.app.ListMonitors(ctx, actorFrom(ctx), in.filter(), app.PageRequest{Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	return &monitorList{Body: toList(p, toMonitor)}, nil
}

var opGetMonitor = op(huma.Operation{OperationID: "getMonitor", Method: http.MethodGet, Path: Prefix + "/monitors/{id}",
	Summary: "Get a monitor", Tags: tagsMonitors}, account.ScopeMonitorsRead, http.StatusNotFound)

func (s *Server) getMonitor(ctx context.Context, in *MonitorID) (*monitorBody, error) {
	return oneMonitor(s.app.GetMonitor(ctx, actorFrom(ctx), in.ID))
}

var opUpdateMonitor = op(huma.Operation{OperationID: "updateMonitor", Method: http.MethodPatch, Path: Prefix + "/monitors/{id}",
	Summary: "Update a monitor", Description: "Changes name, interval or config; the result is validated as a whole.", Tags: tagsMonitors},
	account.ScopeMonitorsWrite, http.StatusNotFound, http.StatusPaymentRequired, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)

func (s *Server) updateMonitor(ctx context.Context, in *patchMonitorInput) (*monitorBody, error) {
	return oneMonitor(s.app.UpdateMonitor(ctx, actorFrom(ctx), in.ID, s.applyPatch(in.Body)))
}

var opDeleteMonitor = op(huma.Operation{OperationID: "deleteMonitor", Method: http.MethodDelete, Path: Prefix + "/monitors/{id}",
	Summary: "Delete a monitor", Tags: tagsMonitors, DefaultStatus: http.StatusNoContent}, account.ScopeMonitorsWrite, http.StatusNotFound)

func (s *Server) deleteMonitor(ctx context.Context, in *MonitorID) (*struct{}, error) {
	return nil, s.app.DeleteMonitor(ctx, actorFrom(ctx), in.ID)
}

var opPauseMonitor = op(huma.Operation{OperationID: "pauseMonitor", Method: http.MethodPost, Path: Prefix + "/monitors/{id}/pause",
	Summary: "Pause a monitor: no checks run until it is resumed", Tags: tagsMonitors}, account.ScopeMonitorsWrite, http.StatusNotFound)

func (s *Server) pauseMonitor(ctx context.Context, in *MonitorID) (*monitorBody, error) {
	return oneMonitor(s.app.SetPaused(ctx, actorFrom(ctx), in.ID, true))
}

var opResumeMonitor = op(huma.Operation{OperationID: "resumeMonitor", Method: http.MethodPost, Path: Prefix + "/monitors/{id}/resume",
	Summary: "Resume a paused monitor; its state is PENDING until the next result", Tags: tagsMonitors}, account.ScopeMonitorsWrite, http.StatusNotFound)

func (s *Server) resumeMonitor(ctx context.Context, in *MonitorID) (*monitorBody, error) {
	return oneMonitor(s.app.SetPaused(ctx, actorFrom(ctx), in.ID, false))
}

// oneMonitor is the response of an operation that returns one monitor.
func oneMonitor(m monitor.Monitor, err error) (*monitorBody, error) {
	if err != nil {
		return nil, err
	}
	return &monitorBody{Body: toMonitor(m)}, nil
}

// applyPatch merges a PATCH body into the current monitor and validates the
// merged config against the same schema a create uses. Header values are
// write-only, so config.headers is not merged here but passed on as an
// edit that app applies to the stored values.
func (s *Server) applyPatch(p MonitorPatch) app.MonitorUpdate {
	headers, headerErrs := headerPatch(p.Config)
	config := withoutHeaders(p.Config)
	return func(cur monitor.Monitor) (app.MonitorChange, error) {
		d := monitor.Draft{Type: cur.Type, Name: cur.Name, Config: cur.Config, IntervalSeconds: cur.IntervalSeconds, Paused: cur.Paused,
			SLO: p.SLO.apply(cur.SLO)}
		if p.Name != nil {
			d.Name = *p.Name
		}
		if p.IntervalSeconds != nil {
			d.IntervalSeconds = *p.IntervalSeconds
		}
		ch := app.MonitorChange{Auth: app.AuthKeep, Headers: headers}
		if p.Config == nil {
			d.Config.AuthSet = nil
			ch.Draft = d
			return ch, nil
		}
		var merged map[string]any
		b, _ := json.Marshal(toConfig(cur.Config))
		if err := json.Unmarshal(b, &merged); err != nil {
			return ch, err
		}
		delete(merged, "auth") // the stored credential is handled apart
		if a, ok := p.Config["auth"]; ok {
			ch.Auth = app.AuthRemove
			if a != nil {
				ch.Auth = app.AuthReplace
			}
		}
		mergePatch(merged, config)
		res := &huma.ValidateResult{}
		schema := s.api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[MonitorConfig](), false, "")
		huma.Validate(s.api.OpenAPI().Components.Schemas, schema, huma.NewPathBuffer([]byte("body.config"), 0), huma.ModeWriteToServer, merged, res)
		fields := headerErrs
		for _, e := range res.Errors {
			if det, ok := e.(huma.ErrorDetailer); ok {
				fields = append(fields, errs.FieldError{Pointer: locationPointer(det.ErrorDetail().Location), Message: det.ErrorDetail().Message})
			}
		}
		if len(fields) > 0 {
			return ch, &errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields", Fields: fields}
		}
		var cfg MonitorConfig
		b, _ = json.Marshal(merged)
		if err := json.Unmarshal(b, &cfg); err != nil {
			return ch, &errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields",
				Fields: []errs.FieldError{{Pointer: "/config", Message: err.Error()}}}
		}
		dc, auth, err := cfg.domain()
		if err != nil {
			return ch, err
		}
		d.Config, d.Auth = dc, auth
		d.Config.Headers = nil // app merges them into the stored values
		ch.Draft = d
		return ch, nil
	}
}

// isHeaders reports whether a config key names the headers: decoding
// ignores case, so this does too.
func isHeaders(key string) bool { return strings.EqualFold(key, "headers") }

// headerPatch reads config.headers of a PATCH: null removes every header;
// an object sets the headers it names to a string, or removes them with
// null; headers it does not name keep their values.
func headerPatch(config map[string]any) (monitor.HeaderPatch, []errs.FieldError) {
	var p monitor.HeaderPatch
	var problems []errs.FieldError
	for key, v := range config {
		if !isHeaders(key) {
			continue
		}
		switch h := v.(type) {
		case nil:
			p.Clear = true
		case map[string]any:
			if p.Set == nil {
				p.Set = make(map[string]*string, len(h))
			}
			for name, val := range h {
				switch val := val.(type) {
				case nil:
					p.Set[name] = nil
				case string:
					p.Set[name] = &val
				default:
					problems = append(problems, errs.FieldError{Pointer: "/config/headers/" + locationEscape(name),
						Message: "must be a string, or null to remove the header"})
				}
			}
		default:
			problems = append(problems, errs.FieldError{Pointer: "/config/headers", Message: "must be an object, or null to remove every header"})
		}
	}
	return p, problems
}

// withoutHeaders is a PATCH's config without its headers, which are
// merged apart.
func withoutHeaders(config map[string]any) map[string]any {
	if config == nil {
		return nil
	}
	out := make(map[string]any, len(config))
	for k, v := range config {
		if !isHeaders(k) {
			out[k] = v
		}
	}
	return out
}

// locationEscape escapes a token for a JSON pointer (RFC 6901).
func locationEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// mergePatch applies an RFC 7396 merge patch to target in place.
func mergePatch(target, patch map[string]any) {
	for k, v := range patch {
		if v == nil {
			delete(target, k)
			continue
		}
		if pm, ok := v.(map[string]any); ok {
			if tm, ok := target[k].(map[string]any); ok {
				mergePatch(tm, pm)
				continue
			}
			fresh := map[string]any{}
			mergePatch(fresh, pm)
			target[k] = fresh
			continue
		}
		target[k] = v
	}
}
