package app

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// TestRateBuckets: the API keys' buckets meet the same contract on every
// engine, in memory on SQLite and in the database on PostgreSQL.
func TestRateBuckets(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Run("RateLimit", func(t *testing.T) { testRateLimit(t, e) })
			t.Run("RateLimitLeases", func(t *testing.T) { testRateLimitLeases(t, e) })
		})
	}
}

// rateT0 has microsecond precision, as stored.
var rateT0 = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

// openBuckets opens the database at url as one node does, with its buckets.
func openBuckets(t *testing.T, url string) rateBuckets {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return newRateBuckets(db)
}

func testRateLimit(t *testing.T, e storetest.Engine) {
	const em, tol = 100 * time.Millisecond, 500 * time.Millisecond // burst of 5, 10/s
	ctx, t0 := context.Background(), rateT0
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	equal := func(got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got  %+v\nwant %+v", got, want)
		}
	}
	db := newRateBuckets(storetest.OpenDB(t, e))
	take := func(db rateBuckets, bucket string, now time.Time) rateDecision {
		t.Helper()
		d, err := db.take(ctx, bucket, now, em, tol)
		check(err)
		return d
	}

	for i := range 5 {
		d := take(db, "key_a", t0)
		equal(d, rateDecision{Allowed: true, TAT: t0.Add(time.Duration(i+1) * em)})
	}
	equal(take(db, "key_a", t0), rateDecision{Allowed: false, TAT: t0.Add(tol)})
	// Other buckets are separate.
	equal(take(db, "key_b", t0).Allowed, true)
	// One emission interval later, one more token.
	later := t0.Add(em)
	equal(take(db, "key_a", later), rateDecision{Allowed: true, TAT: later.Add(tol)})
	equal(take(db, "key_a", later).Allowed, false)
	// Long idle: a full burst again, not more.
	idle := t0.Add(time.Hour)
	for range 5 {
		equal(take(db, "key_a", idle).Allowed, true)
	}
	equal(take(db, "key_a", idle).Allowed, false)

	// Concurrent takes never exceed the burst.
	const n = 20
	var (
		wg      sync.WaitGroup
		allowed [n]bool
	)
	for i := range n {
		wg.Go(func() {
			d, err := db.take(ctx, "key_c", t0, em, tol)
			allowed[i] = err == nil && d.Allowed
		})
	}
	wg.Wait()
	count := 0
	for _, a := range allowed {
		if a {
			count++
		}
	}
	if count != 5 {
		t.Fatalf("%d of %d concurrent takes allowed, want 5", count, n)
	}

	// A token given back is as if never taken: of a spent bucket, one
	// more; of a full or unknown one, nothing more.
	equal(take(db, "key_d", t0).Allowed, true)
	for range 2 {
		check(db.give(ctx, "key_d", em))
	}
	check(db.give(ctx, "key_unknown", em))
	for i := range 5 {
		equal(take(db, "key_d", t0), rateDecision{Allowed: true, TAT: t0.Add(time.Duration(i+1) * em)})
	}
	check(db.give(ctx, "key_d", em))
	equal(take(db, "key_d", t0), rateDecision{Allowed: true, TAT: t0.Add(tol)})
	equal(take(db, "key_d", t0).Allowed, false)

	// Full buckets are forgotten without changing any decision.
	purged, err := db.purge(ctx, idle.Add(time.Hour))
	check(err)
	if purged != 4 {
		t.Fatalf("PurgeRateLimits removed %d buckets, want 4", purged)
	}
	equal(take(db, "key_a", idle.Add(time.Hour)).TAT, idle.Add(time.Hour+em))

	if e.Name != store.EnginePostgres {
		return // SQLite is one node: buckets live in its memory
	}
	// Two nodes on one database share the bucket.
	url := storetest.URL(t, e)
	node1, node2 := openBuckets(t, url), openBuckets(t, url)
	for i := range 5 {
		node := node1
		if i%2 == 1 {
			node = node2
		}
		equal(take(node, "shared", t0).Allowed, true)
	}
	equal(take(node1, "shared", t0).Allowed, false)
	equal(take(node2, "shared", t0).Allowed, false)
}

// testRateLimitLeases: with a large burst, PostgreSQL nodes lease tokens in
// batches; the decisions and reported TATs are still those of one exact
// GCRA bucket, and nodes together never admit more than the burst.
func testRateLimitLeases(t *testing.T, e storetest.Engine) {
	const em, tol = 100 * time.Millisecond, time.Minute // 600 a minute, as the API
	ctx, t0 := context.Background(), rateT0
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	equal := func(got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got  %+v\nwant %+v", got, want)
		}
	}
	url := storetest.URL(t, e)
	node1 := openBuckets(t, url)
	for i := range 600 {
		d, err := node1.take(ctx, "one-node", t0, em, tol)
		check(err)
		equal(d, rateDecision{Allowed: true, TAT: t0.Add(time.Duration(i+1) * em)})
	}
	d, err := node1.take(ctx, "one-node", t0, em, tol)
	check(err)
	equal(d.Allowed, false)

	if e.Name != store.EnginePostgres {
		return
	}
	node2 := openBuckets(t, url)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
	)
	for g := range 40 {
		node := node1
		if g%2 == 1 {
			node = node2
		}
		wg.Go(func() {
			for range 20 {
				d, err := node.take(ctx, "two-nodes", t0, em, tol)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	// Tokens a node still holds are not lost: draining both nodes admits
	// exactly the rest of the burst.
	for _, node := range []rateBuckets{node1, node2} {
		for {
			d, err := node.take(ctx, "two-nodes", t0, em, tol)
			check(err)
			if !d.Allowed {
				break
			}
			allowed++
		}
	}
	if allowed != 600 {
		t.Fatalf("two nodes admitted %d requests in all against a burst of 600", allowed)
	}
}
