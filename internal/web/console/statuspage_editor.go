package console

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// StatusPageEditor is GET /w/{ws}/status-pages/{id}.
type StatusPageEditor struct {
	// Shell: set Shell.Active to NavStatusPages; roles without
	// status_pages:write see the page read-only.
	Shell Shell
	ID    string
	// Settings and Errors are the settings form's values and messages.
	Settings StatusPageSettings
	Errors   FormErrors
	// Slug is the stored slug (the public address, the preview's).
	Slug string
	// Protected is the stored visibility; PasswordStored says a password
	// is kept (never shown), so "Unpublish" needs none typed.
	Protected, PasswordStored bool
	// CustomDomain is the stored custom domain; DNSTarget is what its DNS
	// record must point at: the service's host name (DNSType "CNAME"), or
	// its address when the service is reached by one ("A" or "AAAA").
	CustomDomain, DNSTarget, DNSType string
	// LogoVersion is the page's logo's version, "" without a logo (the
	// public page serves it at /status/{slug}/logo?v={version});
	// LogoErrors are the upload's messages (POST …/logo, multipart, field
	// "logo").
	LogoVersion string
	LogoErrors  FormErrors
	// Groups are the page's groups in order.
	Groups []EditorGroup
	// Subjects are the monitors and heartbeats not yet on the page.
	Subjects []SubjectChoice
	// AddName, AddSubject, AddGroup re-fill the add-component form
	// (fields "name", "subject", "group"); AddErrors are its messages
	// ("c-name", "c-subject").
	AddName, AddSubject string
	AddGroup            int
	AddErrors           FormErrors
	// GroupName re-fills the add-group form (field "name");
	// GroupErrors are its messages ("g-name").
	GroupName   string
	GroupErrors FormErrors
	// Version changes with every save, so the preview frame reloads.
	Version string
}

func (StatusPageEditor) template() string { return "statuspage_editor.html" }

// StatusPageSettings re-fill the editor's settings form (POST
// /w/{ws}/status-pages/{id}, fields "title", "slug", "description",
// "visibility" (public or password), "password", "domain",
// "show-uptime", "show-incidents", "show-maintenance").
type StatusPageSettings struct {
	Title, Slug, Description string
	// Protected is the visibility "password".
	Protected                                  bool
	CustomDomain                               string
	ShowUptime, ShowIncidents, ShowMaintenance bool
}

// EditorComponent is one component in the editor's list.
type EditorComponent struct {
	// ID is the component's id (spc_…), in its forms' paths.
	ID string
	// Name is its public name.
	Name string
	// Subject says what it shows: "monitor Website" or "heartbeat
	// Backups" (the private name, for the editor only).
	Subject string
	// First and Last say it cannot move up or down.
	First, Last bool
}

// EditorGroup is one group of components; Index is its place, in its
// forms' paths.
type EditorGroup struct {
	Index       int
	Name        string
	Components  []EditorComponent
	First, Last bool
}

// SubjectChoice is a monitor or heartbeat the add-component form offers:
// Value "monitor:mon_…" or "heartbeat:hb_…".
type SubjectChoice struct {
	Value, Label string
}

// Write reports whether the person may change the page.
func (v StatusPageEditor) Write() bool { return v.Shell.Role.Grants("status_pages:write") }

// PublicPath is the page's public address.
func (v StatusPageEditor) PublicPath() string { return "/status/" + v.Slug }

// Path is the editor's path, the base of its forms' actions.
func (v StatusPageEditor) Path() string {
	return "/w/" + v.Shell.WorkspaceID + "/status-pages/" + v.ID
}

// EditorCSP is CSP with frames of the app's own pages allowed: the status
// page editor shows its preview in one.
const EditorCSP = CSP + "; frame-src 'self'"

// formText is the form's field, judged where it enters: text that is not
// valid UTF-8 without NUL goes no further and gets a message.
func formText(q *request, fe *FormErrors, name, field string) string {
	return judgedText(q.r.PostForm, fe, name, field)
}

// pageField is the form field an app error's pointer names.
func pageField(ptr string) string {
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	switch {
	case len(parts) >= 5 && parts[0] == "groups" && parts[4] == "name":
		return "c-name"
	case len(parts) >= 4 && parts[0] == "groups" && parts[2] == "components":
		return "c-subject"
	case len(parts) == 3 && parts[0] == "groups" && parts[2] == "name":
		return "g-name"
	case parts[0] == "customDomain":
		return "domain"
	}
	return parts[0]
}

