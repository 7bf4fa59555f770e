package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/statuspage"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// draftOf is a stored page as the draft that keeps it as it is.
func draftOf(p statuspage.Config) StatusPageDraft { return StatusPageDraftOf(p) }

// TestPublicStatusPage: what the public pages read of a page, without an
// actor, on every engine.
func TestPublicStatusPage(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db, a := openWithWorkflow(t, e)
			w := addWorkspace(t, db, "acme")
			owner := Actor{WorkspaceID: w.ID, Role: account.RoleOwner}
			m := addMonitor(t, db, w.ID, monitor.Config{})
			hb := storetest.NewHeartbeat(t, db, w.ID, t0, 3600, 0, 0)
			const secret = "open sesame, please"
			p, err := a.CreateStatusPage(ctx, owner, StatusPageDraft{Slug: "acme", Title: " Acme ", Visibility: statuspage.Protected,
				Password: secret, CustomDomain: "Status.Acme.Example", ShowUptime: true, ShowIncidents: true, Accent: "#ABCDEF",
				FooterLinks: []statuspage.Link{{Label: "Help", URL: "https://acme.example/help"}},
				Groups: []StatusPageGroupDraft{{Name: "All", Components: []StatusPageComponentDraft{
					{MonitorID: m.ID, Name: "Shop", Description: "Buy things"}, {HeartbeatID: hb.ID, Name: "Backups"}}}}})
			check(t, err)

			cfg, err := a.PublicStatusPage(ctx, "acme")
			check(t, err)
			if cfg.ID != p.ID || cfg.WorkspaceID != w.ID || cfg.Slug != "acme" || cfg.Title != "Acme" || cfg.Visibility != statuspage.Protected ||
				!strings.HasPrefix(cfg.PasswordHash, "$argon2id$") || cfg.PasswordVersion != 1 || cfg.CustomDomain != "status.acme.example" ||
				!cfg.ShowUptime || cfg.UptimeDays != 90 || cfg.PausedComponents != statuspage.HidePaused || !cfg.ShowIncidents ||
				cfg.ShowMaintenance || cfg.Accent != "#abcdef" || len(cfg.FooterLinks) != 1 || cfg.LogoVersion != "" || !cfg.UpdatedAt.Equal(p.UpdatedAt) {
				t.Fatalf("config: %+v", cfg)
			}
			wantEqual(t, cfg.Groups, []PublicGroup{{Name: "All", Components: []PublicComponent{
				{ID: p.Groups[0].Components[0].ID, Name: "Shop", Description: "Buy things", SubjectType: SubjectMonitor, SubjectID: m.ID},
				{ID: p.Groups[0].Components[1].ID, Name: "Backups", SubjectType: SubjectHeartbeat, SubjectID: hb.ID}}}})
			byHost, err := a.PublicStatusPageByDomain(ctx, "STATUS.acme.example.")
			check(t, err)
			wantEqual(t, byHost, cfg)
			for _, slug := range []string{"nope", "ACME", "../acme", "", strings.Repeat("a", 100)} {
				if _, err := a.PublicStatusPage(ctx, slug); errs.KindOf(err) != errs.KindNotFound {
					t.Errorf("slug %q: %v", slug, err)
				}
			}
			for _, host := range []string{"other.example", "127.0.0.1", "acme", "status.acme.example:443", ""} {
				if _, err := a.PublicStatusPageByDomain(ctx, host); errs.KindOf(err) != errs.KindNotFound {
					t.Errorf("host %q: %v", host, err)
				}
			}

			// The password opens the page; nothing else does.
			if !a.CheckStatusPagePassword(cfg, secret) || a.CheckStatusPagePassword(cfg, secret+"!") || a.CheckStatusPagePassword(cfg, "") {
				t.Errorf("password check")
			}
			if a.CheckStatusPagePassword(PublicPageConfig{}, secret) || a.CheckStatusPagePassword(PublicPageConfig{PasswordHash: "garbage"}, secret) {
				t.Errorf("a page without a readable hash opened")
			}

			// The page's stamp (asked with the configuration first read,
			// as a cache would) and this process's change counter both
			// move with every change below.
			first := cfg
			stamp, err := a.StatusPageStamp(ctx, first)
			check(t, err)
			if again, err := a.StatusPageStamp(ctx, first); err != nil || again != stamp {
				t.Errorf("the stamp moved without a change: %s, %s (%v)", stamp, again, err)
			}
			counter := a.StatusPagesChanged()
			changed := func(what string) {
				t.Helper()
				s, err := a.StatusPageStamp(ctx, first)
				check(t, err)
				if s == stamp {
					t.Errorf("%s: the stamp did not change", what)
				}
				stamp = s
				if c := a.StatusPagesChanged(); c == counter {
					t.Errorf("%s: the change counter did not move", what)
				} else {
					counter = c
				}
			}

			// An edit that leaves the password keeps its version; a new
			// password moves it on, and the old one no longer opens.
			_, err = a.UpdateStatusPage(ctx, owner, p.ID, func(cur statuspage.Config) (StatusPageDraft, error) {
				d := draftOf(cur)
				d.Title = "Acme Inc"
				return d, nil
			})
			check(t, err)
			changed("title")
			cfg, err = a.PublicStatusPage(ctx, "acme")
			check(t, err)
			if cfg.Title != "Acme Inc" || cfg.PasswordVersion != 1 || !a.CheckStatusPagePassword(cfg, secret) {
				t.Errorf("after a title edit: %+v", cfg)
			}
			_, err = a.UpdateStatusPage(ctx, owner, p.ID, func(cur statuspage.Config) (StatusPageDraft, error) {
				d := draftOf(cur)
				d.Password = "a brand new secret"
				return d, nil
			})
			check(t, err)
			changed("password")
			cfg, err = a.PublicStatusPage(ctx, "acme")
			check(t, err)
			if cfg.PasswordVersion != 2 || a.CheckStatusPagePassword(cfg, secret) || !a.CheckStatusPagePassword(cfg, "a brand new secret") {
				t.Errorf("after a new password: version %d", cfg.PasswordVersion)
			}

			// The logo: its version shows in the config and with its bytes.
			gif := append([]byte("GIF89a"), bytes.Repeat([]byte{3}, 20)...)
			_, err = a.SetStatusPageLogo(ctx, owner, p.ID, gif)
			check(t, err)
			changed("logo")
			cfg, err = a.PublicStatusPage(ctx, "acme")
			check(t, err)
			ct, data, version, err := a.PublicStatusPageLogo(ctx, p.ID)
			check(t, err)
			if ct != "image/gif" || !bytes.Equal(data, gif) || version == "" || version != cfg.LogoVersion {
				t.Errorf("logo %s %d bytes, version %q, config's %q", ct, len(data), version, cfg.LogoVersion)
			}
			if _, err := a.SetStatusPageLogo(ctx, owner, p.ID, []byte("<svg/>")); err != ErrLogoType {
				t.Errorf("svg: %v", err)
			}

			// A monitor deleted leaves the page, and the stamp says so.
			check(t, a.DeleteMonitor(ctx, owner, m.ID))
			changed("monitor deleted")
			cfg, err = a.PublicStatusPage(ctx, "acme")
			check(t, err)
			if len(cfg.Groups[0].Components) != 1 || cfg.Groups[0].Components[0].SubjectType != SubjectHeartbeat {
				t.Errorf("after deleting the monitor: %+v", cfg.Groups)
			}

			check(t, a.DeleteStatusPage(ctx, owner, p.ID))
			changed("page deleted")
			if _, err := a.PublicStatusPage(ctx, "acme"); errs.KindOf(err) != errs.KindNotFound {
				t.Errorf("deleted page: %v", err)
			}
			if _, _, _, err := a.PublicStatusPageLogo(ctx, p.ID); errs.KindOf(err) != errs.KindNotFound {
				t.Errorf("deleted page's logo: %v", err)
			}
		})
	}
}

