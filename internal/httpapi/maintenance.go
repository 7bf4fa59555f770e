package httpapi

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/stamp"
)

// MaintenanceWindow is a maintenance window as the API shows it.
type MaintenanceWindow struct {
	ID            string                 `json:"id" example:"mw_01JD5Z8Q3C4M6V9X2B7N1K0PQR" doc:"Stable, sortable identifier."`
	Name          string                 `json:"name"`
	Description   string                 `json:"description" doc:"Free text; empty when none."`
	StartsAt      stamp.Time             `json:"startsAt" doc:"One-off: when the window begins. Recurring: no occurrence begins before it, and an rrule counts from it (DTSTART)."`
	EndsAt        *stamp.Time            `json:"endsAt,omitempty" nullable:"false" doc:"One-off windows: when the window ends."`
	Recurrence    *MaintenanceRecurrence `json:"recurrence,omitempty" doc:"Recurring windows: when occurrences begin and how long each lasts."`
	MonitorIDs    []string               `json:"monitorIds" doc:"Monitors held in MAINTENANCE while the window is active."`
	HeartbeatIDs  []string               `json:"heartbeatIds" doc:"Heartbeats held in MAINTENANCE while the window is active."`
	Public        bool                   `json:"public" doc:"Shown, with its name and description as written, on the status pages that hold any of its monitors or heartbeats, while active and as scheduled."`
	Active        bool                   `json:"active" doc:"An occurrence is in progress now. Monitor and heartbeat states follow within seconds."`
	CurrentEndsAt *stamp.Time            `json:"currentEndsAt" nullable:"true" doc:"When the occurrence in progress ends; null when the window is not active."`
	NextStartAt   *stamp.Time            `json:"nextStartAt" nullable:"true" doc:"When the next occurrence begins (after the one in progress, if any); null when none is left."`
	CreatedAt     stamp.Time             `json:"createdAt"`
	UpdatedAt     stamp.Time             `json:"updatedAt"`
}

// MaintenanceRecurrence makes a window repeat.
type MaintenanceRecurrence struct {
	Cron            string `json:"cron,omitempty" example:"0 2 * * 6" doc:"Five-field cron expression (minute hour day-of-month month day-of-week; L, W and # extensions; @daily and the like) for when each occurrence begins. Give cron or rrule, not both."`
	RRule           string `json:"rrule,omitempty" example:"FREQ=WEEKLY;BYDAY=SA;BYHOUR=2;BYMINUTE=0" doc:"RFC 5545 recurrence rule (FREQ=DAILY, WEEKLY, MONTHLY or YEARLY) for when each occurrence begins, counted from startsAt (DTSTART). Give cron or rrule, not both."`
	Timezone        string `json:"timezone,omitempty" default:"UTC" example:"Europe/Berlin" doc:"IANA time zone the rule's wall times are read in; default UTC. On a daylight-saving night a time that does not exist fires at the end of the gap and a time that happens twice fires once."`
	DurationMinutes int    `json:"durationMinutes" doc:"How long each occurrence lasts, in minutes of elapsed time: 1 to 10080 (7 days)."`
	Until           string `json:"until,omitempty" format:"date-time" doc:"No occurrence begins after this instant (RFC 3339); absent: no end."`
}

// MaintenanceWindowCreate is the body of POST /api/v1/maintenance-windows.
type MaintenanceWindowCreate struct {
	Name         string                 `json:"name" doc:"Display name."`
	Description  string                 `json:"description,omitempty" doc:"Free text, e.g. what the maintenance is for."`
	StartsAt     string                 `json:"startsAt,omitempty" format:"date-time" doc:"One-off: when the window begins (required). Recurring: no occurrence begins before it, and an rrule counts from it (DTSTART); default the time of the request, to the minute."`
	EndsAt       string                 `json:"endsAt,omitempty" format:"date-time" doc:"One-off windows only: when the window ends, after startsAt and at most 31 days later."`
	Recurrence   *MaintenanceRecurrence `json:"recurrence,omitempty" doc:"Makes the window recurring; without it the window is one-off (startsAt to endsAt)."`
	MonitorIDs   []string               `json:"monitorIds,omitempty" doc:"Monitors of this workspace the window applies to; at least one subject (monitor or heartbeat) is required."`
	HeartbeatIDs []string               `json:"heartbeatIds,omitempty" doc:"Heartbeats of this workspace the window applies to: pings are recorded and deadlines pass without alerts while it is active."`
	Public       bool                   `json:"public,omitempty" default:"false" doc:"Show the window on the status pages that hold any of its monitors or heartbeats: its name and description as written (so keep internal details out of them), when it is active and when it is scheduled. Default false: private."`
}

// MaintenanceWindowPatch is the body of PATCH
// /api/v1/maintenance-windows/{id}: a JSON merge patch (RFC 7396) of the
// window in its create form. It is a map so that null (remove or reset a
// field) and absent (keep it) stay distinguishable.
type MaintenanceWindowPatch map[string]any

