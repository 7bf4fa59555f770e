package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// A page's logo and what the public pages read of a page, with no actor.

// MaxStatusPageLogo bounds a logo's size in bytes.
const MaxStatusPageLogo = 128 << 10

// StatusPageLogoTypes are the image types a logo may be, found from its
// first bytes (never from what the uploader says). SVG is not one: it may
// carry script.
var StatusPageLogoTypes = []string{"image/png", "image/jpeg", "image/webp", "image/gif"}

// ErrLogoType refuses a logo that is none of StatusPageLogoTypes.
var ErrLogoType = &errs.Error{Kind: errs.KindInvalid, Message: "the logo must be a PNG, JPEG, WebP or GIF image"}

// sniffLogo returns the image type data starts with, or "".
func sniffLogo(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	}
	return ""
}

// SetStatusPageLogo stores data as the page's logo: at most
// MaxStatusPageLogo bytes of PNG, JPEG, WebP or GIF (ErrLogoType
// otherwise).
func (a *App) SetStatusPageLogo(ctx context.Context, actor Actor, id string, data []byte) (statuspage.Config, error) {
	if err := actor.Require(account.ScopeStatusPagesWrite); err != nil {
		return statuspage.Config{}, err
	}
	if len(data) == 0 {
		return statuspage.Config{}, &errs.Error{Kind: errs.KindInvalid, Message: "the logo is empty: send the image's bytes as the body"}
	}
	if len(data) > MaxStatusPageLogo {
		return statuspage.Config{}, &errs.Error{Kind: errs.KindInvalid, Message: fmt.Sprintf("the logo must be at most %d KiB", MaxStatusPageLogo>>10)}
	}
	ct := sniffLogo(data)
	if ct == "" {
		return statuspage.Config{}, ErrLogoType
	}
	sum := sha256.Sum256(data)
	return a.setLogo(ctx, actor, id, ct, data, hex.EncodeToString(sum[:8]))
}

// DeleteStatusPageLogo removes the page's logo, if it has one.
func (a *App) DeleteStatusPageLogo(ctx context.Context, actor Actor, id string) (statuspage.Config, error) {
	if err := actor.Require(account.ScopeStatusPagesWrite); err != nil {
		return statuspage.Config{}, err
	}
	return a.setLogo(ctx, actor, id, "", nil, "")
}

func (a *App) setLogo(ctx context.Context, actor Actor, id, ct string, data []byte, version string) (statuspage.Config, error) {
	now := a.now().UTC().Truncate(time.Microsecond)
	if err := a.store.SetStatusPageLogo(ctx, actor.WorkspaceID, id, ct, data, version, now); err != nil {
		return statuspage.Config{}, err
	}
	a.pagesChanged.Add(1)
	return a.store.GetStatusPage(ctx, actor.WorkspaceID, id)
}

// PublicPageConfig is what the public pages need of a page's
// configuration. It holds the password's hash for CheckStatusPagePassword
// and nothing private of the page's monitors and heartbeats: only the
// public names and text written for the page, and the subjects' ids to
// look their states up with.
type PublicPageConfig struct {
	ID          string
	WorkspaceID string
	Slug        string
	Title       string
	Description string
	Visibility  statuspage.Visibility
	// PasswordHash is the argon2id PHC string ("" without a password);
	// PasswordVersion changes with the password: a session opened under
	// another version must be refused.
	PasswordHash     string
	PasswordVersion  int64
	CustomDomain     string // "" for none
	ShowUptime       bool
	UptimeDays       int
	PausedComponents statuspage.PausedComponents
	ShowIncidents    bool
	ShowMaintenance  bool
	Accent           string // "#rrggbb"
	FooterLinks      []statuspage.Link
	LogoVersion      string // "" without a logo
	UpdatedAt        time.Time
	Groups           []PublicGroup
}

// PublicGroup is a page's group of components; Name may be empty.
type PublicGroup struct {
	Name       string
	Components []PublicComponent
}

// Subject types of a PublicComponent.
const (
	SubjectMonitor   = "monitor"
	SubjectHeartbeat = "heartbeat"
)

// PublicComponent is a monitor or heartbeat under its public name.
type PublicComponent struct {
	ID          string // spc_…
	Name        string
	Description string
	SubjectType string // SubjectMonitor or SubjectHeartbeat
	SubjectID   string
}

