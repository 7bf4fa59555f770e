package app

// No batch hostage at the app's writers, which form the batches: the ping
// writer and the recording of finished deliveries. One ping or attempt the
// database refuses shares a batch with others; the others are stored, the
// refused one is isolated. The refusals are made on purpose: raw bytes
// that bypass the cleaning (PostgreSQL refuses them), and a trigger that
// refuses a row on either engine (storetest.Refuse).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// newIsolationApp opens a fresh database on eng and an app over it, its
// ping writers running, with an owner of one workspace; it returns the
// database's URL too.
func newIsolationApp(t *testing.T, eng storetest.Engine) (*App, Actor, string) {
	return newTestApp(t, eng, Config{})
}

// newTestApp is an app with cfg on a fresh database of eng, its pings
// written until the test ends (writePings), and an owner actor of one
// workspace; it returns the database's URL too.
func newTestApp(t *testing.T, eng storetest.Engine, cfg Config) (*App, Actor, string) {
	t.Helper()
	ctx := context.Background()
	url := storetest.URL(t, eng)
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	a := New(db, kr, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), cfg)
	writePings(t, a)
	u, err := a.CreateUser(ctx, UserRequest{Email: "owner@a.test", Workspace: "ws-a", Role: account.RoleOwner})
	if err != nil {
		t.Fatal(err)
	}
	return a, Actor{UserID: u.User.ID, WorkspaceID: u.Workspace.ID, Role: account.RoleOwner}, url
}

// writePings writes a's pings until the test ends, a ping a transaction:
// the writers' batching and its timing are the runner's
// (scheduler.Pings), tested beside it.
func writePings(t *testing.T, a *App) {
	t.Helper()
	lanes, release, err := a.PingLanes()
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Go(func() {
			for {
				select {
				case q := <-l.Queue():
					a.WritePings(l, []*QueuedPing{q})
					_, _ = a.ApplyPings(ctx) // as the writers do between batches, which only log a failed apply
				case <-ctx.Done():
					return
				}
			}
		})
	}
	t.Cleanup(func() {
		stop()
		wg.Wait()
		release()
	})
}

func TestPingWriterIsolatesRefusedPing(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			ctx := context.Background()
			a, actor, url := newIsolationApp(t, eng)
			var hbs []heartbeat.Heartbeat
			for i := range 6 {
				h, err := a.CreateHeartbeat(ctx, actor, heartbeat.Draft{Name: fmt.Sprint("job ", i), Schedule: heartbeat.Schedule{PeriodSeconds: 3600}})
				if err != nil {
					t.Fatal(err)
				}
				hbs = append(hbs, h)
			}
			storetest.Refuse(t, url, "ping_blocks", "NEW.pings LIKE '%poison%'")
			const rawKey, poisoned = 1, 3
			now := a.now()
			batch := make([]*QueuedPing, len(hbs))
			for i, h := range hbs {
				in := heartbeat.Arrival{TokenHash: heartbeat.HashToken(h.Token), Method: "GET", Client: "127.0.0.1", Key: fmt.Sprint("k", i),
					Ping: heartbeat.Ping{Signal: heartbeat.SignalSuccess, ExitCode: -1, At: now.Add(time.Duration(i) * time.Microsecond)}}
				switch i {
				case rawKey:
					in.Key = "\xff" // not cleaned: PostgreSQL refuses it
				case poisoned:
					in.UserAgent = "poison" // refused on every engine, cleaned or not
				}
				batch[i] = &QueuedPing{in: in, deadline: time.Now().Add(PingWait), done: make(chan pingResult, 1)}
			}
			reqs := append([]*QueuedPing(nil), batch...)
			a.WritePings(&PingLane{}, batch)

			for i, r := range reqs {
				res := <-r.done
				switch {
				case i == poisoned && eng.Name == store.EnginePostgres:
					// Refused even cleaned: answered alone with the error.
					if res.err == nil || errors.Is(res.err, ErrPingsBusy) {
						t.Errorf("the ping refused even cleaned: %v, want its own error, not 503", res.err)
					}
				case res.err != nil || !res.out.Found || res.out.Replayed:
					// SQLite journals every ping: the refusal comes at the apply.
					t.Errorf("ping %d: %+v, %v; want stored", i, res.out, res.err)
				}
			}
			for i, h := range hbs {
				page, err := a.ListPings(ctx, actor, h.ID, PingQuery{})
				if err != nil {
					t.Fatalf("listing the pings of %d: %v", i, err)
				}
				want := 1
				if i == poisoned {
					want = 0 // PostgreSQL refused it; SQLite's apply set its block aside
				}
				if len(page.Items) != want {
					t.Errorf("heartbeat %d: %d pings stored, want %d", i, len(page.Items), want)
				}
				if i == rawKey && len(page.Items) == 1 {
					// PostgreSQL's writer stored it cleaned; SQLite took
					// the raw key, and its block's JSON replaced the byte.
					wantKey := heartbeat.Label("\xff")
					if eng.Name == store.EngineSQLite {
						wantKey = "\uFFFD"
					}
					if got := page.Items[0].Key; got != wantKey {
						t.Errorf("the raw key was stored as %q, want %q", got, wantKey)
					}
				}
			}
			// The same raw key, through the ping URL's path, is a retry.
			out, _, err := a.Ping(ctx, hbs[rawKey].Token, heartbeat.Arrival{Ping: heartbeat.Ping{Signal: heartbeat.SignalSuccess, ExitCode: -1},
				Method: "GET", Client: "127.0.0.1", Key: "\xff"})
			if err != nil || !out.Replayed {
				t.Errorf("a retry with the raw key: %+v, %v; want replayed", out, err)
			}
		})
	}
}

