package main

import (
	"context"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/store"
)

// benchStore is the store as the engine child hands it to the engine: it
// times the claims over the window, and runs two experiments that are not
// the engine as it is (both off by default):
//
//   - pace makes the writer wait until pace has passed since its previous
//     write, so observations queue up meanwhile and each transaction
//     carries more of them: what batching would save (-writer-pace).
//   - claimDelay lengthens every claim by that much after the query, to
//     show how the scheduling lag follows the claim's duration
//     (-claim-delay).
type benchStore struct {
	*store.DB
	pace, claimDelay time.Duration

	mu     sync.Mutex
	last   time.Time
	timing bool
	claims []time.Duration
}

func (s *benchStore) ClaimDue(ctx context.Context, owner string, now, horizon time.Time, lease time.Duration, limit int) ([]store.DueCheck, error) {
	start := time.Now()
	due, err := s.DB.ClaimDue(ctx, owner, now, horizon, lease, limit)
	if s.claimDelay > 0 {
		time.Sleep(s.claimDelay)
	}
	took := time.Since(start)
	s.mu.Lock()
	if s.timing {
		s.claims = append(s.claims, took)
	}
	s.mu.Unlock()
	return due, err
}

// window starts or ends the timing of claims; at the end it returns them.
func (s *benchStore) window(open bool) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timing = open
	return s.claims
}

func (s *benchStore) ApplyObservations(ctx context.Context, owner string, batch []store.Completed) ([]store.StateChange, error) {
	if s.pace > 0 {
		s.mu.Lock()
		wait := time.Until(s.last.Add(s.pace))
		s.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		s.mu.Lock()
		s.last = time.Now()
		s.mu.Unlock()
	}
	return s.DB.ApplyObservations(ctx, owner, batch)
}
