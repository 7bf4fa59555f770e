package console

// The channel form: GET /w/{ws}/channels/new (without ?kind= a choice of
// kinds, with it the form), POSTed to /w/{ws}/channels; a channel's edit
// form is on its page (channel.go).
//
// The form's field names: kind (hidden), name, enabled, events (one per
// ticked event type), subjects (ids, one a line), url (webhook, ntfy),
// topic (ntfy), chat-id (telegram), to (email: addresses, one a line),
// and the write-only secrets hook-url (slack, discord, msteams),
// routing-key (pagerduty), bot-token (telegram), access-token (ntfy).
// Secrets are never written back into the form, nor shown anywhere but
// a webhook's signing secret on the channel_secret.html page, once.

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/tocsin/tocsin/internal/account"
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

// ChannelForm is the channel form: a new channel's, or the edit form on
// a channel's page.
type ChannelForm struct {
	// Shell: set Shell.Active to NavChannels.
	Shell Shell
	// Mode is FormNew or FormEdit; ID the channel's id when editing.
	Mode FormMode
	ID   string
	// Values re-fill the form; Values.Kind "" offers the choice of kinds.
	Values ChannelValues
	// EventTypes are the event types a channel may choose.
	EventTypes []string
	// Errors holds the form's messages by field name.
	Errors FormErrors
}

func (ChannelForm) template() string { return "channel_form.html" }

// ChannelValues are what the channel form shows: typed or stored, never
// a secret.
type ChannelValues struct {
	Kind    string
	Name    string
	Enabled bool
	// URL, Topic, ChatID: the kind's settings; To and Subjects one a line.
	URL, Topic, ChatID, To, Subjects string
	// Events are the ticked event types; none: every type.
	Events []string
	// SecretsSet names the stored secrets (an edit): hookUrl,
	// routingKey, botToken, accessToken, signingSecret.
	SecretsSet []string
	// Retype says a secret was typed into a form that came back with
	// errors: it is not sent back, so it must be typed again.
	Retype bool
}

// Has says whether the kind's form has field name.
func (v ChannelValues) Has(name string) bool { return slices.Contains(kindFields[v.Kind], name) }

// Hears says whether event type e is ticked.
func (v ChannelValues) Hears(e string) bool { return slices.Contains(v.Events, e) }

// Stored says whether secret name (the API's: "hookUrl"…) is stored.
func (v ChannelValues) Stored(name string) bool { return slices.Contains(v.SecretsSet, name) }

// Edit reports whether the form edits a stored channel.
func (f ChannelForm) Edit() bool { return f.Mode == FormEdit }

// KindName is the form's kind as people call it.
func (f ChannelForm) KindName() string { return ChannelKindName(f.Values.Kind) }

// Kinds are the kinds to choose from.
func (f ChannelForm) Kinds() []ChannelKind { return ChannelKinds }

// Action is where the form posts.
func (f ChannelForm) Action() string {
	if f.Edit() {
		return "/w/" + f.Shell.WorkspaceID + "/channels/" + f.ID + "/edit"
	}
	return "/w/" + f.Shell.WorkspaceID + "/channels"
}

// URLHint is a URL field's hint: about, and that its query is kept
// secret (a stored one is never shown, and kept while the rest of the URL
// stays).
func (f ChannelForm) URLHint(about string) string {
	about += " A query such as ?token=… is kept secret: never shown again."
	if f.Values.Retype && f.Errors.Any() {
		about = "Type the query again if you typed one: secrets are never sent back to the browser. " + about
	}
	if f.Edit() && f.Values.Stored("urlQuery") {
		return "A query is stored (never shown): it is kept while the URL stays as it is; type the URL with a new query to replace it, " +
			"or end the URL with a bare ? to remove it. " + about
	}
	return about
}

