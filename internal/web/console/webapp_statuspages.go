package console

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/statuspage"
	"github.com/tocsin/tocsin/internal/web/public"
)

// The status page pages: the list, the editor and its preview. Each
// change is one app.UpdateStatusPage of the page as stored, with what one
// form changes, as the API's PATCH does: the app validates the whole page
// again. A page is live as soon as it is saved; "publish" makes it public
// and "unpublish" asks readers for its stored password again.

// previewCSP is the public page's policy, framed only by the app's own
// pages (the editor).
const previewCSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'self'; base-uri 'none'"

func statusPagesPath(q *request) string { return "/w/" + q.actor.WorkspaceID + "/status-pages" }

// statusPageID is the path's page id; anything that is not one is not
// found, before it reaches the database.
func (w *Server) statusPageID(q *request) (string, bool) { return w.pathID(q, ids.StatusPage) }

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

func (w *Server) statusPages(q *request) {
	w.renderStatusPages(q, http.StatusOK, StatusPages{})
}

func (w *Server) renderStatusPages(q *request, status int, v StatusPages) {
	w.render(q, NavStatusPages, status, func(s Shell) ([]byte, error) {
		v.Shell = s
		page := app.PageRequest{Limit: app.MaxPageLimit}
		for {
			list, err := w.app.ListStatusPages(q.ctx(), q.actor, page)
			if err != nil {
				return nil, err
			}
			for _, p := range list.Items {
				n := 0
				for _, g := range p.Groups {
					n += len(g.Components)
				}
				v.Rows = append(v.Rows, StatusPageRow{ID: p.ID, Title: p.Title, Slug: p.Slug,
					Protected: p.Visibility == statuspage.Protected, CustomDomain: p.CustomDomain, Components: n})
			}
			if list.NextCursor == "" {
				break
			}
			page.Cursor = list.NextCursor
		}
		return RenderStatusPages(v)
	})
}

