package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// tokenReceiver is a webhook receiver that takes a delivery only with the
// token in its URL's query; with echo set it answers 404 quoting the
// request's target, token and all, as careless receivers do.
type tokenReceiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	echo    bool
	queries []string // each request's raw query, in order
}

func newTokenReceiver(t *testing.T) *tokenReceiver {
	rc := &tokenReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rc.mu.Lock()
		rc.queries = append(rc.queries, r.URL.RawQuery)
		echo := rc.echo
		rc.mu.Unlock()
		if echo {
			http.Error(w, "no route for "+r.URL.RequestURI(), http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *tokenReceiver) setEcho(on bool) {
	rc.mu.Lock()
	rc.echo = on
	rc.mu.Unlock()
}

func (rc *tokenReceiver) last() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.queries) == 0 {
		return ""
	}
	return rc.queries[len(rc.queries)-1]
}

func (rc *tokenReceiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.queries)
}

// TestWebhookURLQuerySealed: a webhook URL's query is write-only. It is
// sealed at rest, absent from every read (the channel, the list, its
// deliveries, their errors even when the receiver echoes it), named in
// secretsSet, and every delivery still goes to the whole URL. A PATCH
// keeps it while the URL stays, replaces or clears it when asked, and
// drops it when the URL moves. A channel stored before queries were
// sealed shows none, delivers with it, and is sealed by the start-up
// step. Both engines.
func TestWebhookURLQuerySealed(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newEnvWith(t, eng, fastRetries)
			runNotifier(t, e, "node-1")
			k := e.ownerKey()
			reader := e.key(e.members[account.RoleOwner], e.wsA.ID, false, account.ScopeNotificationsRead)
			rc := newTokenReceiver(t)
			const token = "tok-3f9c1d7a5b2e"
			base := rc.srv.URL + "/hook"

			r := e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "hook", "kind": "webhook",
				"config": map[string]any{"url": base + "?token=" + token + "&team=ops"}})
			if r.status != http.StatusCreated {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			ch := r.json(t)
			id := ch["id"].(string)
			if got := ch["config"].(map[string]any)["url"]; got != base || !slices.Contains(anyStrings(ch["secretsSet"]), "urlQuery") {
				t.Fatalf("created: url %v, secretsSet %v", got, ch["secretsSet"])
			}
			hidden := func(what string, body []byte) {
				t.Helper()
				if strings.Contains(string(body), token) || strings.Contains(string(body), "team=ops") {
					t.Errorf("%s shows the URL's query: %s", what, body)
				}
			}
			hidden("the create response", r.body)
			for _, key := range []string{k, reader} {
				r = e.req("GET", "/api/v1/notification-channels/"+id, key, nil)
				if r.status != 200 || r.json(t)["config"].(map[string]any)["url"] != base {
					t.Errorf("GET: %d %s", r.status, r.body)
				}
				hidden("GET", r.body)
				r = e.req("GET", "/api/v1/notification-channels", key, nil)
				if r.status != 200 || !strings.Contains(string(r.body), base) {
					t.Errorf("list: %d %s", r.status, r.body)
				}
				hidden("the list", r.body)
			}
			for _, b := range e.rawBlobs(t, "SELECT config FROM notification_channels") {
				hidden("the stored config", b)
			}
			for _, b := range e.rawBlobs(t, "SELECT secrets_sealed FROM notification_channels") {
				hidden("the sealed secrets", b)
			}

			// Deliveries go to the whole URL; their records hold no query,
			// even when the receiver quotes it back.
			test := func(wantQuery string, ok bool) {
				t.Helper()
				n := rc.count()
				r := e.req("POST", "/api/v1/notification-channels/"+id+"/test", k, nil)
				if r.status != http.StatusAccepted {
					t.Fatalf("test: %d %s", r.status, r.body)
				}
				dlv := r.json(t)["id"].(string)
				wait.For(t, 20*time.Second, "the test delivery's attempt", func() bool {
					d := e.req("GET", "/api/v1/deliveries/"+dlv, k, nil).json(t)
					return len(d["attempts"].([]any)) > 0
				})
				if rc.count() <= n || rc.last() != wantQuery {
					t.Errorf("the receiver got query %q, want %q", rc.last(), wantQuery)
				}
				d := e.req("GET", "/api/v1/deliveries/"+dlv, reader, nil)
				hidden("the delivery", d.body)
				at := d.json(t)["attempts"].([]any)[0].(map[string]any)
				if ok != (at["error"] == "") || !ok && !strings.Contains(at["error"].(string), "[redacted]") {
					t.Errorf("the attempt's error: %q", at["error"])
				}
				hidden("the deliveries", e.req("GET", "/api/v1/notification-channels/"+id+"/deliveries", reader, nil).body)
			}
			test("token="+token+"&team=ops", true)
			rc.setEcho(true)
			test("token="+token+"&team=ops", false)
			rc.setEcho(false)

			patch := func(body map[string]any, wantSet bool) {
				t.Helper()
				r := e.req("PATCH", "/api/v1/notification-channels/"+id, k, body)
				if r.status != 200 {
					t.Fatalf("patch %v: %d %s", body, r.status, r.body)
				}
				hidden("the PATCH response", r.body)
				if got := slices.Contains(anyStrings(r.json(t)["secretsSet"]), "urlQuery"); got != wantSet {
					t.Errorf("patch %v: urlQuery set %v, want %v", body, got, wantSet)
				}
			}
			// The rest of the channel, or the URL as read back: kept.
			patch(map[string]any{"name": "renamed"}, true)
			patch(map[string]any{"config": map[string]any{"url": base}}, true)
			test("token="+token+"&team=ops", true)
			// A new query replaces it; a bare ? clears it.
			patch(map[string]any{"config": map[string]any{"url": base + "?token=second-token-77"}}, true)
			test("token=second-token-77", true)
			patch(map[string]any{"config": map[string]any{"url": base + "?"}}, false)
			test("", true)
			// A URL that moves drops the stored query.
			patch(map[string]any{"config": map[string]any{"url": base + "?token=" + token}}, true)
			patch(map[string]any{"config": map[string]any{"url": rc.srv.URL + "/elsewhere"}}, false)
			test("", true)

			// A channel as stored before queries were sealed.
			patch(map[string]any{"config": map[string]any{"url": base}}, false)
			db := e.rawDB(t)
			defer db.Close()
			legacy := `{"url":"` + base + `?token=` + token + `"}`
			if _, err := db.Exec(`UPDATE notification_channels SET config = $1 WHERE id = $2`, legacy, id); err != nil {
				t.Fatal(err)
			}
			r = e.req("GET", "/api/v1/notification-channels/"+id, reader, nil)
			if r.json(t)["config"].(map[string]any)["url"] != base || !slices.Contains(anyStrings(r.json(t)["secretsSet"]), "urlQuery") {
				t.Errorf("a stored query before sealing: %s", r.body)
			}
			hidden("GET before sealing", r.body)
			test("token="+token, true)
			n, err := e.app.SealChannelQueries(context.Background())
			if err != nil || n != 1 {
				t.Fatalf("sealing: %d %v", n, err)
			}
			for _, b := range e.rawBlobs(t, "SELECT config FROM notification_channels") {
				hidden("the config after sealing", b)
			}
			if n, err := e.app.SealChannelQueries(context.Background()); err != nil || n != 0 {
				t.Errorf("sealing again: %d %v", n, err)
			}
			test("token="+token, true)
		})
	}
}
