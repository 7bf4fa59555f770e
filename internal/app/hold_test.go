package app

// Tests of the storm hold's and the attempts' decisions, without the
// database.

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store"
)

func TestAdmit(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	cases := []struct {
		name     string
		w        rateWindow
		n, bound int
		wantW    rateWindow
		wantSend int
	}{
		{"a first window", rateWindow{}, 3, 20, rateWindow{now, 3}, 3},
		{"within the bound", rateWindow{now.Add(-30 * time.Second), 5}, 3, 20, rateWindow{now.Add(-30 * time.Second), 8}, 3},
		{"up to the bound", rateWindow{now.Add(-30 * time.Second), 17}, 3, 20, rateWindow{now.Add(-30 * time.Second), 20}, 3},
		{"past the bound: the last are held", rateWindow{now.Add(-30 * time.Second), 18}, 5, 20, rateWindow{now.Add(-30 * time.Second), 20}, 2},
		{"the bound reached", rateWindow{now.Add(-30 * time.Second), 20}, 4, 20, rateWindow{now.Add(-30 * time.Second), 20}, 0},
		{"a count past a smaller bound", rateWindow{now.Add(-30 * time.Second), 30}, 4, 20, rateWindow{now.Add(-30 * time.Second), 30}, 0},
		{"the window just ended", rateWindow{now.Add(-notify.RateWindow), 20}, 4, 20, rateWindow{now, 4}, 4},
		{"the window about to end", rateWindow{now.Add(-notify.RateWindow + time.Microsecond), 20}, 4, 20,
			rateWindow{now.Add(-notify.RateWindow + time.Microsecond), 20}, 0},
		{"a new window past the bound", rateWindow{now.Add(-time.Hour), 20}, 25, 20, rateWindow{now, 20}, 20},
		{"none", rateWindow{now.Add(-30 * time.Second), 20}, 0, 20, rateWindow{now.Add(-30 * time.Second), 20}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, send := admit(c.w, c.n, c.bound, now)
			if !w.start.Equal(c.wantW.start) || w.count != c.wantW.count || send != c.wantSend {
				t.Errorf("admit(%v, %d, %d) = %v, %d; want %v, %d", c.w, c.n, c.bound, w, send, c.wantW, c.wantSend)
			}
		})
	}
}

func TestFirstAttempts(t *testing.T) {
	d := func(ch, typ string, attempts int, heldBy string) store.Claimed {
		return store.Claimed{Delivery: notify.Delivery{ChannelID: ch, EventType: typ, Attempts: attempts, HeldBy: heldBy}}
	}
	claimed := []store.Claimed{
		d("ch_b", incident.IncidentOpened, 0, ""),
		d("ch_a", incident.MonitorStateChanged, 0, ""),
		d("ch_b", incident.MonitorStateChanged, 1, ""),  // a retry
		d("ch_a", incident.IncidentResolved, 0, "dl_1"), // held, sent again by hand
		d("ch_c", incident.Test, 0, ""),                 // not bounded
		d("ch_c", notify.EventHeld, 0, ""),              // not bounded
		d("ch_b", incident.IncidentResolved, 0, ""),
	}
	channels, byChannel := firstAttempts(claimed)
	if !slices.Equal(channels, []string{"ch_b", "ch_a"}) {
		t.Errorf("channels %v, want ch_b, ch_a", channels)
	}
	want := map[string][]int{"ch_b": {0, 6}, "ch_a": {1}}
	if len(byChannel) != len(want) {
		t.Errorf("by channel %v, want %v", byChannel, want)
	}
	for ch, idx := range want {
		if !slices.Equal(byChannel[ch], idx) {
			t.Errorf("%s: %v, want %v", ch, byChannel[ch], idx)
		}
	}
	if channels, byChannel := firstAttempts(nil); len(channels) != 0 || len(byChannel) != 0 {
		t.Errorf("of none: %v, %v", channels, byChannel)
	}
}

func TestHeldReason(t *testing.T) {
	if got, want := heldReason(20), "held back: the channel took its 20 events of the minute; a summary follows"; got != want {
		t.Errorf("heldReason(20) = %q, want %q", got, want)
	}
}