func (w *Server) createStatusPage(q *request) {
	if !w.may(q, account.ScopeStatusPagesWrite) || !q.parse() {
		return
	}
	var fe FormErrors
	v := StatusPages{Title: formText(q, &fe, "title", "title"), Slug: formText(q, &fe, "slug", "slug")}
	if !fe.Any() {
		p, err := w.app.CreateStatusPage(q.ctx(), q.actor, app.StatusPageDraft{Title: v.Title, Slug: strings.TrimSpace(v.Slug),
			ShowUptime: true, ShowIncidents: true, ShowMaintenance: true})
		if err == nil {
			q.redirect(statusPagesPath(q)+"/"+p.ID, "status-page-created")
			return
		}
		var ok bool
		if fe, ok = pageErrors(err); !ok {
			w.fail(q.w, q.r, &q.ws, err)
			return
		}
	}
	v.Errors = fe
	w.renderStatusPages(q, http.StatusUnprocessableEntity, v)
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
func (w *Server) renderEditor(q *request, status int, p statuspage.Config, edit func(*StatusPageEditor)) {
	q.w.Header().Set("Content-Security-Policy", EditorCSP)
	w.render(q, NavStatusPages, status, func(s Shell) ([]byte, error) {
		v, err := w.editorView(q, p)
		if err != nil {
			return nil, err
		}
		v.Shell = s
		if edit != nil {
			edit(&v)
		}
		return RenderStatusPageEditor(v)
	})
}

func (w *Server) statusPageEditor(q *request) {
	id, ok := w.statusPageID(q)
	if !ok {
		return
	}
	p, err := w.app.GetStatusPage(q.ctx(), q.actor, id)
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	w.renderEditor(q, http.StatusOK, p, nil)
}

// changePage applies change to the stored page and saves it, redirecting
// to the editor (at anchor); a change the app refuses shows the editor
// again with show's values and messages. change may itself refuse with
// an errs error.
func (w *Server) changePage(q *request, anchor string, change func(cur statuspage.Config, d *app.StatusPageDraft) error,
	show func(v *StatusPageEditor, fe FormErrors)) {
	id, ok := w.statusPageID(q)
	if !ok || !w.may(q, account.ScopeStatusPagesWrite) || !q.parse() {
		return
	}
	_, err := w.app.UpdateStatusPage(q.ctx(), q.actor, id, func(cur statuspage.Config) (app.StatusPageDraft, error) {
		d := app.StatusPageDraftOf(cur)
		return d, change(cur, &d)
	})
	if err == nil {
		q.redirect(statusPagesPath(q)+"/"+id+anchor, "status-page-saved")
		return
	}
	fe, ok := pageErrors(err)
	if !ok {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	p, gerr := w.app.GetStatusPage(q.ctx(), q.actor, id)
	if gerr != nil {
		w.fail(q.w, q.r, &q.ws, gerr)
		return
	}
	w.renderEditor(q, http.StatusUnprocessableEntity, p, func(v *StatusPageEditor) { show(v, fe) })
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

func (w *Server) saveStatusPage(q *request) {
	var typed StatusPageSettings
	w.changePage(q, "", func(_ statuspage.Config, d *app.StatusPageDraft) error {
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

func (w *Server) publishStatusPage(q *request) {
	w.changePage(q, "", func(_ statuspage.Config, d *app.StatusPageDraft) error {
		d.Visibility = statuspage.Public
		return nil
	}, settingsErrors)
}

func (w *Server) unpublishStatusPage(q *request) {
	w.changePage(q, "", func(_ statuspage.Config, d *app.StatusPageDraft) error {
		d.Visibility = statuspage.Protected
		return nil
	}, settingsErrors)
}

func (w *Server) deleteStatusPage(q *request) {
	id, ok := w.statusPageID(q)
	if !ok || !w.may(q, account.ScopeStatusPagesWrite) {
		return
	}
	if err := w.app.DeleteStatusPage(q.ctx(), q.actor, id); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect(statusPagesPath(q), "status-page-deleted")
}

// findComponent is where component id is in cur, and so in the draft
// made of it.
func findComponent(cur statuspage.Config, id string) (gi, ci int, err error) {
	for gi, g := range cur.Groups {
		for ci, c := range g.Components {
			if c.ID == id {
				return gi, ci, nil
			}
		}
	}
	return 0, 0, errs.ErrNotFound
}

func (w *Server) addComponent(q *request) {
	var name, subject string
	group := -1
	w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		var fe FormErrors
		name, subject = formText(q, &fe, "c-name", "c-name"), formText(q, &fe, "subject", "c-subject")
		c := app.StatusPageComponentDraft{Name: name}
		kind, sid, _ := strings.Cut(subject, ":")
		switch {
		case kind == "monitor" && ids.Valid(ids.Monitor, sid):
			c.MonitorID = sid
		case kind == "heartbeat" && ids.Valid(ids.Heartbeat, sid):
			c.HeartbeatID = sid
		default:
			if fe.Fields == nil {
				fe.Fields = map[string]string{}
			}
			fe.Fields["c-subject"] = "Choose a monitor or a heartbeat of this workspace."
		}
		if len(d.Groups) == 0 {
			d.Groups = append(d.Groups, app.StatusPageGroupDraft{})
		}
		group = len(d.Groups) - 1
		if g := q.r.PostForm.Get("group"); g != "" {
			n, err := strconv.Atoi(g)
			if err != nil || n < 0 || n >= len(d.Groups) {
				if fe.Fields == nil {
					fe.Fields = map[string]string{}
				}
				fe.Fields["c-subject"] = "Choose one of the page's groups."
			} else {
				group = n
			}
		}
		if fe.Any() {
			return refused(fe)
		}
		d.Groups[group].Components = append(d.Groups[group].Components, c)
		return nil
	}, func(v *StatusPageEditor, fe FormErrors) {
		v.AddName, v.AddSubject, v.AddErrors = name, subject, fe
		if group >= 0 && group < len(v.Groups) {
			v.AddGroup = group
		}
	})
}

func (w *Server) addGroup(q *request) {
	var name string
	w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		var fe FormErrors
		if name = formText(q, &fe, "g-name", "g-name"); fe.Any() {
			return refused(fe)
		}
		d.Groups = append(d.Groups, app.StatusPageGroupDraft{Name: name})
		return nil
	}, func(v *StatusPageEditor, fe FormErrors) {
		v.GroupName, v.GroupErrors = name, fe
	})
}

// direction is the form's "dir": -1 up, 1 down.
func direction(q *request) (int, error) {
	switch q.r.PostForm.Get("dir") {
	case "up":
		return -1, nil
	case "down":
		return 1, nil
	}
	return 0, &errs.Error{Kind: errs.KindInvalid, Message: "Choose to move up or down."}
}

// moveComponent moves a component one place up or down; at its group's
// edge it goes into the next group that way.
func (w *Server) moveComponent(q *request) {
	id := q.r.PathValue("component")
	w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		dir, err := direction(q)
		if err != nil {
			return err
		}
		gi, ci, err := findComponent(cur, id)
		if err != nil {
			return err
		}
		comps := d.Groups[gi].Components
		switch to := ci + dir; {
		case to >= 0 && to < len(comps):
			comps[ci], comps[to] = comps[to], comps[ci]
		case gi+dir >= 0 && gi+dir < len(d.Groups):
			c := comps[ci]
			d.Groups[gi].Components = slices.Delete(comps, ci, ci+1)
			next := &d.Groups[gi+dir]
			if dir < 0 {
				next.Components = append(next.Components, c)
			} else {
				next.Components = slices.Insert(next.Components, 0, c)
			}
		}
		return nil
	}, settingsErrors)
}

func (w *Server) removeComponent(q *request) {
	id := q.r.PathValue("component")
	w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		gi, ci, err := findComponent(cur, id)
		if err != nil {
			return err
		}
		d.Groups[gi].Components = slices.Delete(d.Groups[gi].Components, ci, ci+1)
		return nil
	}, settingsErrors)
}

