package scheduler_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/scheduler"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// A node's record of receiving pings runs from its first sweep, which
// StartHeartbeats runs before it returns (before serve takes requests),
// to when Run's context ends: an outage after it counts from the stop.
func TestHeartbeatsRecordTheNodeFromStartToStop(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := storetest.OpenDB(t, e)
			t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
			clock := &fakeClock{t: t0}
			a := app.New(db, nil, clock.Now, slog.New(slog.DiscardHandler), app.Config{})
			h := scheduler.StartHeartbeats(ctx, a, "n1", nil)

			stopped := t0.Add(3 * time.Second)
			clock.Set(stopped)
			ended, cancel := context.WithCancel(ctx)
			cancel()
			check(t, h.Run(ended))

			// Another node comes up a minute later: the service was not
			// receiving pings from the stop on.
			later := t0.Add(time.Minute)
			span, err := db.TouchSpan(ctx, "n2", 0, time.Time{}, later, heartbeat.SpanGap)
			check(t, err)
			from, outage, err := db.OutageBefore(ctx, span, later, heartbeat.SpanGap)
			check(t, err)
			if !outage || !from.Equal(stopped) {
				t.Errorf("outage before the next node: %v from %s, want one from the stop, %s", outage, from, stopped)
			}
		})
	}
}
