package scheduler

import (
	"context"

	"github.com/tocsin/tocsin/internal/app"
)

// PingApp is what Pings needs of app.
type PingApp interface {
	RunPings(ctx context.Context) error
}

// Pings runs the ping writers, which store the pings requests bring in
// batches. Its context must end only once no request can bring another
// ping (serve cancels it after the HTTP server has shut down): what is
// still queued then is stored before Run returns.
type Pings struct {
	App PingApp
}

// Run writes pings until ctx ends.
func (p *Pings) Run(ctx context.Context) error { return p.App.RunPings(ctx) }

// HeartbeatApp is what Heartbeats needs of app.
type HeartbeatApp interface {
	StartHeartbeats(ctx context.Context, node string) *app.HeartbeatSweeper
}

// Heartbeats judges heartbeats' deadlines and keeps this node's record of
// receiving pings current.
type Heartbeats struct {
	sweeper *app.HeartbeatSweeper
}

// StartHeartbeats makes node's heartbeat runner and runs its first sweep,
// which records that this node receives pings and the outage of the
// service before it, if there was one. serve calls it before it takes
// requests, so that no ping comes before that outage is recorded.
func StartHeartbeats(ctx context.Context, a HeartbeatApp, node string) *Heartbeats {
	return &Heartbeats{sweeper: a.StartHeartbeats(ctx, node)}
}

// Run sweeps until ctx ends, then records that this node was receiving
// pings until it stopped.
func (h *Heartbeats) Run(ctx context.Context) error { return h.sweeper.Run(ctx) }
