// Package notify holds notification channels: where events go, which
// events and subjects each hears, and the secrets each needs (spec §6;
// DESIGN §6). It does no I/O.
package notify

import (
	"crypto/rand"
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/incident"
)

// Kind is how a channel delivers.
type Kind string

const (
	Webhook   Kind = "webhook"
	Email     Kind = "email"
	Slack     Kind = "slack"
	Discord   Kind = "discord"
	MSTeams   Kind = "msteams"
	PagerDuty Kind = "pagerduty"
	Telegram  Kind = "telegram"
	Ntfy      Kind = "ntfy"
)

// Kinds are every kind.
var Kinds = []Kind{Webhook, Email, Slack, Discord, MSTeams, PagerDuty, Telegram, Ntfy}

// Config is a channel's settings that are not secret; which fields a kind
// uses is in Validate.
type Config struct {
	URL    string   `json:"url,omitempty"`    // webhook: where events are POSTed; ntfy: the server (default https://ntfy.sh)
	Topic  string   `json:"topic,omitempty"`  // ntfy
	ChatID string   `json:"chatId,omitempty"` // telegram
	To     []string `json:"to,omitempty"`     // email: recipients
}

// Secrets are a channel's secrets: sealed at rest, never returned after
// they are set (a webhook's signing secret is shown once, when created or
// rotated).
type Secrets struct {
	// Webhook: the signing secrets, the current one first; during a
	// rotation the previous one signs too until it expires.
	Signing []SigningSecret `json:"signing,omitempty"`
	// Slack, Discord, Teams: the incoming-webhook URL (it carries a token).
	HookURL string `json:"hookUrl,omitempty"`
	// PagerDuty: the Events API v2 integration (routing) key.
	RoutingKey string `json:"routingKey,omitempty"`
	// Telegram: the bot token.
	BotToken string `json:"botToken,omitempty"`
	// Ntfy: an access token for a protected topic (optional).
	AccessToken string `json:"accessToken,omitempty"`
	// Webhook, ntfy: the query of Config.URL (it often carries a token),
	// without its "?"; the URL is shown without it.
	URLQuery string `json:"urlQuery,omitempty"`
}

// SigningSecret is one webhook signing secret.
type SigningSecret struct {
	Secret    string    `json:"secret"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"` // zero for the current one
}

// RotationGrace is how long a rotated-out signing secret still signs.
const RotationGrace = 24 * time.Hour

// NewSigningSecret makes a webhook signing secret: whsec_ and 32 random
// bytes, base32.
func NewSigningSecret() string { return "whsec_" + rand.Text() + rand.Text() }

// Rotate makes a new current signing secret; the old one signs on until
// now+RotationGrace, and older ones are dropped.
func (s *Secrets) Rotate(now time.Time) string {
	fresh := SigningSecret{Secret: NewSigningSecret()}
	out := []SigningSecret{fresh}
	if len(s.Signing) > 0 {
		prev := s.Signing[0]
		prev.ExpiresAt = now.Add(RotationGrace)
		out = append(out, prev)
	}
	s.Signing = out
	return fresh.Secret
}

// Active are the signing secrets that sign at now, the current first.
func (s *Secrets) Active(now time.Time) []string {
	var out []string
	for _, k := range s.Signing {
		if k.ExpiresAt.IsZero() || now.Before(k.ExpiresAt) {
			out = append(out, k.Secret)
		}
	}
	return out
}

// Set names the secrets that are set, for responses ("signingSecret",
// "hookUrl", …), never their values.
func (s *Secrets) Set() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"signingSecret", len(s.Signing) > 0}, {"hookUrl", s.HookURL != ""}, {"routingKey", s.RoutingKey != ""},
		{"botToken", s.BotToken != ""}, {"accessToken", s.AccessToken != ""}, {"urlQuery", s.URLQuery != ""}} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// Channel is a place events go.
