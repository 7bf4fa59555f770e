package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/stamp"
)

// NotificationChannel is a channel as the API shows it: never its
// secrets, only which are set.
type NotificationChannel struct {
	ID             string        `json:"id" example:"nch_01JD5Z8Q3C4M6V9X2B7N1K0PQR" doc:"Stable, sortable identifier."`
	Name           string        `json:"name"`
	Kind           string        `json:"kind" enum:"webhook,email,slack,discord,msteams,pagerduty,telegram,ntfy"`
	Enabled        bool          `json:"enabled" doc:"Whether events go to it."`
	Config         ChannelConfig `json:"config"`
	Events         []string      `json:"events" doc:"Event types it hears; empty: every type."`
	Subjects       []string      `json:"subjects" doc:"Monitors and heartbeats it hears (their state changes, and incidents about or affecting them); empty: all."`
	SecretsSet     []string      `json:"secretsSet" doc:"Which secrets are set (signingSecret, hookUrl, routingKey, botToken, accessToken, urlQuery); their values are never returned."`
	DisabledReason string        `json:"disabledReason" doc:"Why delivery stopped by itself, e.g. the receiver answered 410 Gone; empty otherwise. Enabling the channel again clears it."`
	CreatedAt      stamp.Time    `json:"createdAt"`
	UpdatedAt      stamp.Time    `json:"updatedAt"`
}

// ChannelConfig holds a channel's settings that are not secret.
type ChannelConfig struct {
	URL    string   `json:"url,omitempty" doc:"webhook: where events are POSTed (required). ntfy: the server, default https://ntfy.sh. The URL's query (?token=…) is write-only: it is sealed with the secrets, deliveries go to the whole URL, responses show the URL without it and secretsSet names urlQuery. On PATCH, a url without a query keeps the stored one while the rest of the URL is unchanged, and drops it otherwise; a url ending in a bare ? clears it."`
	Topic  string   `json:"topic,omitempty" doc:"ntfy: the topic (required)."`
	ChatID string   `json:"chatId,omitempty" doc:"telegram: the chat's id or @channel name (required)."`
	To     []string `json:"to,omitempty" doc:"email: the recipients (required)."`
}

// ChannelSecrets are a channel's secrets as written: never returned.
type ChannelSecrets struct {
	HookURL     string `json:"hookUrl,omitempty" doc:"slack, discord, msteams: the incoming-webhook URL (required; it carries a token)."`
	RoutingKey  string `json:"routingKey,omitempty" doc:"pagerduty: the Events API v2 integration key (required)."`
	BotToken    string `json:"botToken,omitempty" doc:"telegram: the bot token (required)."`
	AccessToken string `json:"accessToken,omitempty" doc:"ntfy: an access token for a protected topic."`
}

// ChannelCreate is the body of POST /api/v1/notification-channels.
type ChannelCreate struct {
	Name     string          `json:"name"`
	Kind     string          `json:"kind" doc:"How it delivers. A webhook channel gets a signing secret, returned once in the response."`
	Enabled  *bool           `json:"enabled,omitempty" doc:"Default true."`
	Config   *ChannelConfig  `json:"config,omitempty"`
	Events   []string        `json:"events,omitempty" doc:"Event types it hears: incident.opened, incident.acknowledged, incident.updated, incident.resolved, monitor.state_changed, heartbeat.state_changed, slo.burn_rate; absent or empty: every type."`
	Subjects []string        `json:"subjects,omitempty" doc:"Monitors and heartbeats of this workspace it hears; absent or empty: all."`
	Secrets  *ChannelSecrets `json:"secrets,omitempty" doc:"Write-only."`
}

func (c ChannelCreate) draft() app.ChannelDraft {
	d := app.ChannelDraft{Name: c.Name, Kind: notify.Kind(c.Kind), Enabled: c.Enabled == nil || *c.Enabled,
		Events: c.Events, Subjects: c.Subjects}
	if c.Config != nil {
		d.Config = notify.Config{URL: c.Config.URL, Topic: c.Config.Topic, ChatID: c.Config.ChatID, To: c.Config.To}
	}
	if s := c.Secrets; s != nil {
		d.Secrets = &notify.Secrets{HookURL: s.HookURL, RoutingKey: s.RoutingKey, BotToken: s.BotToken, AccessToken: s.AccessToken}
	}
	return d
}

