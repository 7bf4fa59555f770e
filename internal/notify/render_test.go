package notify_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
)

var (
	renderAt = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	testEP   = notify.Endpoints{PagerDuty: "http://127.0.0.1:1/pd", Telegram: "http://127.0.0.1:2", Ntfy: "http://127.0.0.1:3"}
)

const (
	routingKey = "0123456789abcdef0123456789abcdef"
	botToken   = "123456:ABC-def_ghi"
	hookURL    = "https://hooks.example.com/services/T/B/x"
)

// event is an event's payload as the store writes it.
func event(t *testing.T, typ string, data any) []byte {
	t.Helper()
	b, err := json.Marshal(incident.Event{ID: "evt_1", Type: typ, CreatedAt: renderAt, WorkspaceID: "ws_1", Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// anIncident is checkout's incident as the event of type typ carries it.
func anIncident(typ, title, name string) *incident.Incident {
	started := renderAt.Add(-10 * time.Minute)
	inc := &incident.Incident{ID: "inc_1", WorkspaceID: "ws_1", Title: title, Status: incident.Investigating,
		Origin: incident.Automatic, Subject: &incident.Subject{Type: "monitor", ID: "mon_1", Name: name},
		Cause: "3 consecutive down results", AffectedMonitors: []string{"mon_1"}, StartedAt: started,
		CreatedAt: started, UpdatedAt: renderAt,
		Updates: []incident.Update{{Status: incident.Investigating, Message: title, At: started}}}
	switch typ {
	case incident.IncidentAcknowledged:
		inc.AcknowledgedAt = &renderAt
	case incident.IncidentUpdated:
		inc.Status = incident.Identified
		inc.Updates = append(inc.Updates, incident.Update{Status: incident.Identified, Message: "a bad deploy, rolled back", At: renderAt})
	case incident.IncidentResolved:
		inc.Status, inc.ResolvedAt = incident.Resolved, &renderAt
		inc.Updates = append(inc.Updates, incident.Update{Status: incident.Resolved, Message: name + " recovered (up)", At: renderAt})
	}
	return inc
}

// events are one payload of every type, with what a reader must see.
func events(t *testing.T) []struct {
	typ, see string
	payload  []byte
} {
	incidentEvent := func(typ string) []byte {
		return event(t, typ, incident.IncidentData{Incident: anIncident(typ, "checkout is down", "checkout")})
	}
	return []struct {
		typ, see string
		payload  []byte
	}{
		{incident.IncidentOpened, "Incident opened: checkout is down", incidentEvent(incident.IncidentOpened)},
		{incident.IncidentAcknowledged, "Incident acknowledged: checkout is down", incidentEvent(incident.IncidentAcknowledged)},
		{incident.IncidentUpdated, "a bad deploy, rolled back", incidentEvent(incident.IncidentUpdated)},
		{incident.IncidentResolved, "Incident resolved: checkout is down", incidentEvent(incident.IncidentResolved)},
		{incident.MonitorStateChanged, "Monitor checkout is DOWN", event(t, incident.MonitorStateChanged, incident.StateChangeData{
			Subject: incident.Subject{Type: "monitor", ID: "mon_1", Name: "checkout"},
			From:    monitor.StateUp, To: monitor.StateDown, Cause: "connection refused", At: renderAt})},
		{incident.HeartbeatStateChanged, "Heartbeat nightly backup is UP", event(t, incident.HeartbeatStateChanged, incident.StateChangeData{
			Subject: incident.Subject{Type: "heartbeat", ID: "hb_1", Name: "nightly backup"},
			From:    monitor.StateDown, To: monitor.StateUp, At: renderAt})},
		{incident.SLOBurnRate, "Monitor checkout is burning its error budget (fast)", event(t, incident.SLOBurnRate, burnData("firing"))},
		{incident.Test, "hello from the channel page", event(t, incident.Test, map[string]any{
			"message": "hello from the channel page", "channel": map[string]string{"id": "nch_1", "name": "ops"}})},
		{notify.EventHeld, "3 notifications held back", event(t, notify.EventHeld, notify.HeldData{
			ChannelID: "nch_1", Count: 3, ByType: map[string]int{incident.IncidentOpened: 2, incident.MonitorStateChanged: 1},
			From: renderAt.Add(-time.Hour), To: renderAt, Titles: []string{"checkout is down", "search is down"}})},
	}
}

// burnData is checkout's burn-rate alert with status firing or resolved.
func burnData(status string) incident.BurnRateData {
	long, short, left := 1000.0, 1000.0, 0.972
	return incident.BurnRateData{Subject: incident.Subject{Type: "monitor", ID: "mon_1", Name: "checkout"}, Status: status,
		Rule: "fast", LongWindowSeconds: 3600, ShortWindowSeconds: 300, Factor: 14.4, BurnRateLong: &long, BurnRateShort: &short,
		Target: 0.99999, PeriodDays: 30, BudgetRemaining: &left, OpenedAt: renderAt.Add(-40 * time.Minute), At: renderAt}
}

// A burn-rate alert tells its objective, rule, burn rates and budget
// left in words; its resolution says it ended and how long it lasted.
func TestRenderBurnRate(t *testing.T) {
	for _, c := range []struct {
		status string
		want   []string
	}{
		{"firing", []string{"Monitor checkout is burning its error budget (fast)", "99.999% over 30 days",
			"fast: 1h and 5m at 14.4×", "1000.0× over 1h, 1000.0× over 5m", "97.2%"}},
		{"resolved", []string{"Monitor checkout no longer burns its error budget too fast", "99.999% over 30 days", "Lasted:* 40m"}},
	} {
		ch, s := channel(notify.Slack)
		out, err := notify.Render(ch, s, event(t, incident.SLOBurnRate, burnData(c.status)), "dlv_1", renderAt, testEP)
		if err != nil {
			t.Fatal(err)
		}
		text := str(t, decodeBody(t, out), "blocks", 0, "text", "text")
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q does not say %q", c.status, text, w)
			}
		}
	}
}

// channel is a channel of kind k with the secrets it needs.
func channel(k notify.Kind) (*notify.Channel, *notify.Secrets) {
	c := &notify.Channel{ID: "nch_1", Name: "ops", Kind: k, Enabled: true}
	s := &notify.Secrets{}
	switch k {
	case notify.Webhook:
		c.Config.URL = "https://receiver.example.com/hook"
		s.Signing = []notify.SigningSecret{{Secret: notify.NewSigningSecret()}}
	case notify.Email:
		c.Config.To = []string{"ops@example.com", "oncall@example.com"}
	case notify.Slack, notify.Discord, notify.MSTeams:
		s.HookURL = hookURL
	case notify.PagerDuty:
		s.RoutingKey = routingKey
	case notify.Telegram:
		c.Config.ChatID = "-1001234"
		s.BotToken = botToken
	case notify.Ntfy:
		c.Config.Topic = "tocsin-alerts"
		s.AccessToken = "tk_secret"
	}
	return c, s
}

type obj = map[string]any

func decodeBody(t *testing.T, out notify.Outgoing) obj {
	t.Helper()
	var v obj
	if err := json.Unmarshal(out.Body, &v); err != nil {
		t.Fatalf("the body is not a JSON object: %v\n%s", err, out.Body)
	}
	return v
}

// at walks a decoded JSON value by keys and indexes, failing if a step is
// missing.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(obj)
			if !ok {
				t.Fatalf("%v: not an object at %q", path, k)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("%v: no %q", path, k)
			}
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("%v: no element %d", path, k)
			}
			v = a[k]
		}
	}
	return v
}

