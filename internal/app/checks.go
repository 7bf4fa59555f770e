package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// Checker runs one check of a monitor (probe.Prober in production).
type Checker interface {
	Check(ctx context.Context, m monitor.Monitor) monitor.Observation
}

// OpenMonitorAuth decrypts a sealed credential, in memory, for the check
// that is about to run. The monitor id is bound into the ciphertext, so a
// credential copied to another monitor's row does not open.
func (a *App) OpenMonitorAuth(monitorID string, sealed []byte) (*monitor.Auth, error) {
	plain, err := a.keys.Open(sealed, authAAD(monitorID))
	if err != nil {
		return nil, fmt.Errorf("monitor %s credential: %w", monitorID, err)
	}
	var auth monitor.Auth
	if err := json.Unmarshal(plain, &auth); err != nil {
		return nil, err
	}
	return &auth, nil
}

// CheckQuery selects a monitor's checks.
type CheckQuery struct {
	PageRequest
	From, To time.Time
	Result   monitor.Result
}

// ListChecks pages through a monitor's observations, newest first. The
// cursor is the start time of the last one seen, so a page boundary stays
// put while new checks arrive.
func (a *App) ListChecks(ctx context.Context, actor Actor, id string, q CheckQuery) (Page[monitor.Observation], error) {
	if err := actor.Require(account.ScopeMonitorsRead); err != nil {
		return Page[monitor.Observation]{}, err
	}
	before, limit, err := q.decodeTime()
	if err != nil {
		return Page[monitor.Observation]{}, err
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.To.After(q.From) {
		return Page[monitor.Observation]{}, &errs.Error{Kind: errs.KindInvalid, Message: "to must be after from",
			Fields: []errs.FieldError{{Pointer: "query.to", Message: "must be after from"}}}
	}
	obs, err := a.store.ListObservations(ctx, actor.WorkspaceID, id, store.ObservationQuery{
		From: q.From, To: q.To, Result: q.Result, Before: before, Limit: limit + 1})
	if err != nil {
		return Page[monitor.Observation]{}, err
	}
	page := Page[monitor.Observation]{Items: obs}
	if len(obs) > limit {
		page.Items = obs[:limit]
		page.NextCursor = encodeCursor(strconv.FormatInt(obs[limit-1].StartedAt.UnixMicro(), 10))
	}
	return page, nil
}

// ListStates pages through a monitor's or a heartbeat's state history,
// newest first. The cursor is the time and the write order of the last
// change seen, so changes of the same time are never skipped at a page
// boundary, and a change written meanwhile, which is never dated before
// the latest one, is above the pages read rather than below the cursor.
func (a *App) ListStates(ctx context.Context, actor Actor, id string, p PageRequest) (Page[monitor.Transition], error) {
	if err := actor.Require(account.ScopeMonitorsRead); err != nil {
		return Page[monitor.Transition]{}, err
	}
	before, limit, err := p.decodeStateCursor()
	if err != nil {
		return Page[monitor.Transition]{}, err
	}
	rows, err := a.store.StateChangesBefore(ctx, actor.WorkspaceID, id, before, limit+1)
	if err != nil {
		return Page[monitor.Transition]{}, err
	}
	page := Page[monitor.Transition]{Items: make([]monitor.Transition, 0, min(len(rows), limit))}
	for _, r := range rows[:min(len(rows), limit)] {
		page.Items = append(page.Items, r.Transition)
	}
	if len(rows) > limit {
		last := rows[limit-1]
		page.NextCursor = encodeCursor(strconv.FormatInt(last.At.UnixMicro(), 10) + ":" + strconv.FormatInt(last.ID, 10))
	}
	return page, nil
}

// decodeStateCursor reads a state history's cursor: a time in
// microseconds and the id of the change, or a time alone (as cursors
// were before ties were told apart), which pages from before that time.
func (p PageRequest) decodeStateCursor() (store.StateCursor, int, error) {
	after, limit, err := p.decode()
	if err != nil || after == "" {
		return store.StateCursor{}, limit, err
	}
	at, id, hasID := strings.Cut(after, ":")
	us, perr := strconv.ParseInt(at, 10, 64)
	if perr != nil || us <= 0 {
		return store.StateCursor{}, 0, badCursor()
	}
	c := store.StateCursor{At: time.UnixMicro(us).UTC()}
	if hasID {
		if c.ID, perr = strconv.ParseInt(id, 10, 64); perr != nil || c.ID <= 0 {
			return store.StateCursor{}, 0, badCursor()
		}
	}
	return c, limit, nil
}

// decodeTime reads a cursor that holds a time in microseconds.
func (p PageRequest) decodeTime() (time.Time, int, error) {
	after, limit, err := p.decode()
	if err != nil || after == "" {
		return time.Time{}, limit, err
	}
	us, perr := strconv.ParseInt(after, 10, 64)
	if perr != nil {
		return time.Time{}, 0, badCursor()
	}
	return time.UnixMicro(us).UTC(), limit, nil
}

// TestMonitor runs one check of a draft now and returns the observation,
// without saving anything: for trying a configuration before creating it.
// The response body is never returned, only what the assertions found.
func (a *App) TestMonitor(ctx context.Context, actor Actor, d monitor.Draft) (monitor.Observation, error) {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return monitor.Observation{}, err
	}
	if a.cfg.Checker == nil {
		return monitor.Observation{}, &errs.Error{Kind: errs.KindFeatureUnavailable, Message: "this node runs no checks"}
	}
	if problems := a.validate(&d); len(problems) > 0 {
		return monitor.Observation{}, invalid(problems)
	}
	m := monitor.Monitor{ID: "test", WorkspaceID: actor.WorkspaceID, Type: d.Type, Name: d.Name,
		Config: d.Config, IntervalSeconds: d.IntervalSeconds}
	m.Config.Auth = d.Auth
	obs := a.cfg.Checker.Check(ctx, m)
	obs.MonitorID = ""
	return obs, nil
}
