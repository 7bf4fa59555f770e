package console

import (
	"net/url"
	"slices"
	"strings"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/notify"
)

// The channel form (ChannelForm) read into what the API's channel
// body becomes: an app.ChannelDraft. Only the kind's own fields are
// read. Text that is not valid UTF-8 without NUL is refused at its field
// where it enters, and the draft is still checked, so one answer lists
// every mistake. Secrets are read, never shown again: on an edit an empty
// secret field keeps the stored secrets.

// channelLabels name the form's fields in messages.
var channelLabels = map[string]string{"name": "Name", "kind": "Kind", "enabled": "Enabled", "events": "Events",
	"subjects": "Monitors and heartbeats", "url": "URL", "topic": "Topic", "chat-id": "Chat", "to": "Recipients",
	"hook-url": "Incoming webhook URL", "routing-key": "Integration key", "bot-token": "Bot token", "access-token": "Access token"}

// channelPointers map the API's pointers (their first two segments) to
// the form's fields.
var channelPointers = map[string]string{"/name": "name", "/kind": "kind", "/enabled": "enabled", "/events": "events",
	"/subjects": "subjects", "/config/url": "url", "/config/topic": "topic", "/config/chatId": "chat-id", "/config/to": "to",
	"/secrets/hookUrl": "hook-url", "/secrets/routingKey": "routing-key", "/secrets/botToken": "bot-token",
	"/secrets/accessToken": "access-token"}

// channelField is the form field an API pointer names; "" for none.
func channelField(ptr string) string {
	for p := ptr; p != ""; {
		if f, ok := channelPointers[p]; ok {
			return f
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return ""
}

type channelForm struct {
	values ChannelValues
	draft  app.ChannelDraft
	unread
}

// text is field name's text, or "" and the field's error when it is not
// valid UTF-8 without NUL.
func (cf *channelForm) text(f url.Values, name string) string {
	return cf.unread.text(f, name, unreadText)
}

// lines splits a list typed one a line (commas too) into its entries.
func lines(s string) []string {
	var out []string
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' }) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// readChannelForm reads a posted channel form; kind, when not empty, is
// the stored channel's (an edit cannot change it).
func readChannelForm(f url.Values, kind notify.Kind, edit bool) *channelForm {
	cf := &channelForm{}
	if kind == "" {
		kind = notify.Kind(cf.text(f, "kind"))
	}
	v := &cf.values
	v.Kind, v.Name, v.Enabled = string(kind), cf.text(f, "name"), f.Get("enabled") != ""
	v.Events = cf.list(f, "events", unreadText)
	v.Subjects = cf.text(f, "subjects")
	d := &cf.draft
	d.Name, d.Kind, d.Enabled, d.Events, d.Subjects = v.Name, kind, v.Enabled, v.Events, lines(v.Subjects)
	has := func(name string) bool { return slices.Contains(ChannelKindFields(string(kind)), name) }
	queryTyped := false
	if has("url") {
		d.Config.URL = strings.TrimSpace(cf.text(f, "url"))
		// The query is a secret: a form shown again keeps the rest.
		v.URL, _, queryTyped = notify.SplitURL(d.Config.URL)
	}
	if has("topic") {
		v.Topic = cf.text(f, "topic")
		d.Config.Topic = strings.TrimSpace(v.Topic)
	}
	if has("chat-id") {
		v.ChatID = cf.text(f, "chat-id")
		d.Config.ChatID = strings.TrimSpace(v.ChatID)
	}
	if has("to") {
		v.To = cf.text(f, "to")
		d.Config.To = lines(v.To)
	}
	s := &notify.Secrets{}
	typed := false
	secret := func(name string) string {
		if !has(name) {
			return ""
		}
		x := strings.TrimSpace(cf.text(f, name))
		typed = typed || x != ""
		return x
	}
	s.HookURL, s.RoutingKey, s.BotToken, s.AccessToken = secret("hook-url"), secret("routing-key"), secret("bot-token"), secret("access-token")
	if typed || !edit {
		d.Secrets = s
	}
	v.Retype = typed || queryTyped
	return cf
}

// problems are the form's unreadable fields with the draft's own
// problems, when a field could not be read: the app is then not called.
func (cf *channelForm) problems() FormErrors {
	if len(cf.bad) == 0 {
		return FormErrors{}
	}
	return cf.errors(&errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields", Fields: app.ValidateChannel(cf.draft)})
}

// errors are the form's messages for an app error, with the fields that
// could not be read.
func (cf *channelForm) errors(err error) FormErrors {
	return appFieldErrors(err, cf.bad, func(ptr string) string {
		if name := channelField(ptr); name != "kind" || cf.values.Kind == "" {
			return name
		}
		return ""
	}, func(name, msg string) string { return channelLabels[name] + " " + msg + "." })
}
