package public

import (
	"net/http"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// serveSummary answers /summary.json, the page in the shape status
// aggregators read (statuspage.SummaryJSON); anyone's script may read a
// page that is not protected.
func (p *Pages) serveSummary(w http.ResponseWriter, r *http.Request, pg *page, base, cache string, protected bool) error {
	if !protected {
		w.Header().Set("Access-Control-Allow-Origin", "*")
	}
	return p.sendView(w, r, pg, "summary|"+base, cache, func(v app.StatusView, c app.PublicPageConfig) ([]byte, string, error) {
		b, err := statuspage.SummaryJSON(v.Page, p.pageURL(r, base))
		return b, "application/json", err
	})
}
