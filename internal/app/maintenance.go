package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/maintenance"
	"github.com/tocsin/tocsin/internal/recur"
	"github.com/tocsin/tocsin/internal/store"
)

// Maintenance windows: while one is active, its monitors and heartbeats
// are MAINTENANCE — checks run and pings are recorded, nothing alerts. The
// check engine applies the windows every few seconds (and at each
// occurrence's start and end); these use cases only keep them.

// Limits on maintenance windows.
const (
	// MaxMaintenanceWindows is the default bound on one workspace's windows
	// (Config.DefaultMaxMaintenanceWindows): the maintenance runner
	// evaluates every window every few seconds.
	MaxMaintenanceWindows = 100
	// MaxOneOffMaintenance bounds a one-off window; longer is a pause, or
	// a recurring window.
	MaxOneOffMaintenance = 31 * 24 * time.Hour
	// The API's schema takes these from here, so the document and the rule
	// are one.
	MaxMaintenanceSubjects    = 1000 // monitors, and heartbeats, each list
	MaxMaintenanceName        = 200
	MaxMaintenanceDescription = 2000
)

// MaintenanceDraft is a maintenance window as a user writes it: one-off
// (StartsAt, EndsAt) or recurring (Recurrence, StartsAt optional).
type MaintenanceDraft struct {
	Name        string
	Description string
	// One-off: when the window begins (required). Recurring: no occurrence
	// begins before it, and it anchors an RRULE (DTSTART); default the
	// time of the request, to the minute.
	StartsAt     time.Time
	EndsAt       time.Time // one-off only
	Recurrence   *Recurrence
	MonitorIDs   []string
	HeartbeatIDs []string
	// Public shows the window (name, description, occurrences) on the
	// status pages that hold any of its monitors and heartbeats.
	Public bool
}

// Recurrence makes a window repeat: exactly one of Cron and RRule, read in
// Timezone (default UTC); each occurrence lasts Duration of elapsed time;
// none begins after Until (zero: no end).
type Recurrence struct {
	Cron     string
	RRule    string
	Timezone string
	Duration time.Duration
	Until    time.Time
}

// MaintenanceView is a window with what its timing means at the time it
// was read.
type MaintenanceView struct {
	maintenance.Window
	Active        bool
	CurrentEndsAt time.Time // when the occurrence in progress ends; zero when inactive
	NextStartAt   time.Time // when the next occurrence begins; zero when none is left
}

func viewOf(w maintenance.Window, now time.Time) MaintenanceView {
	v := MaintenanceView{Window: w}
	timing, err := w.Timing()
	if err != nil {
		return v // stored windows were valid when saved; an invalid one never applies
	}
	v.Active, v.CurrentEndsAt = timing.Active(now)
	v.NextStartAt, _ = timing.NextStart(now)
	return v
}

// window is the stored form of d, made at now.
func (d MaintenanceDraft) window(now time.Time) maintenance.Window {
	norm := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return t.UTC().Truncate(time.Microsecond)
	}
	w := maintenance.Window{Name: strings.TrimSpace(d.Name), Description: d.Description,
		StartsAt: norm(d.StartsAt), EndsAt: norm(d.EndsAt), Public: d.Public}
	w.MonitorIDs = slices.Compact(slices.Sorted(slices.Values(d.MonitorIDs)))
	w.HeartbeatIDs = slices.Compact(slices.Sorted(slices.Values(d.HeartbeatIDs)))
	if r := d.Recurrence; r != nil {
		w.Cron, w.RRule, w.Timezone = strings.TrimSpace(r.Cron), strings.TrimSpace(r.RRule), r.Timezone
		w.Duration, w.Until = r.Duration, norm(r.Until)
		if w.Timezone == "" {
			w.Timezone = "UTC"
		}
		if w.StartsAt.IsZero() {
			w.StartsAt = now.UTC().Truncate(time.Minute)
		}
	}
	return w
}

