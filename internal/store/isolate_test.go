package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// No batch hostage at the store's writers that isolate: a subject whose
// rows the database refuses for their content is set aside and named, and
// the others of its batch are written. The refusal is a trigger
// (storetest.Refuse): the cleaning upstream keeps real rows from being
// refused, so the test makes one the database refuses regardless.

// One heartbeat whose verdict is refused does not stop the sweep's other
// verdicts.
func TestSweepSetsRefusedVerdictAside(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			url := storetest.URL(t, e)
			db, err := openStore(ctx, url)
			check(t, err)
			t.Cleanup(func() { db.Close() })
			_, w := seed(t, db, "acme")
			hbs := newHeartbeats(t, db, w.ID, 5)
			var batch []heartbeat.Arrival
			for i, h := range hbs {
				batch = append(batch, ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Duration(i)*time.Millisecond), "", ""))
			}
			_, _, err = recordPings(db, batch)
			check(t, err)
			_, err = db.CountPings(ctx) // applies SQLite's journal before the trigger exists
			check(t, err)
			var span int64
			for at := t0.Add(-time.Second); !at.After(t0.Add(2 * time.Minute)); at = at.Add(5 * time.Second) {
				span, err = db.TouchSpan(ctx, "node", span, at.Add(-5*time.Second), at, heartbeat.SpanGap)
				check(t, err)
			}
			bad := hbs[2]
			storetest.Refuse(t, url, "state_changes", "NEW.subject_id = '"+bad.ID+"'")

			changes, claimed, err := sweepDeadlines(db, "node", t0.Add(2*time.Minute), 500)
			var refused *store.RefusedError
			if !errors.As(err, &refused) || len(refused.Rows) != 1 || !strings.Contains(err.Error(), bad.ID) || !store.IsDataError(err) {
				t.Fatalf("sweep: %v, want the refused verdict on %s named alone", err, bad.ID)
			}
			if claimed != len(hbs) {
				t.Errorf("claimed %d, want %d", claimed, len(hbs))
			}
			down := map[string]int{}
			for _, c := range changes {
				if c.To == monitor.StateDown {
					down[c.SubjectID]++
				}
			}
			for _, h := range hbs {
				want, wantDown := monitor.StateDown, 1
				if h.ID == bad.ID {
					want, wantDown = monitor.StateUp, 0
				}
				if got := getHeartbeat(t, db, w.ID, h.ID).Runtime.State; got != want || down[h.ID] != wantDown {
					t.Errorf("%s: %s with %d DOWN changes reported, want %s with %d", h.ID, got, down[h.ID], want, wantDown)
				}
			}
		})
	}
}

// SQLite's journal apply writes every heartbeat's block but the one the
// database refuses, reports that one, and goes on applying later batches:
// it never stalls on a row (PostgreSQL has no journal; its ping writer
// splits the batch, internal/app).
func TestPingApplySetsRefusedBlockAside(t *testing.T) {
	e := storetest.Engines(t)[0]
	if e.Name != store.EngineSQLite {
		t.Fatalf("the first engine is %s", e.Name)
	}
	url := storetest.URL(t, e)
	db, err := openStore(ctx, url)
	check(t, err)
	t.Cleanup(func() { db.Close() })
	_, w := seed(t, db, "acme")
	hbs := newHeartbeats(t, db, w.ID, 4)
	storetest.Refuse(t, url, "ping_blocks", "NEW.pings LIKE '%poison%'")

	var batch []heartbeat.Arrival
	for i, h := range hbs {
		p := ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Duration(i)*time.Millisecond), "k", "")
		if i == 1 {
			p.UserAgent = "poison"
		}
		batch = append(batch, p)
	}
	outs, _, err := recordPings(db, batch)
	check(t, err)
	for i, o := range outs {
		if !o.Found || o.Replayed {
			t.Errorf("ping %d: %+v", i, o)
		}
	}
	if n, err := db.CountPings(ctx); err != nil || n != 3 {
		t.Fatalf("after the apply: %d pings stored, %v; want the 3 not refused", n, err)
	}
	var refused *store.RefusedError
	if _, err := applyPings(db); !errors.As(err, &refused) || len(refused.Rows) != 1 || !strings.Contains(err.Error(), "pings of heartbeat") {
		t.Errorf("ApplyPings: %v, want the refused block reported", err)
	}
	// The journal goes on: later pings are applied, keys replay.
	batch = batch[:0]
	for i, h := range hbs {
		batch = append(batch, ping(h.Token, heartbeat.SignalSuccess, t0.Add(time.Minute+time.Duration(i)*time.Millisecond), "k2", ""))
	}
	_, _, err = recordPings(db, batch)
	check(t, err)
	if n, err := db.CountPings(ctx); err != nil || n != 7 {
		t.Fatalf("after a second batch: %d pings stored, %v; want 7", n, err)
	}
	outs, _, err = recordPings(db, batch[:1])
	check(t, err)
	if !outs[0].Replayed {
		t.Errorf("a retry after the apply: %+v, want replayed", outs[0])
	}
}