// groupIndex is the path's group, a place in d.
func groupIndex(q *request, d *app.StatusPageDraft) (int, error) {
	n, err := strconv.Atoi(q.r.PathValue("group"))
	if err != nil || n < 0 || n >= len(d.Groups) {
		return 0, errs.ErrNotFound
	}
	return n, nil
}

func (w *Server) moveGroup(q *request) {
	w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		dir, err := direction(q)
		if err != nil {
			return err
		}
		gi, err := groupIndex(q, d)
		if err != nil {
			return err
		}
		if to := gi + dir; to >= 0 && to < len(d.Groups) {
			d.Groups[gi], d.Groups[to] = d.Groups[to], d.Groups[gi]
		}
		return nil
	}, settingsErrors)
}

func (w *Server) removeGroup(q *request) {
	w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		gi, err := groupIndex(q, d)
		if err != nil {
			return err
		}
		d.Groups = slices.Delete(d.Groups, gi, gi+1)
		return nil
	}, settingsErrors)
}

// reorderComponents sets every component's group and place at once, from
// the fields "order" ("{group}:{component id}", in order): what the
// editor's drag and drop sends. Every component must be named once.
func (w *Server) reorderComponents(q *request) {
	w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		bad := &errs.Error{Kind: errs.KindInvalid, Message: "The new order does not name each component once; nothing was moved."}
		byID := map[string]app.StatusPageComponentDraft{}
		for gi, g := range cur.Groups {
			for ci, c := range g.Components {
				byID[c.ID] = d.Groups[gi].Components[ci]
			}
		}
		for gi := range d.Groups {
			d.Groups[gi].Components = nil
		}
		order := q.r.PostForm["order"]
		if len(order) != len(byID) {
			return bad
		}
		for _, o := range order {
			g, id, _ := strings.Cut(o, ":")
			n, err := strconv.Atoi(g)
			c, ok := byID[id]
			if err != nil || n < 0 || n >= len(d.Groups) || !ok {
				return bad
			}
			delete(byID, id)
			d.Groups[n].Components = append(d.Groups[n].Components, c)
		}
		return nil
	}, settingsErrors)
}

// statusPagePreview renders the page as its public page would, with what
// is saved, for a member who may read it: the editor's frame.
func (w *Server) statusPagePreview(q *request) {
	id, ok := w.statusPageID(q)
	if !ok {
		return
	}
	v, err := w.app.StatusPagePreview(q.ctx(), q.actor, id)
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	// The public page's assets, theme and logo are served under its
	// address whatever its visibility.
	b, err := public.RenderPage(v.Page, public.Location{Base: public.StatusPrefix + v.Page.Slug})
	h := q.w.Header()
	h.Set("Content-Security-Policy", previewCSP)
	h.Set("X-Frame-Options", "SAMEORIGIN")
	h.Set("X-Robots-Tag", "noindex")
	w.html(q.w, q.r, http.StatusOK, b, err)
}

// maxLogoForm bounds a logo upload's body: the largest logo and the
// multipart form around it.
const maxLogoForm = app.MaxStatusPageLogo + 8<<10

// uploadLogo stores the form's file (multipart, field "logo") as the
// page's logo, as the API's PUT …/logo does with a body.
func (w *Server) uploadLogo(q *request) {
	id, ok := w.statusPageID(q)
	if !ok || !w.may(q, account.ScopeStatusPagesWrite) {
		return
	}
	refuse := func(msg string) {
		p, err := w.app.GetStatusPage(q.ctx(), q.actor, id)
		if err != nil {
			w.fail(q.w, q.r, &q.ws, err)
			return
		}
		w.renderEditor(q, http.StatusUnprocessableEntity, p, func(v *StatusPageEditor) {
			v.LogoErrors = FormErrors{Fields: map[string]string{"logo": msg}}
		})
	}
	tooBig := fmt.Sprintf("The logo must be at most %d KiB.", app.MaxStatusPageLogo>>10)
	if err := q.r.ParseMultipartForm(maxLogoForm); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			refuse(tooBig)
		} else {
			refuse("Choose an image file to upload.")
		}
		return
	}
	f, _, err := q.r.FormFile("logo")
	if err != nil {
		refuse("Choose an image file to upload.")
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, app.MaxStatusPageLogo+1))
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	if _, err := w.app.SetStatusPageLogo(q.ctx(), q.actor, id, data); err != nil {
		var e *errs.Error
		if errs.KindOf(err) != errs.KindInvalid || !errors.As(err, &e) {
			w.fail(q.w, q.r, &q.ws, err)
			return
		}
		refuse(e.Message)
		return
	}
	q.redirect(statusPagesPath(q)+"/"+id+"#logo-h", "status-page-saved")
}

func (w *Server) removeLogo(q *request) {
	id, ok := w.statusPageID(q)
	if !ok || !w.may(q, account.ScopeStatusPagesWrite) {
		return
	}
	if _, err := w.app.DeleteStatusPageLogo(q.ctx(), q.actor, id); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect(statusPagesPath(q)+"/"+id+"#logo-h", "status-page-saved")
}