// Resolve runs the domain's rules after the schema's.
func (c *ChannelCreate) Resolve(huma.Context) []error {
	d := c.draft()
	if d.Secrets == nil {
		d.Secrets = &notify.Secrets{}
	}
	return fieldDetails(app.ValidateChannel(d))
}

// ChannelPatch is the body of PATCH /api/v1/notification-channels/{id}:
// the fields given replace the stored ones (config and secrets whole).
type ChannelPatch struct {
	Name     *string         `json:"name,omitempty"`
	Enabled  *bool           `json:"enabled,omitempty" doc:"true also clears disabledReason."`
	Config   *ChannelConfig  `json:"config,omitempty"`
	Events   *[]string       `json:"events,omitempty"`
	Subjects *[]string       `json:"subjects,omitempty"`
	Secrets  *ChannelSecrets `json:"secrets,omitempty" doc:"Write-only; replaces the stored secrets (not a webhook's signing secret: rotate it)."`
}

func (p ChannelPatch) apply(cur app.ChannelView) app.ChannelDraft {
	d := app.ChannelDraft{Name: cur.Name, Kind: cur.Kind, Enabled: cur.Enabled, Config: cur.Config,
		Events: cur.Events, Subjects: cur.Subjects}
	c := ChannelCreate{Kind: string(cur.Kind), Config: p.Config, Secrets: p.Secrets}.draft()
	if p.Name != nil {
		d.Name = *p.Name
	}
	if p.Enabled != nil {
		d.Enabled = *p.Enabled
	}
	if p.Config != nil {
		d.Config = c.Config
	}
	if p.Events != nil {
		d.Events = *p.Events
	}
	if p.Subjects != nil {
		d.Subjects = *p.Subjects
	}
	d.Secrets = c.Secrets
	return d
}

// ChannelWithSecret is a channel with its new signing secret: the
// response of creating a webhook channel or rotating its secret, the only
// times the secret is shown.
type ChannelWithSecret struct {
	NotificationChannel
	SigningSecret string `json:"signingSecret,omitempty" doc:"The webhook's signing secret (whsec_…), shown only now: store it where the receiver verifies signatures (docs/webhooks.md)."`
}

func toChannel(v app.ChannelView) NotificationChannel {
	c := NotificationChannel{ID: v.ID, Name: v.Name, Kind: string(v.Kind), Enabled: v.Enabled,
		Config: ChannelConfig{URL: v.Config.URL, Topic: v.Config.Topic, ChatID: v.Config.ChatID, To: v.Config.To},
		Events: append([]string{}, v.Events...), Subjects: append([]string{}, v.Subjects...),
		SecretsSet: append([]string{}, v.SecretsSet...), DisabledReason: v.DisabledReason, CreatedAt: stamp.Of(v.CreatedAt), UpdatedAt: stamp.Of(v.UpdatedAt)}
	return c
}

type createdChannel struct {
	Location string `header:"Location" doc:"URL of the new channel."`
	Body     ChannelWithSecret
}

// ChannelID names one channel.
type ChannelID struct {
	InWorkspace
	ID string `path:"id" maxLength:"64" doc:"Notification channel id (nch_…)."`
}

type patchChannelInput struct {
	ChannelID
	Body ChannelPatch
}

type channelBody struct {
	Body NotificationChannel
}

type channelSecretBody struct {
	Body ChannelWithSecret
}

var tagsChannels = []string{"Notification channels"}

var opCreateNotificationChannel = idempotent(op(huma.Operation{OperationID: "createNotificationChannel", Method: http.MethodPost, Path: Prefix + "/notification-channels",
	Summary: "Create a notification channel", Tags: tagsChannels, DefaultStatus: http.StatusCreated,
	Description: "Where events go: a signed webhook, e-mail, Slack, Discord, Microsoft Teams, PagerDuty, Telegram or ntfy. " +
		"A webhook channel's signing secret is in this response only. E-mail channels need an SMTP server configured (else 403 feature_unavailable)."},
	account.ScopeNotificationsWrite, http.StatusPaymentRequired, http.StatusConflict, http.StatusRequestEntityTooLarge,
	http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity))

