package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/statuspage"
	"github.com/tocsin/tocsin/internal/store"
)

// Status pages: what a workspace shows its customers. These use cases keep
// the pages' configuration for the API and the web app (with an actor);
// statuspages_public.go reads it for the public pages (without one).

// Limits on status pages. The API's schema takes these from here, so the
// document and the rule are one.
const (
	// MaxStatusPages is the default bound on one workspace's pages
	// (Config.DefaultMaxStatusPages).
	MaxStatusPages              = 20
	MinStatusPageSlug           = 2
	MaxStatusPageSlug           = 63
	MaxStatusPageTitle          = 100
	MaxStatusPageDescription    = 1000
	MaxStatusPageGroups         = 20
	MaxStatusPageGroupName      = 100
	MaxStatusPageComponents     = 100 // on one page, all groups together
	MaxStatusPageComponentName  = 100
	MaxStatusPageComponentText  = 500
	MinStatusPagePassword       = 8
	MaxStatusPagePassword       = 128
	MaxStatusPageDomain         = 253
	MaxStatusPageFooterLinks    = 10
	MaxStatusPageFooterLabel    = 50
	MaxStatusPageFooterURL      = 2048
	DefaultStatusPageAccent     = "#1f6feb"
	DefaultStatusPageUptimeDays = 90
)

// StatusPageUptimeDays are the bar windows a page may show, in days.
var StatusPageUptimeDays = []int{30, 60, 90}

// ReservedStatusPageSlugs are slugs no page may take: paths the server
// keeps, or may keep, for itself.
var ReservedStatusPageSlugs = []string{"api", "static", "assets", "admin", "login", "logout", "status", "www", "app"}

// StatusPageDraft is a status page as a user writes it. Zero values take
// the defaults: visibility public, uptime over 90 days, paused components
// hidden, the default accent. ShowUptime, ShowIncidents and
// ShowMaintenance have no zero default; the edges default them to true.
type StatusPageDraft struct {
	Slug        string
	Title       string
	Description string
	Visibility  statuspage.Visibility
	// Password sets a new password when not ""; RemovePassword forgets
	// the stored one (only on a public page). Neither keeps it.
	Password         string
	RemovePassword   bool
	CustomDomain     string
	ShowUptime       bool
	UptimeDays       int
	PausedComponents statuspage.PausedComponents
	ShowIncidents    bool
	ShowMaintenance  bool
	Accent           string
	FooterLinks      []statuspage.Link
	Groups           []StatusPageGroupDraft
}

// StatusPageGroupDraft is a group as a user writes it.
type StatusPageGroupDraft struct {
	Name       string
	Components []StatusPageComponentDraft
}

// StatusPageComponentDraft shows a monitor or a heartbeat (exactly one)
// under a public name.
type StatusPageComponentDraft struct {
	MonitorID   string
	HeartbeatID string
	Name        string
	Description string
}

// config is the stored form of d's fields (no ids, password or times).
func (d StatusPageDraft) config() statuspage.Config {
	p := statuspage.Config{Slug: d.Slug, Title: strings.TrimSpace(d.Title), Description: d.Description,
		Visibility: d.Visibility, CustomDomain: strings.ToLower(d.CustomDomain), ShowUptime: d.ShowUptime,
		UptimeDays: d.UptimeDays, PausedComponents: d.PausedComponents, ShowIncidents: d.ShowIncidents,
		ShowMaintenance: d.ShowMaintenance, Accent: strings.ToLower(d.Accent)}
	if p.Visibility == "" {
		p.Visibility = statuspage.Public
	}
	if p.UptimeDays == 0 {
		p.UptimeDays = DefaultStatusPageUptimeDays
	}
	if p.PausedComponents == "" {
		p.PausedComponents = statuspage.HidePaused
	}
	if p.Accent == "" {
		p.Accent = DefaultStatusPageAccent
	}
	for _, l := range d.FooterLinks {
		p.FooterLinks = append(p.FooterLinks, statuspage.Link{Label: strings.TrimSpace(l.Label), URL: l.URL})
	}
	for _, g := range d.Groups {
		cg := statuspage.ConfigGroup{Name: strings.TrimSpace(g.Name), Components: []statuspage.ConfigComponent{}}
		for _, c := range g.Components {
			cg.Components = append(cg.Components, statuspage.ConfigComponent{MonitorID: c.MonitorID,
				HeartbeatID: c.HeartbeatID, Name: strings.TrimSpace(c.Name), Description: c.Description})
		}
		p.Groups = append(p.Groups, cg)
	}
	return p
}