// timingPointers maps recur's field names to the request's JSON pointers.
var timingPointers = map[string]string{
	"start":         "/startsAt",
	"end":           "/endsAt",
	"duration":      "/recurrence/durationMinutes",
	"until":         "/recurrence/until",
	"rule.cron":     "/recurrence/cron",
	"rule.rrule":    "/recurrence/rrule",
	"rule.dtstart":  "/startsAt",
	"rule.location": "/recurrence/timezone",
}

// ValidateMaintenance checks a draft's fields and timing without the
// database; now supplies the default start of a recurring window. It
// judges nothing against the clock (see CreateMaintenanceWindow), so the
// API runs it next to its schema checks and one answer lists every field.
func ValidateMaintenance(d MaintenanceDraft, now time.Time) []errs.FieldError {
	var problems []errs.FieldError
	add := func(ptr, format string, args ...any) {
		problems = append(problems, errs.FieldError{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	switch n := utf8.RuneCountInString(d.Name); {
	case strings.TrimSpace(d.Name) == "":
		add("/name", "must not be blank")
	case n > MaxMaintenanceName:
		add("/name", "must be at most %d characters", MaxMaintenanceName)
	}
	if utf8.RuneCountInString(d.Description) > MaxMaintenanceDescription {
		add("/description", "must be at most %d characters", MaxMaintenanceDescription)
	}
	if len(d.MonitorIDs)+len(d.HeartbeatIDs) == 0 {
		add("/monitorIds", "give at least one monitor or heartbeat the window applies to")
	}
	for _, list := range []struct {
		ptr, noun string
		ids       []string
	}{{"/monitorIds", "monitors", d.MonitorIDs}, {"/heartbeatIds", "heartbeats", d.HeartbeatIDs}} {
		if len(list.ids) > MaxMaintenanceSubjects {
			add(list.ptr, "must list at most %d %s", MaxMaintenanceSubjects, list.noun)
		}
		seen := make(map[string]bool, len(list.ids))
		for i, id := range list.ids {
			if seen[id] {
				add(fmt.Sprintf("%s/%d", list.ptr, i), "is listed twice")
			}
			seen[id] = true
		}
	}

	if r := d.Recurrence; r != nil && strings.TrimSpace(r.Cron) == "" && strings.TrimSpace(r.RRule) == "" {
		add("/recurrence", "give either cron or rrule")
		return problems
	}
	w := d.window(now)
	if !w.Recurring() && !w.StartsAt.IsZero() && w.EndsAt.Sub(w.StartsAt) > MaxOneOffMaintenance {
		add("/endsAt", "must be at most 31 days after startsAt; use a recurring window for regular maintenance")
	}
	if _, err := w.Timing(); err != nil {
		var fes recur.FieldErrors
		if !errors.As(err, &fes) {
			add("/recurrence", "%s", err.Error())
		}
		for _, fe := range fes {
			ptr, ok := timingPointers[fe.Field]
			if !ok {
				ptr = "/recurrence"
			}
			msg := strings.ReplaceAll(fe.Message, "after start", "after startsAt")
			if fe.Field == "duration" {
				msg = fmt.Sprintf("must be between 1 and %d minutes (7 days)", int(recur.MaxRecurringDuration/time.Minute))
			}
			add(ptr, "%s", msg)
		}
	}
	return problems
}

// checkMaintenance validates d as a whole at now — fields, timing, that it
// has a future, that its monitors and heartbeats are the workspace's — and
// returns the window to store. prev is the stored window an update starts
// from (nil for a create): a window whose timing an update leaves alone may
// lie in the past.
func (a *App) checkMaintenance(ctx context.Context, actor Actor, d MaintenanceDraft, now time.Time, prev *maintenance.Window) (maintenance.Window, error) {
	problems := ValidateMaintenance(d, now)
	w := d.window(now)
	if len(problems) == 0 && (prev == nil || !sameTiming(*prev, w)) {
		timing, _ := w.Timing()
		active, _ := timing.Active(now)
		if _, next := timing.NextStart(now); !active && !next {
			switch {
			case !w.Recurring():
				problems = append(problems, errs.FieldError{Pointer: "/endsAt", Message: "is in the past"})
			case !w.Until.IsZero() && w.Until.Before(now):
				problems = append(problems, errs.FieldError{Pointer: "/recurrence/until", Message: "is in the past: the window would never begin again"})
			default:
				problems = append(problems, errs.FieldError{Pointer: "/recurrence", Message: "has no occurrence left after now"})
			}
		}
	}
	missing, err := a.store.UnknownMonitors(ctx, actor.WorkspaceID, w.MonitorIDs)
	if err != nil {
		return maintenance.Window{}, err
	}
	problems = append(problems, unknownMonitorFields(d.MonitorIDs, missing)...)
	missing, err = a.store.UnknownHeartbeats(ctx, actor.WorkspaceID, w.HeartbeatIDs)
	if err != nil {
		return maintenance.Window{}, err
	}
	problems = append(problems, unknownHeartbeatFields(d.HeartbeatIDs, missing)...)
	if len(problems) > 0 {
		return maintenance.Window{}, invalid(problems)
	}
	return w, nil
}

func sameTiming(a, b maintenance.Window) bool {
	return a.StartsAt.Equal(b.StartsAt) && a.EndsAt.Equal(b.EndsAt) && a.Cron == b.Cron && a.RRule == b.RRule &&
		a.Timezone == b.Timezone && a.Duration == b.Duration && a.Until.Equal(b.Until)
}

// unknownMonitorFields names each unknown id by its place in the request.
// The message is the same whether the id exists in another workspace or
// nowhere.
func unknownMonitorFields(requested, missing []string) []errs.FieldError {
	return unknownFields("/monitorIds", "no such monitor in this workspace", requested, missing)
}

// unknownHeartbeatFields is unknownMonitorFields for heartbeats.
func unknownHeartbeatFields(requested, missing []string) []errs.FieldError {
	return unknownFields("/heartbeatIds", "no such heartbeat in this workspace", requested, missing)
}

func unknownFields(ptr, msg string, requested, missing []string) []errs.FieldError {
	unknown := make(map[string]bool, len(missing))
	for _, id := range missing {
		unknown[id] = true
	}
	var problems []errs.FieldError
	for i, id := range requested {
		if unknown[id] {
			problems = append(problems, errs.FieldError{Pointer: fmt.Sprintf("%s/%d", ptr, i), Message: msg})
			unknown[id] = false // a repeat is reported as such
		}
	}
	return problems
}

// storeErr turns a store's verdict on unknown monitors or heartbeats (one
// deleted while the request ran) into the request's fields.
func storeErr(err error, d MaintenanceDraft) error {
	var (
		um       *store.UnknownMonitorsError
		uh       *store.UnknownHeartbeatsError
		problems []errs.FieldError
	)
	if errors.As(err, &um) {
		problems = append(problems, unknownMonitorFields(d.MonitorIDs, um.IDs)...)
	}
	if errors.As(err, &uh) {
		problems = append(problems, unknownHeartbeatFields(d.HeartbeatIDs, uh.IDs)...)
	}
	if len(problems) > 0 {
		return invalid(problems)
	}
	return err
}

// CreateMaintenanceWindow validates and stores a new window. Its monitors
// and heartbeats enter maintenance at the maintenance runner's next
// round, within seconds.
func (a *App) CreateMaintenanceWindow(ctx context.Context, actor Actor, d MaintenanceDraft) (MaintenanceView, error) {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return MaintenanceView{}, err
	}
	now := a.now()
	w, err := a.checkMaintenance(ctx, actor, d, now, nil)
	if err != nil {
		return MaintenanceView{}, err
	}
	w.ID, w.WorkspaceID, w.CreatedAt, w.UpdatedAt = ids.New(ids.Maintenance, now), actor.WorkspaceID, now, now
	if err := a.store.CreateMaintenanceWindow(ctx, w, a.cfg.DefaultMaxMaintenanceWindows); err != nil {
		return MaintenanceView{}, storeErr(err, d)
	}
	return viewOf(w, now), nil
}

// GetMaintenanceWindow returns one window of the actor's workspace.
func (a *App) GetMaintenanceWindow(ctx context.Context, actor Actor, id string) (MaintenanceView, error) {
	if err := actor.Require(account.ScopeMonitorsRead); err != nil {
		return MaintenanceView{}, err
	}
	w, err := a.store.GetMaintenanceWindow(ctx, actor.WorkspaceID, id)
	if err != nil {
		return MaintenanceView{}, err
	}
	return viewOf(w, a.now()), nil
}

// ListMaintenanceWindows pages through the workspace's windows in creation
// order.
func (a *App) ListMaintenanceWindows(ctx context.Context, actor Actor, p PageRequest) (Page[MaintenanceView], error) {
	if err := actor.Require(account.ScopeMonitorsRead); err != nil {
		return Page[MaintenanceView]{}, err
	}
	after, limit, err := p.decode()
	if err != nil {
		return Page[MaintenanceView]{}, err
	}
	ws, err := a.store.ListMaintenanceWindows(ctx, actor.WorkspaceID, after, limit+1)
	if err != nil {
		return Page[MaintenanceView]{}, err
	}
	total, err := a.store.CountMaintenanceWindows(ctx, actor.WorkspaceID)
	if err != nil {
		return Page[MaintenanceView]{}, err
	}
	page := Page[MaintenanceView]{Total: total, HasTotal: true}
	if len(ws) > limit {
		ws = ws[:limit]
		page.NextCursor = encodeCursor(ws[limit-1].ID)
	}
	now := a.now()
	for _, w := range ws {
		page.Items = append(page.Items, viewOf(w, now))
	}
	return page, nil
}

// MaintenanceUpdate computes the new draft of a window from its current
// state.
type MaintenanceUpdate func(cur MaintenanceView) (MaintenanceDraft, error)

// UpdateMaintenanceWindow applies an update and validates the result as a
// whole, optimistically like UpdateMonitor: if the window changed in
// between, it starts over from the new version (a few times).
func (a *App) UpdateMaintenanceWindow(ctx context.Context, actor Actor, id string, update MaintenanceUpdate) (MaintenanceView, error) {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return MaintenanceView{}, err
	}
	for range 3 {
		v, err := a.updateMaintenanceOnce(ctx, actor, id, update)
		if !errors.Is(err, store.ErrStale) {
			return v, err
		}
	}
	return MaintenanceView{}, store.ErrStale
}

func (a *App) updateMaintenanceOnce(ctx context.Context, actor Actor, id string, update MaintenanceUpdate) (MaintenanceView, error) {
	cur, err := a.store.GetMaintenanceWindow(ctx, actor.WorkspaceID, id)
	if err != nil {
		return MaintenanceView{}, err
	}
	now := a.now()
	d, err := update(viewOf(cur, now))
	if err != nil {
		return MaintenanceView{}, err
	}
	w, err := a.checkMaintenance(ctx, actor, d, now, &cur)
	if err != nil {
		return MaintenanceView{}, err
	}
	w.ID, w.WorkspaceID, w.CreatedAt = cur.ID, cur.WorkspaceID, cur.CreatedAt
	// Strictly later than the version read, so a concurrent writer in the
	// same microsecond still sees a change.
	w.UpdatedAt = now
	if !w.UpdatedAt.After(cur.UpdatedAt) {
		w.UpdatedAt = cur.UpdatedAt.Add(time.Microsecond)
	}
	if err := a.store.UpdateMaintenanceWindow(ctx, w, cur.UpdatedAt); err != nil {
		return MaintenanceView{}, storeErr(err, d)
	}
	return viewOf(w, now), nil
}

// DeleteMaintenanceWindow removes a window; its monitors and heartbeats
// leave maintenance at the maintenance runner's next round unless
// another window holds them.
func (a *App) DeleteMaintenanceWindow(ctx context.Context, actor Actor, id string) error {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return err
	}
	return a.store.DeleteMaintenanceWindow(ctx, actor.WorkspaceID, id)
}