type Channel struct {
	ID          string
	WorkspaceID string
	Name        string
	Kind        Kind
	Enabled     bool
	Config      Config
	// Events are the event types it hears; empty: every type.
	Events []string
	// Subjects are the monitors and heartbeats it hears; empty: all.
	// Incident events are heard for the incidents of these subjects, or
	// that list one of them as affected.
	Subjects []string
	// DisabledReason says why delivery stopped by itself (a receiver that
	// answered 410 Gone); empty otherwise.
	DisabledReason string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Hears reports whether the channel takes an event of this type about
// these subjects (a state change's subject, an incident's subject and
// affected monitors; none for a test event, which goes to one channel by
// name).
func (c *Channel) Hears(eventType string, subjects []string) bool {
	if !c.Enabled || (len(c.Events) > 0 && !slices.Contains(c.Events, eventType)) {
		return false
	}
	if len(c.Subjects) == 0 {
		return true
	}
	for _, s := range subjects {
		if slices.Contains(c.Subjects, s) {
			return true
		}
	}
	return false
}

// Limits on channels. The API's schema takes its numbers from here, so
// the document and the rule are one.
const (
	MaxName           = 200
	MaxRecipients     = 20
	MaxSubjects       = 1000
	MaxEvents         = 10 // entries of events (more than there are types: one may repeat)
	MaxURLLen         = 2048
	MaxTopicLen       = 64
	MaxChatIDLen      = 64
	RoutingKeyLen     = 32 // a PagerDuty Events API v2 integration key
	MaxRoutingKeyLen  = 64 // what the API takes before judging it: RoutingKeyLen or an error
	MaxBotTokenLen    = 128
	MaxAccessTokenLen = 256
)

// Validate checks a channel's fields and the secrets its kind needs
// (secrets nil: those stored are kept, as an update that sets none).
func Validate(c *Channel, s *Secrets) []errs.FieldError {
	var problems []errs.FieldError
	add := func(ptr, format string, args ...any) {
		problems = append(problems, errs.FieldError{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	switch n := utf8.RuneCountInString(c.Name); {
	case strings.TrimSpace(c.Name) == "":
		add("/name", "must not be blank")
	case n > MaxName:
		add("/name", "must be at most %d characters", MaxName)
	}
	if !slices.Contains(Kinds, c.Kind) {
		add("/kind", "must be one of webhook, email, slack, discord, msteams, pagerduty, telegram, ntfy")
		return problems
	}
	if len(c.Events) > MaxEvents {
		add("/events", "must list at most %d", MaxEvents)
	}
	for i, e := range c.Events {
		if !slices.Contains(incident.EventTypes, e) || e == incident.Test {
			add(fmt.Sprintf("/events/%d", i), "must be one of %s", strings.Join(ChoosableEvents(), ", "))
		}
	}
	if len(c.Subjects) > MaxSubjects {
		add("/subjects", "must list at most %d", MaxSubjects)
	}
	for i, id := range c.Subjects {
		if !strings.HasPrefix(id, "mon_") && !strings.HasPrefix(id, "hb_") {
			add(fmt.Sprintf("/subjects/%d", i), "must be a monitor (mon_…) or heartbeat (hb_…) id")
		}
	}
	cfg := c.Config
	unused := func(ptr string, set bool) {
		if set {
			add(ptr, "is not used by %s channels", c.Kind)
		}
	}
	switch c.Kind {
	case Webhook:
		if err := checkURL(cfg.URL, false); err != "" {
			add("/config/url", "%s", err)
		}
	case Ntfy:
		if cfg.URL != "" {
			if err := checkURL(cfg.URL, false); err != "" {
				add("/config/url", "%s", err)
			}
		}
		if !validTopic(cfg.Topic) {
			add("/config/topic", "must be 1–%d letters, digits, - or _", MaxTopicLen)
		}
	default:
		unused("/config/url", cfg.URL != "")
	}
	if c.Kind != Ntfy {
		unused("/config/topic", cfg.Topic != "")
	}
	if c.Kind == Telegram {
		if cfg.ChatID == "" || len(cfg.ChatID) > MaxChatIDLen {
			add("/config/chatId", "must be the chat's id or @channel name, up to %d characters", MaxChatIDLen)
		}
	} else {
		unused("/config/chatId", cfg.ChatID != "")
	}
	if c.Kind == Email {
		if len(cfg.To) == 0 || len(cfg.To) > MaxRecipients {
			add("/config/to", "must list 1 to %d recipients", MaxRecipients)
		}
		for i, to := range cfg.To {
			if a, err := mail.ParseAddress(to); err != nil || a.Name != "" {
				add(fmt.Sprintf("/config/to/%d", i), "must be an e-mail address")
			}
		}
	} else {
		unused("/config/to", len(cfg.To) > 0)
	}
	if s == nil {
		return problems
	}
	switch c.Kind {
	case Slack, Discord, MSTeams:
		if err := checkURL(s.HookURL, true); err != "" {
			add("/secrets/hookUrl", "%s", err)
		}
	case PagerDuty:
		if len(s.RoutingKey) != RoutingKeyLen {
			add("/secrets/routingKey", "must be the %d-character integration key of a PagerDuty Events API v2 integration", RoutingKeyLen)
		}
	case Telegram:
		if !strings.Contains(s.BotToken, ":") || len(s.BotToken) > MaxBotTokenLen {
			add("/secrets/botToken", "must be a bot token as BotFather gives it (<id>:<secret>)")
		}
	case Ntfy:
		if len(s.AccessToken) > MaxAccessTokenLen {
			add("/secrets/accessToken", "must be at most %d characters", MaxAccessTokenLen)
		}
	}
	return problems
}

// Redact hides in msg (an error that quotes a receiver's answer, which
// may echo what it was sent) every secret of s: the URL's query and each
// of its values, a hook URL and its path, and the tokens.
func (s *Secrets) Redact(msg string) string {
	if s == nil {
		return msg
	}
	secrets := []string{s.URLQuery, s.HookURL, s.RoutingKey, s.BotToken, s.AccessToken}
	if vals, err := url.ParseQuery(s.URLQuery); err == nil {
		for _, vs := range vals {
			secrets = append(secrets, vs...)
		}
	}
	for _, part := range strings.Split(s.URLQuery, "&") {
		_, v, _ := strings.Cut(part, "=")
		secrets = append(secrets, v) // as sent, escaped
	}
	if u, err := url.Parse(s.HookURL); err == nil && s.HookURL != "" {
		secrets = append(secrets, u.Path, u.EscapedPath())
	}
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) }) // the longest first
	for _, x := range secrets {
		if len(x) >= 4 { // shorter is no secret, and would hide ordinary words
			msg = strings.ReplaceAll(msg, x, "[redacted]")
		}
	}
	return msg
}

// SplitURL parts a URL as written into what may be shown, everything but
// its query, and the query without its "?", which is sealed with the
// secrets: a receiver's token often rides in it. written says the URL had
// a "?" at all (an empty query, "https://h/hook?", clears a stored one).
func SplitURL(raw string) (shown, query string, written bool) {
	end := len(raw)
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		end = i
	}
	q := strings.IndexByte(raw[:end], '?')
	if q < 0 {
		return raw, "", false
	}
	return raw[:q] + raw[end:], raw[q+1 : end], true
}

