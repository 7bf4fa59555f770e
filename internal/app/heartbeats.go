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
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// Heartbeats as users manage them. The ping token is kept hashed, for
// looking pings up, and sealed, for showing the ping URL; it never appears
// in a log.

func tokenAAD(heartbeatID string) []byte { return []byte("heartbeat-token:" + heartbeatID) }

func (a *App) sealToken(heartbeatID, token string) ([]byte, error) {
	return a.keys.Seal([]byte(token), tokenAAD(heartbeatID))
}

func (a *App) openToken(h *heartbeat.Heartbeat, sealed []byte) error {
	plain, err := a.keys.Open(sealed, tokenAAD(h.ID))
	if err != nil {
		return fmt.Errorf("heartbeat %s token: %w", h.ID, err)
	}
	h.Token = string(plain)
	return nil
}

// CreateHeartbeat validates and stores a new heartbeat with a new ping
// token.
func (a *App) CreateHeartbeat(ctx context.Context, actor Actor, d heartbeat.Draft) (heartbeat.Heartbeat, error) {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return heartbeat.Heartbeat{}, err
	}
	if problems := append(d.Normalize(), SLOProblems(d.SLO)...); len(problems) > 0 {
		return heartbeat.Heartbeat{}, invalid(problems)
	}
	now := a.now()
	h := heartbeat.Heartbeat{
		ID:                ids.New(ids.Heartbeat, now),
		WorkspaceID:       actor.WorkspaceID,
		Name:              d.Name,
		Schedule:          d.Schedule,
		MaxRuntimeSeconds: d.MaxRuntimeSeconds,
		Paused:            d.Paused,
		Token:             heartbeat.NewToken(),
		Runtime:           heartbeat.New(now, d.Paused),
		CreatedAt:         now,
		UpdatedAt:         now,
		SLO:               d.SLO,
	}
	sealed, err := a.sealToken(h.ID, h.Token)
	if err != nil {
		return heartbeat.Heartbeat{}, err
	}
	if err := a.store.CreateHeartbeat(ctx, h, heartbeat.HashToken(h.Token), sealed, a.cfg.DefaultMaxHeartbeats); err != nil {
		return heartbeat.Heartbeat{}, err
	}
	return h, nil
}

// GetHeartbeat returns one heartbeat of the actor's workspace, its token
// opened for the ping URL.
func (a *App) GetHeartbeat(ctx context.Context, actor Actor, id string) (heartbeat.Heartbeat, error) {
	if err := actor.Require(account.ScopeMonitorsRead); err != nil {
		return heartbeat.Heartbeat{}, err
	}
	return a.getHeartbeat(ctx, actor.WorkspaceID, id)
}

func (a *App) getHeartbeat(ctx context.Context, wsID, id string) (heartbeat.Heartbeat, error) {
	h, sealed, err := a.store.GetHeartbeat(ctx, wsID, id)
	if err != nil {
		return heartbeat.Heartbeat{}, err
	}
	return h, a.openToken(&h, sealed)
}

// ListHeartbeats pages through the workspace's heartbeats that match f,
// in creation order; the total counts those that match.
func (a *App) ListHeartbeats(ctx context.Context, actor Actor, f HeartbeatFilter, p PageRequest) (Page[heartbeat.Heartbeat], error) {
	if err := actor.Require(account.ScopeMonitorsRead); err != nil {
		return Page[heartbeat.Heartbeat]{}, err
	}
	f, problems := f.normalize()
	after, limit, err := p.decode()
	if err := pageProblems(problems, err); err != nil {
		return Page[heartbeat.Heartbeat]{}, err
	}
	q := store.HeartbeatQuery{States: f.States, NameContains: strings.ToLower(f.Name), AfterID: after, Limit: limit + 1}
	rows, err := a.store.ListHeartbeats(ctx, actor.WorkspaceID, q)
	if err != nil {
		return Page[heartbeat.Heartbeat]{}, err
	}
	total, err := a.store.CountMatchingHeartbeats(ctx, actor.WorkspaceID, q)
	if err != nil {
		return Page[heartbeat.Heartbeat]{}, err
	}
	page := Page[heartbeat.Heartbeat]{Total: total, HasTotal: true}
	for _, r := range rows {
		h := r.Heartbeat
		if err := a.openToken(&h, r.SealedToken); err != nil {
			return Page[heartbeat.Heartbeat]{}, err
		}
		page.Items = append(page.Items, h)
	}
	if len(page.Items) > limit {
		page.Items = page.Items[:limit]
		page.NextCursor = encodeCursor(page.Items[limit-1].ID)
	}
	return page, nil
}

