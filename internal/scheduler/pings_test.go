package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/scheduler"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// The ping writers stop last of the request path (serve ends their
// context once the HTTP server has shut down): every ping still queued
// then is stored, and answered, before Run returns.
func TestPingsStoreWhatIsQueuedWhenTheyStop(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := storetest.OpenDB(t, e)
			spec, err := secrets.GenerateKeySpec("k1")
			check(t, err)
			kr, err := secrets.ParseKeyring(spec) // a heartbeat's token is sealed
			check(t, err)
			a := app.New(db, kr, nil, slog.New(slog.DiscardHandler), app.Config{PingWait: time.Minute})
			actor := app.Actor{WorkspaceID: workspace(t, db), Role: account.RoleOwner}
			h, err := a.CreateHeartbeat(ctx, actor, heartbeat.Draft{Name: "job", Schedule: heartbeat.Schedule{PeriodSeconds: 3600}})
			check(t, err)
			const n = 20
			answers := make(chan error, n)
			for i := range n {
				go func() {
					out, _, err := a.Ping(ctx, h.Token, heartbeat.Arrival{Method: "GET", Client: "127.0.0.1", Key: fmt.Sprint("k", i),
						Ping: heartbeat.Ping{Signal: heartbeat.SignalSuccess, ExitCode: -1}})
					if err == nil && !out.Found {
						err = errors.New("the ping found no heartbeat")
					}
					answers <- err
				}()
			}
			// No writer runs yet: the pings wait on their lanes.
			lanes, release, err := a.PingLanes()
			check(t, err)
			wait.For(t, 10*time.Second, "the pings to queue", func() bool {
				queued := 0
				for _, l := range lanes {
					queued += len(l.Queue())
				}
				return queued == n
			})
			release()

			stopped, cancel := context.WithCancel(ctx)
			cancel()
			check(t, (&scheduler.Pings{App: a}).Run(stopped))
			// Stored by the time Run returned, and each answered so.
			page, err := a.ListPings(ctx, actor, h.ID, app.PingQuery{})
			check(t, err)
			if len(page.Items) != n {
				t.Errorf("%d pings stored as the writers stopped, want %d", len(page.Items), n)
			}
			for range n {
				if err := <-answers; err != nil {
					t.Errorf("a ping queued as the writers stopped: %v, want stored", err)
				}
			}
		})
	}
}

// One writer per lane: the writers are refused while another holds the
// lanes, and run once it has let them go.
func TestPingsRunOnceAtATime(t *testing.T) {
	db := storetest.OpenDB(t, storetest.Engines(t)[0])
	a := app.New(db, nil, nil, slog.New(slog.DiscardHandler), app.Config{})
	stopped, cancel := context.WithCancel(ctx)
	cancel() // a runner returns at once, having nothing queued to store
	_, release, err := a.PingLanes()
	check(t, err)
	if err := (&scheduler.Pings{App: a}).Run(stopped); err == nil {
		t.Error("the ping writers ran beside another holder of their lanes")
	}
	release()
	check(t, (&scheduler.Pings{App: a}).Run(stopped))
	check(t, (&scheduler.Pings{App: a}).Run(stopped)) // and again, once returned
}
