package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
)

// A webhook channel: its signing secret is shown once, at creation and
// rotation, stored only sealed, and during a rotation both secrets sign.
func TestWebhookChannelSecrets(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		m := e.monitorIn(e.wsA)
		r := e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "ops", "kind": "webhook",
			"config": map[string]any{"url": "https://hooks.example.com/tocsin"}, "events": []string{"incident.opened", "incident.resolved"},
			"subjects": []string{m}})
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		ch := r.json(t)
		id, secret := ch["id"].(string), ch["signingSecret"].(string)
		if !strings.HasPrefix(id, "nch_") || !strings.HasPrefix(secret, "whsec_") || len(secret) < 40 ||
			r.header.Get("Location") != "/api/v1/notification-channels/"+id || ch["enabled"] != true ||
			!slices.Equal(anyStrings(ch["secretsSet"]), []string{"signingSecret"}) || len(anyStrings(ch["events"])) != 2 {
			t.Fatalf("created: %s", r.body)
		}
		r = e.req("GET", "/api/v1/notification-channels/"+id, k, nil)
		if r.status != 200 || bytes.Contains(r.body, []byte(secret)) || r.json(t)["signingSecret"] != nil {
			t.Fatalf("GET shows the secret: %s", r.body)
		}
		for _, b := range e.rawBlobs(t, "SELECT secrets_sealed FROM notification_channels") {
			if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("whsec_")) {
				t.Fatal("the signing secret is stored in the clear")
			}
		}

		r = e.req("POST", "/api/v1/notification-channels/"+id+"/rotate-secret", k, nil)
		fresh, _ := r.json(t)["signingSecret"].(string)
		if r.status != 200 || !strings.HasPrefix(fresh, "whsec_") || fresh == secret {
			t.Fatalf("rotate: %d %s", r.status, r.body)
		}
		c, sealed, err := e.db.GetChannel(context.Background(), e.wsA.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		s, err := e.app.OpenChannelSecrets(c.ID, sealed)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Active(time.Now()); !slices.Equal(got, []string{fresh, secret}) {
			t.Errorf("signing secrets during the rotation: %d, want the new and the old", len(got))
		}
		if got := s.Active(time.Now().Add(25 * time.Hour)); !slices.Equal(got, []string{fresh}) {
			t.Errorf("signing secrets after the grace: %d, want the new one only", len(got))
		}

		// PATCH changes settings and keeps the secret.
		r = e.req("PATCH", "/api/v1/notification-channels/"+id, k, map[string]any{"name": "on-call", "enabled": false, "events": []string{}})
		if got := r.json(t); r.status != 200 || got["name"] != "on-call" || got["enabled"] != false || len(anyStrings(got["events"])) != 0 ||
			!slices.Equal(anyStrings(got["secretsSet"]), []string{"signingSecret"}) {
			t.Fatalf("patch: %d %s", r.status, r.body)
		}
		if s, _ := e.app.OpenChannelSecrets(id, sealedOf(t, e, id)); s.Active(time.Now())[0] != fresh {
			t.Error("PATCH lost the signing secret")
		}

		// Another workspace, a read-only key, and deletion.
		kB := e.key(e.ownerB, e.wsB.ID, false, account.Scopes...)
		if r = e.req("GET", "/api/v1/notification-channels/"+id, kB, nil); r.status != http.StatusNotFound {
			t.Errorf("another workspace's channel: %d", r.status)
		}
		reader := e.key(e.members[account.RoleOwner], e.wsA.ID, false, account.ScopeNotificationsRead)
		if r = e.req("POST", "/api/v1/notification-channels/"+id+"/rotate-secret", reader, nil); r.status != http.StatusForbidden || r.code(t) != "insufficient_scope" {
			t.Errorf("rotating with notifications:read: %d %s", r.status, r.body)
		}
		if r = e.req("GET", "/api/v1/notification-channels", reader, nil); r.status != 200 || r.json(t)["total"] != float64(1) {
			t.Errorf("list: %d %s", r.status, r.body)
		}
		if r = e.req("DELETE", "/api/v1/notification-channels/"+id, k, nil); r.status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		if r = e.req("GET", "/api/v1/notification-channels/"+id, k, nil); r.status != http.StatusNotFound {
			t.Errorf("after delete: %d", r.status)
		}
	})
}