// HeartbeatUpdate computes the new draft of a heartbeat from its current
// state.
type HeartbeatUpdate func(cur heartbeat.Heartbeat) (heartbeat.Draft, error)

// UpdateHeartbeat applies an update and validates the result as a whole,
// optimistically: if the heartbeat changed in between, it starts over.
func (a *App) UpdateHeartbeat(ctx context.Context, actor Actor, id string, update HeartbeatUpdate) (heartbeat.Heartbeat, error) {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return heartbeat.Heartbeat{}, err
	}
	for range 3 {
		cur, err := a.getHeartbeat(ctx, actor.WorkspaceID, id)
		if err != nil {
			return heartbeat.Heartbeat{}, err
		}
		d, err := update(cur)
		if err != nil {
			return heartbeat.Heartbeat{}, err
		}
		if problems := append(d.Normalize(), SLOProblems(d.SLO)...); len(problems) > 0 {
			return heartbeat.Heartbeat{}, invalid(problems)
		}
		h := cur
		h.Name, h.Schedule, h.MaxRuntimeSeconds, h.SLO = d.Name, d.Schedule, d.MaxRuntimeSeconds, d.SLO
		h.UpdatedAt = later(a.now(), cur.UpdatedAt)
		err = a.saveHeartbeat(ctx, h, cur.UpdatedAt)
		if errors.Is(err, store.ErrStale) {
			continue
		}
		if err != nil {
			return heartbeat.Heartbeat{}, err
		}
		return a.getHeartbeat(ctx, actor.WorkspaceID, id)
	}
	return heartbeat.Heartbeat{}, store.ErrStale
}

// later is now, or just after prev if now is not after it: a version
// written strictly after the one read.
func later(now, prev time.Time) time.Time {
	if now.After(prev) {
		return now
	}
	return prev.Add(time.Microsecond)
}

// RotateHeartbeatToken gives a heartbeat a new ping URL; the old one stops
// working at once.
func (a *App) RotateHeartbeatToken(ctx context.Context, actor Actor, id string) (heartbeat.Heartbeat, error) {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return heartbeat.Heartbeat{}, err
	}
	token := heartbeat.NewToken()
	sealed, err := a.sealToken(id, token)
	if err != nil {
		return heartbeat.Heartbeat{}, err
	}
	if err := a.store.RotateHeartbeatToken(ctx, actor.WorkspaceID, id, heartbeat.HashToken(token), sealed, a.now()); err != nil {
		return heartbeat.Heartbeat{}, err
	}
	return a.getHeartbeat(ctx, actor.WorkspaceID, id)
}

// SetHeartbeatPaused pauses (pings are acknowledged but ignored, nothing
// alerts) or resumes a heartbeat.
func (a *App) SetHeartbeatPaused(ctx context.Context, actor Actor, id string, paused bool) (heartbeat.Heartbeat, error) {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return heartbeat.Heartbeat{}, err
	}
	if err := a.setHeartbeatPaused(ctx, actor.WorkspaceID, id, paused, a.now()); err != nil {
		return heartbeat.Heartbeat{}, err
	}
	return a.getHeartbeat(ctx, actor.WorkspaceID, id)
}

// saveHeartbeat stores what a user edits of h if the row is still as the
// caller read it (else store.ErrStale). A new schedule moves a pending
// deadline to what the new schedule expects after the last report.
func (a *App) saveHeartbeat(ctx context.Context, h heartbeat.Heartbeat, prevUpdatedAt time.Time) error {
	return a.store.HeartbeatTx(ctx, a.steps, func(tx *store.Tx) error {
		cur, seq, err := tx.LockHeartbeat(ctx, h.WorkspaceID, h.ID)
		if err != nil {
			return err
		}
		if !cur.UpdatedAt.Equal(prevUpdatedAt) {
			return store.ErrStale
		}
		if err := tx.UpdateHeartbeat(ctx, h); err != nil {
			return err
		}
		settings, err := a.flow.settings(h)
		if err != nil {
			return err
		}
		rt := cur.Runtime
		if !rt.Deadline.IsZero() && cur.Schedule != h.Schedule {
			if e, ok := settings.Plan.Next(rt.WindowStart); ok {
				rt.Expected, rt.Deadline = e.Expected, e.Deadline
			}
		}
		return tx.SaveHeartbeatRuntime(ctx, seq, rt, settings)
	})
}

