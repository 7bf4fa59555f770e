package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
)

func (e *env) countMonitors() int {
	e.t.Helper()
	n, err := e.db.CountMonitors(context.Background(), e.wsA.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		body := `{"type":"http","name":"shop","config":{"url":"https://shop.example"}}`
		first := e.req("POST", "/api/v1/monitors", k, body, "Idempotency-Key", "create-shop")
		if first.status != 201 {
			t.Fatalf("first: %d %s", first.status, first.body)
		}
		// Same body, other spacing and key order: the stored response, byte for byte.
		same := "{ \"name\": \"shop\", \"config\": {\"url\": \"https://shop.example\"}, \"type\": \"http\" }"
		for _, b := range []string{body, same} {
			r := e.req("POST", "/api/v1/monitors", k, b, "Idempotency-Key", "create-shop")
			if r.status != 201 || !bytes.Equal(r.body, first.body) {
				t.Errorf("replay: %d %s\nwant %s", r.status, r.body, first.body)
			}
			if r.header.Get("Idempotent-Replayed") != "true" || r.header.Get("Location") != first.header.Get("Location") {
				t.Errorf("replay headers: %v", r.header)
			}
			if r.header.Get("X-Request-Id") == first.header.Get("X-Request-Id") {
				t.Error("a replay is a new request and gets its own request id")
			}
		}
		if n := e.countMonitors(); n != 1 {
			t.Fatalf("%d monitors after replays, want 1", n)
		}
		// Different body, same key.
		r := e.req("POST", "/api/v1/monitors", k, `{"type":"http","name":"shop2","config":{"url":"https://shop.example"}}`, "Idempotency-Key", "create-shop")
		if r.status != 409 || r.code(t) != "idempotency_conflict" {
			t.Errorf("different body: %d %s", r.status, r.body)
		}
		// Keys are per API key: another key may use the same Idempotency-Key.
		other := e.key(e.members[account.RoleAdmin], e.wsA.ID, false, account.ScopeMonitorsWrite)
		if r := e.req("POST", "/api/v1/monitors", other, body, "Idempotency-Key", "create-shop"); r.status != 201 || bytes.Equal(r.body, first.body) {
			t.Errorf("other API key: %d %s", r.status, r.body)
		}
		// Client errors are stored too: the retry gets the same answer.
		bad := `{"type":"http","name":"","config":{}}`
		b1 := e.req("POST", "/api/v1/monitors", k, bad, "Idempotency-Key", "bad")
		b2 := e.req("POST", "/api/v1/monitors", k, bad, "Idempotency-Key", "bad")
		if b1.status != 422 || b2.status != 422 || b2.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("stored 422: %d %d %v", b1.status, b2.status, b2.header)
		}
		// After 24 hours the key is forgotten.
		e.clock.Set(time.Now().Add(24*time.Hour + time.Minute))
		if r := e.req("POST", "/api/v1/monitors", k, body, "Idempotency-Key", "create-shop"); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("after 24h: %d %v", r.status, r.header)
		}
		if n := e.countMonitors(); n != 3 {
			t.Errorf("%d monitors, want 3", n)
		}
		// An over-long key is a validation error on the header.
		long := string(bytes.Repeat([]byte("k"), 256))
		if r := e.req("POST", "/api/v1/monitors", k, body, "Idempotency-Key", long); r.status != 422 {
			t.Errorf("256-char key: %d %s", r.status, r.body)
		}
	})
}

func TestIdempotencyConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		const n = 20
		for round := range 3 {
			key := fmt.Sprintf("burst-%d", round)
			body := fmt.Sprintf(`{"type":"http","name":"burst %d","config":{"url":"https://burst.example"}}`, round)
			var wg sync.WaitGroup
			res := make([]response, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res[i] = e.send(t, "POST", "/api/v1/monitors", k, body, "Idempotency-Key", key)
				}()
			}
			wg.Wait()
			var created []byte
			for _, r := range res {
				switch r.status {
				case 201:
					if created != nil && !bytes.Equal(created, r.body) {
						t.Errorf("two different 201 bodies:\n%s\n%s", created, r.body)
					}
					created = r.body
				case 409:
					if c := r.code(t); c != "idempotency_in_progress" {
						t.Errorf("concurrent duplicate: %s", c)
					}
				default:
					t.Errorf("concurrent duplicate: %d %s", r.status, r.body)
				}
			}
			if created == nil {
				t.Error("no request created the monitor")
			}
		}
		p, err := e.app.ListMonitors(context.Background(), app.Actor{WorkspaceID: e.wsA.ID, Role: account.RoleOwner}, app.MonitorFilter{}, app.PageRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 3 {
			t.Errorf("%d monitors after 3 bursts of %d duplicates, want 3", len(p.Items), n)
		}
	})
}

// TestHousekeeping: expired idempotency records are deleted; a record still
// in its 24 hours survives and is replayed.
func TestHousekeeping(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		start := time.Now()
		e.clock.Set(start)
		old := e.req("POST", "/api/v1/monitors", k, httpBody(`{"url":"https://old.example"}`), "Idempotency-Key", "old")
		e.clock.Set(start.Add(23 * time.Hour))
		fresh := e.req("POST", "/api/v1/monitors", k, httpBody(`{"url":"https://fresh.example"}`), "Idempotency-Key", "fresh")
		e.clock.Set(start.Add(25 * time.Hour))
		if err := e.app.Housekeeping(context.Background()); err != nil {
			t.Fatal(err)
		}
		if old.status != 201 || fresh.status != 201 {
			t.Fatalf("%d %d", old.status, fresh.status)
		}
		// The fresh record is replayed; the old one is gone, so its key is free.
		if r := e.req("POST", "/api/v1/monitors", k, httpBody(`{"url":"https://fresh.example"}`), "Idempotency-Key", "fresh"); r.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("fresh record not replayed after housekeeping: %d", r.status)
		}
		n, err := e.db.PurgeIdempotency(context.Background(), start.Add(25*time.Hour))
		if err != nil || n != 0 {
			t.Errorf("housekeeping left %d expired records (%v)", n, err)
		}
	})
}