// ValidateStatusPage checks a draft's fields without the database, so the
// API runs it next to its schema checks and one answer lists every field.
// Whether the slug or domain is taken, whether the monitors and
// heartbeats are the workspace's and whether a password is stored are
// judged by the use cases.
func ValidateStatusPage(d StatusPageDraft) []errs.FieldError {
	var problems []errs.FieldError
	add := func(ptr, format string, args ...any) {
		problems = append(problems, errs.FieldError{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	text := func(ptr, s string, minLen, maxLen int) {
		switch n := utf8.RuneCountInString(s); {
		case !clean.Valid(s):
			add(ptr, "must be valid UTF-8 without NUL")
		case minLen > 0 && strings.TrimSpace(s) == "":
			add(ptr, "must not be blank")
		case n > maxLen:
			add(ptr, "must be at most %d characters", maxLen)
		}
	}
	if msg := slugProblem(d.Slug); msg != "" {
		add("/slug", "%s", msg)
	}
	text("/title", d.Title, 1, MaxStatusPageTitle)
	text("/description", d.Description, 0, MaxStatusPageDescription)
	switch d.Visibility {
	case "", statuspage.Public, statuspage.Protected:
	default:
		add("/visibility", "must be public or password")
	}
	if d.Password != "" {
		switch n := utf8.RuneCountInString(d.Password); {
		case !clean.Valid(d.Password):
			add("/password", "must be valid UTF-8 without NUL")
		case n < MinStatusPagePassword || n > MaxStatusPagePassword:
			add("/password", "must be %d to %d characters", MinStatusPagePassword, MaxStatusPagePassword)
		}
	}
	if d.CustomDomain != "" {
		if msg := domainProblem(strings.ToLower(d.CustomDomain)); msg != "" {
			add("/customDomain", "%s", msg)
		}
	}
	if d.UptimeDays != 0 && !slices.Contains(StatusPageUptimeDays, d.UptimeDays) {
		add("/uptimeDays", "must be 30, 60 or 90")
	}
	switch d.PausedComponents {
	case "", statuspage.HidePaused, statuspage.ShowPaused:
	default:
		add("/pausedComponents", "must be hide or show")
	}
	if d.Accent != "" && !accentColour(d.Accent) {
		add("/accent", "must be a colour written #rrggbb, such as %s", DefaultStatusPageAccent)
	}
	if len(d.FooterLinks) > MaxStatusPageFooterLinks {
		add("/footerLinks", "must list at most %d links", MaxStatusPageFooterLinks)
	}
	for i, l := range d.FooterLinks {
		text(fmt.Sprintf("/footerLinks/%d/label", i), l.Label, 1, MaxStatusPageFooterLabel)
		if msg := linkProblem(l.URL); msg != "" {
			add(fmt.Sprintf("/footerLinks/%d/url", i), "%s", msg)
		}
	}
	problems = append(problems, groupProblems(d.Groups)...)
	return problems
}

// groupProblems checks the groups and their components; a subject shown
// twice is named at its second place.
func groupProblems(groups []StatusPageGroupDraft) []errs.FieldError {
	var problems []errs.FieldError
	add := func(ptr, format string, args ...any) {
		problems = append(problems, errs.FieldError{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	if len(groups) > MaxStatusPageGroups {
		add("/groups", "must list at most %d groups", MaxStatusPageGroups)
	}
	seen := map[string]bool{}
	n := 0
	for gi, g := range groups {
		gp := fmt.Sprintf("/groups/%d", gi)
		switch {
		case !clean.Valid(g.Name):
			add(gp+"/name", "must be valid UTF-8 without NUL")
		case utf8.RuneCountInString(g.Name) > MaxStatusPageGroupName:
			add(gp+"/name", "must be at most %d characters", MaxStatusPageGroupName)
		}
		for ci, c := range g.Components {
			n++
			cp := fmt.Sprintf("%s/components/%d", gp, ci)
			switch {
			case (c.MonitorID == "") == (c.HeartbeatID == ""):
				add(cp, "give exactly one of monitorId and heartbeatId")
			case c.MonitorID != "" && seen["m"+c.MonitorID]:
				add(cp+"/monitorId", "is already on this page: a monitor is shown at most once")
			case c.HeartbeatID != "" && seen["h"+c.HeartbeatID]:
				add(cp+"/heartbeatId", "is already on this page: a heartbeat is shown at most once")
			}
			if (c.MonitorID == "") != (c.HeartbeatID == "") {
				seen["m"+c.MonitorID], seen["h"+c.HeartbeatID] = c.MonitorID != "", c.HeartbeatID != ""
			}
			switch m := utf8.RuneCountInString(c.Name); {
			case !clean.Valid(c.Name):
				add(cp+"/name", "must be valid UTF-8 without NUL")
			case strings.TrimSpace(c.Name) == "":
				add(cp+"/name", "must not be blank: it is the component's public name")
			case m > MaxStatusPageComponentName:
				add(cp+"/name", "must be at most %d characters", MaxStatusPageComponentName)
			}
			switch {
			case !clean.Valid(c.Description):
				add(cp+"/description", "must be valid UTF-8 without NUL")
			case utf8.RuneCountInString(c.Description) > MaxStatusPageComponentText:
				add(cp+"/description", "must be at most %d characters", MaxStatusPageComponentText)
			}
		}
	}
	if n > MaxStatusPageComponents {
		add("/groups", "must hold at most %d components in all", MaxStatusPageComponents)
	}
	return problems
}

// slugProblem says what is wrong with a slug, or "".
func slugProblem(s string) string {
	const rule = "must be 2 to 63 lower-case letters, digits and single hyphens, not starting or ending with a hyphen"
	if len(s) < MinStatusPageSlug || len(s) > MaxStatusPageSlug || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return rule
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return rule
		}
	}
	if slices.Contains(ReservedStatusPageSlugs, s) {
		return "is reserved; choose another"
	}
	return ""
}

// domainProblem says what is wrong with a lower-cased host name, or "".
func domainProblem(h string) string {
	const rule = "must be a host name such as status.example.com: letters, digits, hyphens and dots, without a port"
	if len(h) > MaxStatusPageDomain {
		return fmt.Sprintf("must be at most %d characters", MaxStatusPageDomain)
	}
	if net.ParseIP(h) != nil {
		return "must be a host name, not an IP address"
	}
	if !strings.Contains(h, ".") {
		return rule
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return rule
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return rule
			}
		}
	}
	if tld := labels[len(labels)-1]; strings.Trim(tld, "0123456789") == "" {
		return "must be a host name, not an IP address"
	}
	return ""
}

// accentColour reports whether s is #rrggbb (either case).
func accentColour(s string) bool {
	if len(s) != 7 || s[0] != '#' {
		return false
	}
	for i := 1; i < 7; i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// linkProblem says what is wrong with a footer link's URL, or "".
func linkProblem(s string) string {
	const rule = "must be an absolute http or https URL"
	if len(s) > MaxStatusPageFooterURL {
		return fmt.Sprintf("must be at most %d characters", MaxStatusPageFooterURL)
	}
	if !clean.Valid(s) || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return rule + ", without spaces or control characters"
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return rule
	}
	return ""
}

// checkStatusPage validates d as a whole — fields, that its slug and
// domain are free, that its monitors and heartbeats are the workspace's,
// that a protected page has a password — and returns the page to store,
// with its components' ids: a subject already on prev keeps its
// component's id (badge URLs are made of them). prev is the stored page an
// update starts from (nil for a create).
func (a *App) checkStatusPage(ctx context.Context, actor Actor, d StatusPageDraft, prev *statuspage.Config, now time.Time) (statuspage.Config, error) {
	problems := ValidateStatusPage(d)
	p := d.config()
	exceptID := ""
	if prev != nil {
		exceptID = prev.ID
		p.PasswordHash, p.PasswordVersion = prev.PasswordHash, prev.PasswordVersion
	}
	if d.RemovePassword && p.PasswordHash != "" {
		p.PasswordHash, p.PasswordVersion = "", p.PasswordVersion+1
	}
	if p.Visibility == statuspage.Protected && d.Password == "" && p.PasswordHash == "" {
		problems = append(problems, errs.FieldError{Pointer: "/password", Message: "is required for a page whose visibility is password"})
	}
	if slugProblem(p.Slug) == "" || (p.CustomDomain != "" && domainProblem(p.CustomDomain) == "") {
		fields, err := a.takenFields(ctx, p, exceptID)
		if err != nil {
			return statuspage.Config{}, err
		}
		problems = append(problems, fields...)
	}
	fields, err := a.unknownComponentFields(ctx, actor.WorkspaceID, d.Groups, nil)
	if err != nil {
		return statuspage.Config{}, err
	}
	problems = append(problems, fields...)
	if len(problems) > 0 {
		return statuspage.Config{}, invalid(problems)
	}
	if d.Password != "" {
		h, err := secrets.HashPassword(d.Password)
		if err != nil {
			return statuspage.Config{}, err
		}
		p.PasswordHash, p.PasswordVersion = h, p.PasswordVersion+1
	}
	kept := map[string]string{}
	if prev != nil {
		for _, g := range prev.Groups {
			for _, c := range g.Components {
				kept[c.SubjectID()] = c.ID
			}
		}
	}
	for gi := range p.Groups {
		for ci := range p.Groups[gi].Components {
			c := &p.Groups[gi].Components[ci]
			if c.ID = kept[c.SubjectID()]; c.ID == "" {
				c.ID = ids.New(ids.StatusPageComponent, now)
			}
		}
	}
	return p, nil
}

// takenFields names the slug and custom domain when another page of the
// installation has them. The message never says which workspace has it.
func (a *App) takenFields(ctx context.Context, p statuspage.Config, exceptID string) ([]errs.FieldError, error) {
	slugTaken, domainTaken, err := a.store.StatusPageTaken(ctx, p.Slug, p.CustomDomain, exceptID)
	if err != nil {
		return nil, err
	}
	var fields []errs.FieldError
	if slugTaken {
		fields = append(fields, errs.FieldError{Pointer: "/slug", Message: "is taken; choose another"})
	}
	if domainTaken {
		fields = append(fields, errs.FieldError{Pointer: "/customDomain", Message: "is already used by another status page"})
	}
	return fields, nil
}

// unknownComponentFields names each component whose monitor or heartbeat
// is not the workspace's. Given storeErr (the store's verdict after a
// race) it reads the ids from there and asks nothing.
func (a *App) unknownComponentFields(ctx context.Context, wsID string, groups []StatusPageGroupDraft, storeErr error) ([]errs.FieldError, error) {
	var monitors, heartbeats []string
	for _, g := range groups {
		for _, c := range g.Components {
			if c.MonitorID != "" {
				monitors = append(monitors, c.MonitorID)
			} else if c.HeartbeatID != "" {
				heartbeats = append(heartbeats, c.HeartbeatID)
			}
		}
	}
	var missingM, missingH []string
	if storeErr != nil {
		var (
			um *store.UnknownMonitorsError
			uh *store.UnknownHeartbeatsError
		)
		if errors.As(storeErr, &um) {
			missingM = um.IDs
		}
		if errors.As(storeErr, &uh) {
			missingH = uh.IDs
		}
	} else {
		var err error
		if missingM, err = a.store.UnknownMonitors(ctx, wsID, monitors); err != nil {
			return nil, err
		}
		if missingH, err = a.store.UnknownHeartbeats(ctx, wsID, heartbeats); err != nil {
			return nil, err
		}
	}
	unknown := map[string]bool{}
	for _, id := range missingM {
		unknown["m"+id] = true
	}
	for _, id := range missingH {
		unknown["h"+id] = true
	}
	var fields []errs.FieldError
	for gi, g := range groups {
		for ci, c := range g.Components {
			ptr := fmt.Sprintf("/groups/%d/components/%d/", gi, ci)
			switch {
			case c.MonitorID != "" && unknown["m"+c.MonitorID]:
				fields = append(fields, errs.FieldError{Pointer: ptr + "monitorId", Message: "no such monitor in this workspace"})
			case c.HeartbeatID != "" && unknown["h"+c.HeartbeatID]:
				fields = append(fields, errs.FieldError{Pointer: ptr + "heartbeatId", Message: "no such heartbeat in this workspace"})
			}
		}
	}
	return fields, nil
}

// statusPageStoreErr turns what the store refused after the checks passed
// (a subject deleted, a slug or domain taken meanwhile) into the
// request's fields.
func (a *App) statusPageStoreErr(ctx context.Context, err error, p statuspage.Config, d StatusPageDraft) error {
	if errors.Is(err, store.ErrConflict) {
		fields, terr := a.takenFields(ctx, p, p.ID)
		if terr != nil || len(fields) == 0 {
			return err
		}
		return invalid(fields)
	}
	var (
		um *store.UnknownMonitorsError
		uh *store.UnknownHeartbeatsError
	)
	if errors.As(err, &um) || errors.As(err, &uh) {
		fields, ferr := a.unknownComponentFields(ctx, p.WorkspaceID, d.Groups, err)
		if ferr != nil || len(fields) == 0 {
			return err
		}
		return invalid(fields)
	}
	return err
}

// CreateStatusPage validates and stores a new page.
func (a *App) CreateStatusPage(ctx context.Context, actor Actor, d StatusPageDraft) (statuspage.Config, error) {
	if err := actor.Require(account.ScopeStatusPagesWrite); err != nil {
		return statuspage.Config{}, err
	}
	now := a.now().UTC().Truncate(time.Microsecond)
	p, err := a.checkStatusPage(ctx, actor, d, nil, now)
	if err != nil {
		return statuspage.Config{}, err
	}
	p.ID, p.WorkspaceID, p.CreatedAt, p.UpdatedAt = ids.New(ids.StatusPage, now), actor.WorkspaceID, now, now
	if err := a.store.CreateStatusPage(ctx, p, a.cfg.DefaultMaxStatusPages); err != nil {
		return statuspage.Config{}, a.statusPageStoreErr(ctx, err, p, d)
	}
	a.pagesChanged.Add(1)
	return p, nil
}

// GetStatusPage returns one page of the actor's workspace.
func (a *App) GetStatusPage(ctx context.Context, actor Actor, id string) (statuspage.Config, error) {
	if err := actor.Require(account.ScopeStatusPagesRead); err != nil {
		return statuspage.Config{}, err
	}
	return a.store.GetStatusPage(ctx, actor.WorkspaceID, id)
}

// ListStatusPages pages through the workspace's pages in creation order.
func (a *App) ListStatusPages(ctx context.Context, actor Actor, pr PageRequest) (Page[statuspage.Config], error) {
	if err := actor.Require(account.ScopeStatusPagesRead); err != nil {
		return Page[statuspage.Config]{}, err
	}
	after, limit, err := pr.decode()
	if err != nil {
		return Page[statuspage.Config]{}, err
	}
	ps, err := a.store.ListStatusPages(ctx, actor.WorkspaceID, after, limit+1)
	if err != nil {
		return Page[statuspage.Config]{}, err
	}
	total, err := a.store.CountStatusPages(ctx, actor.WorkspaceID)
	if err != nil {
		return Page[statuspage.Config]{}, err
	}
	page := Page[statuspage.Config]{Total: total, HasTotal: true}
	if len(ps) > limit {
		ps = ps[:limit]
		page.NextCursor = encodeCursor(ps[limit-1].ID)
	}
	page.Items = ps
	return page, nil
}

// StatusPageUpdate computes the new draft of a page from its stored form.
type StatusPageUpdate func(cur statuspage.Config) (StatusPageDraft, error)

// UpdateStatusPage applies an update and validates the result as a whole,
// optimistically: if the page changed in between, it starts over from the
// new version (a few times).
func (a *App) UpdateStatusPage(ctx context.Context, actor Actor, id string, update StatusPageUpdate) (statuspage.Config, error) {
	if err := actor.Require(account.ScopeStatusPagesWrite); err != nil {
		return statuspage.Config{}, err
	}
	for range 3 {
		p, err := a.updateStatusPageOnce(ctx, actor, id, update)
		if !errors.Is(err, store.ErrStale) {
			return p, err
		}
	}
	return statuspage.Config{}, store.ErrStale
}

func (a *App) updateStatusPageOnce(ctx context.Context, actor Actor, id string, update StatusPageUpdate) (statuspage.Config, error) {
	cur, err := a.store.GetStatusPage(ctx, actor.WorkspaceID, id)
	if err != nil {
		return statuspage.Config{}, err
	}
	d, err := update(cur)
	if err != nil {
		return statuspage.Config{}, err
	}
	now := a.now().UTC().Truncate(time.Microsecond)
	p, err := a.checkStatusPage(ctx, actor, d, &cur, now)
	if err != nil {
		return statuspage.Config{}, err
	}
	p.ID, p.WorkspaceID, p.CreatedAt, p.Logo = cur.ID, cur.WorkspaceID, cur.CreatedAt, cur.Logo
	// Strictly later than the version read, so a concurrent writer in the
	// same microsecond still sees a change.
	p.UpdatedAt = now
	if !p.UpdatedAt.After(cur.UpdatedAt) {
		p.UpdatedAt = cur.UpdatedAt.Add(time.Microsecond)
	}
	if err := a.store.UpdateStatusPage(ctx, p, cur.UpdatedAt); err != nil {
		return statuspage.Config{}, a.statusPageStoreErr(ctx, err, p, d)
	}
	a.pagesChanged.Add(1)
	return p, nil
}

// DeleteStatusPage removes a page; its public URLs answer not found at
// once.
func (a *App) DeleteStatusPage(ctx context.Context, actor Actor, id string) error {
	if err := actor.Require(account.ScopeStatusPagesWrite); err != nil {
		return err
	}
	defer a.pagesChanged.Add(1)
	return a.store.DeleteStatusPage(ctx, actor.WorkspaceID, id)
}

// StatusPageDraftOf is the draft that keeps the stored page p as it is
// (without a new password: the stored one stays), for the edges' updates
// that change one thing.
func StatusPageDraftOf(p statuspage.Config) StatusPageDraft {
	d := StatusPageDraft{Slug: p.Slug, Title: p.Title, Description: p.Description, Visibility: p.Visibility,
		CustomDomain: p.CustomDomain, ShowUptime: p.ShowUptime, UptimeDays: p.UptimeDays, PausedComponents: p.PausedComponents,
		ShowIncidents: p.ShowIncidents, ShowMaintenance: p.ShowMaintenance, Accent: p.Accent, FooterLinks: p.FooterLinks}
	for _, g := range p.Groups {
		dg := StatusPageGroupDraft{Name: g.Name}
		for _, c := range g.Components {
			dg.Components = append(dg.Components, StatusPageComponentDraft{MonitorID: c.MonitorID, HeartbeatID: c.HeartbeatID,
				Name: c.Name, Description: c.Description})
		}
		d.Groups = append(d.Groups, dg)
	}
	return d
}