func str(t *testing.T, v any, path ...any) string {
	t.Helper()
	s, ok := at(t, v, path...).(string)
	if !ok {
		t.Fatalf("%v is not a string", path)
	}
	return s
}

func wantEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantHeader(t *testing.T, out notify.Outgoing, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if out.Header[k] != v {
			t.Errorf("header %s = %q, want %q", k, out.Header[k], v)
		}
	}
}

func wantPost(t *testing.T, out notify.Outgoing, url string) {
	t.Helper()
	if out.Method != "POST" || out.URL != url || out.Mail != nil || out.Skip != "" {
		t.Fatalf("got %s %s (mail %v, skip %q), want POST %s", out.Method, out.URL, out.Mail != nil, out.Skip, url)
	}
	wantHeader(t, out, map[string]string{"Content-Type": "application/json"})
}

// shown checks the request's shape as its service documents it and
// returns what a reader sees, if a reader sees it.
var shown = map[notify.Kind]func(t *testing.T, typ string, c *notify.Channel, s *notify.Secrets, payload []byte, out notify.Outgoing) string{
	notify.Webhook: func(t *testing.T, typ string, c *notify.Channel, s *notify.Secrets, payload []byte, out notify.Outgoing) string {
		wantPost(t, out, c.Config.URL)
		wantHeader(t, out, map[string]string{"User-Agent": "Tocsin-Webhooks/1", notify.HeaderDelivery: "dlv_1",
			notify.HeaderEvent: typ, notify.HeaderTimestamp: fmt.Sprint(renderAt.Unix())})
		if want := string(payload[:len(payload)-1]) + `,"deliveryId":"dlv_1"}`; string(out.Body) != want {
			t.Errorf("body:\n%s\nwant\n%s", out.Body, want)
		}
		if err := notify.Verify(out.Header[notify.HeaderSignature], out.Body, s.Signing[0].Secret, renderAt, notify.DefaultTolerance); err != nil {
			t.Errorf("the signature does not verify: %v", err)
		}
		return "" // for machines: the event as it is
	},
	notify.Email: func(t *testing.T, typ string, c *notify.Channel, s *notify.Secrets, payload []byte, out notify.Outgoing) string {
		m := out.Mail
		if m == nil || out.Method != "" || out.URL != "" || out.Body != nil {
			t.Fatalf("an e-mail channel sends a mail and no request: %+v", out)
		}
		if !slices.Equal(m.To, c.Config.To) || !strings.HasPrefix(m.Subject, "[Tocsin] ") || m.Text == "" || !strings.HasPrefix(m.HTML, "<div") {
			t.Errorf("mail %+v", m)
		}
		return m.Subject + "\n" + m.Text
	},
	notify.Slack: func(t *testing.T, typ string, c *notify.Channel, s *notify.Secrets, payload []byte, out notify.Outgoing) string {
		wantPost(t, out, hookURL)
		v := decodeBody(t, out)
		if len(at(t, v, "blocks").([]any)) != 1 {
			t.Errorf("blocks: %v", v["blocks"])
		}
		wantEqual(t, "blocks[0].type", str(t, v, "blocks", 0, "type"), "section")
		wantEqual(t, "blocks[0].text.type", str(t, v, "blocks", 0, "text", "type"), "mrkdwn")
		text := str(t, v, "blocks", 0, "text", "text")
		if fallback := str(t, v, "text"); fallback == "" || !strings.HasPrefix(text, "*"+fallback+"*\n") {
			t.Errorf("the fallback %q is not the section's bold first line %q", fallback, text)
		}
		return text
	},
	notify.Discord: func(t *testing.T, typ string, c *notify.Channel, s *notify.Secrets, payload []byte, out notify.Outgoing) string {
		wantPost(t, out, hookURL)
		v := decodeBody(t, out)
		wantEqual(t, "content", str(t, v, "content"), "")
		if p, ok := at(t, v, "allowed_mentions", "parse").([]any); !ok || len(p) != 0 {
			t.Errorf("allowed_mentions.parse = %v, want []", at(t, v, "allowed_mentions", "parse"))
		}
		if len(at(t, v, "embeds").([]any)) != 1 {
			t.Errorf("embeds: %v", v["embeds"])
		}
		if colour, ok := at(t, v, "embeds", 0, "color").(float64); !ok || colour <= 0 || colour > 0xFFFFFF {
			t.Errorf("color = %v", at(t, v, "embeds", 0, "color"))
		}
		if _, err := time.Parse(time.RFC3339, str(t, v, "embeds", 0, "timestamp")); err != nil {
			t.Errorf("timestamp: %v", err)
		}
		return str(t, v, "embeds", 0, "title") + "\n" + str(t, v, "embeds", 0, "description")
	},
	notify.MSTeams: func(t *testing.T, typ string, c *notify.Channel, s *notify.Secrets, payload []byte, out notify.Outgoing) string {
		wantPost(t, out, hookURL)
		v := decodeBody(t, out)
		wantEqual(t, "type", str(t, v, "type"), "message")
		a := at(t, v, "attachments", 0)
		wantEqual(t, "contentType", str(t, a, "contentType"), "application/vnd.microsoft.card.adaptive")
		wantEqual(t, "contentUrl", at(t, a, "contentUrl"), nil)
		wantEqual(t, "$schema", str(t, a, "content", "$schema"), "http://adaptivecards.io/schemas/adaptive-card.json")
		wantEqual(t, "content.type", str(t, a, "content", "type"), "AdaptiveCard")
		wantEqual(t, "version", str(t, a, "content", "version"), "1.4")
		var texts []string
		for i := range at(t, a, "content", "body").([]any) {
			wantEqual(t, "body type", str(t, a, "content", "body", i, "type"), "TextBlock")
			wantEqual(t, "wrap", at(t, a, "content", "body", i, "wrap"), true)
			texts = append(texts, str(t, a, "content", "body", i, "text"))
		}
		return strings.Join(texts, "\n")
	},
	notify.PagerDuty: func(t *testing.T, typ string, c *notify.Channel, s *notify.Secrets, payload []byte, out notify.Outgoing) string {
		want, ok := map[string][3]string{ // action, dedup key, severity
			incident.IncidentOpened:       {"trigger", "inc_1", "critical"},
			incident.IncidentAcknowledged: {"acknowledge", "inc_1"},
			incident.IncidentResolved:     {"resolve", "inc_1"},
			incident.Test:                 {"trigger", "tocsin-test-dlv_1", "info"},
			notify.EventHeld:              {"trigger", "tocsin-held-dlv_1", "warning"},
		}[typ]
		if !ok {
			if out.Skip != "pagerduty hears incidents opened, acknowledged and resolved" || out.Method != "" || out.Body != nil {
				t.Errorf("want a skip, got %+v", out)
			}
			return ""
		}
		action, dedup, severity := want[0], want[1], want[2]
		wantPost(t, out, testEP.PagerDuty)
		v := decodeBody(t, out)
		wantEqual(t, "routing_key", str(t, v, "routing_key"), routingKey)
		wantEqual(t, "event_action", str(t, v, "event_action"), action)
		wantEqual(t, "dedup_key", str(t, v, "dedup_key"), dedup)
		if action != "trigger" {
			if _, ok := v["payload"]; ok || len(v) != 3 {
				t.Errorf("an %s carries only the key: %v", action, v)
			}
			return ""
		}
		wantEqual(t, "severity", str(t, v, "payload", "severity"), severity)
		if _, err := time.Parse(time.RFC3339, str(t, v, "payload", "timestamp")); err != nil {
			t.Errorf("timestamp: %v", err)
		}
		if _, ok := at(t, v, "payload", "custom_details").(obj); !ok {
			t.Error("custom_details is not an object")
		}
		if typ == incident.IncidentOpened { // the alert's title in PagerDuty, through acknowledge and resolve
			wantEqual(t, "summary", str(t, v, "payload", "summary"), "checkout is down (3 consecutive down results)")
			wantEqual(t, "source", str(t, v, "payload", "source"), "checkout")
			wantEqual(t, "class", str(t, v, "payload", "class"), "monitor")
			wantEqual(t, "incident_id", str(t, v, "payload", "custom_details", "incident_id"), "inc_1")
			wantEqual(t, "cause", str(t, v, "payload", "custom_details", "cause"), "3 consecutive down results")
			return ""
		}
		wantEqual(t, "source", str(t, v, "payload", "source"), "tocsin")
		return str(t, v, "payload", "summary")
	},
	notify.Telegram: func(t *testing.T, typ string, c *notify.Channel, s *notify.Secrets, payload []byte, out notify.Outgoing) string {
		wantPost(t, out, testEP.Telegram+"/bot"+botToken+"/sendMessage")
		v := decodeBody(t, out)
		wantEqual(t, "chat_id", str(t, v, "chat_id"), c.Config.ChatID)
		wantEqual(t, "parse_mode", str(t, v, "parse_mode"), "HTML")
		wantEqual(t, "disable_web_page_preview", at(t, v, "disable_web_page_preview"), true)
		return str(t, v, "text")
	},
	notify.Ntfy: func(t *testing.T, typ string, c *notify.Channel, s *notify.Secrets, payload []byte, out notify.Outgoing) string {
		wantPost(t, out, testEP.Ntfy+"/")
		wantHeader(t, out, map[string]string{"Authorization": "Bearer tk_secret"})
		v := decodeBody(t, out)
		wantEqual(t, "topic", str(t, v, "topic"), "tocsin-alerts")
		priority := 3.0
		if typ == incident.IncidentOpened || typ == incident.MonitorStateChanged || typ == incident.SLOBurnRate { // DOWN, firing
			priority = 5
		}
		wantEqual(t, "priority", at(t, v, "priority"), priority)
		if tags, ok := at(t, v, "tags").([]any); !ok || len(tags) == 0 {
			t.Errorf("tags = %v", v["tags"])
		}
		return str(t, v, "title") + "\n" + str(t, v, "message")
	},
}

