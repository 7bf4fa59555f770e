package public

import (
	"net/http"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// servePage answers / under the page's base: the status page.
func (p *Pages) servePage(w http.ResponseWriter, r *http.Request, pg *page, base, cache string) error {
	return p.sendView(w, r, pg, "html|"+base, cache, func(v app.StatusView, c app.PublicPageConfig) ([]byte, string, error) {
		b, err := RenderPage(v.Page, Location{Base: base})
		return b, "text/html; charset=utf-8", err
	})
}

// RenderPage renders a status page.
func RenderPage(p statuspage.Page, o Location) ([]byte, error) {
	v := newView(p, o)
	v.Headline = p.Headline()
	for _, m := range p.Maintenance {
		if m.Active {
			v.Active = append(v.Active, m)
		} else {
			v.Scheduled = append(v.Scheduled, m)
		}
	}
	return execute("page.html", v)
}
