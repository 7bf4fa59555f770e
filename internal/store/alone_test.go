package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// A store opened alone, with no app over it, works: it holds none of
// app's rules, and runs pings on the steps each call hands it (here the
// domain's own, a state change recorded in the history alone). Deleting
// is the Tx's primitives.
func TestStoreOpenedAlone(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := storetest.OpenDB(t, e)
			_, w := seed(t, db, "acme")
			h := newHeartbeat(t, db, w.ID, t0, 60, 10, 0)
			var recorded []monitor.Transition
			steps := &store.PingSteps{
				Settings: func(h heartbeat.Heartbeat) (heartbeat.Settings, error) {
					plan, err := h.Schedule.Compile()
					return heartbeat.Settings{Plan: plan}, err
				},
				Ping: func(rt heartbeat.Runtime, rec *heartbeat.PingRecord, s heartbeat.Settings) (heartbeat.Runtime, *monitor.Transition) {
					rt, tr, dur := rt.Ping(heartbeat.Ping{Signal: rec.Signal, ExitCode: rec.ExitCode, RunID: rec.RunID, At: rec.At}, s)
					rec.Duration = dur
					return rt, tr
				},
				KeyTTL: heartbeat.KeyTTL,
				Record: func(ctx context.Context, tx *store.Tx, id string, tr monitor.Transition) error {
					recorded = append(recorded, tr)
					return tx.AppendStateChange(ctx, id, tr)
				},
			}
			outs, changes, err := db.RecordPings(ctx, steps, []heartbeat.Arrival{ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Second), "k", "")})
			check(t, err)
			if !outs[0].Found || outs[0].Replayed || len(changes) != 1 || changes[0].To != monitor.StateUp {
				t.Fatalf("a first ping: %+v, changes %+v; want it recorded, UP", outs, changes)
			}
			outs, _, err = db.RecordPings(ctx, steps, []heartbeat.Arrival{ping(h.Token, heartbeat.SignalSuccess, t0.Add(2*time.Second), "k", "")})
			check(t, err)
			if !outs[0].Replayed {
				t.Errorf("a retry of key k within the steps' KeyTTL: %+v, want a replay", outs[0])
			}
			// Reads apply what the journal holds.
			if got := getHeartbeat(t, db, w.ID, h.ID).Runtime; got.State != monitor.StateUp || !got.LastPing.Equal(t0.Add(time.Second)) {
				t.Errorf("runtime after the ping: %+v", got)
			}
			states, err := db.ListStateChanges(ctx, w.ID, h.ID, time.Time{}, 10)
			check(t, err)
			if len(states) != 1 || states[0].To != monitor.StateUp || len(recorded) != 1 {
				t.Errorf("state history %+v, recorded by the steps %+v; want the one change to UP", states, recorded)
			}
			check(t, db.HeartbeatTx(ctx, nil, func(tx *store.Tx) error { return tx.DeleteHeartbeat(ctx, w.ID, h.ID) }))
			if _, _, err := db.GetHeartbeat(ctx, w.ID, h.ID); !errors.Is(err, errs.ErrNotFound) {
				t.Errorf("the deleted heartbeat read back: %v", err)
			}
			check(t, db.Close())
		})
	}
}
