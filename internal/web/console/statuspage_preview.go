package console

import (
	"net/http"

	"github.com/tocsin/tocsin/internal/web/public"
)

// previewCSP is the public page's policy, framed only by the app's own
// pages (the editor).
const previewCSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'self'; base-uri 'none'"

// statusPagePreview renders the page as its public page would, with what
// is saved, for a member who may read it: the editor's frame.
func (w *Server) statusPagePreview(q *request) error {
	id, err := w.statusPageID(q)
	if err != nil {
		return err
	}
	v, err := w.app.StatusPagePreview(q.ctx(), q.actor, id)
	if err != nil {
		return err
	}
	// The public page's assets, theme and logo are served under its
	// address whatever its visibility.
	b, err := public.RenderPage(v.Page, public.Location{Base: public.StatusPrefix + v.Page.Slug})
	h := q.w.Header()
	h.Set("Content-Security-Policy", previewCSP)
	h.Set("X-Frame-Options", "SAMEORIGIN")
	h.Set("X-Robots-Tag", "noindex")
	w.html(q.w, q.r, http.StatusOK, b, err)
	return nil
}
