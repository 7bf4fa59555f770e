package console

import (
	"net/http"
	"slices"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/notify"
)

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

func (ChannelDetail) template() string { return "channel.html" }

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

func (ChannelSecret) template() string { return "channel_secret.html" }

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

// withDefaults gives the edit form the page's shell.
func (v ChannelDetail) withDefaults() view {
	v.Form.Shell = v.Shell
	return v
}

// deliveriesPageSize is how many deliveries a channel's page shows at once.
const deliveriesPageSize = 20

func deliveryView(d *notify.Delivery) DeliveryView {
	v := DeliveryView{ID: d.ID, EventType: d.EventType, Status: string(d.Status), CreatedAt: d.CreatedAt}
	if d.Status == notify.Pending {
		v.NextAttemptAt = d.NextAttemptAt
	}
	for _, a := range d.Log {
		v.Attempts = append(v.Attempts, AttemptView{N: a.N, At: a.StartedAt, Duration: a.Duration, StatusCode: a.StatusCode, Error: a.Error})
	}
	return v
}

func (w *Server) channelPage(q *request) error {
	id, err := w.channelID(q)
	if err != nil {
		return err
	}
	return w.renderChannel(q, http.StatusOK, id, nil)
}

// renderChannel answers with channel id's page; form, when not nil, is
// the edit form as typed, with its errors.
func (w *Server) renderChannel(q *request, status int, id string, form *ChannelForm) error {
	c, err := w.app.GetChannel(q.ctx(), q.actor, id)
	if err != nil {
		return err
	}
	note := ""
	cursor := q.r.URL.Query().Get("cursor")
	if q.r.Method != http.MethodGet {
		cursor = ""
	}
	if !clean.Valid(cursor) {
		note, cursor = "This link to a page of deliveries does not work; here are the newest.", ""
	}
	list, err := w.app.ListDeliveries(q.ctx(), q.actor, id, "", app.PageRequest{Cursor: cursor, Limit: deliveriesPageSize})
	if errs.KindOf(err) == errs.KindInvalid && cursor != "" {
		note = "This link to a page of deliveries does not work; here are the newest."
		list, err = w.app.ListDeliveries(q.ctx(), q.actor, id, "", app.PageRequest{Limit: deliveriesPageSize})
	}
	if err != nil {
		return err
	}
	if note != "" && status == http.StatusOK {
		status = http.StatusUnprocessableEntity
	}
	v := ChannelDetail{ID: c.ID, Name: c.Name, Kind: string(c.Kind), Target: channelTarget(c.Channel), Enabled: c.Enabled,
		DisabledReason: c.DisabledReason, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, DeliveriesNote: note}
	if form != nil {
		v.Form = *form
		v.Form.Values.SecretsSet = slices.Clone(c.SecretsSet)
	} else {
		v.Form = ChannelForm{Values: channelValues(c)}
	}
	v.Form.Mode, v.Form.ID, v.Form.EventTypes = FormEdit, c.ID, notify.ChoosableEvents()
	for _, d := range list.Items {
		v.Deliveries = append(v.Deliveries, deliveryView(d))
	}
	if list.NextCursor != "" {
		v.NextPage = nextPageURL(channelPath(q.actor.WorkspaceID, id), list.NextCursor, nil)
	}
	return w.servePage(q, NavChannels, status, func(s Shell) (view, error) {
		v.Shell = s
		return v, nil
	})
}

func (w *Server) updateChannel(q *request) error {
	id, err := w.channelID(q)
	if err != nil {
		return err
	}
	if err := w.may(q, account.ScopeNotificationsWrite); err != nil {
		return err
	}
	if err := q.parse(); err != nil {
		return err
	}
	cur, err := w.app.GetChannel(q.ctx(), q.actor, id)
	if err != nil {
		return err
	}
	cf := readChannelForm(q.r.PostForm, cur.Kind, true)
	v := ChannelForm{Values: cf.values}
	if fe := cf.problems(); fe.Any() {
		v.Errors = fe
		return w.renderChannel(q, http.StatusUnprocessableEntity, id, &v)
	}
	_, err = w.app.UpdateChannel(q.ctx(), q.actor, id, func(cur app.ChannelView) (app.ChannelDraft, error) {
		d := cf.draft
		d.Kind = cur.Kind
		return d, nil
	})
	if err != nil {
		if fe, status, ok := channelFormFailed(cf, err); ok {
			v.Errors = fe
			return w.renderChannel(q, status, id, &v)
		}
		return err
	}
	return q.redirect(channelPath(q.actor.WorkspaceID, id), "channel-saved")
}

func (w *Server) deleteChannel(q *request) error {
	return w.deleteListed(q, ids.Channel, w.app.DeleteChannel, "channels", "channel-deleted")
}

func (w *Server) testChannel(q *request) error {
	id, err := w.channelID(q)
	if err != nil {
		return err
	}
	if _, err := w.app.TestChannel(q.ctx(), q.actor, id); err != nil {
		return err
	}
	return q.redirect(channelPath(q.actor.WorkspaceID, id)+"#deliveries-h", "channel-tested")
}

func (w *Server) rotateChannel(q *request) error {
	id, err := w.channelID(q)
	if err != nil {
		return err
	}
	c, secret, err := w.app.RotateChannelSecret(q.ctx(), q.actor, id)
	if err != nil {
		return err
	}
	return w.servePage(q, NavChannels, http.StatusOK, func(s Shell) (view, error) {
		return ChannelSecret{Shell: s, ID: c.ID, Name: c.Name, Secret: secret, Rotated: true,
			OldUntil: c.UpdatedAt.Add(notify.RotationGrace)}, nil
	})
}

func (w *Server) redeliver(q *request) error {
	id, err := w.pathID(q, ids.Delivery)
	if err != nil {
		return err
	}

	d, err := w.app.Redeliver(q.ctx(), q.actor, id)
	if err != nil {
		return err
	}
	return q.redirect(channelPath(q.actor.WorkspaceID, d.ChannelID)+"#deliveries-h", "redelivered")
}
