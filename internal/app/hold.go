package app

import (
	"context"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store"
)

// The storm hold: a channel takes at most notify.RateBound first attempts
// of bounded events (notify.Bounded) in a notify.RateWindow; the ones past
// the bound are held, done without an attempt, and one summary
// (notify.EventHeld) tells of them once the window ends. A storm of
// outages reaches people as a few messages, not hundreds.

// rateWindow is a channel's count of first attempts since start.
type rateWindow struct {
	start time.Time
	count int
}

// admit counts n first attempts at now against w under bound. It returns
// the window after them and how many of the n go; the rest, the last
// ones, are held. A window that has lasted notify.RateWindow starts again
// at now.
func admit(w rateWindow, n, bound int, now time.Time) (rateWindow, int) {
	if now.Sub(w.start) >= notify.RateWindow {
		w = rateWindow{start: now}
	}
	send := min(n, max(bound-w.count, 0))
	w.count += send
	return w, send
}

// firstAttempts groups the claimed deliveries the bound counts by
// channel, channels in the order they first appear: retries go, and so do
// held ones sent again by hand (a person asked) and unbounded events.
func firstAttempts(claimed []store.Claimed) (channels []string, byChannel map[string][]int) {
	byChannel = map[string][]int{}
	for i, c := range claimed {
		if c.Attempts > 0 || c.HeldBy != "" || !notify.Bounded(c.EventType) {
			continue
		}
		if _, ok := byChannel[c.ChannelID]; !ok {
			channels = append(channels, c.ChannelID)
		}
		byChannel[c.ChannelID] = append(byChannel[c.ChannelID], i)
	}
	return channels, byChannel
}

// heldReason is what a held delivery says of itself.
func heldReason(bound int) string {
	return "held back: the channel took its " + strconv.Itoa(bound) + " events of the minute; a summary follows"
}

// holdOverBound counts the first attempts of claimed deliveries against
// their channels' rate windows, in the transaction that claimed them, and
// holds the ones past the bound. It returns the deliveries to send.
func holdOverBound(ctx context.Context, tx *store.Tx, claimed []store.Claimed, now time.Time) ([]store.Claimed, error) {
	channels, byChannel := firstAttempts(claimed)
	held := map[int]bool{}
	for _, ch := range channels {
		start, count, err := tx.RateWindow(ctx, ch)
		if err != nil {
			return nil, err
		}
		idx := byChannel[ch]
		bound := notify.RateBound(claimed[idx[0]].Channel.Kind)
		w, send := admit(rateWindow{start: start, count: count}, len(idx), bound, now)
		for _, i := range idx[send:] {
			held[i] = true
			if err := tx.HoldDelivery(ctx, claimed[i].ID, heldReason(bound), now); err != nil {
				return nil, err
			}
		}
		if err := tx.SetRateWindow(ctx, ch, w.start, w.count); err != nil {
			return nil, err
		}
	}
	if len(held) == 0 {
		return claimed, nil
	}
	send := claimed[:0:0]
	for i, c := range claimed {
		if !held[i] {
			send = append(send, c)
		}
	}
	return send, nil
}

// maxHeldTitles bounds the headlines a summary lists.
const maxHeldTitles = 50

// heldSummary is what a summary tells of a channel's held deliveries,
// oldest first.
func heldSummary(channelID string, held []store.HeldDelivery) notify.HeldData {
	data := notify.HeldData{ChannelID: channelID, ByType: map[string]int{}}
	for _, h := range held {
		if data.Count == 0 {
			data.From = h.CreatedAt
		}
		data.Count++
		data.ByType[h.EventType]++
		data.To = h.CreatedAt
		if t := notify.HeldTitle(h.Payload); t != "" && len(data.Titles) < maxHeldTitles {
			data.Titles = append(data.Titles, t)
		}
	}
	return data
}

// summarizeHeld writes, for each channel whose rate window has ended with
// events held back, one notify.EventHeld event telling of them and its
// delivery to that channel, and marks the held ones as told (held_by),
// a transaction per channel. It reports how many summaries it wrote.
func (a *App) summarizeHeld(ctx context.Context, now time.Time) (n int, err error) {
	channels, err := a.store.ChannelsWithUntoldHeld(ctx, now.Add(-notify.RateWindow))
	if err != nil {
		return 0, err
	}
	for _, ch := range channels {
		err := a.store.InTx(ctx, func(tx *store.Tx) error {
			wsID, err := tx.LockChannel(ctx, ch)
			if err != nil {
				return err
			}
			held, err := tx.UntoldHeld(ctx, ch)
			if err != nil || len(held) == 0 {
				return err // another node told of them
			}
			ev := incident.Event{ID: ids.New(ids.Event, now), Type: notify.EventHeld, CreatedAt: now, WorkspaceID: wsID,
				Data: heldSummary(ch, held)}
			if err := tx.InsertEvent(ctx, ev, "", ""); err != nil {
				return err
			}
			summary, err := tx.InsertDelivery(ctx, ev, ch, "", now.Add(notify.RetryHorizon))
			if err != nil {
				return err
			}
			told := make([]string, len(held))
			for i, h := range held {
				told[i] = h.ID
			}
			n++
			return tx.MarkHeldTold(ctx, summary, told)
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
