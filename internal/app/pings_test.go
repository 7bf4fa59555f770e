package app

import (
	"testing"
	"time"
)

// A 429's words and Retry-After give the same whole seconds: rounded up,
// at least one (a wait of 100 ms once read "retry in 0s").
func TestRateLimitedSeconds(t *testing.T) {
	for _, c := range []struct {
		wait time.Duration
		secs int
		msg  string
	}{
		{0, 1, "too many pings; retry in 1s"},
		{100 * time.Millisecond, 1, "too many pings; retry in 1s"},
		{time.Second, 1, "too many pings; retry in 1s"},
		{1200 * time.Millisecond, 2, "too many pings; retry in 2s"},
		{59*time.Second + time.Nanosecond, 60, "too many pings; retry in 60s"},
	} {
		e := &RateLimitedError{RetryAfter: c.wait}
		if e.Seconds() != c.secs || e.Error() != c.msg {
			t.Errorf("%v: %d, %q; want %d, %q", c.wait, e.Seconds(), e.Error(), c.secs, c.msg)
		}
	}
}
