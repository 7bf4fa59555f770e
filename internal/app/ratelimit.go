package app

import (
	"context"
	"time"
)

// RateStatus is what the rate-limit headers report for one request.
type RateStatus struct {
	Allowed    bool
	Limit      int
	Remaining  int
	Reset      time.Duration // until the bucket is full again
	RetryAfter time.Duration // when refused: until one request fits
}

// TakeRate counts one request against a bucket of RatePerMinute requests per
// rolling minute (GCRA: one token every minute/limit, bursts up to limit).
func (a *App) TakeRate(ctx context.Context, bucket string) (RateStatus, error) {
	limit := a.cfg.RatePerMinute
	emission := time.Minute / time.Duration(limit)
	tolerance := emission * time.Duration(limit)
	now := a.now()
	d, err := a.store.TakeToken(ctx, bucket, now, emission, tolerance)
	if err != nil {
		return RateStatus{}, err
	}
	ahead := d.TAT.Sub(now) // how far the bucket is from full
	if ahead < 0 {
		ahead = 0
	}
	st := RateStatus{Allowed: d.Allowed, Limit: limit, Reset: ahead}
	if d.Allowed {
		st.Remaining = int((tolerance - ahead) / emission)
	} else {
		st.RetryAfter = ahead + emission - tolerance
		if st.RetryAfter <= 0 {
			st.RetryAfter = emission
		}
	}
	return st, nil
}
