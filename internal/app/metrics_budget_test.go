package app

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// TestHeavyMetricsSlots: a heavy metrics query runs only in one of the
// node's slots; with all of them taken, it waits at most
// HeavyMetricsWait and is then refused as unavailable with a Retry-After,
// or gives up with its context; a light query never waits; a slot given
// back serves the next query.
func TestHeavyMetricsSlots(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			now := time.Date(2026, 5, 20, 15, 0, 0, 0, time.UTC)
			a := New(storetest.OpenDB(t, e), nil, func() time.Time { return now }, slog.New(slog.DiscardHandler),
				Config{HeavyMetricsQueries: 2, HeavyMetricsWait: 20 * time.Millisecond})
			ctx := context.Background()
			actor := Actor{KeyID: "key_1", WorkspaceID: "ws_1"}
			ran := 0
			query := func() error { ran++; return nil }
			var held []func()
			for range 2 {
				release, err := a.heavySlot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, release)
			}
			err := a.priced(ctx, actor, HeavyMetricsPoints, query)
			var me *errs.Error
			if !errors.As(err, &me) || me.Kind != errs.KindUnavailable || me.RetryAfter != heavyRetry || ran != 0 {
				t.Fatalf("a third heavy query: %v (ran %d)", err, ran)
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if err := a.priced(cancelled, actor, HeavyMetricsPoints, query); !errors.Is(err, context.Canceled) || ran != 0 {
				t.Fatalf("a heavy query whose client left: %v (ran %d)", err, ran)
			}
			if err := a.priced(ctx, actor, HeavyMetricsPoints-1, query); err != nil || ran != 1 {
				t.Fatalf("a light query: %v (ran %d)", err, ran)
			}
			held[0]()
			if err := a.priced(ctx, actor, HeavyMetricsPoints, query); err != nil || ran != 2 {
				t.Fatalf("a heavy query once a slot is back: %v (ran %d)", err, ran)
			}
			held[1]()
			if len(a.heavy) != 0 {
				t.Fatalf("%d slots still taken", len(a.heavy))
			}
			// A heavy query that panics is an error, not a crash.
			if err := a.priced(ctx, actor, HeavyMetricsPoints, func() error { panic("boom") }); err == nil || len(a.heavy) != 0 {
				t.Fatalf("a heavy query that panicked: %v, %d slots taken", err, len(a.heavy))
			}
		})
	}
}

// TestMetricsPointsLargeBudget: with the largest budget an operator may
// set (100,000,000 points a minute), a point costs less than the buckets'
// µs; it is charged one, on every engine, and the minute's worth passes.
func TestMetricsPointsLargeBudget(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			now := time.Date(2026, 5, 20, 15, 0, 0, 0, time.UTC)
			a := New(storetest.OpenDB(t, e), nil, func() time.Time { return now }, slog.New(slog.DiscardHandler),
				Config{MetricsPointsPerMinute: 100_000_000})
			actor := Actor{KeyID: "key_1", WorkspaceID: "ws_1"}
			for _, points := range []int{1, 1, 10_000} {
				if err := a.spendPoints(context.Background(), actor, points); err != nil {
					t.Fatalf("%d points: %v", points, err)
				}
			}
		})
	}
}
