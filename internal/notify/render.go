package notify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
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

// tone is how an event feels, for the colours, priorities and tags of
// the kinds that have them.
type tone int

const (
	toneInfo tone = iota
	toneAlert
	toneWarn
	toneOK
)

// fact is a labelled value; labels are ours, values user text.
type fact struct{ Label, Value string }

// note is an event as every chat and e-mail kind tells it: a headline,
// facts, a paragraph and a list; all of it user text but the labels.
type note struct {
	typ      string
	eventID  string
	headline string
	facts    []fact
	text     string
	list     []string
	tone     tone
	at       time.Time
	inc      *incident.Incident // incident events
	subject  *incident.Subject  // incident events of a subject, state changes
}

func decode(payload []byte, now time.Time) (note, error) {
	var ev struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CreatedAt time.Time       `json:"createdAt"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		return note{}, fmt.Errorf("the event is not an event object: %w", err)
	}
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = now
	}
	var (
		n   note
		err error
	)
	switch ev.Type {
	case incident.IncidentOpened, incident.IncidentAcknowledged, incident.IncidentUpdated, incident.IncidentResolved:
		var d incident.IncidentData
		if err = json.Unmarshal(ev.Data, &d); err == nil && d.Incident == nil {
			err = errors.New("no incident")
		}
		if err == nil {
			n = incidentNote(ev.Type, d.Incident)
		}
	case incident.MonitorStateChanged, incident.HeartbeatStateChanged:
		var d incident.StateChangeData
		if err = json.Unmarshal(ev.Data, &d); err == nil {
			n = stateNote(ev.Type, d)
		}
	case incident.Test:
		var d struct {
			Message string `json:"message"`
			Channel *struct {
				Name string `json:"name"`
			} `json:"channel"`
		}
		if len(ev.Data) > 0 {
			err = json.Unmarshal(ev.Data, &d)
		}
		n = note{headline: "Test notification from Tocsin", text: d.Message}
		if d.Channel != nil && d.Channel.Name != "" {
			n.facts = []fact{{"Channel", d.Channel.Name}}
		}
	case EventHeld:
		var d HeldData
		if err = json.Unmarshal(ev.Data, &d); err == nil {
			n = heldNote(d)
		}
	default:
		return note{}, fmt.Errorf("unknown event type %q", ev.Type)
	}
	if err != nil {
		return note{}, fmt.Errorf("%s data: %w", ev.Type, err)
	}
	n.typ, n.eventID = ev.Type, ev.ID
	if n.at.IsZero() {
		n.at = ev.CreatedAt
	}
	return n, nil
}

var incidentVerbs = map[string]string{
	incident.IncidentOpened:       "Incident opened",
	incident.IncidentAcknowledged: "Incident acknowledged",
	incident.IncidentUpdated:      "Incident updated",
	incident.IncidentResolved:     "Incident resolved",
}

func incidentNote(typ string, inc *incident.Incident) note {
	n := note{headline: incidentVerbs[typ] + ": " + inc.Title, inc: inc, subject: inc.Subject, tone: toneInfo}
	n.facts = append(n.facts, fact{"Status", string(inc.Status)})
	if s := inc.Subject; s != nil {
		n.facts = append(n.facts, fact{capital(s.Type), s.Name})
	}
	if inc.Cause != "" {
		n.facts = append(n.facts, fact{"Cause", inc.Cause})
	}
	n.facts = append(n.facts, fact{"Started", humanTime(inc.StartedAt)})
	switch typ {
	case incident.IncidentOpened:
		n.tone, n.at = toneAlert, inc.StartedAt
	case incident.IncidentAcknowledged:
		if inc.AcknowledgedAt != nil {
			n.at = *inc.AcknowledgedAt
		}
	case incident.IncidentResolved:
		n.tone = toneOK
		if inc.ResolvedAt != nil {
			n.at = *inc.ResolvedAt
			n.facts = append(n.facts, fact{"Lasted", lasted(inc.ResolvedAt.Sub(inc.StartedAt))})
		}
	}
	if len(inc.Updates) > 0 {
		u := inc.Updates[len(inc.Updates)-1]
		if typ == incident.IncidentUpdated {
			n.at = u.At
		}
		if u.Message != inc.Title {
			n.text = u.Message
		}
	}
	return n
}

func stateNote(typ string, d incident.StateChangeData) note {
	subj := d.Subject
	if subj.Type == "" {
		subj.Type = strings.TrimSuffix(typ, ".state_changed")
	}
	n := note{headline: capital(subj.Type) + " " + subj.Name + " is " + string(d.To), subject: &subj, at: d.At}
	state := string(d.To)
	if d.From != "" {
		state = string(d.From) + " → " + state
	}
	n.facts = append(n.facts, fact{"State", state})
	if d.Cause != "" {
		n.facts = append(n.facts, fact{"Cause", d.Cause})
	}
	n.facts = append(n.facts, fact{"At", humanTime(d.At)})
	switch d.To {
	case monitor.StateDown:
		n.tone = toneAlert
	case monitor.StateDegraded, monitor.StateUnknown:
		n.tone = toneWarn
	case monitor.StateUp:
		n.tone = toneOK
	}
	return n
}

func heldNote(d HeldData) note {
	noun := "notifications"
	if d.Count == 1 {
		noun = "notification"
	}
	n := note{headline: fmt.Sprintf("%d %s held back", d.Count, noun), tone: toneWarn, at: d.To}
	n.text = fmt.Sprintf("This channel's rate limit held back %d %s from %s to %s. Tocsin's deliveries list shows them.",
		d.Count, noun, humanTime(d.From), humanTime(d.To))
	types := make([]string, 0, len(d.ByType))
	for t := range d.ByType {
		types = append(types, t)
	}
	slices.Sort(types)
	for i, t := range types {
		types[i] = fmt.Sprintf("%s ×%d", t, d.ByType[t])
	}
	if len(types) > 0 {
		n.facts = append(n.facts, fact{"Events", strings.Join(types, ", ")})
	}
	n.list = d.Titles
	if len(n.list) > listMax {
		n.list = append(slices.Clip(d.Titles[:listMax]), fmt.Sprintf("and %d more", len(d.Titles)-listMax))
	}
	return n
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func humanTime(t time.Time) string { return t.UTC().Format(humanLayout) }

// lasted is d to the second, without zero tails: 1h5m, not 1h5m0s.
func lasted(d time.Duration) string {
	s := d.Round(time.Second).String()
	for _, tail := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, tail) {
			s = s[:len(s)-2]
		}
	}
	return s
}

// render is the note written in markup m within max as size measures it
// (max < 0: no limit).
func (n note) render(m markup, headline bool, max int, size func(string) int) string {
	return assemble(n.pieces(m, headline), m.esc, max, size)
}

// plainText is text with no markup, for e-mail and ntfy.
var plainText = markup{esc: plain, bold: plain, bullet: "- "}

// markup is how a kind writes bold text and list items.
type markup struct {
	esc    func(string) string // user text
	bold   func(string) string // of escaped text
	bullet string
}

// piece is part of a message: markup, kept whole or dropped, or user
// text, escaped and cut to fit.
type piece struct {
	s    string
	user bool
}

// pieces lays the note out: headline, facts, paragraph, list, each
// user value first cut to a size that keeps one from crowding out the
// rest.
func (n note) pieces(m markup, headline bool) []piece {
	var ps []piece
	if headline {
		ps = append(ps, piece{m.bold(m.esc(cut(n.headline, headlineMax))) + "\n", false})
	}
	for _, f := range n.facts {
		ps = append(ps, piece{m.bold(m.esc(f.Label+":")) + " ", false}, piece{cut(f.Value, valueMax), true}, piece{"\n", false})
	}
	if n.text != "" {
		ps = append(ps, piece{"\n", false}, piece{cut(n.text, textMax), true}, piece{"\n", false})
	}
	if len(n.list) > 0 {
		ps = append(ps, piece{"\n", false})
	}
	for _, item := range n.list {
		ps = append(ps, piece{m.bullet, false}, piece{cut(item, listItemMax), true}, piece{"\n", false})
	}
	return ps
}

func plain(s string) string { return s }

// assemble joins pieces, escaping the user text with esc, within max as
// size measures it (max < 0: no limit). What does not fit is cut at a
// rune boundary, never inside an escape or markup, and ends in "…".
func assemble(ps []piece, esc func(string) string, max int, size func(string) int) string {
	var b strings.Builder
	for _, p := range ps {
		if p.user {
			b.WriteString(esc(p.s))
		} else {
			b.WriteString(p.s)
		}
	}
	if full := strings.TrimRight(b.String(), "\n"); max < 0 || size(full) <= max {
		return full
	}
	b.Reset()
	left := max - size(ellipsis)
	for _, p := range ps {
		s := p.s
		if p.user {
			s = esc(s)
		}
		if n := size(s); n <= left {
			b.WriteString(s)
			left -= n
			continue
		}
		if p.user {
			for _, r := range p.s {
				e := esc(string(r))
				if size(e) > left {
					break
				}
				b.WriteString(e)
				left -= size(e)
			}
		}
		break
	}
	return b.String() + ellipsis
}

// units counts UTF-16 code units, how JavaScript-built services count
// characters; never fewer than the code points.
func units(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// cut shortens s to at most max UTF-16 units at a rune boundary, ending
// in "…" when it cut.
func cut(s string, max int) string {
	if units(s) <= max {
		return s
	}
	return assemble([]piece{{s, true}}, plain, max, units)
}

// angle escapes what Slack's mrkdwn and Telegram's HTML mode take for
// markup: &, < and >.
var angle = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// discordEsc backslash-escapes what Discord's markdown makes formatting,
// masked links ([text](url)) or mentions (<@id>, @everyone) of.
func discordEsc(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\*_~`|<>[]#@", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func jsonPost(u string, v any, header map[string]string) (Outgoing, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return Outgoing{}, err
	}
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range header {
		h[k] = v
	}
	return Outgoing{Method: "POST", URL: u, Header: h, Body: body}, nil
}