func (s *Server) createNotificationChannel(ctx context.Context, in *createInput[ChannelCreate]) (*createdChannel, error) {
	v, secret, err := s.app.CreateChannel(ctx, actorFrom(ctx), in.Body.draft())
	if err != nil {
		return nil, err
	}
	return &createdChannel{Location: Prefix + "/notification-channels/" + v.ID,
		Body: ChannelWithSecret{NotificationChannel: toChannel(v), SigningSecret: secret}}, nil
}

var opListNotificationChannels = op(huma.Operation{OperationID: "listNotificationChannels", Method: http.MethodGet, Path: Prefix + "/notification-channels",
	Summary: "List notification channels", Description: "In creation order, oldest first.", Tags: tagsChannels},
	account.ScopeNotificationsRead, http.StatusUnprocessableEntity)

func (s *Server) listNotificationChannels(ctx context.Context, in *listInput) (*struct{ Body List[NotificationChannel] }, error) {
	p, err := s.app.ListChannels(ctx, actorFrom(ctx), app.PageRequest{Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	return &struct{ Body List[NotificationChannel] }{Body: toList(p, toChannel)}, nil
}

var opGetNotificationChannel = op(huma.Operation{OperationID: "getNotificationChannel", Method: http.MethodGet, Path: Prefix + "/notification-channels/{id}",
	Summary: "Get a notification channel", Tags: tagsChannels}, account.ScopeNotificationsRead, http.StatusNotFound)

func (s *Server) getNotificationChannel(ctx context.Context, in *ChannelID) (*channelBody, error) {
	return oneChannel(s.app.GetChannel(ctx, actorFrom(ctx), in.ID))
}

var opUpdateNotificationChannel = op(huma.Operation{OperationID: "updateNotificationChannel", Method: http.MethodPatch, Path: Prefix + "/notification-channels/{id}",
	Summary: "Update a notification channel", Description: "The fields given replace the stored ones; the result is validated as a whole. The kind cannot change.",
	Tags: tagsChannels}, account.ScopeNotificationsWrite, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge,
	http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)

func (s *Server) updateNotificationChannel(ctx context.Context, in *patchChannelInput) (*channelBody, error) {
	return oneChannel(s.app.UpdateChannel(ctx, actorFrom(ctx), in.ID, func(cur app.ChannelView) (app.ChannelDraft, error) {
		return in.Body.apply(cur), nil
	}))
}

var opDeleteNotificationChannel = op(huma.Operation{OperationID: "deleteNotificationChannel", Method: http.MethodDelete, Path: Prefix + "/notification-channels/{id}",
	Summary: "Delete a notification channel", Tags: tagsChannels, DefaultStatus: http.StatusNoContent},
	account.ScopeNotificationsWrite, http.StatusNotFound)

func (s *Server) deleteNotificationChannel(ctx context.Context, in *ChannelID) (*struct{}, error) {
	return nil, s.app.DeleteChannel(ctx, actorFrom(ctx), in.ID)
}

var opRotateNotificationChannelSecret = op(huma.Operation{OperationID: "rotateNotificationChannelSecret", Method: http.MethodPost, Path: Prefix + "/notification-channels/{id}/rotate-secret",
	Summary: "Rotate a webhook channel's signing secret",
	Description: "Makes a new signing secret, returned in this response only. For 24 hours deliveries carry signatures by both the new and the old secret " +
		"(two v1= in X-Service-Signature), so the receiver can switch over without losing events. Other kinds: 409 conflict.",
	Tags: tagsChannels}, account.ScopeNotificationsWrite, http.StatusNotFound, http.StatusConflict)

func (s *Server) rotateNotificationChannelSecret(ctx context.Context, in *ChannelID) (*channelSecretBody, error) {
	v, secret, err := s.app.RotateChannelSecret(ctx, actorFrom(ctx), in.ID)
	if err != nil {
		return nil, err
	}
	return &channelSecretBody{Body: ChannelWithSecret{NotificationChannel: toChannel(v), SigningSecret: secret}}, nil
}

// oneChannel is the response of an operation that returns one channel.
func oneChannel(v app.ChannelView, err error) (*channelBody, error) {
	if err != nil {
		return nil, err
	}
	return &channelBody{Body: toChannel(v)}, nil
}
