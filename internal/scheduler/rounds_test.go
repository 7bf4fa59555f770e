package scheduler_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/scheduler"
)

// rollupApp hands out the results of its rounds in turn, and says over
// rounds when each began.
type rollupApp struct {
	results []error
	written []int
	rounds  chan string
}

func (a *rollupApp) Rollup(_ context.Context, owner string) (int, error) {
	n, err := a.written[0], a.results[0]
	if len(a.written) > 1 {
		a.written, a.results = a.written[1:], a.results[1:]
	}
	a.rounds <- owner
	return n, err
}

// syncBuffer is a log the runner writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Rollups runs a round at start and goes on at once while a round wrote
// something (catching up), though its interval is an hour.
func TestRollupsCatchUp(t *testing.T) {
	a := &rollupApp{written: []int{5, 3, 0}, results: []error{nil, nil, nil}, rounds: make(chan string)}
	stop := runRollups(t, &scheduler.Rollups{App: a, Owner: "node-a", Every: time.Hour})
	for i := range 3 {
		nextRound(t, a, fmt.Sprintf("round %d, at once", i))
	}
	stop()
}

// A failed round is logged, and the next comes an interval later.
func TestRollupsRetryAFailedRound(t *testing.T) {
	a := &rollupApp{written: []int{0, 0}, results: []error{errors.New("disk full"), nil}, rounds: make(chan string)}
	var log syncBuffer
	stop := runRollups(t, &scheduler.Rollups{App: a, Owner: "node-a", Every: time.Millisecond, Log: slog.New(slog.NewTextHandler(&log, nil))})
	nextRound(t, a, "the round that fails")
	nextRound(t, a, "the round after it")
	stop()
	if !strings.Contains(log.String(), "rolling up metrics failed") || !strings.Contains(log.String(), "disk full") {
		t.Fatalf("failed round not logged: %s", log.String())
	}
}

// runRollups runs r until the test stops it; Run must return nil.
func runRollups(t *testing.T, r *scheduler.Rollups) (stop func()) {
	c, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- r.Run(c) }()
	return func() {
		cancel()
		for {
			select {
			case <-r.App.(*rollupApp).rounds: // a round that began meanwhile
			case err := <-done:
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				return
			}
		}
	}
}

func nextRound(t *testing.T, a *rollupApp, what string) {
	t.Helper()
	select {
	case owner := <-a.rounds:
		if owner != "node-a" {
			t.Fatalf("%s: as %q", what, owner)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: did not come", what)
	}
}