// Schema is the create schema with every property optional and, where
// removing the field means something, nullable.
func (MaintenanceWindowPatch) Schema(r huma.Registry) *huma.Schema {
	create := r.Schema(reflect.TypeFor[MaintenanceWindowCreate](), false, "")
	rec := r.SchemaFromRef(create.Properties["recurrence"].Ref)
	optional := func(from *huma.Schema, keep ...string) map[string]*huma.Schema {
		props := map[string]*huma.Schema{}
		for name, p := range from.Properties {
			cp := *p
			cp.Nullable, cp.Default = true, nil // absent keeps the stored value
			for _, k := range keep {
				if k == name {
					cp.Nullable = false
				}
			}
			props[name] = &cp
		}
		return props
	}
	props := optional(create, "name")
	props["recurrence"] = &huma.Schema{Type: huma.TypeObject, Nullable: true, Properties: optional(rec, "durationMinutes"),
		AdditionalProperties: false, Description: "Merged into the stored recurrence; null makes the window one-off (then give startsAt and endsAt)."}
	return &huma.Schema{Type: huma.TypeObject, Properties: props, AdditionalProperties: false,
		Description: "A JSON merge patch (RFC 7396) of the window as created: fields given replace the stored ones, " +
			"null removes a field (or resets it to its default), fields not given stay; arrays are replaced whole. " +
			"The result is validated as a whole, as a create is. To switch a one-off window to recurring send " +
			"{\"endsAt\": null, \"recurrence\": {…}}; back: {\"recurrence\": null, \"endsAt\": …}."}
}

// MaintenanceWindowID names one window.
type MaintenanceWindowID struct {
	InWorkspace
	ID string `path:"id" maxLength:"64" doc:"Maintenance window id (mw_…)."`
}

type patchMaintenanceInput struct {
	MaintenanceWindowID
	Body MaintenanceWindowPatch
}

type maintenanceBody struct {
	Body MaintenanceWindow
}

type createdMaintenance struct {
	Location string `header:"Location" doc:"URL of the new maintenance window."`
	Body     MaintenanceWindow
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Request times are strings in the schema's date-time format, so a bad one
// is reported by the schema and never aborts decoding the rest of the body
// (which the domain rules in Resolve then read).
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return stamp.Format(t)
}

// parseTime reads a date-time the schema has checked; zero when absent or
// invalid (the schema's error names it).
func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func toMaintenanceWindow(v app.MaintenanceView) MaintenanceWindow {
	c := createForm(v)
	return MaintenanceWindow{
		ID: v.ID, Name: v.Name, Description: v.Description, StartsAt: stamp.Of(v.StartsAt), EndsAt: stamp.Ptr(timePtr(v.EndsAt)),
		Recurrence: c.Recurrence, MonitorIDs: append([]string{}, v.MonitorIDs...), HeartbeatIDs: append([]string{}, v.HeartbeatIDs...),
		Public: v.Public,
		Active: v.Active, CurrentEndsAt: stamp.Ptr(timePtr(v.CurrentEndsAt)), NextStartAt: stamp.Ptr(timePtr(v.NextStartAt)),
		CreatedAt: stamp.Of(v.CreatedAt), UpdatedAt: stamp.Of(v.UpdatedAt),
	}
}

// createForm is a stored window as the body that would create it.
func createForm(v app.MaintenanceView) MaintenanceWindowCreate {
	c := MaintenanceWindowCreate{Name: v.Name, Description: v.Description, StartsAt: formatTime(v.StartsAt),
		MonitorIDs: v.MonitorIDs, HeartbeatIDs: v.HeartbeatIDs, Public: v.Public}
	if !v.Recurring() {
		c.EndsAt = formatTime(v.EndsAt)
		return c
	}
	c.Recurrence = &MaintenanceRecurrence{Cron: v.Cron, RRule: v.RRule, Timezone: v.Timezone,
		DurationMinutes: int(v.Duration / time.Minute), Until: formatTime(v.Until)}
	return c
}

func (c MaintenanceWindowCreate) draft() app.MaintenanceDraft {
	d := app.MaintenanceDraft{Name: c.Name, Description: c.Description, StartsAt: parseTime(c.StartsAt),
		EndsAt: parseTime(c.EndsAt), MonitorIDs: c.MonitorIDs, HeartbeatIDs: c.HeartbeatIDs, Public: c.Public}
	if r := c.Recurrence; r != nil {
		d.Recurrence = &app.Recurrence{Cron: r.Cron, RRule: r.RRule, Timezone: r.Timezone,
			Duration: time.Duration(r.DurationMinutes) * time.Minute, Until: parseTime(r.Until)}
	}
	return d
}

// Resolve runs the domain's rules after the schema's, so one 422 lists
// every failing field. Rules that need the database or the clock (unknown
// monitors and heartbeats, windows in the past) run in the use case.
func (c *MaintenanceWindowCreate) Resolve(huma.Context) []error {
	return fieldDetails(app.ValidateMaintenance(c.draft(), time.Now()))
}

var tagsMaintenance = []string{"Maintenance windows"}