// setHeartbeatPaused pauses (pings are acknowledged and ignored, nothing
// is due) or resumes a heartbeat, keeping the transition in the state
// history. It does nothing when the heartbeat is already so.
func (a *App) setHeartbeatPaused(ctx context.Context, wsID, id string, paused bool, at time.Time) error {
	return a.store.HeartbeatTx(ctx, a.steps, func(tx *store.Tx) error {
		cur, seq, err := tx.LockHeartbeat(ctx, wsID, id)
		if err != nil || cur.Paused == paused {
			return err
		}
		if err := tx.SetHeartbeatPaused(ctx, wsID, id, paused, at); err != nil {
			return err
		}
		settings, err := a.flow.settings(cur)
		if err != nil {
			return err
		}
		rt, tr := cur.Runtime, (*monitor.Transition)(nil)
		if paused {
			rt, tr = rt.Pause(at)
		} else {
			rt, tr = rt.Resume(at, settings)
		}
		if err := tx.SaveHeartbeatRuntime(ctx, seq, rt, settings); err != nil {
			return err
		}
		if tr == nil {
			return nil
		}
		return recordTransition(ctx, tx, id, *tr)
	})
}

// DeleteHeartbeat removes a heartbeat with its pings and state history,
// resolving its open incident in the same transaction.
func (a *App) DeleteHeartbeat(ctx context.Context, actor Actor, id string) error {
	if err := actor.Require(account.ScopeMonitorsWrite); err != nil {
		return err
	}
	defer a.pagesChanged.Add(1) // its components leave the pages
	// In HeartbeatTx: on SQLite the journal's pings are applied first.
	heartbeatTx := func(ctx context.Context, fn func(*store.Tx) error) error {
		return a.store.HeartbeatTx(ctx, a.steps, fn)
	}
	return a.deleteSubject(ctx, "app.DeleteHeartbeat", id, heartbeatTx, func(tx *store.Tx) error {
		return tx.DeleteHeartbeat(ctx, actor.WorkspaceID, id)
	})
}

// PingQuery selects a heartbeat's pings.
type PingQuery struct {
	PageRequest
	From, To time.Time
}

// ListPings pages through a heartbeat's pings, newest first. The cursor is
// the position of the last one seen, so a page boundary stays put while
// new pings arrive.
func (a *App) ListPings(ctx context.Context, actor Actor, id string, q PingQuery) (Page[heartbeat.PingRecord], error) {
	if err := actor.Require(account.ScopeMonitorsRead); err != nil {
		return Page[heartbeat.PingRecord]{}, err
	}
	after, limit, err := q.decode()
	if err != nil {
		return Page[heartbeat.PingRecord]{}, err
	}
	sq := store.PingQuery{From: q.From, To: q.To, Limit: limit + 1}
	if after != "" {
		at, id, ok := strings.Cut(after, ":")
		// The time is informative; ids order the pings.
		_, err1 := strconv.ParseInt(at, 10, 64)
		n, err2 := strconv.ParseInt(id, 10, 64)
		if !ok || err1 != nil || err2 != nil || n <= 0 {
			return Page[heartbeat.PingRecord]{}, badCursor()
		}
		sq.BeforeID = n
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.To.After(q.From) {
		return Page[heartbeat.PingRecord]{}, &errs.Error{Kind: errs.KindInvalid, Message: "to must be after from",
			Fields: []errs.FieldError{{Pointer: "query.to", Message: "must be after from"}}}
	}
	pings, err := a.store.ListPings(ctx, actor.WorkspaceID, id, sq)
	if err != nil {
		return Page[heartbeat.PingRecord]{}, err
	}
	page := Page[heartbeat.PingRecord]{Items: pings}
	if len(pings) > limit {
		page.Items = pings[:limit]
		last := pings[limit-1]
		page.NextCursor = encodeCursor(strconv.FormatInt(last.At.UnixMicro(), 10) + ":" + strconv.FormatInt(last.ID, 10))
	}
	return page, nil
}