func publicConfig(p statuspage.Config) PublicPageConfig {
	c := PublicPageConfig{ID: p.ID, WorkspaceID: p.WorkspaceID, Slug: p.Slug, Title: p.Title, Description: p.Description,
		Visibility: p.Visibility, PasswordHash: p.PasswordHash, PasswordVersion: p.PasswordVersion, CustomDomain: p.CustomDomain,
		ShowUptime: p.ShowUptime, UptimeDays: p.UptimeDays, PausedComponents: p.PausedComponents, ShowIncidents: p.ShowIncidents,
		ShowMaintenance: p.ShowMaintenance, Accent: p.Accent, FooterLinks: p.FooterLinks, UpdatedAt: p.UpdatedAt}
	if p.Logo != nil {
		c.LogoVersion = p.Logo.Version
	}
	for _, g := range p.Groups {
		pg := PublicGroup{Name: g.Name}
		for _, comp := range g.Components {
			pc := PublicComponent{ID: comp.ID, Name: comp.Name, Description: comp.Description,
				SubjectType: SubjectMonitor, SubjectID: comp.MonitorID}
			if comp.MonitorID == "" {
				pc.SubjectType, pc.SubjectID = SubjectHeartbeat, comp.HeartbeatID
			}
			pg.Components = append(pg.Components, pc)
		}
		c.Groups = append(c.Groups, pg)
	}
	return c
}

// PublicStatusPage returns the configuration of the page with the slug,
// for its public pages (errs.ErrNotFound when there is none).
func (a *App) PublicStatusPage(ctx context.Context, slug string) (PublicPageConfig, error) {
	if slugProblem(slug) != "" {
		return PublicPageConfig{}, errs.ErrNotFound
	}
	p, err := a.store.StatusPageBySlug(ctx, slug)
	if err != nil {
		return PublicPageConfig{}, err
	}
	return publicConfig(p), nil
}

// PublicStatusPageByID returns the configuration of the workspace's page
// id, for its public pages, as PublicStatusPage does by slug: the pages
// re-read a page by id when its stamp says it changed.
func (a *App) PublicStatusPageByID(ctx context.Context, wsID, id string) (PublicPageConfig, error) {
	p, err := a.store.GetStatusPage(ctx, wsID, id)
	if err != nil {
		return PublicPageConfig{}, err
	}
	return publicConfig(p), nil
}

// PublicStatusPageByDomain returns the configuration of the page served
// at host (a request's Host, without its port; case and a final dot do
// not matter).
func (a *App) PublicStatusPageByDomain(ctx context.Context, host string) (PublicPageConfig, error) {
	host = strings.TrimSuffix(toLowerASCII(host), ".")
	if domainProblem(host) != "" {
		return PublicPageConfig{}, errs.ErrNotFound
	}
	p, err := a.store.StatusPageByDomain(ctx, host)
	if err != nil {
		return PublicPageConfig{}, err
	}
	return publicConfig(p), nil
}

func toLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// PublicStatusPageLogo returns a page's logo: its type, bytes and version
// (errs.ErrNotFound when the page has none).
func (a *App) PublicStatusPageLogo(ctx context.Context, pageID string) (contentType string, data []byte, version string, err error) {
	return a.store.StatusPageLogo(ctx, pageID)
}

// CheckStatusPagePassword reports whether password opens the page, in
// time that does not depend on how much of it matched. A page without a
// password opens to nobody this way.
func (a *App) CheckStatusPagePassword(cfg PublicPageConfig, password string) bool {
	if cfg.PasswordHash == "" || password == "" {
		return false
	}
	ok, err := secrets.VerifyPassword(cfg.PasswordHash, password)
	if err != nil {
		a.log.Error("status page password hash unreadable", "page", cfg.ID, "err", err)
		return false
	}
	return ok
}

// StatusPageStamp returns a short string that changes whenever anything
// the page cfg shows may have changed: its configuration, its subjects'
// states, the workspace's public incidents of the page's days and its
// maintenance windows. The public pages ask it, at most once a second a
// page, to know whether their render is still current without making a
// new one; it costs a few index reads per component.
func (a *App) StatusPageStamp(ctx context.Context, cfg PublicPageConfig) (string, error) {
	_, from := pageDays(pageHeader(cfg, a.now().UTC()))
	return a.store.StatusPageStamp(ctx, cfg.WorkspaceID, cfg.ID, subjectsOf(cfg).ids, from)
}

// StatusPagesChanged is a counter that moves on whenever this process
// changes what a public page is made of: a page created, edited, given a
// logo or deleted, a monitor or heartbeat deleted. The public pages of the
// same process read it on every request, so such a change shows on the
// next one; other nodes see it through StatusPageStamp.
func (a *App) StatusPagesChanged() uint64 { return a.pagesChanged.Load() }
