package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/notify"
)

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

func (Channels) template() string { return "channels.html" }

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

// KindName is the row's kind as people call it.
func (r ChannelRow) KindName() string { return ChannelKindName(r.Kind) }

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

func channelPath(ws, id string) string { return "/w/" + ws + "/channels/" + id }

// channelID is the path's channel id; anything that is not one is not
// found, before it reaches the database.
func (w *Server) channelID(q *request) (string, error) { return w.pathID(q, ids.Channel) }

// channelTarget is where a channel sends, as the pages may show it:
// never a secret, and of a URL only its scheme, host and path (a query
// may carry a token).
func channelTarget(c notify.Channel) string {
	switch c.Kind {
	case notify.Webhook:
		return safeURL(c.Config.URL)
	case notify.Ntfy:
		server := c.Config.URL
		if server == "" {
			server = "https://ntfy.sh"
		}
		return strings.TrimRight(safeURL(server), "/") + "/" + c.Config.Topic
	case notify.Email:
		return strings.Join(c.Config.To, ", ")
	case notify.Telegram:
		return "chat " + c.Config.ChatID
	case notify.PagerDuty:
		return "Events API v2 integration (its key is kept secret)"
	case notify.Slack, notify.Discord, notify.MSTeams:
		return "incoming webhook (its URL is kept secret)"
	}
	return ""
}

func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

func (w *Server) channels(q *request) error {
	cursor := q.r.URL.Query().Get("cursor")
	var fe FormErrors
	bad := func() {
		fe.Summary = "This link to a page of the list does not work; here is the first page."
		cursor = ""
	}
	if !clean.Valid(cursor) {
		bad()
	}
	list, err := w.app.ListChannels(q.ctx(), q.actor, app.PageRequest{Cursor: cursor, Limit: listPageSize})
	if errs.KindOf(err) == errs.KindInvalid && cursor != "" {
		bad()
		list, err = w.app.ListChannels(q.ctx(), q.actor, app.PageRequest{Limit: listPageSize})
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if fe.Any() {
		status = http.StatusUnprocessableEntity
	}
	return w.servePage(q, NavChannels, status, func(s Shell) (view, error) {
		v := Channels{Shell: s, Total: list.Total, Errors: fe}
		chIDs := make([]string, len(list.Items))
		for i, c := range list.Items {
			chIDs[i] = c.ID
		}
		last, err := w.app.LastDeliveries(q.ctx(), q.actor, chIDs)
		if err != nil {
			return nil, err
		}
		for _, c := range list.Items {
			row := ChannelRow{ID: c.ID, Name: c.Name, Kind: string(c.Kind), Target: channelTarget(c.Channel), Enabled: c.Enabled,
				DisabledReason: c.DisabledReason}
			if d, ok := last[c.ID]; ok {
				dv := deliveryView(d)
				row.Last = &dv
			}
			v.Rows = append(v.Rows, row)
		}
		if list.NextCursor != "" {
			v.NextPage = nextPageURL("/w/"+q.actor.WorkspaceID+"/channels", list.NextCursor, nil)
		}
		return v, nil
	})
}
