package console

import (
	"slices"
	"time"

	"github.com/tocsin/tocsin/internal/clean"
)

// The notification channel pages:
//
//	GET /w/{ws}/channels                 RenderChannels (GET cursor)
//	GET /w/{ws}/channels/new             RenderChannelForm: without ?kind= a
//	                                     choice of kinds, with it the form
//	POST /w/{ws}/channels                RenderChannelForm again with the
//	                                     errors, or RenderChannelSecret for a
//	                                     new webhook channel
//	GET /w/{ws}/channels/{id}            RenderChannel (GET cursor); its forms
//	                                     POST …/edit, …/delete, …/test and
//	                                     …/rotate (RenderChannelSecret), and
//	                                     /w/{ws}/deliveries/{dlv}/redeliver
//
// The form's field names: kind (hidden), name, enabled, events (one per
// ticked event type), subjects (ids, one a line), url (webhook, ntfy),
// topic (ntfy), chat-id (telegram), to (email: addresses, one a line),
// and the write-only secrets hook-url (slack, discord, msteams),
// routing-key (pagerduty), bot-token (telegram), access-token (ntfy).
// Secrets are never written back into the form, nor shown anywhere but
// a webhook's signing secret on RenderChannelSecret, once.

// ChannelKind is one kind of channel as the pages offer it.
type ChannelKind struct {
	// Kind is the API's name ("webhook", "msteams"…).
	Kind string
	// Name is how people call it ("Microsoft Teams").
	Name string
	// About says in a sentence what it does.
	About string
}

// ChannelKinds are the kinds of channel, in the order the pages offer them.
var ChannelKinds = []ChannelKind{
	{"webhook", "Webhook", "POSTs each event as signed JSON to a URL of yours."},
	{"email", "E-mail", "Mails each event to up to 20 addresses (the server needs an SMTP server)."},
	{"slack", "Slack", "Posts to a Slack channel through an incoming webhook."},
	{"discord", "Discord", "Posts to a Discord channel through a webhook."},
	{"msteams", "Microsoft Teams", "Posts to a Teams channel through an incoming webhook."},
	{"pagerduty", "PagerDuty", "Triggers and resolves PagerDuty alerts through an Events API v2 integration."},
	{"telegram", "Telegram", "Sends messages to a chat through a Telegram bot."},
	{"ntfy", "ntfy", "Publishes to an ntfy topic, on ntfy.sh or your own server."},
}

// ChannelKindName is how people call a kind; an unknown kind is itself.
func ChannelKindName(kind string) string {
	for _, k := range ChannelKinds {
		if k.Kind == kind {
			return k.Name
		}
	}
	return kind
}

// kindFields are the form fields each kind has beside name, enabled,
// events and subjects.
var kindFields = map[string][]string{
	"webhook":   {"url"},
	"email":     {"to"},
	"slack":     {"hook-url"},
	"discord":   {"hook-url"},
	"msteams":   {"hook-url"},
	"pagerduty": {"routing-key"},
	"telegram":  {"chat-id", "bot-token"},
	"ntfy":      {"url", "topic", "access-token"},
}

// ChannelKindFields are the kind's own form fields; nil for an unknown
// kind.
func ChannelKindFields(kind string) []string { return kindFields[kind] }

// AttemptView is one attempt at a delivery.
type AttemptView struct {
	// N is 1 for the first attempt.
	N int
	// At is when it started; Duration how long it took.
	At       time.Time
	Duration time.Duration
	// StatusCode is the receiver's HTTP status; 0 for none.
	StatusCode int
	// Error is why it failed; "" for a success. Shown shortened.
	Error string
}

// maxErrorShown bounds an attempt's error as the pages show it (the
// stored one is at most 1 KiB).
const maxErrorShown = 300

// ErrorText is the attempt's error, shortened for the log.
func (a AttemptView) ErrorText() string { return clean.Shorten(a.Error, maxErrorShown) }

