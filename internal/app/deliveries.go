package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store"
)

// Deliveries: events on their way to channels. The notifier claims due
// ones, sends them and reports each attempt here; users list them per
// channel, redeliver finished ones, and send a channel a test event.

// DeliveryJob is a claimed delivery with what sending it needs: the
// channel, its opened secrets, and the event as stored.
type DeliveryJob struct {
	notify.Delivery
	Channel    notify.Channel
	Secrets    *notify.Secrets
	Payload    []byte    // the event as stored
	LeaseUntil time.Time // the node's lease on it
}

// ClaimDeliveries leases up to limit due deliveries to the node owner.
// A delivery whose channel can no longer send (disabled meanwhile, its
// secrets unreadable) fails here without an attempt.
func (a *App) ClaimDeliveries(ctx context.Context, owner string, lease time.Duration, limit int) ([]DeliveryJob, error) {
	now := a.stamp()
	if _, err := a.summarizeHeld(ctx, now); err != nil {
		return nil, err
	}
	due, err := a.store.DeliveriesDue(ctx, now)
	if err != nil || !due {
		return nil, err
	}
	claimed, err := a.claim(ctx, owner, now, lease, limit)
	if err != nil {
		return nil, err
	}
	jobs := make([]DeliveryJob, 0, len(claimed))
	for _, c := range claimed {
		reason := ""
		s, err := a.OpenChannelSecrets(c.ChannelID, c.Sealed)
		switch {
		case !c.Channel.Enabled:
			reason = "channel disabled"
			if c.Channel.DisabledReason != "" {
				reason += ": " + c.Channel.DisabledReason
			}
		case err != nil:
			a.log.Error("a channel's secrets cannot be opened", "channel", c.ChannelID, "err", err)
			reason = "the channel's secrets cannot be read with this server's keys"
		}
		if reason != "" {
			if err := a.store.FailUnsendable(ctx, owner, c.LeaseUntil, c.ID, reason, now); err != nil {
				return jobs, err
			}
			continue
		}
		jobs = append(jobs, DeliveryJob{Delivery: c.Delivery, Channel: c.Channel, Secrets: s, Payload: c.Payload, LeaseUntil: c.LeaseUntil})
	}
	return jobs, nil
}

// claim leases up to limit deliveries due at now to owner for lease, and
// holds back, in the same transaction, those past their channel's rate
// bound (holdOverBound). It returns the deliveries to send.
func (a *App) claim(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) (out []store.Claimed, err error) {
	defer errs.Wrap(&err, "app.claim")
	err = a.store.InTx(ctx, func(tx *store.Tx) error {
		claimed, err := tx.ClaimDeliveries(ctx, owner, now, now.Add(lease), limit)
		if err != nil || len(claimed) == 0 {
			return err
		}
		out, err = holdOverBound(ctx, tx, claimed, now)
		return err
	})
	return out, err
}

// ReleaseDeliveries gives up the leases of the node owner, at its start:
// its previous process's claims go at once. Node names must be unique
// among live nodes (they are by default: the host name).
func (a *App) ReleaseDeliveries(ctx context.Context, owner string) (int64, error) {
	return a.store.ReleaseDeliveries(ctx, owner)
}

// Attempted is an attempt made at a claimed delivery.
type Attempted struct {
	Job     DeliveryJob
	Attempt notify.Attempt
}

// FinishDeliveries records attempts at claimed deliveries, in one
// transaction, and decides what comes next for each: done on success (or
// when there was nothing to send), a retry after a backoff, failed once
// the retries run out, and a 410 Gone disables the channel. It reports,
// for each, whether the node still held the lease.
//
// One attempt the database refuses for what it carries does not cost the
// others their record: the batch is recorded in halves down to that
// attempt, which is recorded as a failed attempt saying so (finishApart).
// The error then reports what could not be recorded at all.
func (a *App) FinishDeliveries(ctx context.Context, owner string, done []Attempted) ([]bool, error) {
	held, err := a.finishAll(ctx, owner, a.finishes(done))
	if !store.IsDataError(err) {
		return held, err
	}
	held = make([]bool, len(done))
	return held, a.finishApart(ctx, owner, done, held, err)
}

// finish is one attempt to record: at a delivery claimed under a lease
// until LeaseUntil, and how it ended.
type finish struct {
	Delivery   *notify.Delivery
	LeaseUntil time.Time
	Outcome    outcome
}

// outcome is how an attempt ended.
type outcome struct {
	Attempt notify.Attempt
	// Status is the delivery's status after it: Succeeded, Failed, or
	// Pending again with RetryAt.
	Status  notify.Status
	RetryAt time.Time
	// DisableChannel, when set, disables the channel with this reason
	// (410 Gone), and fails its other pending deliveries.
	DisableChannel string
}