var opCreateMaintenanceWindow = idempotent(op(huma.Operation{OperationID: "createMaintenanceWindow", Method: http.MethodPost, Path: Prefix + "/maintenance-windows",
	Summary: "Create a maintenance window",
	Description: "While a window is active its monitors and heartbeats are in MAINTENANCE: checks run and pings are recorded, missed heartbeat deadlines pass, no incident opens and nothing alerts. " +
		"States follow within seconds of an occurrence's start or end.",
	Tags: tagsMaintenance, DefaultStatus: http.StatusCreated},
	account.ScopeMonitorsWrite, http.StatusPaymentRequired, http.StatusConflict, http.StatusRequestEntityTooLarge,
	http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity))

func (s *Server) createMaintenanceWindow(ctx context.Context, in *createInput[MaintenanceWindowCreate]) (*createdMaintenance, error) {
	v, err := s.app.CreateMaintenanceWindow(ctx, actorFrom(ctx), in.Body.draft())
	if err != nil {
		return nil, err
	}
	return &createdMaintenance{Location: Prefix + "/maintenance-windows/" + v.ID, Body: toMaintenanceWindow(v)}, nil
}

var opListMaintenanceWindows = op(huma.Operation{OperationID: "listMaintenanceWindows", Method: http.MethodGet, Path: Prefix + "/maintenance-windows",
	Summary: "List maintenance windows", Description: "Windows in creation order, oldest first.", Tags: tagsMaintenance},
	account.ScopeMonitorsRead, http.StatusUnprocessableEntity)

func (s *Server) listMaintenanceWindows(ctx context.Context, in *listInput) (*struct{ Body List[MaintenanceWindow] }, error) {
	p, err := s.app.ListMaintenanceWindows(ctx, actorFrom(ctx), app.PageRequest{Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	return &struct{ Body List[MaintenanceWindow] }{Body: toList(p, toMaintenanceWindow)}, nil
}

var opGetMaintenanceWindow = op(huma.Operation{OperationID: "getMaintenanceWindow", Method: http.MethodGet, Path: Prefix + "/maintenance-windows/{id}",
	Summary: "Get a maintenance window", Tags: tagsMaintenance}, account.ScopeMonitorsRead, http.StatusNotFound)

func (s *Server) getMaintenanceWindow(ctx context.Context, in *MaintenanceWindowID) (*maintenanceBody, error) {
	v, err := s.app.GetMaintenanceWindow(ctx, actorFrom(ctx), in.ID)
	if err != nil {
		return nil, err
	}
	return &maintenanceBody{Body: toMaintenanceWindow(v)}, nil
}

var opUpdateMaintenanceWindow = op(huma.Operation{OperationID: "updateMaintenanceWindow", Method: http.MethodPatch, Path: Prefix + "/maintenance-windows/{id}",
	Summary:     "Update a maintenance window",
	Description: "Merges a JSON merge patch into the window and validates the result as a whole. Monitor and heartbeat states follow at the engine's next sweep, within seconds.",
	Tags:        tagsMaintenance},
	account.ScopeMonitorsWrite, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge,
	http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)

func (s *Server) updateMaintenanceWindow(ctx context.Context, in *patchMaintenanceInput) (*maintenanceBody, error) {
	v, err := s.app.UpdateMaintenanceWindow(ctx, actorFrom(ctx), in.ID, s.applyMaintenancePatch(in.Body))
	if err != nil {
		return nil, err
	}
	return &maintenanceBody{Body: toMaintenanceWindow(v)}, nil
}

var opDeleteMaintenanceWindow = op(huma.Operation{OperationID: "deleteMaintenanceWindow", Method: http.MethodDelete, Path: Prefix + "/maintenance-windows/{id}",
	Summary:     "Delete a maintenance window",
	Description: "Its monitors and heartbeats leave MAINTENANCE within seconds, to the state their latest results support, unless another active window holds them.",
	Tags:        tagsMaintenance, DefaultStatus: http.StatusNoContent}, account.ScopeMonitorsWrite, http.StatusNotFound)

func (s *Server) deleteMaintenanceWindow(ctx context.Context, in *MaintenanceWindowID) (*struct{}, error) {
	return nil, s.app.DeleteMaintenanceWindow(ctx, actorFrom(ctx), in.ID)
}

// applyMaintenancePatch merges a PATCH body into the window's create form
// and validates the result against the same schema a create uses.
func (s *Server) applyMaintenancePatch(p MaintenanceWindowPatch) app.MaintenanceUpdate {
	return func(cur app.MaintenanceView) (app.MaintenanceDraft, error) {
		c, err := patched(s, createForm(cur), p)
		if err != nil {
			return app.MaintenanceDraft{}, err
		}
		return c.draft(), nil
	}
}

// requiredPointer points at a missing property rather than its parent, as
// humaError does for request bodies.
func requiredPointer(where, msg string) string {
	if name, ok := strings.CutPrefix(msg, "expected required property "); ok {
		name, _, _ = strings.Cut(name, " ")
		return strings.TrimSuffix(where, "/") + "/" + name
	}
	return where
}