// DeliveryView is one event on its way to a channel.
type DeliveryView struct {
	// ID is the delivery's id (dlv_…), in …/deliveries/{id}/redeliver.
	ID string
	// EventType is the event's type ("incident.opened", "test"…).
	EventType string
	// Status is the API's: pending, succeeded, failed or held.
	Status string
	// CreatedAt is when it was made.
	CreatedAt time.Time
	// NextAttemptAt is when a pending delivery is tried next; zero: now.
	NextAttemptAt time.Time
	// Attempts are its attempts, oldest first.
	Attempts []AttemptView
}

// StatusText is the status as the pages say it: a success is
// "delivered".
func (d DeliveryView) StatusText() string {
	if d.Status == "succeeded" {
		return "delivered"
	}
	return d.Status
}

// StatusClass is the status badge's class; the text says it too.
func (d DeliveryView) StatusClass() string {
	switch d.Status {
	case "succeeded":
		return "badge s-up"
	case "failed":
		return "badge s-down"
	case "held":
		return "badge s-degraded"
	}
	return "badge s-unknown"
}

// Redeliverable says whether it may be sent again: any but a pending one.
func (d DeliveryView) Redeliverable() bool { return d.Status != "pending" && d.Status != "" }

// Last is its latest attempt, or nil before the first.
func (d DeliveryView) Last() *AttemptView {
	if len(d.Attempts) == 0 {
		return nil
	}
	return &d.Attempts[len(d.Attempts)-1]
}

// ChannelRow is one channel in the list.
type ChannelRow struct {
	// ID is the channel's id (nch_…).
	ID string
	// Name is its name; Kind its kind ("webhook"…).
	Name, Kind string
	// Target is where it sends, as it may be shown (never a secret).
	Target string
	// Enabled says events go to it; DisabledReason why they stopped by
	// themselves.
	Enabled        bool
	DisabledReason string
	// Last is its latest delivery; nil for none yet.
	Last *DeliveryView
}

// Channels is GET /w/{ws}/channels.
type Channels struct {
	// Shell: set Shell.Active to NavChannels; notifications:write in
	// Shell.Role offers a new channel.
	Shell Shell
	// Rows are the channels, oldest first.
	Rows []ChannelRow
	// Total is how many the workspace has.
	Total int
	// NextPage is the next page's URL; "" on the last page.
	NextPage string
	// Errors holds the message of a link to a page that does not work.
	Errors FormErrors
}

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

// ChannelDetail is GET /w/{ws}/channels/{id}.
type ChannelDetail struct {
	// Shell: set Shell.Active to NavChannels; notifications:write in
	// Shell.Role shows the edit form and the buttons.
	Shell                  Shell
	ID, Name, Kind, Target string
	Enabled                bool
	DisabledReason         string
	CreatedAt, UpdatedAt   time.Time
	// Form is the edit form, filled from the channel or as typed.
	Form ChannelForm
	// Deliveries are the channel's deliveries, newest first, one page.
	Deliveries []DeliveryView
	// NextPage is the next page of deliveries; "" on the last.
	NextPage string
	// DeliveriesNote says a link to a page of deliveries did not work.
	DeliveriesNote string
}

// KindName is the channel's kind as people call it.
func (d ChannelDetail) KindName() string { return ChannelKindName(d.Kind) }

// ChannelSecret is a webhook channel's signing secret, shown once: after
// it was created, or after a rotation.
type ChannelSecret struct {
	// Shell: set Shell.Active to NavChannels.
	Shell Shell
	// ID and Name are the channel's.
	ID, Name string
	// Secret is the signing secret (whsec_…).
	Secret string
	// Rotated says it replaces another, which signs too until OldUntil.
	Rotated  bool
	OldUntil time.Time
}

// KindName is the row's kind as people call it.
func (r ChannelRow) KindName() string { return ChannelKindName(r.Kind) }

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