// pageErrors turns an app error into a form's messages; ok is false for
// errors that are not the person's to fix.
func pageErrors(err error) (FormErrors, bool) {
	var e *errs.Error
	if !errors.As(err, &e) || statusOf(err) == http.StatusInternalServerError || errs.KindOf(err) == errs.KindNotFound ||
		errs.KindOf(err) == errs.KindForbidden || errs.KindOf(err) == errs.KindInsufficientScope {
		return FormErrors{}, false
	}
	return errorFields(e, pageField), true
}

// editorView is the editor of the stored page p.
func (w *Server) editorView(q *request, p statuspage.Config) (StatusPageEditor, error) {
	v := StatusPageEditor{ID: p.ID, Slug: p.Slug, Protected: p.Visibility == statuspage.Protected,
		PasswordStored: p.PasswordHash != "", CustomDomain: p.CustomDomain,
		Version: strconv.FormatInt(p.UpdatedAt.UnixMicro(), 36),
		Settings: StatusPageSettings{Title: p.Title, Slug: p.Slug, Description: p.Description,
			Protected: p.Visibility == statuspage.Protected, CustomDomain: p.CustomDomain, ShowUptime: p.ShowUptime,
			ShowIncidents: p.ShowIncidents, ShowMaintenance: p.ShowMaintenance}}
	if p.Logo != nil {
		v.LogoVersion = p.Logo.Version
	}
	v.DNSTarget, v.DNSType = w.serviceHost(q), "CNAME"
	if ip := net.ParseIP(v.DNSTarget); ip != nil {
		v.DNSType = "AAAA"
		if ip.To4() != nil {
			v.DNSType = "A"
		}
	}
	names := map[string]string{}
	var choices []SubjectChoice
	page := app.PageRequest{Limit: app.MaxPageLimit}
	for {
		list, err := w.app.ListMonitors(q.ctx(), q.actor, app.MonitorFilter{}, page)
		if err != nil {
			return v, err
		}
		for _, m := range list.Items {
			names[m.ID] = "monitor " + m.Name
			choices = append(choices, SubjectChoice{Value: "monitor:" + m.ID, Label: "Monitor: " + m.Name})
		}
		if page.Cursor = list.NextCursor; page.Cursor == "" {
			break
		}
	}
	for {
		list, err := w.app.ListHeartbeats(q.ctx(), q.actor, app.HeartbeatFilter{}, page)
		if err != nil {
			return v, err
		}
		for _, h := range list.Items {
			names[h.ID] = "heartbeat " + h.Name
			choices = append(choices, SubjectChoice{Value: "heartbeat:" + h.ID, Label: "Heartbeat: " + h.Name})
		}
		if page.Cursor = list.NextCursor; page.Cursor == "" {
			break
		}
	}
	shown := map[string]bool{}
	for gi, g := range p.Groups {
		eg := EditorGroup{Index: gi, Name: g.Name, First: gi == 0, Last: gi == len(p.Groups)-1}
		for ci, c := range g.Components {
			shown[c.SubjectID()] = true
			eg.Components = append(eg.Components, EditorComponent{ID: c.ID, Name: c.Name, Subject: names[c.SubjectID()],
				First: gi == 0 && ci == 0, Last: gi == len(p.Groups)-1 && ci == len(g.Components)-1})
		}
		v.Groups = append(v.Groups, eg)
	}
	for _, c := range choices {
		if _, id, _ := strings.Cut(c.Value, ":"); !shown[id] {
			v.Subjects = append(v.Subjects, c)
		}
	}
	v.AddGroup = len(p.Groups) - 1
	return v, nil
}

// serviceHost is the host a custom domain's DNS record points at: the
// base URL's, or the request's when there is none.
func (w *Server) serviceHost(q *request) string {
	if u, err := url.Parse(w.base); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return hostOnly(q.r.Host)
}

// renderEditor answers with the editor of the stored page p, changed by
// edit (a failed form's values and messages).
func (w *Server) renderEditor(q *request, status int, p statuspage.Config, edit func(*StatusPageEditor)) error {
	q.w.Header().Set("Content-Security-Policy", EditorCSP)
	return w.servePage(q, NavStatusPages, status, func(s Shell) (view, error) {
		v, err := w.editorView(q, p)
		if err != nil {
			return nil, err
		}
		v.Shell = s
		if edit != nil {
			edit(&v)
		}
		return v, nil
	})
}

