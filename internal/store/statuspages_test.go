package store_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/statuspage"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// The status-page contract, the same on every engine.
func TestStatusPages(t *testing.T) {
	tests := []struct {
		name string
		fn   func(*testing.T, storetest.Engine)
	}{
		{"Pages", testStatusPages},
		{"Unique", testStatusPagesUnique},
		{"Logo", testStatusPageLogo},
		{"Stamp", testStatusPagesStamp},
	}
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) { tt.fn(t, e) })
			}
		})
	}
}

// newPage is a page of the workspace showing a monitor and a heartbeat,
// with an empty group between them.
func newPage(wsID, slug, monitorID, heartbeatID string) statuspage.Config {
	return statuspage.Config{ID: ids.New(ids.StatusPage, t0), WorkspaceID: wsID, Slug: slug, Title: "Acme",
		Description: "All of it", Visibility: statuspage.Protected, PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA",
		PasswordVersion: 1, CustomDomain: slug + ".example.com", ShowUptime: true, UptimeDays: 60,
		PausedComponents: statuspage.ShowPaused, ShowIncidents: false, ShowMaintenance: true, Accent: "#aabbcc",
		FooterLinks: []statuspage.Link{{Label: "Help", URL: "https://acme.example/help"}},
		Groups: []statuspage.ConfigGroup{
			{Name: "Web", Components: []statuspage.ConfigComponent{
				{ID: ids.New(ids.StatusPageComponent, t0), MonitorID: monitorID, Name: "Shop", Description: "ünïcode ✓"}}},
			{Name: "", Components: []statuspage.ConfigComponent{}},
			{Name: "Jobs", Components: []statuspage.ConfigComponent{
				{ID: ids.New(ids.StatusPageComponent, t0), HeartbeatID: heartbeatID, Name: "Backup"}}},
		},
		CreatedAt: t0, UpdatedAt: t0}
}

// normalized is p as read back: an empty group's components and empty
// lists come back nil.
func normalized(p statuspage.Config) statuspage.Config {
	for i := range p.Groups {
		if len(p.Groups[i].Components) == 0 {
			p.Groups[i].Components = nil
		}
	}
	return p
}

func testStatusPages(t *testing.T, e storetest.Engine) {
	db := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	_, other := seed(t, db, "other")
	m := addMonitor(t, db, w.ID, monitor.Config{})
	hb := storetest.NewHeartbeat(t, db, w.ID, t0, 3600, 0, 0)
	theirs := addMonitor(t, db, other.ID, monitor.Config{})

	p := newPage(w.ID, "acme", m.ID, hb.ID)
	check(t, db.CreateStatusPage(ctx, p, 10))
	got, err := db.GetStatusPage(ctx, w.ID, p.ID)
	check(t, err)
	equal(t, got, normalized(p))
	_, err = db.GetStatusPage(ctx, other.ID, p.ID)
	wantKind(t, err, errs.ErrNotFound)
	bySlug, err := db.StatusPageBySlug(ctx, "acme")
	check(t, err)
	equal(t, bySlug, normalized(p))
	byDomain, err := db.StatusPageByDomain(ctx, "acme.example.com")
	check(t, err)
	equal(t, byDomain.ID, p.ID)
	_, err = db.StatusPageBySlug(ctx, "nope")
	wantKind(t, err, errs.ErrNotFound)

	// Another workspace's monitor is refused like a missing one, and
	// nothing is stored.
	bad := newPage(w.ID, "bad", theirs.ID, hb.ID)
	var um *store.UnknownMonitorsError
	if err := db.CreateStatusPage(ctx, bad, 10); !errors.As(err, &um) || len(um.IDs) != 1 || um.IDs[0] != theirs.ID {
		t.Fatalf("foreign monitor: %v", err)
	}
	_, err = db.GetStatusPage(ctx, w.ID, bad.ID)
	wantKind(t, err, errs.ErrNotFound)

	// Pages and quota.
	second := statuspage.Config{ID: ids.New(ids.StatusPage, t0), WorkspaceID: w.ID, Slug: "second", Title: "Two",
		Visibility: statuspage.Public, UptimeDays: 90, PausedComponents: statuspage.HidePaused, Accent: "#1f6feb",
		CreatedAt: t0, UpdatedAt: t0}
	check(t, db.CreateStatusPage(ctx, second, 10))
	third := second
	third.ID, third.Slug = ids.New(ids.StatusPage, t0), "third"
	wantKind(t, db.CreateStatusPage(ctx, third, 2), store.ErrQuota)
	ps, err := db.ListStatusPages(ctx, w.ID, "", 1)
	check(t, err)
	if len(ps) != 1 || ps[0].ID != p.ID {
		t.Fatalf("first page: %+v", ps)
	}
	ps, err = db.ListStatusPages(ctx, w.ID, p.ID, 10)
	check(t, err)
	if len(ps) != 1 || ps[0].ID != second.ID {
		t.Fatalf("second page: %+v", ps)
	}
	if n, err := db.CountStatusPages(ctx, w.ID); err != nil || n != 2 {
		t.Fatalf("count %d %v", n, err)
	}

	// Update: only if unchanged since read.
	up := p
	up.Title, up.CustomDomain, up.Groups = "Acme Inc", "", p.Groups[2:]
	up.UpdatedAt = t0.Add(time.Second)
	check(t, db.UpdateStatusPage(ctx, up, t0))
	got, err = db.GetStatusPage(ctx, w.ID, p.ID)
	check(t, err)
	equal(t, got, normalized(up))
	wantKind(t, db.UpdateStatusPage(ctx, up, t0), store.ErrStale)
	other2 := up
	other2.WorkspaceID = other.ID
	wantKind(t, db.UpdateStatusPage(ctx, other2, up.UpdatedAt), errs.ErrNotFound)

	// Deleting the heartbeat takes it off the page.
	check(t, deleteHeartbeat(db, w.ID, hb.ID))
	got, err = db.GetStatusPage(ctx, w.ID, p.ID)
	check(t, err)
	if len(got.Groups) != 1 || len(got.Groups[0].Components) != 0 {
		t.Fatalf("after deleting the heartbeat: %+v", got.Groups)
	}

	wantKind(t, db.DeleteStatusPage(ctx, other.ID, p.ID), errs.ErrNotFound)
	check(t, db.DeleteStatusPage(ctx, w.ID, p.ID))
	wantKind(t, db.DeleteStatusPage(ctx, w.ID, p.ID), errs.ErrNotFound)
}

