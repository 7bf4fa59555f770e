package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/tocsin/tocsin/internal/app"
)

// HeartbeatApp is what Heartbeats needs of app.
type HeartbeatApp interface {
	FlushPings(ctx context.Context) error
	NewHeartbeatSweeper(node string) *app.HeartbeatSweeper
}

// Heartbeats judges heartbeats' deadlines and keeps this node's record of
// receiving pings current: a sweep (app.HeartbeatSweeper.Tick) every
// second.
type Heartbeats struct {
	sweeper *app.HeartbeatSweeper
	log     *slog.Logger
}

// StartHeartbeats makes node's heartbeat runner and runs its first sweep,
// which records that this node receives pings and the outage of the
// service before it, if there was one. serve calls it before it takes
// requests, so that no ping comes before that outage is recorded. A failed
// sweep is logged; Run tries again.
func StartHeartbeats(ctx context.Context, a HeartbeatApp, node string, log *slog.Logger) *Heartbeats {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// What a stopped process left in the ping journal is replayed first,
	// so reads see it from the start (the sweep would replay it too).
	if err := a.FlushPings(ctx); err != nil {
		log.Warn("replaying the pings a stopped process left", "err", err)
	}
	h := &Heartbeats{sweeper: a.NewHeartbeatSweeper(node), log: log}
	h.sweep(ctx)
	return h
}

// Run sweeps every second until ctx ends, and then records that this
// node was receiving pings until it stopped. A failed sweep is logged and
// tried again a second later, so it returns nil.
func (h *Heartbeats) Run(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			h.stop()
			return nil
		case <-tick.C:
		}
		h.sweep(ctx)
	}
}

// sweep runs one sweep, and logs what it did.
func (h *Heartbeats) sweep(ctx context.Context) {
	changes, err := h.sweeper.Tick(ctx)
	for _, c := range changes {
		h.log.Info("heartbeat state changed", "heartbeat", c.SubjectID, "from", c.From, "to", c.To, "cause", c.Cause)
	}
	if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		h.log.Warn("judging heartbeat deadlines", "err", err)
	}
}

// stop records, as this node stops, that it was receiving pings until
// now, within a second: ctx has ended.
func (h *Heartbeats) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := h.sweeper.Stop(ctx); err != nil {
		h.log.Warn("recording that this node received pings until it stopped", "err", err)
	}
}
