package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

func invalid(fields []errs.FieldError) error {
	return &errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields", Fields: fields}
}

// authAAD binds a sealed credential to its monitor, so ciphertexts cannot be
// swapped between rows.
func authAAD(monitorID string) []byte { return []byte("monitor-auth:" + monitorID) }

func (a *App) sealAuth(monitorID string, auth *monitor.Auth) ([]byte, error) {
	if auth == nil {
		return nil, nil
	}
	plain, err := json.Marshal(auth)
	if err != nil {
		return nil, err
	}
	return a.keys.Seal(plain, authAAD(monitorID))
}

// MonitorAuth decrypts a monitor's credential, in memory, for a check.
func (a *App) MonitorAuth(ctx context.Context, wsID, monitorID string) (*monitor.Auth, error) {
	sealed, err := a.store.MonitorAuth(ctx, wsID, monitorID)
	if err != nil || sealed == nil {
		return nil, err
	}
	return a.OpenMonitorAuth(monitorID, sealed)
}

// validate normalizes a draft and applies the outbound policy to every
// field that names a target; names are judged again when a check dials them.
func (a *App) validate(d *monitor.Draft) []errs.FieldError {
	problems := append(d.Normalize(), SLOProblems(d.SLO)...)
	out := a.cfg.Outbound
	for _, tg := range []struct {
		ptr string
		err error
	}{
		{"/config/url", out.CheckURL(d.Config.URL)},
		{"/config/host", out.CheckHost(d.Config.Host)},
		{"/config/resolver", out.CheckHostPort(d.Config.Resolver)},
	} {
		if tg.err != nil {
			problems = append(problems, refusedTarget(tg.ptr))
		}
	}
	return problems
}

// refusedTarget is the outbound policy's refusal of a field; it never
// repeats the value.
func refusedTarget(ptr string) errs.FieldError {
	return errs.FieldError{Pointer: ptr, Message: "is refused by this server's outbound policy (private targets are blocked)"}
}

// minInterval applies the workspace's minimum interval to a draft, read
// per request so the operator's changes apply at once. (The count quota
// is the store's, in the create's transaction.)
func (a *App) minInterval(ctx context.Context, actor Actor, d *monitor.Draft) error {
	q, err := a.quotasOf(ctx, actor.WorkspaceID)
	if err != nil {
		return err
	}
	if d.IntervalSeconds < q.MinIntervalSeconds {
		return &errs.Error{Kind: errs.KindQuota, Message: fmt.Sprintf("this workspace allows check intervals of at least %d seconds; "+
			"the server's operator can lower it with `tocsin workspace set-quota --min-interval`", q.MinIntervalSeconds)}
	}
	return nil
}

// CreateMonitor validates and stores a new monitor.
func (a *App) CreateMonitor(ctx context.Context, actor Actor, d monitor.Draft) (monitor.Monitor, error) {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return monitor.Monitor{}, err
	}
	if problems := a.validate(&d); len(problems) > 0 {
		return monitor.Monitor{}, invalid(problems)
	}
	if err := a.minInterval(ctx, actor, &d); err != nil {
		return monitor.Monitor{}, err
	}
	now := a.now()
	m := monitor.Monitor{
		ID:              ids.New(ids.Monitor, now),
		WorkspaceID:     actor.WorkspaceID,
		Type:            d.Type,
		Name:            d.Name,
		Config:          d.Config,
		IntervalSeconds: d.IntervalSeconds,
		State:           monitor.StatePending,
		StateSince:      now,
		Paused:          d.Paused,
		CreatedAt:       now,
		UpdatedAt:       now,
		SLO:             d.SLO,
	}
	if d.Paused {
		m.State = monitor.StatePaused
	}
	m.Config.Headers = nil // sealed below, never in the config
	var sealed store.Sealed
	var err error
	if sealed.Auth, err = a.sealAuth(m.ID, d.Auth); err != nil {
		return monitor.Monitor{}, err
	}
	if sealed.Headers, err = a.sealHeaders(m.ID, d.Config.Headers); err != nil {
		return monitor.Monitor{}, err
	}
	if err := a.store.CreateMonitor(ctx, m, sealed, a.cfg.DefaultMaxMonitors); err != nil {
		return monitor.Monitor{}, err
	}
	return m, nil
}

