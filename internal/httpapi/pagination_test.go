package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
)

// TestPaginationUnderInserts walks 250 monitors 100 at a time while other
// monitors are created between pages: each monitor that existed when the
// walk began is seen exactly once, and nothing is seen twice.
func TestPaginationUnderInserts(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		owner := app.Actor{WorkspaceID: e.wsA.ID, Role: account.RoleOwner}
		create := func(name string) string {
			m, err := e.app.CreateMonitor(ctx, owner, monitor.Draft{Type: monitor.TypeHTTP, Name: name,
				Config: monitor.Config{URL: "https://example.com/" + name}})
			if err != nil {
				t.Fatal(err)
			}
			return m.ID
		}
		existing := map[string]bool{}
		for i := range 250 {
			existing[create(fmt.Sprintf("m%03d", i))] = true
		}
		k := e.ownerKey()
		seen := map[string]int{}
		cursor, pages := "", 0
		for {
			q := url.Values{"limit": {"100"}}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			r := e.req("GET", "/api/v1/monitors?"+q.Encode(), k, nil)
			if r.status != 200 {
				t.Fatalf("page %d: %d %s", pages, r.status, r.body)
			}
			page := r.json(t)
			data := page["data"].([]any)
			if len(data) > 100 {
				t.Fatalf("page of %d", len(data))
			}
			if _, ok := page["total"].(float64); !ok {
				t.Errorf("total missing: %v", page["total"])
			}
			for _, d := range data {
				seen[d.(map[string]any)["id"].(string)]++
			}
			pages++
			// Others arrive while the client walks.
			for i := range 7 {
				create(fmt.Sprintf("late-%d-%d", pages, i))
			}
			next, ok := page["nextCursor"].(string)
			if !ok {
				if page["nextCursor"] != nil {
					t.Fatalf("nextCursor %v", page["nextCursor"])
				}
				break
			}
			cursor = next
			if pages > 20 {
				t.Fatal("the walk does not end")
			}
		}
		for id := range existing {
			if seen[id] != 1 {
				t.Errorf("monitor %s seen %d times", id, seen[id])
			}
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("monitor %s seen %d times", id, n)
			}
		}
		if pages < 3 {
			t.Errorf("%d pages for 250+ monitors at 100 a page", pages)
		}
	})
}

func TestPaginationParameters(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		for range 3 {
			e.monitorIn(e.wsA)
		}
		r := e.req("GET", "/api/v1/monitors", k, nil)
		if p := r.json(t); len(p["data"].([]any)) != 3 || p["nextCursor"] != nil || p["total"] != float64(3) {
			t.Errorf("default page: %s", r.body)
		}
		r = e.req("GET", "/api/v1/monitors?limit=2", k, nil)
		p := r.json(t)
		if len(p["data"].([]any)) != 2 || p["nextCursor"] == nil {
			t.Fatalf("limit=2: %s", r.body)
		}
		r = e.req("GET", "/api/v1/monitors?limit=2&cursor="+url.QueryEscape(p["nextCursor"].(string)), k, nil)
		if p := r.json(t); len(p["data"].([]any)) != 1 || p["nextCursor"] != nil {
			t.Errorf("second page: %s", r.body)
		}
		for _, q := range []string{"limit=0", "limit=101", "limit=-1", "limit=abc", "cursor=not-a-cursor", "cursor=eyJ2IjoyfQ"} {
			r := e.req("GET", "/api/v1/monitors?"+q, k, nil)
			if r.status != 422 || r.code(t) != "validation_error" {
				t.Errorf("%s: %d %s", q, r.status, r.body)
				continue
			}
			det := r.json(t)["error"].(map[string]any)["details"].([]any)
			if len(det) == 0 || det[0].(map[string]any)["parameter"] == nil {
				t.Errorf("%s: details should name the parameter: %s", q, r.body)
			}
		}
	})
}
