package console

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/notify"
)

// The notification channel pages: the list, the new channel's form, a
// channel's page with its edit form and deliveries, and the forms on it
// that delete, test and rotate, each over the app function the API's
// route beside it calls, with the same scope.

// deliveriesPageSize is how many deliveries a channel's page shows at once.
const deliveriesPageSize = 20

func channelPath(ws, id string) string { return "/w/" + ws + "/channels/" + id }

// channelID is the path's channel id; anything that is not one is not
// found, before it reaches the database.
func (w *Server) channelID(q *request) (string, bool) { return w.pathID(q, ids.Channel) }

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

func (w *Server) channels(q *request) {
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
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	status := http.StatusOK
	if fe.Any() {
		status = http.StatusUnprocessableEntity
	}
	w.render(q, NavChannels, status, func(s Shell) ([]byte, error) {
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
		return RenderChannels(v)
	})
}

// renderChannelForm answers with the new channel's form.
func (w *Server) renderChannelForm(q *request, status int, v ChannelForm) {
	v.EventTypes = notify.ChoosableEvents()
	w.render(q, NavChannels, status, func(s Shell) ([]byte, error) {
		v.Shell = s
		return RenderChannelForm(v)
	})
}

// knownKind says whether s is a kind of channel.
func knownKind(s string) bool { return slices.Contains(notify.Kinds, notify.Kind(s)) }

// chooseKind answers with the choice of kinds, saying the one asked for
// is none.
func (w *Server) chooseKind(q *request) {
	w.renderChannelForm(q, http.StatusUnprocessableEntity, ChannelForm{Mode: FormNew,
		Errors: FormErrors{Summary: "That is not a kind of channel: choose one below."}})
}

func (w *Server) newChannel(q *request) {
	if !w.may(q, account.ScopeNotificationsWrite) {
		return
	}
	kind := q.r.URL.Query().Get("kind")
	if kind != "" && !knownKind(kind) {
		w.chooseKind(q)
		return
	}
	w.renderChannelForm(q, http.StatusOK, ChannelForm{Mode: FormNew, Values: ChannelValues{Kind: kind, Enabled: true}})
}

func (w *Server) createChannel(q *request) {
	if !w.may(q, account.ScopeNotificationsWrite) || !q.parse() {
		return
	}
	if !knownKind(q.r.PostForm.Get("kind")) {
		w.chooseKind(q)
		return
	}
	cf := readChannelForm(q.r.PostForm, "", false)
	v := ChannelForm{Mode: FormNew, Values: cf.values}
	if fe := cf.problems(); fe.Any() {
		v.Errors = fe
		w.renderChannelForm(q, http.StatusUnprocessableEntity, v)
		return
	}
	c, secret, err := w.app.CreateChannel(q.ctx(), q.actor, cf.draft)
	if err != nil {
		if fe, status, ok := w.channelFormFailed(q, cf, err); ok {
			v.Errors = fe
			w.renderChannelForm(q, status, v)
		}
		return
	}
	if secret == "" {
		q.redirect(channelPath(q.actor.WorkspaceID, c.ID), "channel-created")
		return
	}
	w.render(q, NavChannels, http.StatusCreated, func(s Shell) ([]byte, error) {
		return RenderChannelSecret(ChannelSecret{Shell: s, ID: c.ID, Name: c.Name, Secret: secret})
	})
}

// channelFormFailed is the form's messages for the app's objections, or
// false after the error page for an error that is not the person's to
// fix.
func (w *Server) channelFormFailed(q *request, cf *channelForm, err error) (FormErrors, int, bool) {
	var e *errs.Error
	if errs.KindOf(err) == errs.KindFeatureUnavailable && errors.As(err, &e) { // e-mail without an SMTP server
		return FormErrors{Summary: e.Message}, http.StatusForbidden, true
	}
	if _, ok := formErrors(err, nil); !ok || statusOf(err) == http.StatusForbidden || statusOf(err) == http.StatusNotFound {
		w.fail(q.w, q.r, &q.ws, err)
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

func (w *Server) channelPage(q *request) {
	id, ok := w.channelID(q)
	if !ok {
		return
	}
	w.renderChannel(q, http.StatusOK, id, nil)
}

// renderChannel answers with channel id's page; form, when not nil, is
// the edit form as typed, with its errors.
func (w *Server) renderChannel(q *request, status int, id string, form *ChannelForm) {
	c, err := w.app.GetChannel(q.ctx(), q.actor, id)
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
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
		w.fail(q.w, q.r, &q.ws, err)
		return
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
	w.render(q, NavChannels, status, func(s Shell) ([]byte, error) {
		v.Shell = s
		return RenderChannel(v)
	})
}

func (w *Server) updateChannel(q *request) {
	id, ok := w.channelID(q)
	if !ok || !w.may(q, account.ScopeNotificationsWrite) || !q.parse() {
		return
	}
	cur, err := w.app.GetChannel(q.ctx(), q.actor, id)
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	cf := readChannelForm(q.r.PostForm, cur.Kind, true)
	v := ChannelForm{Values: cf.values}
	if fe := cf.problems(); fe.Any() {
		v.Errors = fe
		w.renderChannel(q, http.StatusUnprocessableEntity, id, &v)
		return
	}
	_, err = w.app.UpdateChannel(q.ctx(), q.actor, id, func(cur app.ChannelView) (app.ChannelDraft, error) {
		d := cf.draft
		d.Kind = cur.Kind
		return d, nil
	})
	if err != nil {
		if fe, status, ok := w.channelFormFailed(q, cf, err); ok {
			v.Errors = fe
			w.renderChannel(q, status, id, &v)
		}
		return
	}
	q.redirect(channelPath(q.actor.WorkspaceID, id), "channel-saved")
}

func (w *Server) deleteChannel(q *request) {
	id, ok := w.channelID(q)
	if !ok {
		return
	}
	if err := w.app.DeleteChannel(q.ctx(), q.actor, id); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect("/w/"+q.actor.WorkspaceID+"/channels", "channel-deleted")
}

func (w *Server) testChannel(q *request) {
	id, ok := w.channelID(q)
	if !ok {
		return
	}
	if _, err := w.app.TestChannel(q.ctx(), q.actor, id); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect(channelPath(q.actor.WorkspaceID, id)+"#deliveries-h", "channel-tested")
}

func (w *Server) rotateChannel(q *request) {
	id, ok := w.channelID(q)
	if !ok {
		return
	}
	c, secret, err := w.app.RotateChannelSecret(q.ctx(), q.actor, id)
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	w.render(q, NavChannels, http.StatusOK, func(s Shell) ([]byte, error) {
		return RenderChannelSecret(ChannelSecret{Shell: s, ID: c.ID, Name: c.Name, Secret: secret, Rotated: true,
			OldUntil: c.UpdatedAt.Add(notify.RotationGrace)})
	})
}

func (w *Server) redeliver(q *request) {
	id, ok := w.pathID(q, ids.Delivery)
	if !ok {
		return
	}
	d, err := w.app.Redeliver(q.ctx(), q.actor, id)
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect(channelPath(q.actor.WorkspaceID, d.ChannelID)+"#deliveries-h", "redelivered")
}