func testStatusPagesUnique(t *testing.T, e storetest.Engine) {
	db := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	_, other := seed(t, db, "other")
	m := addMonitor(t, db, w.ID, monitor.Config{})
	hb := storetest.NewHeartbeat(t, db, w.ID, t0, 3600, 0, 0)
	mo := addMonitor(t, db, other.ID, monitor.Config{})
	ho := storetest.NewHeartbeat(t, db, other.ID, t0, 3600, 0, 0)

	p := newPage(w.ID, "acme", m.ID, hb.ID)
	check(t, db.CreateStatusPage(ctx, p, 10))
	// Slugs and domains are the installation's, across workspaces.
	dup := newPage(other.ID, "acme", mo.ID, ho.ID)
	dup.CustomDomain = ""
	wantKind(t, db.CreateStatusPage(ctx, dup, 10), store.ErrConflict)
	dup = newPage(other.ID, "acme2", mo.ID, ho.ID)
	dup.CustomDomain = p.CustomDomain
	wantKind(t, db.CreateStatusPage(ctx, dup, 10), store.ErrConflict)
	for _, c := range []struct {
		slug, domain, except string
		slugTaken, domTaken  bool
	}{
		{"acme", "", "", true, false},
		{"acme", "acme.example.com", "", true, true},
		{"free", "acme.example.com", "", false, true},
		{"acme", "acme.example.com", p.ID, false, false},
		{"free", "free.example.com", "", false, false},
	} {
		s, d, err := db.StatusPageTaken(ctx, c.slug, c.domain, c.except)
		check(t, err)
		if s != c.slugTaken || d != c.domTaken {
			t.Errorf("%+v: slug taken %v, domain taken %v", c, s, d)
		}
	}
	// Pages without a domain do not collide.
	a, b := newPage(other.ID, "a-page", mo.ID, ho.ID), newPage(other.ID, "b-page", mo.ID, ho.ID)
	a.CustomDomain, b.CustomDomain = "", ""
	check(t, db.CreateStatusPage(ctx, a, 10))
	check(t, db.CreateStatusPage(ctx, b, 10))
}

