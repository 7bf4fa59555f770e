package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// hookLog is a webhook receiver that verifies signatures and remembers
// every delivery id and event id it got, slowly enough that deliveries
// are in flight when the server is killed.
type hookLog struct {
	mu       sync.Mutex
	secret   string
	byID     map[string]int             // delivery id → requests
	byEvent  map[string]map[string]bool // event id → delivery ids
	bad      int
	requests int
}

func (h *hookLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	time.Sleep(30 * time.Millisecond)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests++
	if notify.Verify(r.Header.Get(notify.HeaderSignature), body, h.secret, time.Now(), notify.DefaultTolerance) != nil {
		h.bad++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev struct{ ID, DeliveryID string }
	if err := json.Unmarshal(body, &ev); err != nil || ev.DeliveryID != r.Header.Get(notify.HeaderDelivery) {
		h.bad++
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	h.byID[ev.DeliveryID]++
	if h.byEvent[ev.ID] == nil {
		h.byEvent[ev.ID] = map[string]bool{}
	}
	h.byEvent[ev.ID][ev.DeliveryID] = true
	w.WriteHeader(http.StatusNoContent)
}

// TestKilledServerLosesNoDelivery: events are written with their
// deliveries in one transaction, so a server killed with SIGKILL while
// deliveries are pending and in flight loses none: after a restart every
// event reaches the receiver, each under one delivery id (an attempt cut
// off by the kill is made again with the same id, which the receiver
// dedupes).
func TestKilledServerLosesNoDelivery(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills a server with deliveries in flight; not in -short")
	}
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env, args := childSetup(t, eng)
			args = append(args, "--node-name", "crash-node")
			hooks := &hookLog{byID: map[string]int{}, byEvent: map[string]map[string]bool{}}
			receiver := httptest.NewServer(hooks)
			defer receiver.Close()

			child := startCrashChild(t, args...)
			key := ownerKey(t, env, "incidents:write", "incidents:read", "notifications:write", "notifications:read")
			res := apiCall(t, true, http.MethodPost, child.url+"/api/v1/notification-channels", key,
				`{"name":"hook","kind":"webhook","config":{"url":"`+receiver.URL+`/hook"}}`)
			var ch struct{ ID, SigningSecret string }
			if err := json.NewDecoder(res.Body).Decode(&ch); err != nil || res.StatusCode != http.StatusCreated {
				t.Fatalf("creating the channel: %d %v", res.StatusCode, err)
			}
			hooks.mu.Lock()
			hooks.secret = ch.SigningSecret
			hooks.mu.Unlock()

			// Incidents and their lives, written as fast as the API takes
			// them; the server dies while their deliveries are going out.
			const incidents = 30
			for i := range incidents {
				res := apiCall(t, false, http.MethodPost, child.url+"/api/v1/incidents", key,
					fmt.Sprintf(`{"title":"outage %d","message":"looking"}`, i))
				var inc struct{ ID string }
				if err := json.NewDecoder(res.Body).Decode(&inc); err != nil || res.StatusCode != http.StatusCreated {
					t.Fatalf("creating an incident: %d %v", res.StatusCode, err)
				}
				for _, step := range []struct{ path, body string }{{"/acknowledge", ""},
					{"/updates", `{"status":"identified","message":"found"}`}, {"/updates", `{"status":"resolved","message":"fixed"}`}} {
					if res := apiCall(t, false, http.MethodPost, child.url+"/api/v1/incidents/"+inc.ID+step.path, key, step.body); res.StatusCode >= 300 {
						t.Fatalf("incident %s: %d", step.path, res.StatusCode)
					}
				}
			}
			hooks.mu.Lock()
			before := len(hooks.byID)
			hooks.mu.Unlock()
			child.kill()
			if before >= incidents*4 {
				t.Log("every delivery was made before the kill: this run did not test pending deliveries")
			}

			// The same database and node name, a new process.
			s := startServe(t, map[string]string{}, args...)
			var listed []string
			pending := 0
			waitFor(t, 60*time.Second, "every delivery to be listed and succeeded after the restart", func() bool {
				listed = listed[:0]
				pending = 0
				cursor := ""
				for {
					u := s.url + "/api/v1/notification-channels/" + ch.ID + "/deliveries?limit=100"
					if cursor != "" {
						u += "&cursor=" + url.QueryEscape(cursor)
					}
					var page struct {
						Data []struct {
							ID, EventID, Status string
						}
						NextCursor *string
					}
					res := apiCall(t, false, http.MethodGet, u, key, "")
					if err := json.NewDecoder(res.Body).Decode(&page); err != nil || res.StatusCode != 200 {
						t.Fatalf("listing deliveries: %d %v", res.StatusCode, err)
					}
					for _, d := range page.Data {
						listed = append(listed, d.ID+" "+d.EventID)
						if d.Status != "succeeded" {
							pending++
						}
					}
					if page.NextCursor == nil {
						break
					}
					cursor = *page.NextCursor
				}
				return pending == 0 && len(listed) == incidents*4
			}, func() string {
				return fmt.Sprintf("%d deliveries listed, %d not succeeded, after the restart", len(listed), pending)
			})
			hooks.mu.Lock()
			defer hooks.mu.Unlock()
			if hooks.bad != 0 {
				t.Errorf("%d requests did not verify", hooks.bad)
			}
			dups := 0
			for _, l := range listed {
				id, ev, _ := strings.Cut(l, " ")
				if hooks.byID[id] == 0 {
					t.Errorf("delivery %s (event %s) never reached the receiver", id, ev)
				}
				if len(hooks.byEvent[ev]) != 1 {
					t.Errorf("event %s reached the receiver under %d delivery ids", ev, len(hooks.byEvent[ev]))
				}
				dups += hooks.byID[id] - 1
			}
			if len(hooks.byEvent) != incidents*4 {
				t.Errorf("the receiver got %d events, want %d", len(hooks.byEvent), incidents*4)
			}
			t.Logf("%s: %d of %d deliveries made before the kill; after the restart all %d arrived, %d of them twice under the same id (cut off by the kill)",
				eng.Name, before, incidents*4, len(listed), dups)
		})
	}
}
