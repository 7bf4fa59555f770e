package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// A receiver whose error answers hold NUL and invalid UTF-8 costs no one
// else a record: workspace A's channel answers 500 with such a body a few
// times, beside workspace B's channel to a receiver that verifies every
// signature. Every attempt of both is recorded, A's failures with the
// body cleaned and bounded; nothing is left pending.
func TestHostileReceiverCostsOthersNothing(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newEnvWith(t, eng, fastRetries)
			runNotifier(t, e, "node-1")
			kA, kB := e.ownerKey(), e.key(e.ownerB, e.wsB.ID, false, account.Scopes...)
			const failures = 3
			var calls atomic.Int32
			hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) > failures {
					w.WriteHeader(http.StatusNoContent)
					return
				}
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte("oops\x00 \xff\xfe \xc3\x28 " + strings.Repeat("\x00x", 300)))
			}))
			t.Cleanup(hostile.Close)
			r := e.req("POST", "/api/v1/notification-channels", kA, map[string]any{"name": "hostile", "kind": "webhook",
				"config": map[string]any{"url": hostile.URL + "/hook"}})
			if r.status != http.StatusCreated {
				t.Fatalf("create A's channel: %d %s", r.status, r.body)
			}
			chA := r.json(t)["id"].(string)
			rc := newReceiver(t)
			chB := e.webhookChannel(t, kB, rc, nil)

			e.incidentStory(t, kA, "A's incident")
			e.incidentStory(t, kB, "B's incident")
			got := rc.waitFor(4)
			dsB := e.settled(t, kB, chB, 4)
			for i, d := range dsB {
				if d["status"] != "succeeded" || d["attemptCount"] != 1.0 || d["id"] != got[i].delivery {
					t.Errorf("B's delivery %d: %v", i, d)
				}
			}
			dsA := e.settled(t, kA, chA, 4)
			if first := dsA[0]; first["status"] != "succeeded" || first["attemptCount"] != float64(failures+1) {
				t.Errorf("A's first delivery: %v, want %d failed attempts recorded, then the success", first, failures)
			} else {
				for i, a := range first["attempts"].([]any)[:failures] {
					at := a.(map[string]any)
					msg, _ := at["error"].(string)
					if at["statusCode"] != 500.0 || !strings.HasPrefix(msg, "the receiver answered 500: oops\uFFFD \uFFFD \uFFFD(") ||
						len(msg) > notify.MaxAttemptError {
						t.Errorf("A's attempt %d: %v", i, at)
					}
				}
			}
			for i, d := range dsA[1:] {
				if d["status"] != "succeeded" {
					t.Errorf("A's delivery %d: %v", i+1, d)
				}
			}
			// At rest: every recorded error is valid UTF-8 without NUL.
			n := 0
			for _, b := range e.rawBlobs(t, "SELECT error FROM delivery_attempts") {
				if !clean.Valid(string(b)) {
					t.Errorf("an attempt's error at rest: %.120q", b)
				}
				if len(b) > 0 {
					n++
				}
			}
			if n != failures {
				t.Errorf("%d attempts recorded with an error, want %d", n, failures)
			}
			rc.mu.Lock()
			defer rc.mu.Unlock()
			if rc.bad != 0 {
				t.Errorf("%d requests to B's receiver did not verify", rc.bad)
			}
		})
	}
}
