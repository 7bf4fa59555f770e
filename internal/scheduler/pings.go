package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/app"
)

const (
	// pingBatch bounds one transaction of pings.
	pingBatch = 2_000
	// pingLinger is how long a writer waits, once a ping has come, for
	// more to share its transaction. A transaction costs SQLite's journal
	// as much as a dozen pings; without the wait, 64 busy clients made
	// batches of three. Longer waits make bigger batches but slow every
	// ping down (docs/benchmarks.md, "Pings").
	pingLinger = 250 * time.Microsecond
)

// PingApp is what Pings needs of app.
type PingApp interface {
	PingLanes() (lanes []*app.PingLane, release func(), err error)
	WritePings(l *app.PingLane, batch []*app.QueuedPing)
	ApplyPings(ctx context.Context) (time.Time, error)
}

// Pings runs the ping writers, one per lane, which store the pings
// requests bring in batches (group commit): whatever has queued up when
// a writer is free, and what comes within pingLinger of the first. Its
// context must end only once no request can bring another ping (serve
// cancels it after the HTTP server has shut down): what is still queued
// then is stored before Run returns. Until Run runs, and after it
// returns, a ping waits app.PingWait and is answered app.ErrPingsBusy,
// never stored.
type Pings struct {
	App PingApp
	Log *slog.Logger
}

// Run writes pings until ctx ends, then stores what is queued and
// returns. It fails only if the ping writers are already running.
func (p *Pings) Run(ctx context.Context) error {
	lanes, release, err := p.App.PingLanes()
	if err != nil {
		return err
	}
	defer release()
	log := p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Go(func() { p.write(ctx, l, log) })
	}
	wg.Wait()
	return nil
}

// write is lane l's writer.
func (p *Pings) write(ctx context.Context, l *app.PingLane, log *slog.Logger) {
	queue := l.Queue()
	batch := make([]*app.QueuedPing, 0, pingBatch)
	idle := time.NewTimer(time.Hour)
	idle.Stop()
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	for {
		var first *app.QueuedPing
		select {
		case first = <-queue:
		case <-idle.C:
			p.apply(log)
			continue
		case <-ctx.Done():
			// No request brings pings any more: store what is queued,
			// then stop.
			select {
			case first = <-queue:
			default:
				return
			}
		}
		batch = append(batch[:0], first)
		linger.Reset(pingLinger)
	gather:
		for len(batch) < pingBatch {
			select {
			case q := <-queue:
				batch = append(batch, q)
			case <-linger.C:
				break gather
			}
		}
		linger.Stop()
		p.App.WritePings(l, batch)
		// Between batches, apply what the store holds back, if it is due
		// (SQLite's journal); come back when it will be, if no ping does.
		if next := p.apply(log); !next.IsZero() {
			idle.Reset(time.Until(next))
		}
	}
}

// apply applies the store's pending pings if they are due, and returns
// when they will be next (zero: none pending).
func (p *Pings) apply(log *slog.Logger) time.Time {
	next, err := p.App.ApplyPings(context.Background())
	if err != nil {
		log.Warn("applying pings", "err", err)
		return time.Now().Add(time.Second)
	}
	return next
}
