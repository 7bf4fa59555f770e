package notify

import (
	"fmt"
	"time"
)

// EventHeld is the summary a channel gets when its rate bound held
// notifications back.
const EventHeld = "notifications.held"

// HeldData is the data of a notifications.held event: how many
// notifications to one channel were held back, of which types, over which
// time, and some of their titles. They stay in the deliveries list.
type HeldData struct {
	ChannelID string         `json:"channelId"`
	Count     int            `json:"count"`
	ByType    map[string]int `json:"byType"`
	From      time.Time      `json:"from"`
	To        time.Time      `json:"to"`
	Titles    []string       `json:"titles"`
}

// Endpoints are the fixed addresses of the services channels post to;
// tests point them at local receivers.
type Endpoints struct {
	PagerDuty string // default "https://events.pagerduty.com/v2/enqueue"
	Telegram  string // API base, default "https://api.telegram.org"
	Ntfy      string // default server "https://ntfy.sh" (a channel's config.url overrides it)
}

// Default endpoints.
const (
	DefaultPagerDuty = "https://events.pagerduty.com/v2/enqueue"
	DefaultTelegram  = "https://api.telegram.org"
	DefaultNtfy      = "https://ntfy.sh"
)

// Outgoing is what one delivery sends: an HTTP request, an e-mail, or
// nothing (Skip says why).
type Outgoing struct {
	Method string
	URL    string
	Header map[string]string // canonical header names
	Body   []byte
	Mail   *Mail  // e-mail channels: set instead of an HTTP request
	Skip   string // non-empty: nothing to send for this event on this kind; the delivery counts as done
}

// Mail is an e-mail to send (the mailer adds From, Date, Message-ID and
// the MIME structure).
type Mail struct {
	To      []string
	Subject string
	Text    string // text/plain body
	HTML    string // text/html alternative
}

// WebhookUserAgent is the User-Agent of webhook deliveries.
const WebhookUserAgent = "Tocsin-Webhooks/1"

// SkipPagerDuty is why a PagerDuty channel sends nothing for an event:
// an alert there is an incident's life, not every state change.
const SkipPagerDuty = "pagerduty hears incidents opened, acknowledged and resolved"

// Service limits, in characters counted as UTF-16 code units (never
// fewer than code points, so a text fits either way of counting), except
// ntfy's, in bytes.
const (
	slackSectionMax  = 3000
	discordTitleMax  = 256
	discordDescMax   = 4096
	telegramMax      = 4096
	pagerDutySummary = 1024
	ntfyMessageBytes = 4096
)

// Caps on user text before escaping, so that one long value does not
// crowd out the rest, and a headline fits every service's limit.
const (
	headlineMax    = 250
	subjectLineMax = 200
	valueMax       = 500
	textMax        = 2000
	listItemMax    = 200
	listMax        = 10
	ellipsis       = "…"
	humanLayout    = "2006-01-02 15:04:05 UTC"
)

// Render builds what delivering an event to channel c sends at now.
// payload is the event as stored (the JSON of incident.Event: {id, type,
// createdAt, workspaceId, data}); deliveryID is the delivery's id (dlv_…),
// stable across retries; s holds the channel's opened secrets.
// Its errors name no URL or token (a hook URL is a secret), and no
// function either: the deliveries list shows them as they are.
func Render(c *Channel, s *Secrets, payload []byte, deliveryID string, now time.Time, ep Endpoints) (Outgoing, error) {
	if s == nil {
		s = &Secrets{}
	}
	ep = ep.withDefaults()
	n, err := decode(payload, now)
	if err != nil {
		return Outgoing{}, err
	}
	switch c.Kind {
	case Webhook:
		return renderWebhook(c, s, payload, n.typ, deliveryID, now)
	case Email:
		return renderEmail(c, n)
	case Slack:
		return renderSlack(s, n)
	case Discord:
		return renderDiscord(s, n)
	case MSTeams:
		return renderTeams(s, n)
	case PagerDuty:
		return renderPagerDuty(s, n, deliveryID, ep.PagerDuty)
	case Telegram:
		return renderTelegram(c, s, n, ep.Telegram)
	case Ntfy:
		return renderNtfy(c, s, n, ep.Ntfy)
	}
	return Outgoing{}, fmt.Errorf("unknown channel kind %q", c.Kind)
}

func (ep Endpoints) withDefaults() Endpoints {
	if ep.PagerDuty == "" {
		ep.PagerDuty = DefaultPagerDuty
	}
	if ep.Telegram == "" {
		ep.Telegram = DefaultTelegram
	}
	if ep.Ntfy == "" {
		ep.Ntfy = DefaultNtfy
	}
	return ep
}