func testStatusPageLogo(t *testing.T, e storetest.Engine) {
	db := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	_, other := seed(t, db, "other")
	m := addMonitor(t, db, w.ID, monitor.Config{})
	hb := storetest.NewHeartbeat(t, db, w.ID, t0, 3600, 0, 0)
	p := newPage(w.ID, "acme", m.ID, hb.ID)
	check(t, db.CreateStatusPage(ctx, p, 10))
	_, _, _, err := db.StatusPageLogo(ctx, p.ID)
	wantKind(t, err, errs.ErrNotFound)

	img := append([]byte("\x89PNG\r\n\x1a\n"), 0, 1, 2, 0xff)
	at := t0.Add(time.Minute)
	wantKind(t, db.SetStatusPageLogo(ctx, other.ID, p.ID, "image/png", img, "v1", at), errs.ErrNotFound)
	check(t, db.SetStatusPageLogo(ctx, w.ID, p.ID, "image/png", img, "v1", at))
	ct, data, v, err := db.StatusPageLogo(ctx, p.ID)
	check(t, err)
	if ct != "image/png" || !bytes.Equal(data, img) || v != "v1" {
		t.Fatalf("logo %s %x %s", ct, data, v)
	}
	got, err := db.GetStatusPage(ctx, w.ID, p.ID)
	check(t, err)
	equal(t, got.Logo, &statuspage.Logo{ContentType: "image/png", SizeBytes: len(img), Version: "v1", UpdatedAt: at})
	if !got.UpdatedAt.Equal(at) {
		t.Errorf("a logo marks the page updated: %v", got.UpdatedAt)
	}
	// A page edit keeps the logo.
	p.UpdatedAt = at.Add(time.Second)
	check(t, db.UpdateStatusPage(ctx, p, at))
	got, err = db.GetStatusPage(ctx, w.ID, p.ID)
	check(t, err)
	if got.Logo == nil || got.Logo.Version != "v1" {
		t.Fatalf("the edit lost the logo: %+v", got.Logo)
	}
	// Removing it, even at a time before the page's last change, still
	// moves updated_at on.
	check(t, db.SetStatusPageLogo(ctx, w.ID, p.ID, "", nil, "", t0))
	got, err = db.GetStatusPage(ctx, w.ID, p.ID)
	check(t, err)
	if got.Logo != nil || !got.UpdatedAt.After(p.UpdatedAt) {
		t.Fatalf("after removal: logo %+v, updated %v", got.Logo, got.UpdatedAt)
	}
	_, _, _, err = db.StatusPageLogo(ctx, p.ID)
	wantKind(t, err, errs.ErrNotFound)
}

// testStatusPagesStamp: a page's stamp changes with every change its
// public pages must see (its configuration, a subject deleted, a window
// of the workspace's), and not without one; another workspace's changes
// leave it alone.
func testStatusPagesStamp(t *testing.T, e storetest.Engine) {
	db := openWithWorkflow(t, e)
	_, w := seed(t, db, "acme")
	_, other := seed(t, db, "other")
	m := addMonitor(t, db, w.ID, monitor.Config{})
	hb := storetest.NewHeartbeat(t, db, w.ID, t0, 3600, 0, 0)
	p := newPage(w.ID, "acme", m.ID, hb.ID)
	subjects := []string{m.ID, hb.ID}
	since := t0.AddDate(0, 0, -90)
	stamp := func() string {
		t.Helper()
		s, err := db.StatusPageStamp(ctx, w.ID, p.ID, subjects, since)
		check(t, err)
		return s
	}
	last := stamp()
	step := func(name string) {
		t.Helper()
		s := stamp()
		if s == last {
			t.Errorf("%s: stamp %s did not change", name, s)
		}
		last = s
	}
	check(t, db.CreateStatusPage(ctx, p, 10))
	step("create")
	if s := stamp(); s != last {
		t.Errorf("the stamp changed without a change: %s, %s", last, s)
	}
	p.Title, p.UpdatedAt = "New", t0.Add(time.Second)
	check(t, db.UpdateStatusPage(ctx, p, t0))
	step("update")
	p.PasswordVersion, p.UpdatedAt = 2, t0.Add(2*time.Second)
	check(t, db.UpdateStatusPage(ctx, p, t0.Add(time.Second)))
	step("password")
	check(t, db.SetStatusPageLogo(ctx, w.ID, p.ID, "image/gif", []byte("GIF89a"), "v", t0.Add(3*time.Second)))
	step("logo")
	check(t, db.CreateMaintenanceWindow(ctx, oneOff(other.ID), 10))
	if s := stamp(); s != last {
		t.Errorf("another workspace's window changed the stamp")
	}
	check(t, db.CreateMaintenanceWindow(ctx, oneOff(w.ID, m.ID), 10))
	step("maintenance window")
	check(t, deleteMonitor(db, w.ID, m.ID))
	step("monitor deleted")
	check(t, db.DeleteStatusPage(ctx, w.ID, p.ID))
	step("page deleted")
}
