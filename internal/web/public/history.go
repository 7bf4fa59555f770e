package public

import (
	"context"
	"net/http"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// serveHistory answers /history?month=YYYY-MM (default: this month).
func (p *Pages) serveHistory(w http.ResponseWriter, r *http.Request, pg *page, cfg app.PublicPageConfig, base, cache string) error {
	now := p.opts.Now().UTC()
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	if q := r.URL.Query().Get("month"); q != "" {
		m, err := time.Parse("2006-01", q)
		if err != nil || m.After(month) || m.Year() < 2000 {
			return &refusal{status: http.StatusNotFound, text: "No such month; give ?month=YYYY-MM, up to this month.\n"}
		}
		month = m
	}
	key := month.Format("2006-01") + "|" + base
	pg.mu.Lock()
	rd := pg.history[key]
	pg.mu.Unlock()
	if rd == nil || p.opts.Now().Sub(rd.builtAt) >= p.opts.Fresh {
		ctx, cancel := context.WithTimeout(r.Context(), p.opts.Timeout)
		h, err := p.app.StatusPageHistory(ctx, cfg, month)
		cancel()
		var body []byte
		if err == nil {
			body, err = RenderHistory(h, Location{Base: base})
		}
		switch {
		case err == nil:
			rd = newRendered(body, "text/html; charset=utf-8", p.opts.Now())
			pg.mu.Lock()
			if pg.history == nil || len(pg.history) > 64 {
				pg.history = map[string]*rendered{}
			}
			pg.history[key] = rd
			pg.mu.Unlock()
		case rd == nil:
			return err
		default:
			p.log.Warn("status page history failed; serving the last one", "page", cfg.ID, "err", err)
		}
	}
	p.send(w, r, rd, cache, rd.builtAt)
	return nil
}

// RenderHistory renders one month of a page's past incidents, with
// links to the neighbouring months that hold some (?month=YYYY-MM).
func RenderHistory(h statuspage.History, o Location) ([]byte, error) {
	v := newView(h.Page, o)
	v.Month, v.Past, v.Older, v.Newer = h.Month.UTC(), h.Incidents, h.Older.UTC(), h.Newer.UTC()
	return execute("history.html", v)
}
