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
	"github.com/tocsin/tocsin/internal/stamp"
)

// What each kind of channel sends, in the format its service documents.

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
	return Outgoing{Method: "POST", URL: JoinURL(c.Config.URL, s.URLQuery), Body: body, Header: map[string]string{
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
			Timestamp:   stamp.Format(n.at),
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
		Timestamp: stamp.Format(n.at), CustomDetails: map[string]string{}}
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
		server = JoinURL(c.Config.URL, s.URLQuery)
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
