package console

import (
	"net/http"
	"strings"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// StatusPages is GET /w/{ws}/status-pages; a failed POST of its "New
// status page" form (fields "title", "slug") shows it again with the
// values typed and their errors.
type StatusPages struct {
	// Shell: set Shell.Active to NavStatusPages; roles that grant
	// status_pages:write see the form.
	Shell Shell
	Rows  []StatusPageRow
	// Title and Slug re-fill the form.
	Title, Slug string
	Errors      FormErrors
}

func (StatusPages) template() string { return "statuspages.html" }

// StatusPageRow is one page in the list.
type StatusPageRow struct {
	// ID is the page's id (sp_…), in /w/{ws}/status-pages/{id}.
	ID string
	// Title is its name.
	Title string
	// Slug makes its public address /status/{slug}.
	Slug string
	// Protected says readers need a password: the page is not published
	// to everyone.
	Protected bool
	// CustomDomain is its own host name, "" for none.
	CustomDomain string
	// Components is how many components it shows.
	Components int
}

func statusPagesPath(q *request) string { return "/w/" + q.actor.WorkspaceID + "/status-pages" }

// statusPageID is the path's page id; anything that is not one is not
// found, before it reaches the database.
func (w *Server) statusPageID(q *request) (string, error) { return w.pathID(q, ids.StatusPage) }

func (w *Server) statusPages(q *request) error {
	return w.renderStatusPages(q, http.StatusOK, StatusPages{})
}

func (w *Server) renderStatusPages(q *request, status int, v StatusPages) error {
	return w.servePage(q, NavStatusPages, status, func(s Shell) (view, error) {
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
		return v, nil
	})
}

func (w *Server) createStatusPage(q *request) error {
	if err := w.may(q, account.ScopeStatusPagesWrite); err != nil {
		return err
	}
	if err := q.parse(); err != nil {
		return err
	}
	var fe FormErrors
	v := StatusPages{Title: formText(q, &fe, "title", "title"), Slug: formText(q, &fe, "slug", "slug")}
	if !fe.Any() {
		p, err := w.app.CreateStatusPage(q.ctx(), q.actor, app.StatusPageDraft{Title: v.Title, Slug: strings.TrimSpace(v.Slug),
			ShowUptime: true, ShowIncidents: true, ShowMaintenance: true})
		if err == nil {
			return q.redirect(statusPagesPath(q)+"/"+p.ID, "status-page-created")
		}
		var ok bool
		if fe, ok = pageErrors(err); !ok {
			return err
		}
	}
	v.Errors = fe
	return w.renderStatusPages(q, http.StatusUnprocessableEntity, v)
}