func TestFinishDeliveriesIsolatesRefusedAttempt(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			ctx := context.Background()
			a, actor, url := newIsolationApp(t, eng)
			for i := range 4 {
				c, _, err := a.CreateChannel(ctx, actor, ChannelDraft{Name: fmt.Sprint("hook ", i), Kind: notify.Webhook, Enabled: true,
					Config: notify.Config{URL: "http://127.0.0.1:9/hook"}})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := a.TestChannel(ctx, actor, c.ID); err != nil {
					t.Fatal(err)
				}
			}
			storetest.Refuse(t, url, "delivery_attempts", "NEW.error LIKE '%poison%'")
			jobs, err := a.ClaimDeliveries(ctx, "node", time.Minute, 10)
			if err != nil || len(jobs) != 4 {
				t.Fatalf("claimed %d deliveries, %v; want 4", len(jobs), err)
			}
			const poisoned, nul = 1, 2
			done := make([]Attempted, len(jobs))
			for i, j := range jobs {
				at := notify.Attempt{Node: "node", StartedAt: a.now(), Duration: time.Millisecond, StatusCode: 204}
				switch i {
				case poisoned:
					at.StatusCode, at.Error = 500, "the receiver answered 500: poison"
				case nul:
					at.StatusCode, at.Error = 503, "the receiver answered 503: bad\x00" // not cleaned: PostgreSQL refuses it
				}
				done[i] = Attempted{Job: j, Attempt: at}
			}
			held, err := a.FinishDeliveries(ctx, "node", done)
			if err != nil {
				t.Fatalf("FinishDeliveries: %v", err)
			}
			for i, j := range jobs {
				if !held[i] {
					t.Errorf("delivery %d: lease not held", i)
				}
				d, err := a.GetDelivery(ctx, actor, j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(d.Log) != 1 || d.Attempts != 1 {
					t.Errorf("delivery %d: %d attempts recorded (%d counted), want 1", i, len(d.Log), d.Attempts)
					continue
				}
				got := d.Log[0]
				refused := i == poisoned || i == nul && eng.Name == store.EnginePostgres
				switch {
				case refused:
					if d.Status != notify.Pending || got.StatusCode != done[i].Attempt.StatusCode ||
						!strings.HasPrefix(got.Error, "the outcome of this attempt could not be recorded as it was") {
						t.Errorf("delivery %d, refused: %s, attempt %+v; want a failed attempt saying why, to be retried", i, d.Status, got)
					}
				case i == nul: // SQLite takes NUL as it is
					if d.Status != notify.Pending || got.Error != done[i].Attempt.Error {
						t.Errorf("delivery %d: %s, attempt %+v", i, d.Status, got)
					}
				default:
					if d.Status != notify.Succeeded || got.Error != "" || got.StatusCode != 204 {
						t.Errorf("delivery %d: %s, attempt %+v; want succeeded", i, d.Status, got)
					}
				}
			}
		})
	}
}
