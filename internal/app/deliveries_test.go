package app

import (
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// Deliveries are made with their events for the channels that hear them,
// claimed once under a lease, in order per order key, and a node whose
// lease ran out changes nothing; old events go with their deliveries,
// unless one is pending.
func TestDeliveriesStore(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db, a := openWithWorkflow(t, e)
			_, w := seed(t, db, "acme")
			m := addMonitor(t, db, w.ID, monitor.Config{Confirmations: 1, Recoveries: 1})
			all := addChannel(t, db, w.ID, nil, nil)
			opened := addChannel(t, db, w.ID, []string{incident.IncidentOpened}, nil)
			m2 := addMonitor(t, db, w.ID, monitor.Config{})
			other := addChannel(t, db, w.ID, nil, []string{m2.ID})
			observe(t, db, m, monitor.ResultDown, t0.Add(time.Minute)) // PENDING → DOWN: a state change and an incident

			now := t0.Add(2 * time.Minute)
			got, err := a.claim(ctx, "node-a", now, time.Minute, 100)
			check(t, err)
			byChannel := map[string][]string{}
			for _, c := range got {
				byChannel[c.ChannelID] = append(byChannel[c.ChannelID], c.EventType)
				if len(c.Payload) == 0 || c.Channel.ID != c.ChannelID || string(c.Sealed) != "sealed" {
					t.Errorf("claimed %+v", c.Delivery)
				}
			}
			if len(byChannel[all]) != 2 || len(byChannel[opened]) != 1 || byChannel[opened][0] != incident.IncidentOpened || len(byChannel[other]) != 0 {
				t.Fatalf("claimed by channel: %v", byChannel)
			}
			again, err := a.claim(ctx, "node-b", now, time.Minute, 100)
			check(t, err)
			if len(again) != 0 {
				t.Fatalf("leased deliveries claimed again: %d", len(again))
			}

			// The lease runs out: another node takes one over, and the
			// first node's late report changes nothing.
			late := now.Add(2 * time.Minute)
			taken, err := a.claim(ctx, "node-b", late, time.Minute, 100)
			check(t, err)
			if len(taken) != 3 {
				t.Fatalf("after the leases ran out node-b claimed %d, want 3", len(taken))
			}
			first := got[0]
			held, err := a.finishAll(ctx, "node-a", []finish{{Delivery: &first.Delivery, LeaseUntil: first.LeaseUntil,
				Outcome: outcome{Status: notify.Succeeded, Attempt: notify.Attempt{Node: "node-a", StartedAt: now, Duration: time.Millisecond, StatusCode: 200}}}})
			check(t, err)
			if held[0] {
				t.Error("a node whose lease ran out still held it")
			}
			var fs []finish
			for _, c := range taken {
				fs = append(fs, finish{Delivery: &c.Delivery, LeaseUntil: c.LeaseUntil, Outcome: outcome{Status: notify.Pending,
					RetryAt: late.Add(time.Minute), Attempt: notify.Attempt{Node: "node-b", StartedAt: late, Duration: time.Millisecond,
						StatusCode: 503, Error: "the receiver answered 503"}}})
			}
			held, err = a.finishAll(ctx, "node-b", fs)
			check(t, err)
			if len(held) != 3 || !held[0] || !held[1] || !held[2] {
				t.Errorf("node-b's leases, held: %v", held)
			}
			d, err := db.GetDelivery(ctx, w.ID, first.ID)
			check(t, err)
			if d.Status != notify.Pending || d.Attempts != 1 || len(d.Log) != 2 || d.Log[0].Node != "node-a" || d.Log[1].StatusCode != 503 ||
				!d.NextAttemptAt.Equal(late.Add(time.Minute)) {
				t.Errorf("after both reports: %+v", d)
			}

			// Old events stay while a delivery of theirs is pending.
			if n, err := db.DeleteEventsBefore(ctx, late.Add(time.Hour)); err != nil || n != 0 {
				t.Fatalf("deleted %d events with pending deliveries (%v)", n, err)
			}
			retry, err := a.claim(ctx, "node-b", late.Add(time.Minute), time.Minute, 100)
			check(t, err)
			for _, c := range retry {
				_, err := a.finishAll(ctx, "node-b", []finish{{Delivery: &c.Delivery, LeaseUntil: c.LeaseUntil,
					Outcome: outcome{Status: notify.Failed, Attempt: notify.Attempt{Node: "node-b", StartedAt: late, Duration: time.Millisecond, Error: "gone"}}}})
				check(t, err)
			}
			if n, err := db.DeleteEventsBefore(ctx, late.Add(time.Hour)); err != nil || n != 2 {
				t.Fatalf("deleted %d events, want 2 (%v)", n, err)
			}
			if _, err := db.GetDelivery(ctx, w.ID, first.ID); err == nil {
				t.Error("a deleted event's delivery is still there")
			}
		})
	}
}

// LastDeliveries reads each channel's newest delivery, with its
// attempts, in one read, and nothing of another workspace.
func TestLastDeliveries(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db, a := openWithWorkflow(t, e)
			w, w2 := addWorkspace(t, db, "acme"), addWorkspace(t, db, "globex")
			busy, quiet := addChannel(t, db, w.ID, nil, nil), addChannel(t, db, w.ID, nil, nil)
			theirs := addChannel(t, db, w2.ID, nil, nil)
			owner := Actor{WorkspaceID: w.ID, Role: account.RoleOwner}
			var last string
			for range 3 {
				d, err := a.TestChannel(ctx, owner, busy)
				check(t, err)
				last = d.ID
			}
			_, err := a.TestChannel(ctx, Actor{WorkspaceID: w2.ID, Role: account.RoleOwner}, theirs)
			check(t, err)
			got, err := a.LastDeliveries(ctx, Actor{WorkspaceID: w.ID, Role: account.RoleViewer}, []string{busy, quiet, theirs})
			check(t, err)
			if len(got) != 1 || got[busy] == nil || got[busy].ID != last || got[busy].EventType != incident.Test {
				t.Fatalf("last deliveries: %+v", got)
			}
			if got, err := a.LastDeliveries(ctx, owner, nil); err != nil || len(got) != 0 {
				t.Fatalf("no channels: %v %v", got, err)
			}
			if _, err := a.LastDeliveries(ctx, Actor{WorkspaceID: w.ID}, []string{busy}); err == nil {
				t.Fatal("read without a role")
			}
		})
	}
}
