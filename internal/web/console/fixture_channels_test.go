package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/web/console"
)

var channelEvents = []string{"incident.opened", "incident.resolved", "monitor.state_changed"}

func deliveries() []console.DeliveryView {
	return []console.DeliveryView{
		{ID: "dlv_01JDQ7C", EventType: "incident.opened", Status: "pending", CreatedAt: at(0, 9, 15), NextAttemptAt: at(0, 9, 16),
			Attempts: []console.AttemptView{{N: 1, At: at(0, 9, 15), Duration: 10 * time.Second, Error: "no answer within 10s"}}},
		{ID: "dlv_01JDQ7B", EventType: "monitor.state_changed", Status: "failed", CreatedAt: at(-1, 9, 0),
			Attempts: []console.AttemptView{{N: 1, At: at(-1, 9, 0), Duration: 120 * time.Millisecond, StatusCode: 500,
				Error: "the receiver answered 500: <script>alert(1)</script>" + strings.Repeat("x", 500)}}},
		{ID: "dlv_01JDQ7A", EventType: "test", Status: "succeeded", CreatedAt: at(-2, 8, 0),
			Attempts: []console.AttemptView{{N: 1, At: at(-2, 8, 0), Duration: 42 * time.Millisecond, StatusCode: 204}}},
	}
}

func channelPages() []uiPage {
	ds := deliveries()
	return []uiPage{
		{"channels", "/w/ws_01JDQ4K8Z6/channels", "Notification channels", func() ([]byte, error) {
			return console.Render(console.Channels{Shell: shell(console.NavChannels), Total: 3, NextPage: "/w/ws_01JDQ4K8Z6/channels?cursor=abc",
				Rows: []console.ChannelRow{
					{ID: "nch_01JDQ7A", Name: "Ops <hook>", Kind: "webhook", Target: "https://hooks.acme.example/tocsin", Enabled: true, Last: &ds[2]},
					{ID: "nch_01JDQ7B", Name: "On call", Kind: "pagerduty", Target: "Events API v2 integration (its key is kept secret)",
						DisabledReason: "the receiver answered 410 Gone", Last: &ds[1]},
					{ID: "nch_01JDQ7C", Name: "Team", Kind: "msteams", Target: "incoming webhook (its URL is kept secret)", Enabled: true},
				}})
		}, []string{`href="/w/ws_01JDQ4K8Z6/channels/new"`, `data-channel-id="nch_01JDQ7A"`, "Ops &lt;hook&gt;", "Microsoft Teams", "PagerDuty",
			`data-status="succeeded"`, ">delivered<", "HTTP 204", "410 Gone", "none yet", `aria-current="page">Notifications</a>`, `rel="next"`}},
		{"channels-empty", "/w/ws_01JDQ4K8Z6/channels/empty", "Notification channels", func() ([]byte, error) {
			return console.Render(console.Channels{Shell: viewer(console.NavChannels)})
		}, []string{"No channels yet", "ask an admin or an owner"}},
		{"channel-kinds", "/w/ws_01JDQ4K8Z6/channels/new", "New channel", func() ([]byte, error) {
			return console.Render(console.ChannelForm{Shell: shell(console.NavChannels), Mode: console.FormNew, EventTypes: channelEvents})
		}, []string{`href="/w/ws_01JDQ4K8Z6/channels/new?kind=webhook"`, `href="/w/ws_01JDQ4K8Z6/channels/new?kind=ntfy"`, "Microsoft Teams"}},
		{"channel-form", "/w/ws_01JDQ4K8Z6/channels/new-telegram", "New Telegram channel", func() ([]byte, error) {
			return console.Render(console.ChannelForm{Shell: shell(console.NavChannels), Mode: console.FormNew, EventTypes: channelEvents,
				Values: console.ChannelValues{Kind: "telegram", Name: "Phones <all>", Enabled: true, ChatID: "@acme", Events: []string{"incident.opened"}},
				Errors: console.FormErrors{Fields: map[string]string{"bot-token": "Bot token must be a bot token.", "name": "Name is wrong.", "events": "Events are wrong."}}})
		}, []string{`action="/w/ws_01JDQ4K8Z6/channels"`, `name="kind" value="telegram"`, `name="chat-id"`, `value="@acme"`, `name="bot-token" type="password"`,
			`id="err-bot-token"`, `id="err-events"`, `value="incident.opened" checked`, `value="Phones &lt;all&gt;"`, `name="enabled" value="on" checked`}},
		{"channel", "/w/ws_01JDQ4K8Z6/channels/nch_01JDQ7A", "Ops <hook>", func() ([]byte, error) {
			return console.Render(console.ChannelDetail{Shell: shell(console.NavChannels), ID: "nch_01JDQ7A", Name: "Ops <hook>", Kind: "webhook",
				Target: "https://hooks.acme.example/tocsin", Enabled: true, CreatedAt: at(-3, 10, 0), Deliveries: ds,
				NextPage: "/w/ws_01JDQ4K8Z6/channels/nch_01JDQ7A?cursor=x",
				Form: console.ChannelForm{Mode: console.FormEdit, ID: "nch_01JDQ7A", EventTypes: channelEvents,
					Values: console.ChannelValues{Kind: "webhook", Name: "Ops <hook>", Enabled: true, URL: "https://hooks.acme.example/tocsin", SecretsSet: []string{"signingSecret"}}}})
		}, []string{`action="/w/ws_01JDQ4K8Z6/channels/nch_01JDQ7A/test"`, `action="/w/ws_01JDQ4K8Z6/channels/nch_01JDQ7A/rotate" data-confirm=`,
			`action="/w/ws_01JDQ4K8Z6/channels/nch_01JDQ7A/delete" data-confirm=`, `action="/w/ws_01JDQ4K8Z6/channels/nch_01JDQ7A/edit"`,
			`action="/w/ws_01JDQ4K8Z6/deliveries/dlv_01JDQ7B/redeliver"`, `action="/w/ws_01JDQ4K8Z6/deliveries/dlv_01JDQ7A/redeliver"`,
			"&lt;script&gt;alert(1)", "HTTP 500", "no answer", "next try", `rel="next"`, "Rotate signing secret"}},
		{"channel-viewer", "/w/ws_01JDQ4K8Z6/channels/nch_01JDQ7B", "On call", func() ([]byte, error) {
			return console.Render(console.ChannelDetail{Shell: viewer(console.NavChannels), ID: "nch_01JDQ7B", Name: "On call", Kind: "pagerduty",
				Target: "Events API v2 integration (its key is kept secret)", DisabledReason: "the receiver answered 410 Gone", CreatedAt: at(-3, 10, 0)})
		}, []string{"No deliveries yet.", ">disabled</span>", "410 Gone"}},
		{"channel-secret", "/w/ws_01JDQ4K8Z6/channels/nch_01JDQ7A/rotate", "New signing secret for “Ops <hook>”", func() ([]byte, error) {
			return console.Render(console.ChannelSecret{Shell: shell(console.NavChannels), ID: "nch_01JDQ7A", Name: "Ops <hook>",
				Secret: "whsec_ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRST", Rotated: true, OldUntil: at(1, 9, 0)})
		}, []string{"whsec_ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRST", "shown only now", "The old secret still signs until", `data-copy="signing-secret"`}},
	}
}

