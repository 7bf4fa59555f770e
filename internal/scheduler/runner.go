// Package scheduler holds the node's background loops, each a Runner over
// the part of app it needs: the check scheduler (scheduler.go), the ping
// writers (pings.go), the heartbeat sweep (heartbeats.go), maintenance
// windows (maintenance.go), and the rounds of rollups, SLO alerts and
// housekeeping (rounds.go). Deliveries have a runner of their own in
// package deliver. What a loop does on each turn is a use case of app;
// when and how often is the runner's.
package scheduler

import "context"

// Runner is a background loop: it works until ctx ends, then finishes
// what it holds and returns. serve runs every one in one errgroup.
type Runner interface {
	Run(ctx context.Context) error
}