// SecretHint is a secret field's hint: about, and on an edit whether one
// is stored and that an empty field keeps it.
func (f ChannelForm) SecretHint(name, about string) string {
	if f.Values.Retype && f.Errors.Any() {
		about = "Type it again if you typed it: secrets are never sent back to the browser. " + about
	}
	if f.Edit() && f.Values.Stored(name) {
		return "One is stored (never shown): leave this empty to keep it, or type a new one to replace it. " + about
	}
	return about
}

// renderChannelForm answers with the new channel's form.
func (w *Server) renderChannelForm(q *request, status int, v ChannelForm) error {
	v.EventTypes = notify.ChoosableEvents()
	return w.servePage(q, NavChannels, status, func(s Shell) (view, error) {
		v.Shell = s
		return v, nil
	})
}

// knownKind says whether s is a kind of channel.
func knownKind(s string) bool { return slices.Contains(notify.Kinds, notify.Kind(s)) }

// chooseKind answers with the choice of kinds, saying the one asked for
// is none.
func (w *Server) chooseKind(q *request) error {
	return w.renderChannelForm(q, http.StatusUnprocessableEntity, ChannelForm{Mode: FormNew,
		Errors: FormErrors{Summary: "That is not a kind of channel: choose one below."}})
}

func (w *Server) newChannel(q *request) error {
	if err := w.may(q, account.ScopeNotificationsWrite); err != nil {
		return err
	}
	kind := q.r.URL.Query().Get("kind")
	if kind != "" && !knownKind(kind) {
		return w.chooseKind(q)
	}
	return w.renderChannelForm(q, http.StatusOK, ChannelForm{Mode: FormNew, Values: ChannelValues{Kind: kind, Enabled: true}})
}

func (w *Server) createChannel(q *request) error {
	if err := w.may(q, account.ScopeNotificationsWrite); err != nil {
		return err
	}
	if err := q.parse(); err != nil {
		return err
	}
	if !knownKind(q.r.PostForm.Get("kind")) {
		return w.chooseKind(q)
	}
	cf := readChannelForm(q.r.PostForm, "", false)
	v := ChannelForm{Mode: FormNew, Values: cf.values}
	if fe := cf.problems(); fe.Any() {
		v.Errors = fe
		return w.renderChannelForm(q, http.StatusUnprocessableEntity, v)
	}
	c, secret, err := w.app.CreateChannel(q.ctx(), q.actor, cf.draft)
	if err != nil {
		if fe, status, ok := channelFormFailed(cf, err); ok {
			v.Errors = fe
			return w.renderChannelForm(q, status, v)
		}
		return err
	}
	if secret == "" {
		return q.redirect(channelPath(q.actor.WorkspaceID, c.ID), "channel-created")
	}
	return w.servePage(q, NavChannels, http.StatusCreated, func(s Shell) (view, error) {
		return ChannelSecret{Shell: s, ID: c.ID, Name: c.Name, Secret: secret}, nil
	})
}

// channelFormFailed is the form's messages for the app's objections and
// the status to show them with, or false for an error that is not the
// person's to fix.
func channelFormFailed(cf *channelForm, err error) (FormErrors, int, bool) {
	var e *errs.Error
	if errs.KindOf(err) == errs.KindFeatureUnavailable && errors.As(err, &e) { // e-mail without an SMTP server
		return FormErrors{Summary: e.Message}, http.StatusForbidden, true
	}
	if _, ok := formErrors(err, nil); !ok || statusOf(err) == http.StatusForbidden || statusOf(err) == http.StatusNotFound {
		return FormErrors{}, 0, false
	}
	return cf.errors(err), statusOf(err), true
}

// channelValues are the edit form's values of a stored channel.
func channelValues(c app.ChannelView) ChannelValues {
	return ChannelValues{Kind: string(c.Kind), Name: c.Name, Enabled: c.Enabled, URL: c.Config.URL, Topic: c.Config.Topic,
		ChatID: c.Config.ChatID, To: strings.Join(c.Config.To, "\n"), Subjects: strings.Join(c.Subjects, "\n"),
		Events: slices.Clone(c.Events), SecretsSet: slices.Clone(c.SecretsSet)}
}
