// Package schedulertest runs the scheduler's loops beside a test's own
// server, as serve runs them beside its listeners. Only tests import it.
package schedulertest

import (
	"context"
	"testing"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/scheduler"
)

// RunPings runs a's ping writers, as serve does, until the test ends:
// after the servers the test starts once it is called have closed
// (cleanups run last first).
func RunPings(t testing.TB, a *app.App) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&scheduler.Pings{App: a}).Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}
