package app

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store"
)

// Notification channels: where events go. Their secrets are sealed under
// the keyring, bound to the channel's id, and never returned; a webhook's
// signing secret is shown once, when it is made.

// MaxChannels is the default bound on one workspace's notification
// channels (Config.DefaultMaxChannels).
const MaxChannels = 100

// ChannelView is a channel as users see it: which secrets are set, never
// their values.
type ChannelView struct {
	notify.Channel
	SecretsSet []string
}

// ChannelDraft is a channel as a user writes it. Secrets nil keeps the
// stored ones (an update); a webhook's signing secret is never written,
// only made (create, rotate-secret).
type ChannelDraft struct {
	Name     string
	Kind     notify.Kind
	Enabled  bool
	Config   notify.Config
	Events   []string
	Subjects []string
	Secrets  *notify.Secrets
}

func secretsAAD(channelID string) []byte { return []byte("channel-secrets:" + channelID) }

func (a *App) sealSecrets(channelID string, s *notify.Secrets) ([]byte, error) {
	plain, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return a.keys.Seal(plain, secretsAAD(channelID))
}

// OpenChannelSecrets decrypts a channel's secrets, in memory, to deliver.
func (a *App) OpenChannelSecrets(channelID string, sealed []byte) (*notify.Secrets, error) {
	plain, err := a.keys.Open(sealed, secretsAAD(channelID))
	if err != nil {
		return nil, err
	}
	var s notify.Secrets
	if err := json.Unmarshal(plain, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ValidateChannel checks a draft's fields without the database or the
// server's configuration.
func ValidateChannel(d ChannelDraft) []errs.FieldError {
	c := d.asWritten()
	return notify.Validate(&c, d.Secrets)
}

// channel is d as stored: events and subjects sorted, each once.
func (d ChannelDraft) channel() notify.Channel {
	c := d.asWritten()
	c.Events = slices.Compact(slices.Sorted(slices.Values(d.Events)))
	c.Subjects = slices.Compact(slices.Sorted(slices.Values(d.Subjects)))
	return c
}

// asWritten is d with its lists as the request gives them, for
// validation: counts and pointers are the request's.
func (d ChannelDraft) asWritten() notify.Channel {
	return notify.Channel{Name: strings.TrimSpace(d.Name), Kind: d.Kind, Enabled: d.Enabled, Config: d.Config,
		Events: d.Events, Subjects: d.Subjects}
}

// checkChannel validates a draft as a whole: fields, what this server
// offers (e-mail needs SMTP), and where it would connect.
func (a *App) checkChannel(d ChannelDraft, s *notify.Secrets) error {
	c := d.asWritten()
	problems := notify.Validate(&c, s)
	if d.Kind == notify.Email && !a.cfg.EmailEnabled {
		return &errs.Error{Kind: errs.KindFeatureUnavailable,
			Message: "e-mail channels need an SMTP server, and this server has none configured; " +
				"its operator names one with --smtp-url or TOCSIN_SMTP_URL"}
	}
	if a.cfg.Outbound.CheckURL(c.Config.URL) != nil {
		problems = append(problems, refusedTarget("/config/url"))
	}
	if s != nil && a.cfg.Outbound.CheckURL(s.HookURL) != nil {
		problems = append(problems, refusedTarget("/secrets/hookUrl"))
	}
	if len(problems) > 0 {
		return invalid(problems)
	}
	return nil
}

// CreateChannel stores a new channel. A webhook channel gets a signing
// secret, returned here and never again.
func (a *App) CreateChannel(ctx context.Context, actor Actor, d ChannelDraft) (v ChannelView, signingSecret string, err error) {
	if err := actor.Require(account.ScopeNotificationsWrite); err != nil {
		return ChannelView{}, "", err
	}
	s := d.Secrets
	if s == nil {
		s = &notify.Secrets{}
	}
	s.Signing = nil
	if err := a.checkChannel(d, s); err != nil {
		return ChannelView{}, "", err
	}
	now := a.stamp()
	if d.Kind == notify.Webhook {
		signingSecret = s.Rotate(now)
	}
	c := d.channel()
	notify.SealQuery(&c, s)
	c.ID, c.WorkspaceID, c.CreatedAt, c.UpdatedAt = ids.New(ids.Channel, now), actor.WorkspaceID, now, now
	sealed, err := a.sealSecrets(c.ID, s)
	if err != nil {
		return ChannelView{}, "", err
	}
	if err := a.store.CreateChannel(ctx, c, sealed, a.cfg.DefaultMaxChannels); err != nil {
		return ChannelView{}, "", unknownSubjectsErr(err, "/subjects", d.Subjects)
	}
	return ChannelView{Channel: c, SecretsSet: s.Set()}, signingSecret, nil
}

func (a *App) channelView(c notify.Channel, sealed []byte) (ChannelView, error) {
	s, err := a.OpenChannelSecrets(c.ID, sealed)
	if err != nil {
		return ChannelView{}, err
	}
	notify.SealQuery(&c, s) // a channel stored before queries were sealed shows none either
	return ChannelView{Channel: c, SecretsSet: s.Set()}, nil
}

// urlQuery decides the sealed query of c's URL as written, against the
// URL stored: a URL with a query brings its own ("?" alone clears it);
// one without keeps the stored query while it names the same place, and
// drops it once it names another, so a token never goes anywhere but
// where it was typed for. It reports whether the query changed.
func urlQuery(c *notify.Channel, stored string, s *notify.Secrets) bool {
	before := s.URLQuery
	if !notify.SealQuery(c, s) && c.Config.URL != stored {
		s.URLQuery = ""
	}
	return s.URLQuery != before
}

// GetChannel returns one channel of the actor's workspace.
func (a *App) GetChannel(ctx context.Context, actor Actor, id string) (ChannelView, error) {
	if err := actor.Require(account.ScopeNotificationsRead); err != nil {
		return ChannelView{}, err
	}
	c, sealed, err := a.store.GetChannel(ctx, actor.WorkspaceID, id)
	if err != nil {
		return ChannelView{}, err
	}
	return a.channelView(c, sealed)
}

// ListChannels pages through the workspace's channels in creation order.
func (a *App) ListChannels(ctx context.Context, actor Actor, p PageRequest) (Page[ChannelView], error) {
	if err := actor.Require(account.ScopeNotificationsRead); err != nil {
		return Page[ChannelView]{}, err
	}
	after, limit, err := p.decode()
	if err != nil {
		return Page[ChannelView]{}, err
	}
	cs, err := a.store.ListChannels(ctx, actor.WorkspaceID, after, limit+1)
	if err != nil {
		return Page[ChannelView]{}, err
	}
	total, err := a.store.CountChannels(ctx, actor.WorkspaceID)
	if err != nil {
		return Page[ChannelView]{}, err
	}
	page := Page[ChannelView]{Total: total, HasTotal: true}
	if len(cs) > limit {
		cs = cs[:limit]
		page.NextCursor = encodeCursor(cs[limit-1].ID)
	}
	for _, c := range cs {
		v, err := a.channelView(c.Channel, c.Sealed)
		if err != nil {
			return Page[ChannelView]{}, err
		}
		page.Items = append(page.Items, v)
	}
	return page, nil
}

// ChannelUpdate computes the new draft of a channel from its current
// state (its kind cannot change; Secrets nil keeps the stored ones).
type ChannelUpdate func(cur ChannelView) (ChannelDraft, error)

// UpdateChannel applies an update, optimistically: if the channel changed
// in between, it starts over from the new version (a few times).
func (a *App) UpdateChannel(ctx context.Context, actor Actor, id string, update ChannelUpdate) (ChannelView, error) {
	if err := actor.Require(account.ScopeNotificationsWrite); err != nil {
		return ChannelView{}, err
	}
	for range 3 {
		v, err := a.changeChannel(ctx, actor, id, func(cur ChannelView, s *notify.Secrets) (notify.Channel, bool, error) {
			d, err := update(cur)
			if err != nil {
				return notify.Channel{}, false, err
			}
			if d.Kind != cur.Kind {
				return notify.Channel{}, false, invalid([]errs.FieldError{{Pointer: "/kind", Message: "cannot change; create another channel"}})
			}
			if d.Secrets != nil {
				fresh := *d.Secrets
				fresh.Signing = s.Signing   // made, never written
				fresh.URLQuery = s.URLQuery // follows the URL, below
				*s = fresh
			}
			if err := a.checkChannel(d, s); err != nil {
				return notify.Channel{}, false, err
			}
			c := d.channel()
			queryChanged := urlQuery(&c, cur.Config.URL, s)
			c.DisabledReason = cur.DisabledReason
			if c.Enabled && !cur.Enabled {
				c.DisabledReason = "" // enabled again by hand
			}
			return c, d.Secrets != nil || queryChanged, nil
		})
		if !errors.Is(err, store.ErrStale) {
			return v, err
		}
	}
	return ChannelView{}, store.ErrStale
}

// changeChannel reads a channel and its secrets, lets change make the new
// version (and say whether the secrets changed), and writes it if the
// stored version is still the one read.
func (a *App) changeChannel(ctx context.Context, actor Actor, id string,
	change func(cur ChannelView, s *notify.Secrets) (notify.Channel, bool, error)) (ChannelView, error) {
	cur, sealed, err := a.store.GetChannel(ctx, actor.WorkspaceID, id)
	if err != nil {
		return ChannelView{}, err
	}
	s, err := a.OpenChannelSecrets(cur.ID, sealed)
	if err != nil {
		return ChannelView{}, err
	}
	// A channel stored before queries were sealed has its query sealed now.
	legacy := notify.SealQuery(&cur, s)
	c, secretsChanged, err := change(ChannelView{Channel: cur, SecretsSet: s.Set()}, s)
	if err != nil {
		return ChannelView{}, err
	}
	secretsChanged = secretsChanged || legacy
	c.ID, c.WorkspaceID, c.Kind, c.CreatedAt = cur.ID, cur.WorkspaceID, cur.Kind, cur.CreatedAt
	c.UpdatedAt = later(a.stamp(), cur.UpdatedAt)
	var newSealed []byte
	if secretsChanged {
		if newSealed, err = a.sealSecrets(c.ID, s); err != nil {
			return ChannelView{}, err
		}
	}
	if err := a.store.UpdateChannel(ctx, c, newSealed, cur.UpdatedAt); err != nil {
		return ChannelView{}, unknownSubjectsErr(err, "/subjects", c.Subjects)
	}
	return ChannelView{Channel: c, SecretsSet: s.Set()}, nil
}

// RotateChannelSecret gives a webhook channel a new signing secret,
// returned here and never again; the old one signs too for
// notify.RotationGrace, so receivers can switch without losing events.
func (a *App) RotateChannelSecret(ctx context.Context, actor Actor, id string) (v ChannelView, secret string, err error) {
	if err := actor.Require(account.ScopeNotificationsWrite); err != nil {
		return ChannelView{}, "", err
	}
	for range 3 {
		v, err = a.changeChannel(ctx, actor, id, func(cur ChannelView, s *notify.Secrets) (notify.Channel, bool, error) {
			if cur.Kind != notify.Webhook {
				return notify.Channel{}, false, &errs.Error{Kind: errs.KindConflict,
					Message: "only webhook channels have a signing secret; change this channel's secrets with PATCH"}
			}
			secret = s.Rotate(a.stamp())
			return cur.Channel, true, nil
		})
		if !errors.Is(err, store.ErrStale) {
			return v, secret, err
		}
	}
	return ChannelView{}, "", store.ErrStale
}

// SealChannelQueries seals the URL queries of channels stored before
// queries were sealed (run by serve and migrate, after the SQL
// migrations): each URL keeps what may be shown, and its query joins the
// channel's sealed secrets. Once done it only looks. It returns how many
// channels it changed.
func (a *App) SealChannelQueries(ctx context.Context) (sealed int, err error) {
	defer errs.Wrap(&err, "app.SealChannelQueries")
	after := ""
	for {
		cs, err := a.store.ChannelsWithURLQuery(ctx, after, sealBatch)
		if err != nil || len(cs) == 0 {
			return sealed, err
		}
		after = cs[len(cs)-1].ID
		for _, c := range cs {
			if _, _, written := notify.SplitURL(c.Config.URL); !written {
				continue // the filter is textual
			}
			owner := Actor{WorkspaceID: c.WorkspaceID}
			for range 3 {
				_, err = a.changeChannel(ctx, owner, c.ID, func(cur ChannelView, _ *notify.Secrets) (notify.Channel, bool, error) {
					return cur.Channel, false, nil
				})
				if !errors.Is(err, store.ErrStale) {
					break
				}
			}
			switch {
			case errs.KindOf(err) == errs.KindNotFound: // deleted meanwhile
			case err != nil:
				return sealed, err
			default:
				sealed++
			}
		}
	}
}

// DeleteChannel removes a channel; events no longer go to it.
func (a *App) DeleteChannel(ctx context.Context, actor Actor, id string) error {
	if err := actor.Require(account.ScopeNotificationsWrite); err != nil {
		return err
	}
	return a.store.DeleteChannel(ctx, actor.WorkspaceID, id)
}