// TestChannelPagesMarkup: the channel pages keep the pages' rules, show
// what they must, and escape what they are given.
func TestChannelPagesMarkup(t *testing.T) {
	for _, p := range channelPages() {
		t.Run(p.name, func(t *testing.T) {
			out := renderPage(t, p)
			for _, want := range p.want {
				if !strings.Contains(out, want) {
					t.Errorf("lacks %q", want)
				}
			}
			if !strings.Contains(out, "<h1>"+escapedText(p.heading)) {
				t.Errorf("no heading %q", p.heading)
			}
			if strings.Contains(out, "<script>alert") || strings.Contains(out, strings.Repeat("x", 400)) {
				t.Error("an attempt's error is shown raw or whole")
			}
			checkMarkup(t, out)
		})
	}
}

// TestChannelFormFields: each kind's form has exactly its own fields, and
// a stored secret is said to be stored, never shown.
func TestChannelFormFields(t *testing.T) {
	all := []string{"url", "topic", "chat-id", "to", "hook-url", "routing-key", "bot-token", "access-token"}
	for _, k := range console.ChannelKinds {
		b, err := console.Render(console.ChannelForm{Shell: shell(console.NavChannels), Mode: console.FormNew,
			Values: console.ChannelValues{Kind: k.Kind}, EventTypes: channelEvents})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range all {
			want := false
			for _, g := range console.ChannelKindFields(k.Kind) {
				want = want || g == f
			}
			if got := strings.Contains(string(b), `name="`+f+`"`); got != want {
				t.Errorf("%s: field %s shown %v", k.Kind, f, got)
			}
		}
	}
	b, err := console.Render(console.ChannelDetail{Shell: shell(console.NavChannels), ID: "nch_1", Name: "chat", Kind: "slack", Enabled: true,
		Form: console.ChannelForm{Mode: console.FormEdit, ID: "nch_1", Values: console.ChannelValues{Kind: "slack", Name: "chat", SecretsSet: []string{"hookUrl"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "One is stored (never shown)") || strings.Contains(string(b), "/rotate") {
		t.Errorf("a Slack channel's edit form: %s", b)
	}
}