func sealedOf(t *testing.T, e *env, id string) []byte {
	t.Helper()
	_, sealed, err := e.db.GetChannel(context.Background(), e.wsA.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return sealed
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// The other kinds keep their secrets write-only too, and each kind's
// fields are checked.
func TestChannelKinds(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		hook := "https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX"
		r := e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "slack", "kind": "slack",
			"secrets": map[string]any{"hookUrl": hook}})
		if r.status != http.StatusCreated || bytes.Contains(r.body, []byte("XXXXSECRET")) || r.json(t)["signingSecret"] != nil ||
			!slices.Equal(anyStrings(r.json(t)["secretsSet"]), []string{"hookUrl"}) {
			t.Fatalf("slack: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)
		if r = e.req("POST", "/api/v1/notification-channels/"+id+"/rotate-secret", k, nil); r.status != http.StatusConflict {
			t.Errorf("rotating a slack channel's secret: %d %s", r.status, r.body)
		}
		r = e.req("PATCH", "/api/v1/notification-channels/"+id, k, map[string]any{"secrets": map[string]any{"hookUrl": "https://hooks.slack.com/services/T1/B1/NEW"}})
		if r.status != 200 {
			t.Fatalf("new hook: %d %s", r.status, r.body)
		}
		if s, _ := e.app.OpenChannelSecrets(id, sealedOf(t, e, id)); s.HookURL != "https://hooks.slack.com/services/T1/B1/NEW" {
			t.Errorf("hook after PATCH: %q", s.HookURL)
		}
		for _, c := range []map[string]any{
			{"name": "pd", "kind": "pagerduty", "secrets": map[string]any{"routingKey": "0123456789abcdef0123456789abcdef"}},
			{"name": "tg", "kind": "telegram", "config": map[string]any{"chatId": "-100123"}, "secrets": map[string]any{"botToken": "123:abc"}},
			{"name": "ntfy", "kind": "ntfy", "config": map[string]any{"topic": "ops-alerts"}},
			{"name": "discord", "kind": "discord", "secrets": map[string]any{"hookUrl": "https://discord.com/api/webhooks/1/x"}},
			{"name": "teams", "kind": "msteams", "secrets": map[string]any{"hookUrl": "https://example.webhook.office.com/x"}},
		} {
			if r = e.req("POST", "/api/v1/notification-channels", k, c); r.status != http.StatusCreated {
				t.Errorf("%s: %d %s", c["kind"], r.status, r.body)
			}
		}

		r = e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "x", "kind": "webhook",
			"events": []string{"incident.exploded"}, "subjects": []string{"mon_nope"}})
		if p := pointers(t, r); !slices.Contains(p, "/config/url") || !slices.Contains(p, "/events/0") {
			t.Errorf("webhook without url, bad event: %v", p)
		}
		r = e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "x", "kind": "webhook",
			"config": map[string]any{"url": "https://h.example.com"}, "subjects": []string{"mon_nope"}})
		if p := pointers(t, r); !slices.Equal(p, []string{"/subjects/0"}) {
			t.Errorf("an unknown subject: %v", p)
		}
		r = e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "x", "kind": "pagerduty",
			"secrets": map[string]any{"routingKey": "short"}})
		if p := pointers(t, r); !slices.Equal(p, []string{"/secrets/routingKey"}) {
			t.Errorf("a bad routing key: %v", p)
		}
		r = e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "x", "kind": "slack",
			"secrets": map[string]any{"hookUrl": "http://hooks.slack.com/x"}})
		if p := pointers(t, r); !slices.Equal(p, []string{"/secrets/hookUrl"}) {
			t.Errorf("an http hook: %v", p)
		}
		r = e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "mail", "kind": "email",
			"config": map[string]any{"to": []string{"ops@example.com"}}})
		if r.status != http.StatusForbidden || r.code(t) != "feature_unavailable" {
			t.Errorf("e-mail without SMTP: %d %s", r.status, r.body)
		}
	})
}