// JoinURL is the URL a delivery goes to: shown with its sealed query.
func JoinURL(shown, query string) string {
	if query == "" {
		return shown
	}
	end := len(shown)
	if i := strings.IndexByte(shown, '#'); i >= 0 {
		end = i
	}
	return shown[:end] + "?" + query + shown[end:]
}

// SealQuery moves the query of c's URL into s (a channel stored before
// queries were sealed, or a URL as written); it reports whether it moved
// one.
func SealQuery(c *Channel, s *Secrets) bool {
	shown, query, written := SplitURL(c.Config.URL)
	if !written {
		return false
	}
	c.Config.URL, s.URLQuery = shown, query
	return true
}

func checkURL(raw string, httpsOnly bool) string {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return "is required"
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return "must be an absolute http or https URL"
	case httpsOnly && u.Scheme != "https":
		return "must be an https URL"
	case u.User != nil:
		return "must not carry credentials"
	case len(raw) > MaxURLLen:
		return fmt.Sprintf("must be at most %d characters", MaxURLLen)
	}
	return ""
}

func validTopic(t string) bool {
	if t == "" || len(t) > MaxTopicLen {
		return false
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ChoosableEvents are the event types a channel may list: every type but
// test, which goes to one channel when asked, whatever it lists.
func ChoosableEvents() []string {
	var out []string
	for _, e := range incident.EventTypes {
		if e != incident.Test {
			out = append(out, e)
		}
	}
	return out
}
