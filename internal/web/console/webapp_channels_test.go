package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/deliver"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/wait"
	"github.com/tocsin/tocsin/internal/web/public"
)

// hook is a webhook receiver as the webhook guide tells users to write
// one: it verifies every request's signature with the secret it was
// given (read from the page that showed it), and answers 204, or what it
// is told to.
type hook struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	answer int    // 0: verify and answer 204
	body   string // the body of a non-zero answer
	good   []string
	bad    int
	query  string // the last request's query
}

func newHook(t *testing.T) *hook {
	h := &hook{t: t}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.query = r.URL.RawQuery
		if h.answer != 0 {
			w.WriteHeader(h.answer)
			_, _ = io.WriteString(w, h.body)
			return
		}
		if h.secret == "" || notify.Verify(r.Header.Get(notify.HeaderSignature), body, h.secret, time.Now(), notify.DefaultTolerance) != nil {
			h.bad++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		h.good = append(h.good, r.Header.Get(notify.HeaderDelivery))
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) set(secret string, answer int, body string) {
	h.mu.Lock()
	h.secret, h.answer, h.body = secret, answer, body
	h.mu.Unlock()
}

// verified are the delivery ids whose signature verified, and how many
// requests did not verify.
func (h *hook) verified() ([]string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.good...), h.bad
}