func TestHeldSummary(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	payload := func(i int) []byte {
		ev := incident.Event{ID: fmt.Sprint("ev_", i), Type: incident.MonitorStateChanged, CreatedAt: at, WorkspaceID: "ws_1",
			Data: incident.StateChangeData{Subject: incident.Subject{Type: "monitor", ID: "mon_1", Name: fmt.Sprint("api ", i)},
				From: "UP", To: "DOWN", Cause: "refused", At: at}}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Run("none", func(t *testing.T) {
		got := heldSummary("ch_1", nil)
		if got.ChannelID != "ch_1" || got.Count != 0 || got.ByType == nil || len(got.ByType) != 0 || len(got.Titles) != 0 ||
			!got.From.IsZero() || !got.To.IsZero() {
			t.Errorf("of none: %+v", got)
		}
	})
	t.Run("some", func(t *testing.T) {
		held := []store.HeldDelivery{
			{ID: "dl_1", EventType: incident.MonitorStateChanged, CreatedAt: at, Payload: payload(1)},
			{ID: "dl_2", EventType: incident.IncidentOpened, CreatedAt: at.Add(time.Second), Payload: []byte("not an event")},
			{ID: "dl_3", EventType: incident.MonitorStateChanged, CreatedAt: at.Add(2 * time.Second), Payload: payload(3)},
		}
		got := heldSummary("ch_1", held)
		if got.ChannelID != "ch_1" || got.Count != 3 || !got.From.Equal(at) || !got.To.Equal(at.Add(2*time.Second)) ||
			got.ByType[incident.MonitorStateChanged] != 2 || got.ByType[incident.IncidentOpened] != 1 || len(got.ByType) != 2 {
			t.Errorf("summary %+v", got)
		}
		// An event without a headline is counted, not listed.
		if len(got.Titles) != 2 || got.Titles[0] != notify.HeldTitle(held[0].Payload) || got.Titles[1] != notify.HeldTitle(held[2].Payload) ||
			got.Titles[0] == "" {
			t.Errorf("titles %q", got.Titles)
		}
	})
	t.Run("titles bounded", func(t *testing.T) {
		held := make([]store.HeldDelivery, maxHeldTitles+10)
		for i := range held {
			held[i] = store.HeldDelivery{ID: fmt.Sprint("dl_", i), EventType: incident.MonitorStateChanged, CreatedAt: at, Payload: payload(i)}
		}
		got := heldSummary("ch_1", held)
		if got.Count != len(held) || len(got.Titles) != maxHeldTitles {
			t.Errorf("%d held: count %d, %d titles; want %d, %d", len(held), got.Count, len(got.Titles), len(held), maxHeldTitles)
		}
	})
}

func TestOutcomeOf(t *testing.T) {
	a := &App{cfg: Config{RetryFirst: time.Minute, RetryMax: time.Hour}}
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	job := func(attempts int, giveUpAt time.Time) DeliveryJob {
		return DeliveryJob{Delivery: notify.Delivery{Attempts: attempts, GiveUpAt: giveUpAt}}
	}
	cases := []struct {
		name    string
		job     DeliveryJob
		attempt notify.Attempt
		status  notify.Status
		retry   bool
		disable bool
	}{
		{"sent", job(0, start.Add(time.Hour)), notify.Attempt{StatusCode: 204}, notify.Succeeded, false, false},
		{"nothing to send", job(0, start.Add(time.Hour)), notify.Attempt{}, notify.Succeeded, false, false},
		{"gone", job(0, start.Add(time.Hour)), notify.Attempt{StatusCode: 410, Error: "the receiver answered 410"}, notify.Failed, false, true},
		{"retried", job(0, start.Add(time.Hour)), notify.Attempt{StatusCode: 503, Error: "the receiver answered 503"}, notify.Pending, true, false},
		{"given up", job(5, start), notify.Attempt{StatusCode: 503, Error: "the receiver answered 503"}, notify.Failed, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.attempt.StartedAt, c.attempt.Duration = start, time.Millisecond
			o := a.outcomeOf(Attempted{Job: c.job, Attempt: c.attempt})
			if o.Status != c.status || o.RetryAt.IsZero() == c.retry || (o.DisableChannel != "") != c.disable || o.Attempt != c.attempt {
				t.Errorf("outcome %+v; want %s, retry %v, disable %v", o, c.status, c.retry, c.disable)
			}
			if c.retry && !o.RetryAt.After(start) {
				t.Errorf("retry at %v, before the attempt", o.RetryAt)
			}
		})
	}
}