// GetMonitor returns one monitor of the actor's workspace.
func (a *App) GetMonitor(ctx context.Context, actor Actor, id string) (monitor.Monitor, error) {
	if err := actor.Require(account.ScopeMonitorsRead); err != nil {
		return monitor.Monitor{}, err
	}
	return a.store.GetMonitor(ctx, actor.WorkspaceID, id)
}

// ListMonitors pages through the workspace's monitors that match f, in
// creation order; the total counts those that match.
func (a *App) ListMonitors(ctx context.Context, actor Actor, f MonitorFilter, p PageRequest) (Page[monitor.Monitor], error) {
	if err := actor.Require(account.ScopeMonitorsRead); err != nil {
		return Page[monitor.Monitor]{}, err
	}
	f, problems := f.normalize()
	after, limit, err := p.decode()
	if err := pageProblems(problems, err); err != nil {
		return Page[monitor.Monitor]{}, err
	}
	q := store.MonitorQuery{States: f.States, Types: f.Types, NameContains: strings.ToLower(f.Name), AfterID: after, Limit: limit + 1}
	// One extra row tells whether another page exists.
	ms, err := a.store.ListMonitors(ctx, actor.WorkspaceID, q)
	if err != nil {
		return Page[monitor.Monitor]{}, err
	}
	total, err := a.store.CountMatchingMonitors(ctx, actor.WorkspaceID, q)
	if err != nil {
		return Page[monitor.Monitor]{}, err
	}
	page := Page[monitor.Monitor]{Items: ms, Total: total, HasTotal: true}
	if len(ms) > limit {
		page.Items = ms[:limit]
		page.NextCursor = encodeCursor(ms[limit-1].ID)
	}
	return page, nil
}

// AuthChange says what an update does to a monitor's credential.
type AuthChange int

const (
	AuthKeep AuthChange = iota
	AuthReplace
	AuthRemove
)

// MonitorChange is what an update makes of a monitor: its new draft
// (without secrets it keeps), what to do with the stored credential, and
// the edit of its request headers, merged here into the stored values,
// which only app opens.
type MonitorChange struct {
	Draft   monitor.Draft
	Auth    AuthChange
	Headers monitor.HeaderPatch
}

// MonitorUpdate computes the change of a monitor from its current state.
type MonitorUpdate func(cur monitor.Monitor) (MonitorChange, error)

// UpdateMonitor applies an update and validates the result as a whole. It
// reads, applies and writes optimistically: if the monitor changed in
// between, it starts over from the new version (a few times).
func (a *App) UpdateMonitor(ctx context.Context, actor Actor, id string, update MonitorUpdate) (monitor.Monitor, error) {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return monitor.Monitor{}, err
	}
	for range 3 {
		m, err := a.updateOnce(ctx, actor, id, update)
		if !errors.Is(err, store.ErrStale) {
			return m, err
		}
	}
	return monitor.Monitor{}, store.ErrStale
}

