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
			var held []func()
			for range 2 {
				release, err := a.admitMetrics(ctx, actor, HeavyMetricsPoints)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, release)
			}
			_, err := a.admitMetrics(ctx, actor, HeavyMetricsPoints)
			var me *errs.Error
			if !errors.As(err, &me) || me.Kind != errs.KindUnavailable || me.RetryAfter != heavyRetry {
				t.Fatalf("a third heavy query: %v", err)
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := a.admitMetrics(cancelled, actor, HeavyMetricsPoints); !errors.Is(err, context.Canceled) {
				t.Fatalf("a heavy query whose client left: %v", err)
			}
			release, err := a.admitMetrics(ctx, actor, HeavyMetricsPoints-1)
			if err != nil {
				t.Fatalf("a light query: %v", err)
			}
			release()
			held[0]()
			release, err = a.admitMetrics(ctx, actor, HeavyMetricsPoints)
			if err != nil {
				t.Fatalf("a heavy query once a slot is back: %v", err)
			}
			release()
			held[1]()
			if len(a.heavy) != 0 {
				t.Fatalf("%d slots still taken", len(a.heavy))
			}
		})
	}
}