// Every kind renders every event type in its service's documented format,
// and says what happened.
func TestRenderEveryKindEveryEvent(t *testing.T) {
	if len(shown) != len(notify.Kinds) {
		t.Fatalf("the table covers %d kinds of %d", len(shown), len(notify.Kinds))
	}
	for _, k := range notify.Kinds {
		for _, ev := range events(t) {
			t.Run(string(k)+"/"+ev.typ, func(t *testing.T) {
				c, s := channel(k)
				out, err := notify.Render(c, s, ev.payload, "dlv_1", renderAt, testEP)
				if err != nil {
					t.Fatal(err)
				}
				text := shown[k](t, ev.typ, c, s, ev.payload, out)
				if text != "" && !strings.Contains(text, ev.see) {
					t.Errorf("%q does not say %q", text, ev.see)
				}
			})
		}
	}
}

// The webhook body is the stored payload with deliveryId as its last
// member, and every secret active at the time signs it: both during a
// rotation, the new one alone after the grace.
func TestRenderWebhookBodyAndRotation(t *testing.T) {
	c, s := channel(notify.Webhook)
	old := s.Signing[0].Secret
	fresh := s.Rotate(renderAt)
	// Indented and padded, as another writer might store it: the body
	// stays byte for byte, bar the added member.
	var v any
	payload := events(t)[0].payload
	if err := json.Unmarshal(payload, &v); err != nil {
		t.Fatal(err)
	}
	indented, _ := json.MarshalIndent(v, "", "  ")
	padded := append(append([]byte("\n "), indented...), "\n\n"...)

	for _, tc := range []struct {
		name    string
		now     time.Time
		payload []byte
		want    string
		verify  map[string]bool
	}{
		{"mid-rotation", renderAt.Add(time.Hour), payload, string(payload[:len(payload)-1]) + `,"deliveryId":"dlv_7"}`,
			map[string]bool{old: true, fresh: true, notify.NewSigningSecret(): false}},
		{"after the grace", renderAt.Add(notify.RotationGrace + time.Second), padded,
			strings.TrimSuffix(string(indented), "\n}") + `,"deliveryId":"dlv_7"}`,
			map[string]bool{old: false, fresh: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := notify.Render(c, s, tc.payload, "dlv_7", tc.now, testEP)
			if err != nil {
				t.Fatal(err)
			}
			if string(out.Body) != tc.want {
				t.Fatalf("body:\n%s\nwant\n%s", out.Body, tc.want)
			}
			var got, orig obj
			if err := json.Unmarshal(out.Body, &got); err != nil {
				t.Fatal(err)
			}
			_ = json.Unmarshal(payload, &orig)
			orig["deliveryId"] = "dlv_7"
			if fmt.Sprint(got) != fmt.Sprint(orig) {
				t.Errorf("decoded body %v, want %v", got, orig)
			}
			sig := out.Header[notify.HeaderSignature]
			if n := strings.Count(sig, "v1="); n != len(s.Active(tc.now)) {
				t.Errorf("%d signatures in %q, want one per active secret", n, sig)
			}
			wantEqual(t, "timestamp", out.Header[notify.HeaderTimestamp], fmt.Sprint(tc.now.Unix()))
			for secret, ok := range tc.verify {
				if err := notify.Verify(sig, out.Body, secret, tc.now, notify.DefaultTolerance); (err == nil) != ok {
					t.Errorf("Verify with %.12s…: %v, want ok=%v", secret, err, ok)
				}
			}
			if err := notify.Verify(sig, append(out.Body, ' '), fresh, tc.now, notify.DefaultTolerance); !errors.Is(err, notify.ErrNoSignature) {
				t.Errorf("a changed body verifies: %v", err)
			}
		})
	}
}