// TestStatusPageScopes: the pages are managed with status_pages scopes, by
// roles that grant them.
func TestStatusPageScopes(t *testing.T) {
	e := storetest.Engines(t)[0]
	db, a := openWithWorkflow(t, e)
	w := addWorkspace(t, db, "acme")
	d := StatusPageDraft{Slug: "acme", Title: "Acme", ShowUptime: true}
	for _, c := range []struct {
		actor Actor
		kind  errs.Kind
	}{
		{Actor{WorkspaceID: w.ID, Role: account.RoleOwner, KeyID: "k", Scopes: []account.Scope{account.ScopeStatusPagesRead, account.ScopeMonitorsWrite}}, errs.KindInsufficientScope},
		{Actor{WorkspaceID: w.ID, Role: account.RoleEditor}, errs.KindForbidden},
		{Actor{WorkspaceID: w.ID, Role: account.RoleViewer}, errs.KindForbidden},
	} {
		if _, err := a.CreateStatusPage(ctx, c.actor, d); errs.KindOf(err) != c.kind {
			t.Errorf("%+v: %v", c.actor, err)
		}
	}
	admin := Actor{WorkspaceID: w.ID, Role: account.RoleAdmin, KeyID: "k", Scopes: []account.Scope{account.ScopeStatusPagesWrite}}
	p, err := a.CreateStatusPage(ctx, admin, d)
	check(t, err)
	if _, err := a.GetStatusPage(ctx, admin, p.ID); errs.KindOf(err) != errs.KindInsufficientScope {
		t.Errorf("read without status_pages:read: %v", err)
	}
	viewer := Actor{WorkspaceID: w.ID, Role: account.RoleViewer}
	if _, err := a.GetStatusPage(ctx, viewer, p.ID); err != nil {
		t.Errorf("a viewer reads: %v", err)
	}
}