func (a *App) finishes(done []Attempted) []finish {
	fs := make([]finish, len(done))
	for i, d := range done {
		fs[i] = finish{Delivery: &d.Job.Delivery, LeaseUntil: d.Job.LeaseUntil, Outcome: a.outcomeOf(d)}
	}
	return fs
}

// finishAll records attempts made by owner, and each delivery's new
// status, in one transaction. A node whose lease ran out (another took the
// delivery over) records its attempt but changes nothing else; held says,
// for each, whether the node still held the lease.
func (a *App) finishAll(ctx context.Context, owner string, fs []finish) (held []bool, err error) {
	defer errs.Wrap(&err, "app.finishAll(%d)", len(fs))
	if err := a.store.PrepareAttemptWrites(ctx); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(tx *store.Tx) error {
		held = make([]bool, len(fs))
		for i, f := range fs {
			var err error
			if held[i], err = recordFinish(ctx, tx, owner, f); err != nil {
				return err
			}
		}
		return nil
	})
	return held, err
}

// recordFinish records f's attempt and, if owner still held the lease,
// what it leaves: the delivery's status, and a channel disabled (410
// Gone) or, on success, its pending retries brought forward: the receiver
// answers again, so what waited out its outage goes now instead of at
// each one's backoff.
func recordFinish(ctx context.Context, tx *store.Tx, owner string, f finish) (held bool, err error) {
	d, o, at := f.Delivery, f.Outcome, f.Outcome.Attempt
	now := at.StartedAt.Add(at.Duration)
	if err := tx.RecordAttempt(ctx, d.ID, at); err != nil {
		return false, err
	}
	s := store.DeliveryState{Status: o.Status, NextAttemptAt: d.NextAttemptAt, StatusCode: at.StatusCode, Error: at.Error,
		CompletedAt: now, UpdatedAt: now}
	if o.Status == notify.Pending {
		s.NextAttemptAt, s.CompletedAt = o.RetryAt, time.Time{}
	}
	if held, err = tx.FinishDelivery(ctx, d.ID, owner, f.LeaseUntil, s); err != nil || !held {
		return false, err
	}
	switch {
	case o.DisableChannel != "":
		err = tx.DisableChannel(ctx, d.ChannelID, o.DisableChannel, "channel disabled: "+o.DisableChannel, now)
	case o.Status == notify.Succeeded:
		err = tx.BringForward(ctx, d.ChannelID, now)
	}
	return true, err
}

// finishSome records done and fills held in; a batch the database
// refuses for its content is recorded apart.
func (a *App) finishSome(ctx context.Context, owner string, done []Attempted, held []bool) error {
	got, err := a.finishAll(ctx, owner, a.finishes(done))
	if !store.IsDataError(err) {
		copy(held, got)
		return err
	}
	return a.finishApart(ctx, owner, done, held, err)
}

// finishApart records done, which the database refused with refused, in
// two halves, each the same way; a single attempt it refuses is recorded
// as a failed attempt whose error says why. A data error is never
// retried as it was, so this ends after about 2·log2(len(done)) writes.
func (a *App) finishApart(ctx context.Context, owner string, done []Attempted, held []bool, refused error) error {
	if len(done) > 1 {
		h := len(done) / 2
		return errors.Join(a.finishSome(ctx, owner, done[:h], held[:h]), a.finishSome(ctx, owner, done[h:], held[h:]))
	}
	d := done[0]
	d.Attempt.Error = clean.Shorten("the outcome of this attempt could not be recorded as it was, the database refused it ("+
		refused.Error()+")", notify.MaxAttemptError)
	got, err := a.finishAll(ctx, owner, a.finishes([]Attempted{d}))
	if err != nil {
		return fmt.Errorf("recording an attempt at delivery %s the database refused: %w", d.Job.ID, err)
	}
	held[0] = got[0]
	return nil
}

func (a *App) outcomeOf(d Attempted) outcome {
	at := d.Attempt
	o := outcome{Attempt: at}
	switch {
	case at.Error == "":
		o.Status = notify.Succeeded
	case notify.Permanent(at.StatusCode):
		o.Status = notify.Failed
		o.DisableChannel = "the receiver answered 410 Gone"
	default:
		retry, ok := notify.NextAttempt(d.Job.Attempts+1, at.StartedAt.Add(at.Duration), d.Job.GiveUpAt, a.cfg.RetryFirst, a.cfg.RetryMax)
		if ok {
			o.Status, o.RetryAt = notify.Pending, retry
		} else {
			o.Status = notify.Failed
		}
	}
	return o
}