// Names and titles are the users': each kind shows them as text, never
// as markup, mentions or extra mail headers.
func TestRenderEscapesHostileText(t *testing.T) {
	const hostile = "<script>alert(1)</script> & @everyone [x](https://evil.example) *b*\r\nBcc: x@evil.example"
	payload := event(t, incident.IncidentOpened, incident.IncidentData{Incident: anIncident(incident.IncidentOpened, hostile, hostile)})
	render := func(k notify.Kind) notify.Outgoing {
		c, s := channel(k)
		out, err := notify.Render(c, s, payload, "dlv_1", renderAt, testEP)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	slack := decodeBody(t, render(notify.Slack))
	for _, text := range []string{str(t, slack, "text"), str(t, slack, "blocks", 0, "text", "text")} {
		if !strings.Contains(text, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; @everyone") || strings.ContainsAny(text, "<>") {
			t.Errorf("slack: %q", text)
		}
	}

	tg := str(t, decodeBody(t, render(notify.Telegram)), "text")
	if !strings.Contains(tg, "&lt;script&gt;alert(1)&lt;/script&gt; &amp;") {
		t.Errorf("telegram: %q", tg)
	}
	if rest := strings.NewReplacer("<b>", "", "</b>", "").Replace(tg); strings.ContainsAny(rest, "<>") {
		t.Errorf("telegram: markup other than <b> in %q", tg)
	}

	discord := decodeBody(t, render(notify.Discord))
	desc := str(t, discord, "embeds", 0, "description")
	if !strings.Contains(desc, `\<script\>`) || !strings.Contains(desc, `\@everyone \[x\](https://evil.example) \*b\*`) {
		t.Errorf("discord: markdown of user text not escaped: %q", desc)
	}
	if strings.Contains(strings.ReplaceAll(desc, `\@`, ""), "@everyone") || str(t, discord, "content") != "" {
		t.Errorf("discord: a mention in %q", desc)
	}

	mail := render(notify.Email).Mail
	if strings.ContainsAny(mail.Subject, "\r\n") || !strings.HasPrefix(mail.Subject, "[Tocsin] Incident opened: <script>") {
		t.Errorf("e-mail subject %q", mail.Subject)
	}
	if strings.Contains(mail.HTML, "<script>") || !strings.Contains(mail.HTML, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; @everyone") {
		t.Errorf("e-mail HTML not escaped:\n%s", mail.HTML)
	}
	if !strings.Contains(mail.Text, hostile) {
		t.Errorf("e-mail text changed the title:\n%s", mail.Text)
	}

	// JSON carries the rest as it is.
	teams := decodeBody(t, render(notify.MSTeams))
	wantEqual(t, "teams headline", str(t, teams, "attachments", 0, "content", "body", 0, "text"), "Incident opened: "+hostile)
	wantEqual(t, "ntfy title", str(t, decodeBody(t, render(notify.Ntfy)), "title"), "Incident opened: "+hostile)
	wantEqual(t, "pagerduty source", str(t, decodeBody(t, render(notify.PagerDuty)), "payload", "source"), hostile)
}

func tail(s string) string {
	r := []rune(s)
	return string(r[max(0, len(r)-40):])
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// wellEscaped reports whether every & in s starts one of the entities
// Slack and Telegram take: a cut never splits one.
func wellEscaped(s string) bool {
	for i := strings.IndexByte(s, '&'); i >= 0; i = strings.IndexByte(s[i+1:], '&') + i + 1 {
		if !strings.HasPrefix(s[i:], "&amp;") && !strings.HasPrefix(s[i:], "&lt;") && !strings.HasPrefix(s[i:], "&gt;") {
			return false
		}
		if strings.IndexByte(s[i+1:], '&') < 0 {
			break
		}
	}
	return true
}

// Long text is cut at rune boundaries to each service's limit, outside
// escapes and markup, and says so with "…".
func TestRenderTruncates(t *testing.T) {
	title := strings.Repeat("é😀<&*", 1200)
	inc := anIncident(incident.IncidentUpdated, title, strings.Repeat("&", 900))
	inc.Cause = strings.Repeat("*_>", 400)
	inc.Updates[len(inc.Updates)-1].Message = strings.Repeat("ü😀&[", 3000)
	payload := event(t, incident.IncidentUpdated, incident.IncidentData{Incident: inc})
	opened := event(t, incident.IncidentOpened, incident.IncidentData{Incident: anIncident(incident.IncidentOpened, title, "x")})
	held := event(t, notify.EventHeld, notify.HeldData{Count: 50, Titles: slices.Repeat([]string{strings.Repeat("<&", 150)}, 50),
		ByType: map[string]int{incident.IncidentOpened: 50}, From: renderAt, To: renderAt})

	render := func(k notify.Kind, payload []byte) obj {
		c, s := channel(k)
		out, err := notify.Render(c, s, payload, "dlv_1", renderAt, testEP)
		if err != nil {
			t.Fatal(err)
		}
		if out.Mail != nil {
			return obj{"subject": out.Mail.Subject, "text": out.Mail.Text, "html": out.Mail.HTML}
		}
		return decodeBody(t, out)
	}
	for _, tc := range []struct {
		name    string
		kind    notify.Kind
		payload []byte
		path    []any
		max     int
		size    func(string) int
		escaped bool
	}{
		{"slack section", notify.Slack, payload, []any{"blocks", 0, "text", "text"}, 3000, utf16Len, true},
		{"slack held", notify.Slack, held, []any{"blocks", 0, "text", "text"}, 3000, utf16Len, true},
		{"discord title", notify.Discord, payload, []any{"embeds", 0, "title"}, 256, utf16Len, false},
		{"discord description", notify.Discord, payload, []any{"embeds", 0, "description"}, 4096, utf16Len, false},
		{"telegram", notify.Telegram, payload, []any{"text"}, 4096, utf16Len, true},
		{"telegram held", notify.Telegram, held, []any{"text"}, 4096, utf16Len, true},
		{"pagerduty summary", notify.PagerDuty, opened, []any{"payload", "summary"}, 1024, utf16Len, false},
		{"ntfy message", notify.Ntfy, payload, []any{"message"}, 4096, func(s string) int { return len(s) }, false},
		{"e-mail subject", notify.Email, payload, []any{"subject"}, 200, utf16Len, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := str(t, render(tc.kind, tc.payload), tc.path...)
			if n := tc.size(got); n > tc.max || n < tc.max/2 {
				t.Errorf("size %d, want at most %d (and not far below)", n, tc.max)
			}
			if !strings.HasSuffix(got, "…") || !utf8.ValidString(got) || strings.ContainsRune(got, utf8.RuneError) {
				t.Errorf("not cut cleanly: …%q", tail(got))
			}
			if tc.escaped && !wellEscaped(got) {
				t.Errorf("an entity was split: …%q", tail(got))
			}
			if tc.kind == notify.Telegram && strings.Count(got, "<b>") != strings.Count(got, "</b>") {
				t.Errorf("unbalanced <b> in %q", got)
			}
		})
	}
	// A held summary lists ten titles and counts the rest.
	if text := str(t, render(notify.Email, held), "text"); strings.Count(text, "\n- ") != 11 || !strings.Contains(text, "- and 40 more") {
		t.Errorf("held titles:\n%s", text)
	}
}

// A test event may carry only a message; an unknown type, a payload that
// is no event, a channel missing what it needs or an unknown kind is an
// error; empty endpoints are the services' own.
func TestRenderEdges(t *testing.T) {
	bare := []byte(`{"id":"evt_2","type":"test","createdAt":"2026-11-25T12:00:00Z","workspaceId":"ws_1","data":{"message":"ping"}}`)
	for _, k := range notify.Kinds {
		c, s := channel(k)
		if _, err := notify.Render(c, s, bare, "dlv_1", renderAt, testEP); err != nil {
			t.Errorf("%s: a bare test event: %v", k, err)
		}
		for _, bad := range []string{
			`{"id":"evt_3","type":"monitor.exploded","data":{}}`,
			`{"id":"evt_3","type":"incident.opened","data":{}}`,
			`{"id":"evt_3","type":"monitor.state_changed","data":[]}`,
			`[{"type":"test"}]`,
			`not json`,
		} {
			if _, err := notify.Render(c, s, []byte(bad), "dlv_1", renderAt, testEP); err == nil {
				t.Errorf("%s: %s rendered", k, bad)
			}
		}
		if k != notify.Email {
			if _, err := notify.Render(c, &notify.Secrets{}, bare, "dlv_1", renderAt, testEP); err == nil && k != notify.Ntfy {
				t.Errorf("%s: rendered without its secret", k)
			}
		}
	}
	if _, err := notify.Render(&notify.Channel{Kind: "fax"}, nil, bare, "dlv_1", renderAt, testEP); err == nil {
		t.Error("an unknown kind rendered")
	}

	// Expired secrets only: nothing can sign.
	c, s := channel(notify.Webhook)
	s.Signing[0].ExpiresAt = renderAt
	if _, err := notify.Render(c, s, bare, "dlv_1", renderAt, testEP); err == nil {
		t.Error("a webhook rendered with no active signing secret")
	}

	urls := map[notify.Kind]string{
		notify.PagerDuty: "https://events.pagerduty.com/v2/enqueue",
		notify.Telegram:  "https://api.telegram.org/bot" + botToken + "/sendMessage",
		notify.Ntfy:      "https://ntfy.sh/",
	}
	for _, k := range slices.Sorted(maps.Keys(urls)) {
		c, s := channel(k)
		out, err := notify.Render(c, s, bare, "dlv_1", renderAt, notify.Endpoints{})
		if err != nil || out.URL != urls[k] {
			t.Errorf("%s with default endpoints: %s, %v; want %s", k, out.URL, err, urls[k])
		}
	}
	c, s = channel(notify.Email)
	resolved := event(t, incident.IncidentResolved, incident.IncidentData{Incident: anIncident(incident.IncidentResolved, "checkout is down", "checkout")})
	if out, err := notify.Render(c, s, resolved, "dlv_1", renderAt, testEP); err != nil || !strings.Contains(out.Mail.Text, "\nLasted: 10m\n") {
		t.Errorf("a resolved incident does not say how long it lasted: %v\n%s", err, out.Mail.Text)
	}

	c, s = channel(notify.Ntfy)
	c.Config.URL, s.AccessToken = "https://ntfy.example.com/", ""
	out, err := notify.Render(c, s, bare, "dlv_1", renderAt, testEP)
	if err != nil || out.URL != "https://ntfy.example.com/" {
		t.Errorf("ntfy on its own server: %s, %v", out.URL, err)
	}
	if _, ok := out.Header["Authorization"]; ok {
		t.Error("ntfy without a token sent Authorization")
	}
}