func renderWebhook(c *Channel, s *Secrets, payload []byte, typ, deliveryID string, now time.Time) (Outgoing, error) {
	secrets := s.Active(now)
	switch {
	case c.Config.URL == "":
		return Outgoing{}, errors.New("the webhook channel has no URL")
	case len(secrets) == 0:
		return Outgoing{}, errors.New("the webhook channel has no active signing secret")
	}
	body := withDeliveryID(payload, deliveryID)
	return Outgoing{Method: "POST", URL: c.Config.URL, Body: body, Header: map[string]string{
		"Content-Type":  "application/json",
		"User-Agent":    WebhookUserAgent,
		HeaderSignature: Sign(now, body, secrets),
		HeaderTimestamp: strconv.FormatInt(now.Unix(), 10),
		HeaderDelivery:  deliveryID,
		HeaderEvent:     typ,
	}}, nil
}

// withDeliveryID adds "deliveryId" as the last member of the payload
// object (decode has checked it is one), leaving the rest byte for byte.
func withDeliveryID(payload []byte, deliveryID string) []byte {
	p := bytes.TrimSpace(payload)
	head := bytes.TrimRight(p[:len(p)-1], " \t\r\n")
	id, _ := json.Marshal(deliveryID) // a string always marshals
	out := make([]byte, 0, len(head)+len(id)+16)
	out = append(out, head...)
	if len(bytes.TrimSpace(head[1:])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"deliveryId":`...)
	out = append(out, id...)
	return append(out, '}')
}

var mailHTML = template.Must(template.New("mail").Parse(`<div style="font-family:sans-serif">
<p style="font-size:1.2em;font-weight:bold">{{.Headline}}</p>
{{- if .Facts}}
<table>{{range .Facts}}<tr><th align="left" style="padding-right:1em">{{.Label}}</th><td>{{.Value}}</td></tr>{{end}}</table>
{{- end}}
{{- if .Text}}
<p style="white-space:pre-wrap">{{.Text}}</p>
{{- end}}
{{- if .List}}
<ul>{{range .List}}<li>{{.}}</li>{{end}}</ul>
{{- end}}
</div>
`))

func renderEmail(c *Channel, n note) (Outgoing, error) {
	if len(c.Config.To) == 0 {
		return Outgoing{}, errors.New("the e-mail channel has no recipients")
	}
	var facts []fact
	for _, f := range n.facts {
		facts = append(facts, fact{f.Label, cut(f.Value, valueMax)})
	}
	var list []string
	for _, item := range n.list {
		list = append(list, cut(item, listItemMax))
	}
	var html strings.Builder
	err := mailHTML.Execute(&html, struct {
		Headline, Text string
		Facts          []fact
		List           []string
	}{cut(n.headline, headlineMax), cut(n.text, textMax), facts, list})
	if err != nil {
		return Outgoing{}, err
	}
	// A header line: no line breaks, which would start another header.
	subject := strings.Join(strings.Fields("[Tocsin] "+n.headline), " ")
	return Outgoing{Mail: &Mail{
		To:      slices.Clone(c.Config.To),
		Subject: cut(subject, subjectLineMax),
		Text:    n.render(plainText, true, -1, units) + "\n",
		HTML:    html.String(),
	}}, nil
}

func needHook(s *Secrets, kind Kind) error {
	if s.HookURL == "" {
		return fmt.Errorf("the %s channel has no webhook URL", kind)
	}
	return nil
}

func renderSlack(s *Secrets, n note) (Outgoing, error) {
	if err := needHook(s, Slack); err != nil {
		return Outgoing{}, err
	}
	m := markup{esc: angle, bold: func(s string) string { return "*" + s + "*" }, bullet: "• "}
	type textObject struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type block struct {
		Type string     `json:"type"`
		Text textObject `json:"text"`
	}
	return jsonPost(s.HookURL, struct {
		Text   string  `json:"text"`
		Blocks []block `json:"blocks"`
	}{
		Text:   angle(cut(n.headline, headlineMax)),
		Blocks: []block{{"section", textObject{"mrkdwn", n.render(m, true, slackSectionMax, units)}}},
	}, nil)
}

func renderDiscord(s *Secrets, n note) (Outgoing, error) {
	if err := needHook(s, Discord); err != nil {
		return Outgoing{}, err
	}
	colour := map[tone]int{toneInfo: 0x5865F2, toneAlert: 0xE01E5A, toneWarn: 0xECB22E, toneOK: 0x2EB67D}[n.tone]
	m := markup{esc: discordEsc, bold: func(s string) string { return "**" + s + "**" }, bullet: "• "}
	type embed struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		Color       int    `json:"color"`
		Timestamp   string `json:"timestamp"`
	}
	return jsonPost(s.HookURL, struct {
		Content         string              `json:"content"`
		Embeds          []embed             `json:"embeds"`
		AllowedMentions map[string][]string `json:"allowed_mentions"`
	}{
		Embeds: []embed{{
			Title:       cut(n.headline, discordTitleMax),
			Description: n.render(m, false, discordDescMax, units),
			Color:       colour,
			Timestamp:   n.at.UTC().Format(time.RFC3339),
		}},
		AllowedMentions: map[string][]string{"parse": {}}, // no pings, whatever the text says
	}, nil)
}

func renderTeams(s *Secrets, n note) (Outgoing, error) {
	if err := needHook(s, MSTeams); err != nil {
		return Outgoing{}, err
	}
	type textBlock struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Wrap    bool   `json:"wrap"`
		Weight  string `json:"weight,omitempty"`
		Size    string `json:"size,omitempty"`
		Color   string `json:"color,omitempty"`
		Spacing string `json:"spacing,omitempty"`
	}
	colour := map[tone]string{toneAlert: "Attention", toneWarn: "Warning", toneOK: "Good"}[n.tone]
	body := []textBlock{{Type: "TextBlock", Text: cut(n.headline, headlineMax), Wrap: true, Weight: "Bolder", Size: "Medium", Color: colour}}
	for _, f := range n.facts {
		body = append(body, textBlock{Type: "TextBlock", Text: f.Label + ": " + cut(f.Value, valueMax), Wrap: true, Spacing: "None"})
	}
	if n.text != "" {
		body = append(body, textBlock{Type: "TextBlock", Text: cut(n.text, textMax), Wrap: true})
	}
	for _, item := range n.list {
		body = append(body, textBlock{Type: "TextBlock", Text: "• " + cut(item, listItemMax), Wrap: true, Spacing: "None"})
	}
	type card struct {
		Schema  string      `json:"$schema"`
		Type    string      `json:"type"`
		Version string      `json:"version"`
		Body    []textBlock `json:"body"`
	}
	type attachment struct {
		ContentType string  `json:"contentType"`
		ContentURL  *string `json:"contentUrl"`
		Content     card    `json:"content"`
	}
	return jsonPost(s.HookURL, struct {
		Type        string       `json:"type"`
		Attachments []attachment `json:"attachments"`
	}{"message", []attachment{{
		ContentType: "application/vnd.microsoft.card.adaptive",
		Content:     card{"http://adaptivecards.io/schemas/adaptive-card.json", "AdaptiveCard", "1.4", body},
	}}}, nil)
}

var pagerDutyActions = map[string]string{incident.IncidentAcknowledged: "acknowledge", incident.IncidentResolved: "resolve"}

func renderPagerDuty(s *Secrets, n note, deliveryID, endpoint string) (Outgoing, error) {
	if s.RoutingKey == "" {
		return Outgoing{}, errors.New("the pagerduty channel has no routing key")
	}
	type payload struct {
		Summary       string            `json:"summary"`
		Source        string            `json:"source"`
		Severity      string            `json:"severity"`
		Timestamp     string            `json:"timestamp"`
		Class         string            `json:"class,omitempty"` // monitor or heartbeat; a subject has no component
		CustomDetails map[string]string `json:"custom_details,omitempty"`
	}
	ev := struct {
		RoutingKey  string   `json:"routing_key"`
		EventAction string   `json:"event_action"`
		DedupKey    string   `json:"dedup_key"`
		Payload     *payload `json:"payload,omitempty"`
	}{RoutingKey: s.RoutingKey, EventAction: "trigger"}
	severity, summary := "critical", n.headline
	switch n.typ {
	case incident.IncidentOpened:
		ev.DedupKey, summary = n.inc.ID, n.inc.Title
		if n.inc.Cause != "" {
			summary += " (" + n.inc.Cause + ")"
		}
	case incident.IncidentAcknowledged, incident.IncidentResolved:
		// PagerDuty needs only the key to acknowledge or resolve its alert.
		ev.EventAction, ev.DedupKey = pagerDutyActions[n.typ], n.inc.ID
		return jsonPost(endpoint, ev, nil)
	case incident.Test:
		severity, ev.DedupKey = "info", "tocsin-test-"+deliveryID
	case EventHeld:
		severity, ev.DedupKey = "warning", "tocsin-held-"+deliveryID
	default:
		return Outgoing{Skip: SkipPagerDuty}, nil
	}
	if n.typ == incident.Test && n.text != "" {
		summary += ": " + n.text
	}
	p := &payload{Summary: cut(summary, pagerDutySummary), Source: "tocsin", Severity: severity,
		Timestamp: n.at.UTC().Format(time.RFC3339), CustomDetails: map[string]string{}}
	if n.subject != nil {
		p.Source, p.Class = n.subject.Name, n.subject.Type
	}
	for _, f := range n.facts {
		p.CustomDetails[strings.ToLower(f.Label)] = cut(f.Value, valueMax)
	}
	if n.text != "" {
		p.CustomDetails["message"] = cut(n.text, textMax)
	}
	if n.inc != nil {
		p.CustomDetails["incident_id"] = n.inc.ID
	}
	if len(n.list) > 0 {
		p.CustomDetails["titles"] = strings.Join(n.list, "\n")
	}
	p.CustomDetails["event_id"] = n.eventID
	ev.Payload = p
	return jsonPost(endpoint, ev, nil)
}

func renderTelegram(c *Channel, s *Secrets, n note, base string) (Outgoing, error) {
	switch {
	case s.BotToken == "":
		return Outgoing{}, errors.New("the telegram channel has no bot token")
	case c.Config.ChatID == "":
		return Outgoing{}, errors.New("the telegram channel has no chat id")
	}
	m := markup{esc: angle, bold: func(s string) string { return "<b>" + s + "</b>" }, bullet: "• "}
	return jsonPost(strings.TrimRight(base, "/")+"/bot"+url.PathEscape(s.BotToken)+"/sendMessage", struct {
		ChatID                string `json:"chat_id"`
		Text                  string `json:"text"`
		ParseMode             string `json:"parse_mode"`
		DisableWebPagePreview bool   `json:"disable_web_page_preview"`
	}{c.Config.ChatID, n.render(m, true, telegramMax, units), "HTML", true}, nil)
}

var ntfyTags = map[tone]string{toneInfo: "information_source", toneAlert: "rotating_light", toneWarn: "warning", toneOK: "white_check_mark"}

func renderNtfy(c *Channel, s *Secrets, n note, server string) (Outgoing, error) {
	if c.Config.Topic == "" {
		return Outgoing{}, errors.New("the ntfy channel has no topic")
	}
	if c.Config.URL != "" {
		server = c.Config.URL
	}
	priority := 3 // ntfy's default
	if n.tone == toneAlert {
		priority = 5 // its highest: a long vibration and a pop-over
	}
	var header map[string]string
	if s.AccessToken != "" {
		header = map[string]string{"Authorization": "Bearer " + s.AccessToken}
	}
	msg := n.render(plainText, false, ntfyMessageBytes, func(s string) int { return len(s) })
	if msg == "" {
		msg = cut(n.headline, headlineMax) // ntfy would say "triggered"
	}
	return jsonPost(strings.TrimRight(server, "/")+"/", struct {
		Topic    string   `json:"topic"`
		Title    string   `json:"title"`
		Message  string   `json:"message"`
		Priority int      `json:"priority"`
		Tags     []string `json:"tags"`
	}{c.Config.Topic, cut(n.headline, headlineMax), msg, priority, []string{ntfyTags[n.tone], n.typ}}, header)
}