// runDeliverer runs a node's sender beside the test's server until the
// test ends, as serve runs one.
func runDeliverer(t *testing.T, e *env) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	n := deliver.New(deliver.Options{App: e.App, Node: "web-test", Poll: 20 * time.Millisecond})
	go func() { defer close(done); _ = n.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// formFor is an empty form for a POST, none for a GET.
func formFor(method string) url.Values {
	if method == "POST" {
		return form()
	}
	return nil
}

var (
	whsecRE = regexp.MustCompile(`whsec_[A-Z0-9]{52}`)
	nchRE   = regexp.MustCompile(`/channels/(nch_[0-9A-Za-z]+)`)
)

// webhookForm is the new webhook channel form filled in.
func webhookForm(name, target string) url.Values {
	return form("kind", "webhook", "name", name, "url", target, "enabled", "on")
}

// settled waits, reloading the channel's page (bounded), until
// delivery dlv shows status, and returns its row.
func settled(t *testing.T, p *person, page, dlv, status string) string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<tr role="row" data-delivery-id="` + regexp.QuoteMeta(dlv) + `">.*?</tr>`)
	var last string
	wait.For(t, 20*time.Second, "delivery "+dlv+" "+status, func() bool {
		r := p.get(page)
		last = re.FindString(r.body)
		return r.status == 200 && strings.Contains(last, `data-status="`+status+`"`)
	})
	return last
}

// TestWebAppChannelsMatrix: every role, every action of the channel
// pages, over HTTP: reading takes notifications:read, the rest
// notifications:write, as on the API.
func TestWebAppChannelsMatrix(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		runDeliverer(t, e)
		h := newHook(t)
		h.set("", http.StatusNoContent, "")
		ws := "/w/" + e.WsA.ID
		n := 0
		for _, role := range account.Roles {
			p := e.member(string(role)+"@a.test", role)
			ch := e.API("POST", "/api/v1/notification-channels", e.KeyA, map[string]any{"name": "for " + string(role), "kind": "webhook",
				"config": map[string]any{"url": h.srv.URL + "/hook"}}, 201)["id"].(string)
			dlv := e.API("POST", "/api/v1/notification-channels/"+ch+"/test", e.KeyA, nil, 202)["id"].(string)
			wait.For(t, 20*time.Second, "the test delivery", func() bool {
				return e.API("GET", "/api/v1/deliveries/"+dlv, e.KeyA, nil, 200)["status"] == "succeeded"
			})
			read, write := role.Grants(account.ScopeNotificationsRead), role.Grants(account.ScopeNotificationsWrite)
			c := ws + "/channels/" + ch
			n += judge(t, role, p, []action{
				{"see the channels", "GET", ws + "/channels", nil, read, 200},
				{"see a channel", "GET", c, nil, read, 200},
				{"see the new channel form", "GET", ws + "/channels/new?kind=webhook", nil, write, 200},
				{"create a webhook channel", "POST", ws + "/channels", webhookForm("made by "+string(role), "https://hooks.example.com/x"), write, 201},
				{"create a Slack channel", "POST", ws + "/channels", form("kind", "slack", "name", "chat", "hook-url", "https://hooks.slack.com/services/T0/B0/x"), write, 303},
				{"edit a channel", "POST", c + "/edit", form("name", "renamed", "url", h.srv.URL+"/hook", "enabled", "on"), write, 303},
				{"test a channel", "POST", c + "/test", form(), write, 303},
				{"rotate a secret", "POST", c + "/rotate", form(), write, 200},
				{"redeliver", "POST", ws + "/deliveries/" + dlv + "/redeliver", form(), write, 303},
				{"delete a channel", "POST", c + "/delete", form(), write, 303},
			})
			if r := p.get(ws + "/channels"); write != strings.Contains(r.body, ws+"/channels/new") {
				t.Errorf("%s: the list offers a new channel: %v", role, !write)
			}
		}
		t.Logf("%d requests checked", n)
	})
}

// TestWebAppChannels: a webhook channel made through the form sends a
// signed test to a real receiver, which verifies it with the secret the
// page showed once; the log shows each delivery and attempt; rotation
// shows a new secret once and the old one keeps signing; redelivery
// sends again; no page but the once-shown ones carries a secret; and the
// form puts every mistake, hostile bytes too, at its field.
func TestWebAppChannels(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		runDeliverer(t, e)
		h := newHook(t)
		ws := "/w/" + e.WsA.ID
		owner := e.member("owner@a.test", account.RoleOwner)
		viewer := e.member("viewer@a.test", account.RoleViewer)

		if r := viewer.get(ws + "/channels"); r.status != 200 || !strings.Contains(r.body, "No channels yet") ||
			!strings.Contains(r.body, `aria-current="page">Notifications</a>`) {
			t.Fatalf("the empty list: %d %.800s", r.status, r.body)
		}
		if r := owner.get(ws + "/channels/new"); r.status != 200 || !strings.Contains(r.body, ws+"/channels/new?kind=pagerduty") {
			t.Fatalf("the choice of kinds: %d", r.status)
		}
		// Each kind's form has exactly its fields.
		for kind, fields := range map[string][]string{"webhook": {"url"}, "email": {"to"}, "slack": {"hook-url"}, "discord": {"hook-url"},
			"msteams": {"hook-url"}, "pagerduty": {"routing-key"}, "telegram": {"chat-id", "bot-token"}, "ntfy": {"url", "topic", "access-token"}} {
			r := owner.get(ws + "/channels/new?kind=" + kind)
			if r.status != 200 {
				t.Fatalf("%s form: %d", kind, r.status)
			}
			for _, f := range []string{"url", "to", "hook-url", "routing-key", "chat-id", "bot-token", "topic", "access-token"} {
				want := false
				for _, g := range fields {
					want = want || g == f
				}
				if got := strings.Contains(r.body, `name="`+f+`"`); got != want {
					t.Errorf("the %s form has field %s: %v", kind, f, got)
				}
			}
		}

		// Created through the form: the secret once, on this page only.
		r := owner.post(ws+"/channels", webhookForm("Ops hook", h.srv.URL+"/hook?token=query-secret"))
		secret := whsecRE.FindString(r.body)
		m := nchRE.FindStringSubmatch(r.body)
		if r.status != 201 || secret == "" || m == nil || !strings.Contains(r.body, "shown only now") {
			t.Fatalf("create: %d %.1500s", r.status, r.body)
		}
		ch := m[1]
		h.set(secret, 0, "")
		page := ws + "/channels/" + ch
		r = owner.post(ws+"/channels", form("kind", "slack", "name", "Team chat", "hook-url", "https://hooks.slack.com/services/T0/B0/slacktokenvalue", "enabled", "on"))
		if r.status != 303 || !strings.HasPrefix(r.header.Get("Location"), ws+"/channels/nch_") {
			t.Fatalf("create a Slack channel: %d %.800s", r.status, r.body)
		}
		slack := r.header.Get("Location")
		noSecrets := func(where, body string, secrets ...string) {
			t.Helper()
			for _, s := range append([]string{"whsec_", "slacktokenvalue"}, secrets...) {
				if strings.Contains(body, s) {
					t.Errorf("%s shows a secret (%q)", where, s)
				}
			}
		}
		admin, editor := e.member("admin@a.test", account.RoleAdmin), e.member("editor@a.test", account.RoleEditor)
		for _, p := range []*person{owner, admin, editor, viewer} {
			writer := p == owner || p == admin
			for _, path := range []string{ws + "/channels", page, slack, ws + "/channels/new?kind=webhook"} {
				r := p.get(path)
				if r.status != 200 && !(!writer && strings.HasSuffix(path, "kind=webhook") && r.status == 403) {
					t.Errorf("%s %s: %d", p.email, path, r.status)
				}
				// The URL's query may carry a token: it is a secret, shown
				// to no one, the edit form's writers included.
				noSecrets(p.email+" "+path, r.body, secret, "query-secret")
			}
		}
		if r := owner.get(page); !strings.Contains(r.body, "A query is stored (never shown)") ||
			!strings.Contains(r.body, `value="`+h.srv.URL+`/hook"`) {
			t.Errorf("the edit form does not say a query is stored: %.3000s", r.body)
		}
		r = owner.get(ws + "/channels")
		if !strings.Contains(r.body, strings.TrimPrefix(h.srv.URL, "http://")+"/hook</code>") || !strings.Contains(r.body, "incoming webhook (its URL is kept secret)") ||
			!strings.Contains(r.body, "none yet") || !strings.Contains(r.body, "2 channels.") {
			t.Errorf("the list: %.3000s", r.body)
		}
		if r := owner.get(slack); !strings.Contains(r.body, "One is stored (never shown)") || strings.Contains(r.body, ch+"/rotate") {
			t.Errorf("the Slack channel's page: %.3000s", r.body)
		}

		// A test, sent, signed and verified, shows in the log.
		if r := owner.post(page+"/test", form()); r.status != 303 {
			t.Fatalf("test: %d %.500s", r.status, r.body)
		}
		d := e.API("GET", "/api/v1/notification-channels/"+ch+"/deliveries", e.KeyA, nil, 200)["data"].([]any)
		if len(d) != 1 {
			t.Fatalf("deliveries: %v", d)
		}
		first := d[0].(map[string]any)["id"].(string)
		row := settled(t, owner, page, first, "succeeded")
		if !strings.Contains(row, ">delivered</span>") || !strings.Contains(row, "<code>test</code>") || !strings.Contains(row, "HTTP 204") ||
			!strings.Contains(row, "#1 ") || !strings.Contains(row, "/deliveries/"+first+"/redeliver") {
			t.Errorf("the delivery's row: %s", row)
		}
		if good, bad := h.verified(); len(good) != 1 || good[0] != first || bad != 0 {
			t.Fatalf("the receiver verified %v, refused %d", good, bad)
		}
		h.mu.Lock()
		if h.query != "token=query-secret" {
			t.Errorf("the delivery went without the URL's query: %q", h.query)
		}
		h.mu.Unlock()
		if r := owner.get(ws + "/channels"); !strings.Contains(r.body, `data-status="succeeded"`) {
			t.Errorf("the list lacks the last delivery: %.2000s", r.body)
		}

		// Rotation: the new secret once; the receiver switches to it, and
		// both sign meanwhile.
		r = owner.post(page+"/rotate", form())
		fresh := whsecRE.FindString(r.body)
		if r.status != 200 || fresh == "" || fresh == secret || !strings.Contains(r.body, "The old secret still signs until") {
			t.Fatalf("rotate: %d %.1500s", r.status, r.body)
		}
		h.set(fresh, 0, "")
		// Redelivery: the same id again, signed by the new secret.
		if r := owner.post(ws+"/deliveries/"+first+"/redeliver", form()); r.status != 303 || r.header.Get("Location") != page+"#deliveries-h" {
			t.Fatalf("redeliver: %d %q", r.status, r.header.Get("Location"))
		}
		wait.For(t, 20*time.Second, "the redelivery", func() bool { good, _ := h.verified(); return len(good) == 2 })
		if good, bad := h.verified(); good[1] != first || bad != 0 {
			t.Errorf("redelivered: %v, refused %d", good, bad)
		}
		row = settled(t, owner, page, first, "succeeded")
		if !strings.Contains(row, "#2 ") {
			t.Errorf("the redelivered row lacks its second attempt: %s", row)
		}
		h.set(secret, 0, "") // the old secret verifies too, during the rotation
		owner.post(page+"/test", form())
		wait.For(t, 20*time.Second, "a test signed by the old secret too", func() bool { good, _ := h.verified(); return len(good) == 3 })
		for _, p := range []*person{owner, viewer} {
			for _, path := range []string{ws + "/channels", page} {
				noSecrets(p.email+" "+path+" after the rotation", p.get(path).body, secret, fresh)
			}
		}

		// A receiver's hostile answer is shown escaped and shortened.
		h.set(fresh, 500, "<b>boom</b> no hook at /hook?token=query-secret "+strings.Repeat("x", 400))
		owner.post(page+"/test", form())
		d = e.API("GET", "/api/v1/notification-channels/"+ch+"/deliveries", e.KeyA, nil, 200)["data"].([]any)
		failing := d[0].(map[string]any)["id"].(string)
		var body string
		wait.For(t, 20*time.Second, "the failed attempt", func() bool {
			body = owner.get(page).body
			return strings.Contains(body, "the receiver answered 500")
		})
		if strings.Contains(body, "<b>boom") || !strings.Contains(body, "&lt;b&gt;boom") || strings.Contains(body, strings.Repeat("x", 400)) {
			t.Errorf("the failed attempt's error is not escaped and shortened")
		}
		if !strings.Contains(body, "/hook?[redacted]") {
			t.Errorf("the receiver's echo of the URL's query is not redacted")
		}
		noSecrets("the log of a receiver that echoes its URL", body, "query-secret")
		if row := regexp.MustCompile(`(?s)data-delivery-id="` + failing + `">.*?</tr>`).FindString(body); !strings.Contains(row, `data-status="pending"`) ||
			strings.Contains(row, "/redeliver") || !strings.Contains(row, "HTTP 500") || !strings.Contains(row, "next try") {
			t.Errorf("a pending delivery's row: %s", row)
		}

		// The log pages with the cursor.
		for range 21 {
			e.API("POST", "/api/v1/notification-channels/"+slack[len(ws+"/channels/"):]+"/test", e.KeyA, nil, 202)
		}
		r = owner.get(slack)
		next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(r.body)
		if strings.Count(r.body, "data-delivery-id=") != 20 || next == nil {
			t.Fatalf("the first page of 21 deliveries: %d rows, next %v", strings.Count(r.body, "data-delivery-id="), next)
		}
		r = owner.get(strings.ReplaceAll(next[1], "&amp;", "&"))
		if r.status != 200 || strings.Count(r.body, "data-delivery-id=") != 1 || strings.Contains(r.body, `rel="next"`) {
			t.Errorf("the second page: %d, %d rows", r.status, strings.Count(r.body, "data-delivery-id="))
		}
		if r := owner.get(slack + "?cursor=nonsense"); r.status != 422 || strings.Count(r.body, "data-delivery-id=") != 20 ||
			!strings.Contains(r.body, "does not work") {
			t.Errorf("a bad cursor: %d", r.status)
		}

		// Edit: the stored secret stays unless typed again; a disabled
		// channel says so and cannot be tested.
		r = owner.post(slack+"/edit", form("name", "Team chat (muted)"))
		if r.status != 303 {
			t.Fatalf("edit: %d %.1500s", r.status, r.body)
		}
		c := e.API("GET", "/api/v1/notification-channels/"+slack[len(ws+"/channels/"):], e.KeyA, nil, 200)
		if c["name"] != "Team chat (muted)" || c["enabled"] != false || fmt.Sprint(c["secretsSet"]) != "[hookUrl]" {
			t.Errorf("after the edit: %v", c)
		}
		if r := owner.get(slack); !strings.Contains(r.body, ">disabled</span>") || strings.Contains(r.body, "/test\"") {
			t.Errorf("a disabled channel's page offers a test")
		}
		if r := owner.post(slack+"/test", form()); r.status != 409 || !strings.Contains(r.body, "enable it to send a test") {
			t.Errorf("testing a disabled channel: %d", r.status)
		}

		// E-mail needs an SMTP server, which this one has not: the form
		// says so, and makes nothing.
		if r := owner.post(ws+"/channels", form("kind", "email", "name", "mail", "to", "ops@a.test")); r.status != 403 ||
			!strings.Contains(r.body, "need an SMTP server") || !strings.Contains(r.body, `name="to"`) {
			t.Errorf("an e-mail channel without SMTP: %d %.800s", r.status, r.body)
		}

		// The URL's query: a form shown again asks for it, never shows it;
		// the URL saved as shown keeps it.
		r = owner.post(page+"/edit", form("name", "", "url", h.srv.URL+"/hook?token=retyped-secret"))
		if r.status != 422 || strings.Contains(r.body, "retyped-secret") || !strings.Contains(r.body, "Type the query again") {
			t.Errorf("an edit with a query shown again: %d %.2000s", r.status, r.body)
		}
		if r = owner.post(page+"/edit", form("name", "Ops hook", "url", h.srv.URL+"/hook", "enabled", "on")); r.status != 303 {
			t.Fatalf("an edit keeping the query: %d %.1000s", r.status, r.body)
		}
		h.set(fresh, 0, "")
		owner.post(page+"/test", form())
		wait.For(t, 20*time.Second, "a test after the edit", func() bool { good, _ := h.verified(); return len(good) == 4 })
		h.mu.Lock()
		if h.query != "token=query-secret" {
			t.Errorf("after an edit that kept the URL, the delivery's query: %q", h.query)
		}
		h.mu.Unlock()

		// Three mistakes, three messages at their fields.
		r = owner.post(ws+"/channels", form("kind", "webhook", "name", " ", "url", "ftp://example.com/", "events", "nope"))
		for _, want := range []string{`id="err-name"`, `id="err-url"`, `id="err-events"`, "Name must not be blank.",
			"URL must be an absolute http or https URL.", `value="ftp://example.com/"`} {
			if r.status != 422 || !strings.Contains(r.body, want) {
				t.Errorf("three mistakes: %d, lacks %q", r.status, want)
			}
		}
		r = owner.post(page+"/edit", form("name", "", "url", "", "subjects", "nope"))
		for _, want := range []string{`id="err-name"`, `id="err-url"`, `id="err-subjects"`} {
			if r.status != 422 || !strings.Contains(r.body, want) {
				t.Errorf("three mistakes in an edit: %d, lacks %q", r.status, want)
			}
		}
		// Hostile bytes: a message at the field, never a server error.
		for _, bad := range []string{"nul\x00byte", "bad \xff utf-8"} {
			for _, f := range []url.Values{
				form("kind", "webhook", "name", bad, "url", "https://example.com/"),
				form("kind", "webhook", "name", "x", "url", bad),
				form("kind", "telegram", "name", "x", "chat-id", bad, "bot-token", "1:a"),
				form("kind", "telegram", "name", "x", "chat-id", "1", "bot-token", bad),
				form("kind", "webhook", "name", "x", "url", "https://example.com/", "events", bad),
				form("kind", "webhook", "name", "x", "url", "https://example.com/", "subjects", bad),
			} {
				r := owner.post(ws+"/channels", f)
				if r.status != 422 || !strings.Contains(r.body, "must be valid UTF-8 text without NUL.") {
					t.Errorf("%v: %d %.600s", f, r.status, r.body)
				}
				if f.Get("bot-token") == "1:a" && !strings.Contains(r.body, "Type it again if you typed it") {
					t.Errorf("%v: the form does not ask for the bot token again", f)
				}
			}
			if r := owner.post(page+"/edit", form("name", bad, "url", "https://example.com/")); r.status != 422 || !strings.Contains(r.body, `id="err-name"`) {
				t.Errorf("an edit's name %q: %d", bad, r.status)
			}
			if r := owner.post(ws+"/channels", form("kind", bad)); r.status != 422 || !strings.Contains(r.body, "not a kind of channel") {
				t.Errorf("kind %q: %d", bad, r.status)
			}
			if r := owner.get(ws + "/channels/new?" + url.Values{"kind": {bad}}.Encode()); r.status != 422 {
				t.Errorf("new kind %q: %d", bad, r.status)
			}
			if r := owner.get(ws + "/channels?" + url.Values{"cursor": {bad}}.Encode()); r.status != 422 {
				t.Errorf("list cursor %q: %d", bad, r.status)
			}
			for _, path := range []string{ws + "/channels/" + url.PathEscape(bad), ws + "/channels/" + url.PathEscape(bad) + "/delete",
				ws + "/deliveries/" + url.PathEscape(bad) + "/redeliver"} {
				method := "POST"
				if !strings.Contains(path, "/delete") && !strings.Contains(path, "/redeliver") {
					method = "GET"
				}
				if r := owner.do(method, path, formFor(method)); r.status != 404 {
					t.Errorf("%s %q: %d", method, path, r.status)
				}
			}
		}
		if got := e.API("GET", "/api/v1/notification-channels", e.KeyA, nil, 200)["data"].([]any); len(got) != 2 {
			t.Errorf("channels made by bad forms: %d", len(got)-2)
		}
		// Another workspace's channel is not found.
		theirs := e.API("POST", "/api/v1/notification-channels", e.KeyB, map[string]any{"name": "theirs", "kind": "webhook",
			"config": map[string]any{"url": "https://b.example.com/"}}, 201)["id"].(string)
		for _, path := range []string{ws + "/channels/" + theirs, ws + "/channels/" + theirs + "/test", ws + "/channels/" + theirs + "/delete"} {
			method := "GET"
			if !strings.HasSuffix(path, theirs) {
				method = "POST"
			}
			if r := owner.do(method, path, formFor(method)); r.status != 404 {
				t.Errorf("%s another workspace's %s: %d", method, path, r.status)
			}
		}
		// Delete.
		if r := owner.post(page+"/delete", form()); r.status != 303 || r.header.Get("Location") != ws+"/channels" {
			t.Fatalf("delete: %d", r.status)
		}
		if r := owner.get(page); r.status != 404 {
			t.Errorf("a deleted channel: %d", r.status)
		}
	})
}