func (w *Server) statusPageEditor(q *request) error {
	id, err := w.statusPageID(q)
	if err != nil {
		return err
	}
	p, err := w.app.GetStatusPage(q.ctx(), q.actor, id)
	if err != nil {
		return err
	}
	return w.renderEditor(q, http.StatusOK, p, nil)
}

// changePage applies change to the stored page and saves it, redirecting
// to the editor (at anchor); a change the app refuses shows the editor
// again with show's values and messages. change may itself refuse with
// an errs error.
func (w *Server) changePage(q *request, anchor string, change func(cur statuspage.Config, d *app.StatusPageDraft) error,
	show func(v *StatusPageEditor, fe FormErrors)) error {
	id, err := w.statusPageID(q)
	if err != nil {
		return err
	}
	if err := w.may(q, account.ScopeStatusPagesWrite); err != nil {
		return err
	}
	if err := q.parse(); err != nil {
		return err
	}
	_, err = w.app.UpdateStatusPage(q.ctx(), q.actor, id, func(cur statuspage.Config) (app.StatusPageDraft, error) {
		d := app.StatusPageDraftOf(cur)
		return d, change(cur, &d)
	})
	if err == nil {
		return q.redirect(statusPagesPath(q)+"/"+id+anchor, "status-page-saved")
	}
	fe, ok := pageErrors(err)
	if !ok {
		return err
	}
	p, err := w.app.GetStatusPage(q.ctx(), q.actor, id)
	if err != nil {
		return err
	}
	return w.renderEditor(q, http.StatusUnprocessableEntity, p, func(v *StatusPageEditor) { show(v, fe) })
}

// refused is a form's problems found before the app was asked.
func refused(fe FormErrors) error {
	e := &errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields"}
	for name, msg := range fe.Fields {
		e.Fields = append(e.Fields, errs.FieldError{Pointer: "/" + name, Message: msg})
	}
	return e
}

func settingsErrors(v *StatusPageEditor, fe FormErrors) { v.Errors = fe }

func (w *Server) saveStatusPage(q *request) error {
	var typed StatusPageSettings
	return w.changePage(q, "", func(_ statuspage.Config, d *app.StatusPageDraft) error {
		var fe FormErrors
		typed = StatusPageSettings{Title: formText(q, &fe, "title", "title"), Slug: formText(q, &fe, "slug", "slug"),
			Description: formText(q, &fe, "description", "description"), CustomDomain: formText(q, &fe, "domain", "domain"),
			Protected:  q.r.PostForm.Get("visibility") == "password",
			ShowUptime: q.r.PostForm.Get("show-uptime") != "", ShowIncidents: q.r.PostForm.Get("show-incidents") != "",
			ShowMaintenance: q.r.PostForm.Get("show-maintenance") != ""}
		password := formText(q, &fe, "password", "password")
		visibility := formText(q, &fe, "visibility", "visibility")
		if fe.Any() {
			return refused(fe)
		}
		d.Title, d.Slug, d.Description = typed.Title, strings.TrimSpace(typed.Slug), typed.Description
		d.CustomDomain, d.Password = strings.TrimSpace(typed.CustomDomain), password
		d.Visibility = statuspage.Visibility(visibility)
		d.ShowUptime, d.ShowIncidents, d.ShowMaintenance = typed.ShowUptime, typed.ShowIncidents, typed.ShowMaintenance
		return nil
	}, func(v *StatusPageEditor, fe FormErrors) {
		v.Settings, v.Errors = typed, fe
	})
}

func (w *Server) publishStatusPage(q *request) error {
	return w.changePage(q, "", func(_ statuspage.Config, d *app.StatusPageDraft) error {
		d.Visibility = statuspage.Public
		return nil
	}, settingsErrors)
}

func (w *Server) unpublishStatusPage(q *request) error {
	return w.changePage(q, "", func(_ statuspage.Config, d *app.StatusPageDraft) error {
		d.Visibility = statuspage.Protected
		return nil
	}, settingsErrors)
}

func (w *Server) deleteStatusPage(q *request) error {
	id, err := w.statusPageID(q)
	if err != nil {
		return err
	}
	if err := w.may(q, account.ScopeStatusPagesWrite); err != nil {
		return err
	}
	if err := w.app.DeleteStatusPage(q.ctx(), q.actor, id); err != nil {
		return err
	}
	return q.redirect(statusPagesPath(q), "status-page-deleted")
}