// TestStatusPagePreview: a member who may read the workspace's pages sees
// a password-protected page as it renders; another workspace's member,
// or a key without status_pages:read, does not.
func TestStatusPagePreview(t *testing.T) {
	e := storetest.Engines(t)[0]
	db, a := openWithWorkflow(t, e)
	w := addWorkspace(t, db, "acme")
	other := addWorkspace(t, db, "other")
	m := addMonitor(t, db, w.ID, monitor.Config{})
	owner := Actor{WorkspaceID: w.ID, Role: account.RoleOwner}
	p, err := a.CreateStatusPage(ctx, owner, StatusPageDraft{Slug: "acme", Title: "Acme", Visibility: statuspage.Protected,
		Password: "a long page password", ShowUptime: true, Groups: []StatusPageGroupDraft{{Components: []StatusPageComponentDraft{
			{MonitorID: m.ID, Name: "Shop"}}}}})
	check(t, err)
	v, err := a.StatusPagePreview(ctx, Actor{WorkspaceID: w.ID, Role: account.RoleViewer}, p.ID)
	check(t, err)
	if v.Page.Title != "Acme" || len(v.Page.Groups) != 1 || v.Page.Groups[0].Components[0].Name != "Shop" {
		t.Errorf("preview: %+v", v.Page)
	}
	if _, err := a.StatusPagePreview(ctx, Actor{WorkspaceID: other.ID, Role: account.RoleOwner}, p.ID); errs.KindOf(err) != errs.KindNotFound {
		t.Errorf("another workspace's preview: %v", err)
	}
	key := Actor{WorkspaceID: w.ID, Role: account.RoleOwner, KeyID: "k", Scopes: []account.Scope{account.ScopeMonitorsRead}}
	if _, err := a.StatusPagePreview(ctx, key, p.ID); errs.KindOf(err) != errs.KindInsufficientScope {
		t.Errorf("preview without status_pages:read: %v", err)
	}
}
