package httpapi_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/store"
)

// TestRateLimit: 600 requests a minute per key. The clock is frozen, so
// request 601 falls within the same minute whatever the machine's speed.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		now := time.Now()
		e.clock.Set(now)
		k := e.ownerKey()
		for i := 1; i <= 600; i++ {
			r := e.req("GET", "/api/v1/monitors?limit=1", k, nil)
			if r.status != 200 {
				t.Fatalf("request %d: %d %s", i, r.status, r.body)
			}
			if got := r.header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(600-i) {
				t.Fatalf("request %d: X-RateLimit-Remaining %s, want %d", i, got, 600-i)
			}
		}
		r := e.req("GET", "/api/v1/monitors", k, nil)
		if r.status != 429 || r.code(t) != "rate_limited" {
			t.Fatalf("request 601: %d %s", r.status, r.body)
		}
		if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
			t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
		}
		if r.header.Get("X-RateLimit-Remaining") != "0" || r.header.Get("X-RateLimit-Limit") != "600" || r.header.Get("X-RateLimit-Reset") != "60" {
			t.Errorf("429 headers: %v", r.header)
		}
		// Another key has its own budget.
		if r := e.req("GET", "/api/v1/monitors", e.ownerKey(), nil); r.status != 200 {
			t.Errorf("other key: %d", r.status)
		}
		// A tenth of a second later, one request fits again; not two.
		e.clock.Set(now.Add(100 * time.Millisecond))
		if r := e.req("GET", "/api/v1/monitors", k, nil); r.status != 200 {
			t.Errorf("after refill: %d %s", r.status, r.body)
		}
		if r := e.req("GET", "/api/v1/monitors", k, nil); r.status != 429 {
			t.Errorf("second after one refill: %d", r.status)
		}
		// A minute later the whole budget is back.
		e.clock.Set(now.Add(61 * time.Second))
		if r := e.req("GET", "/api/v1/monitors", k, nil); r.status != 200 || r.header.Get("X-RateLimit-Remaining") != "599" {
			t.Errorf("after a minute: %d remaining %s", r.status, r.header.Get("X-RateLimit-Remaining"))
		}
	})
}

// TestRateLimitAcrossServers: two servers on one PostgreSQL share each
// key's budget.
func TestRateLimitAcrossServers(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		if e.db.Engine() != store.EnginePostgres {
			t.Skip("SQLite serves one node; its buckets live in memory")
		}
		e.clock.Set(time.Now())
		other := e.twin()
		k := e.ownerKey()
		for i := range 600 {
			srv := e
			if i%2 == 1 {
				srv = other
			}
			if r := srv.req("GET", "/api/v1/monitors?limit=1", k, nil); r.status != 200 {
				t.Fatalf("request %d: %d", i+1, r.status)
			}
		}
		for _, srv := range []*env{e, other} {
			if r := srv.req("GET", "/api/v1/monitors", k, nil); r.status != 429 {
				t.Errorf("request past the shared budget: %d", r.status)
			}
		}
	})
}

// TestFailedAuthIsLimitedPerAddress: requests without a valid key count
// against the client's address; past the budget they get 429, not 401.
func TestFailedAuthIsLimitedPerAddress(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		e.clock.Set(time.Now())
		for i := 1; i <= 600; i++ {
			if r := e.req("GET", "/api/v1/monitors", "tsk_"+strings.Repeat("x", 43), nil); r.status != 401 {
				t.Fatalf("bad key %d: %d", i, r.status)
			}
		}
		r := e.req("GET", "/api/v1/monitors", "", nil)
		if r.status != 429 || r.code(t) != "rate_limited" || r.header.Get("Retry-After") == "" {
			t.Fatalf("request 601 without a valid key: %d %s", r.status, r.body)
		}
		// A valid key from the same address is not affected.
		if r := e.req("GET", "/api/v1/monitors", e.ownerKey(), nil); r.status != 200 {
			t.Errorf("valid key: %d", r.status)
		}
	})
}
