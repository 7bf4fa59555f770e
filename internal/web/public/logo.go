package public

import (
	"net/http"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
)

// serveLogo answers /logo?v=…: the page's uploaded logo, cached forever
// under its version.
func (p *Pages) serveLogo(w http.ResponseWriter, r *http.Request, pg *page, cfg app.PublicPageConfig) error {
	if cfg.LogoVersion == "" {
		return errs.ErrNotFound
	}
	pg.mu.Lock()
	rd := pg.logo
	pg.mu.Unlock()
	if rd == nil || rd.etag != `"`+cfg.LogoVersion+`"` {
		ctype, data, version, err := p.app.PublicStatusPageLogo(r.Context(), cfg.ID)
		if err != nil {
			return err
		}
		rd = &rendered{body: data, ctype: ctype, etag: `"` + version + `"`}
		pg.mu.Lock()
		pg.logo = rd
		pg.mu.Unlock()
	}
	cache := "public, max-age=300"
	if r.URL.Query().Get("v") == cfg.LogoVersion {
		cache = immutableCache
	}
	securityHeaders(w.Header(), imageCSP)
	p.send(w, r, rd, cache, time.Time{})
	return nil
}