func (a *App) updateOnce(ctx context.Context, actor Actor, id string, update MonitorUpdate) (monitor.Monitor, error) {
	cur, err := a.store.GetMonitor(ctx, actor.WorkspaceID, id)
	if err != nil {
		return monitor.Monitor{}, err
	}
	ch, err := update(cur)
	if err != nil {
		return monitor.Monitor{}, err
	}
	d, change := ch.Draft, ch.Auth
	keepHeaders := ch.Headers.IsZero()
	if keepHeaders {
		// Validate with the kept headers in place, without decrypting them.
		d.Config.Headers = keptHeaders(cur.Config.HeadersSet)
	} else {
		stored, err := a.MonitorHeaders(ctx, actor.WorkspaceID, id)
		if err != nil {
			return monitor.Monitor{}, err
		}
		d.Config.Headers = ch.Headers.Apply(stored)
	}
	if change == AuthKeep && cur.Config.AuthSet != nil {
		// Validate with the kept credential in place, without decrypting it.
		switch cur.Config.AuthSet.Type {
		case monitor.AuthBasic:
			d.Auth = &monitor.Auth{Type: monitor.AuthBasic, Username: cur.Config.AuthSet.Username, Password: "kept"}
		case monitor.AuthBearer:
			d.Auth = &monitor.Auth{Type: monitor.AuthBearer, Token: "kept"}
		case monitor.AuthHeader:
			d.Auth = &monitor.Auth{Type: monitor.AuthHeader, Header: cur.Config.AuthSet.Header, Value: "kept"}
		}
	}
	if change == AuthRemove {
		d.Auth = nil
	}
	if problems := a.validate(&d); len(problems) > 0 {
		return monitor.Monitor{}, invalid(problems)
	}
	if d.IntervalSeconds != cur.IntervalSeconds {
		if err := a.minInterval(ctx, actor, &d); err != nil {
			return monitor.Monitor{}, err
		}
	}
	m := cur
	m.Name, m.Config, m.IntervalSeconds, m.SLO = d.Name, d.Config, d.IntervalSeconds, d.SLO
	m.Config.Headers = nil
	// Strictly later than the version read, so a concurrent writer in the
	// same microsecond still sees a change.
	m.UpdatedAt = a.now()
	if !m.UpdatedAt.After(cur.UpdatedAt) {
		m.UpdatedAt = cur.UpdatedAt.Add(time.Microsecond)
	}
	var sealed store.Sealed
	if change == AuthReplace {
		if sealed.Auth, err = a.sealAuth(m.ID, d.Auth); err != nil {
			return monitor.Monitor{}, err
		}
	}
	if !keepHeaders {
		if sealed.Headers, err = a.sealHeaders(m.ID, d.Config.Headers); err != nil {
			return monitor.Monitor{}, err
		}
	}
	keep := store.Keep{Auth: change == AuthKeep, Headers: keepHeaders}
	if err := a.store.UpdateMonitor(ctx, m, sealed, keep, cur.UpdatedAt); err != nil {
		return monitor.Monitor{}, err
	}
	return m, nil
}

// SetPaused pauses (no checks run) or resumes a monitor. Resuming starts
// over from PENDING: nothing is known until the next check.
func (a *App) SetPaused(ctx context.Context, actor Actor, id string, paused bool) (monitor.Monitor, error) {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return monitor.Monitor{}, err
	}
	if err := a.setPaused(ctx, actor.WorkspaceID, id, paused, a.now()); err != nil {
		return monitor.Monitor{}, err
	}
	return a.store.GetMonitor(ctx, actor.WorkspaceID, id)
}

// setPaused pauses or resumes a monitor: the state machine moves to
// PAUSED, or back to PENDING, and the change is kept in the state history.
// A paused monitor is never due; a resumed one is due at its next slot. It
// does nothing when the monitor is already so.
func (a *App) setPaused(ctx context.Context, wsID, id string, pause bool, at time.Time) (err error) {
	defer errs.Wrap(&err, "app.setPaused(%s)", id)
	err = a.store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetMonitorPaused(ctx, wsID, id, pause, at); err != nil {
			return err
		}
		rt, err := tx.LockRuntime(ctx, id)
		if err != nil {
			return err
		}
		tr := paused(&rt, pause, at)
		if err := tx.SaveRuntime(ctx, rt); err != nil {
			return err
		}
		if tr == nil {
			return nil
		}
		return recordTransition(ctx, tx, id, *tr)
	})
	if errors.Is(err, errs.ErrNotFound) {
		// Nothing changed: already so, or no such monitor (only then an error).
		_, err = a.store.GetMonitor(ctx, wsID, id)
	}
	return err
}

// DeleteMonitor removes a monitor with its observations and state
// history, resolving its open incident in the same transaction.
func (a *App) DeleteMonitor(ctx context.Context, actor Actor, id string) error {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return err
	}
	defer a.pagesChanged.Add(1) // its components leave the pages
	return a.deleteSubject(ctx, "app.DeleteMonitor", id, a.store.InTx, func(tx *store.Tx) error {
		return tx.DeleteMonitor(ctx, actor.WorkspaceID, id)
	})
}

// deleteSubject deletes the monitor or heartbeat id with del, in a
// transaction begun by inTx, resolving its open incident first: nothing is
// left to recover. If del finds no such subject in the workspace, the
// transaction takes the resolution back.
func (a *App) deleteSubject(ctx context.Context, op, id string, inTx func(context.Context, func(*store.Tx) error) error,
	del func(*store.Tx) error) (err error) {
	defer errs.Wrap(&err, "%s(%s)", op, id)
	return inTx(ctx, func(tx *store.Tx) error {
		if err := a.flow.deleted(ctx, tx, id); err != nil {
			return err
		}
		return del(tx)
	})
}