// ListDeliveries pages through a channel's deliveries, newest first.
func (a *App) ListDeliveries(ctx context.Context, actor Actor, channelID, status string, p PageRequest) (Page[*notify.Delivery], error) {
	if err := actor.Require(account.ScopeNotificationsRead); err != nil {
		return Page[*notify.Delivery]{}, err
	}
	switch notify.Status(status) {
	case "", notify.Pending, notify.Succeeded, notify.Failed, notify.Held:
	default:
		return Page[*notify.Delivery]{}, invalid([]errs.FieldError{{Pointer: "query.status",
			Message: "must be pending, succeeded, failed or held"}})
	}
	before, limit, err := p.decode()
	if err != nil {
		return Page[*notify.Delivery]{}, err
	}
	if _, _, err := a.store.GetChannel(ctx, actor.WorkspaceID, channelID); err != nil {
		return Page[*notify.Delivery]{}, err
	}
	ds, err := a.store.ListDeliveries(ctx, actor.WorkspaceID, store.DeliveryQuery{ChannelID: channelID, Status: status,
		BeforeID: before, Limit: limit + 1})
	if err != nil {
		return Page[*notify.Delivery]{}, err
	}
	page := Page[*notify.Delivery]{Items: ds}
	if len(ds) > limit {
		page.Items = ds[:limit]
		page.NextCursor = encodeCursor(ds[limit-1].ID)
	}
	return page, nil
}

// LastDeliveries returns the newest delivery of each channel named, by
// channel id, in one read; a channel without one, or of another
// workspace, is absent. At most MaxPageLimit channels at once.
func (a *App) LastDeliveries(ctx context.Context, actor Actor, channelIDs []string) (map[string]*notify.Delivery, error) {
	if err := actor.Require(account.ScopeNotificationsRead); err != nil {
		return nil, err
	}
	if len(channelIDs) > MaxPageLimit {
		return nil, invalid([]errs.FieldError{{Pointer: "channels", Message: fmt.Sprintf("must name at most %d", MaxPageLimit)}})
	}
	return a.store.LatestDeliveries(ctx, actor.WorkspaceID, channelIDs)
}

// GetDelivery returns one delivery of the actor's workspace.
func (a *App) GetDelivery(ctx context.Context, actor Actor, id string) (*notify.Delivery, error) {
	if err := actor.Require(account.ScopeNotificationsRead); err != nil {
		return nil, err
	}
	return a.store.GetDelivery(ctx, actor.WorkspaceID, id)
}

// Redeliver sends a finished delivery again, with the same id, tried
// for another notify.RetryHorizon.
func (a *App) Redeliver(ctx context.Context, actor Actor, id string) (*notify.Delivery, error) {
	if err := actor.Require(account.ScopeNotificationsWrite); err != nil {
		return nil, err
	}
	now := a.stamp()
	if err := a.store.Redeliver(ctx, actor.WorkspaceID, id, now, now.Add(notify.RetryHorizon)); err != nil {
		return nil, err
	}
	return a.store.GetDelivery(ctx, actor.WorkspaceID, id)
}

// TestData is the data of a test event.
type TestData struct {
	Message string      `json:"message"`
	Channel TestChannel `json:"channel"`
}

// TestChannel names the channel a test event was sent to.
type TestChannel struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// TestChannel sends one channel a test event, whatever its filters, and
// returns its delivery, pending: the notifier sends it at once, and the
// delivery shows how it went.
func (a *App) TestChannel(ctx context.Context, actor Actor, id string) (*notify.Delivery, error) {
	if err := actor.Require(account.ScopeNotificationsWrite); err != nil {
		return nil, err
	}
	c, _, err := a.store.GetChannel(ctx, actor.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if !c.Enabled {
		return nil, &errs.Error{Kind: errs.KindConflict, Message: "the channel is disabled: enable it to send a test"}
	}
	now := a.stamp()
	ev := incident.Event{ID: ids.New(ids.Event, now), Type: incident.Test, CreatedAt: now, WorkspaceID: actor.WorkspaceID,
		Data: TestData{Message: "A test notification from Tocsin: this channel works.", Channel: TestChannel{ID: c.ID, Name: c.Name}}}
	dlv, err := a.store.SendTest(ctx, actor.WorkspaceID, id, ev, now.Add(notify.RetryHorizon))
	if err != nil {
		return nil, err
	}
	return a.store.GetDelivery(ctx, actor.WorkspaceID, dlv)
}
