package public

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// The security headers of every public response. The pages use no script
// and no inline style (the accent colour comes in a generated stylesheet),
// load nothing from other hosts, and may not be framed.
const (
	pageCSP  = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	imageCSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
)

func securityHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// Cache lifetimes. A public page may be kept by shared caches for a few
// seconds (it changes no faster); a protected page only by its reader's
// browser, revalidated each time; assets named by their content forever.
const (
	publicCache    = "public, max-age=5"
	protectedCache = "private, no-cache"
	badgeCache     = "public, max-age=60"
	immutableCache = "public, max-age=31536000, immutable"
)

// serve answers a request for the page l under base ("" on a custom
// domain), for the path sub below it.
func (p *Pages) serve(w http.ResponseWriter, r *http.Request, l *lookup, base, sub string) {
	if !p.allow(w, r) {
		return
	}
	securityHeaders(w.Header(), pageCSP)
	if sub == "" {
		sub = "/"
	}
	post := sub == "/password"
	if !post && r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		plain(w, http.StatusMethodNotAllowed, "Method not allowed.\n")
		return
	}
	// The stylesheet and icon are the same for every page: no lookup.
	if strings.HasPrefix(sub, "/assets/") {
		body, ctype, ok := Asset(sub)
		if !ok {
			p.notFound(w, r)
			return
		}
		if ctype == "image/svg+xml" {
			securityHeaders(w.Header(), imageCSP)
		}
		p.send(w, r, newRendered(body, ctype, time.Time{}), immutableCache, time.Time{})
		return
	}
	pg, cfg, err := p.current(r.Context(), l)
	if err != nil {
		p.unavailable(w, r, err)
		return
	}
	protected := cfg.Visibility == statuspage.Protected
	cache := publicCache
	if protected {
		cache = protectedCache
	}
	switch {
	case strings.HasPrefix(sub, "/theme-") && strings.HasSuffix(sub, ".css"):
		if sub != ThemePath(cfg.Accent) {
			p.notFound(w, r)
			return
		}
		p.send(w, r, newRendered(Theme(cfg.Accent), "text/css; charset=utf-8", time.Time{}), immutableCache, time.Time{})
		return
	case sub == "/logo":
		p.serveLogo(w, r, pg, cfg)
		return
	case strings.HasPrefix(sub, "/badge/"):
		// Badges are embedded where no cookie goes (a README): on a
		// protected page they are reached by the component's id, which
		// only the page's readers and the API know.
		p.serveBadge(w, r, pg, strings.TrimPrefix(sub, "/badge/"))
		return
	case post:
		p.signIn(w, r, cfg, base)
		return
	}
	if protected && !p.signedIn(r, cfg) {
		p.askPassword(w, r, cfg, base, false, http.StatusUnauthorized)
		return
	}
	if protected {
		w.Header().Set("Vary", "Cookie")
	}
	switch sub {
	case "/":
		p.sendView(w, r, pg, "html|"+base, cache, func(v app.StatusView, c app.PublicPageConfig) ([]byte, string, error) {
			b, err := RenderPage(v.Page, Location{Base: base})
			return b, "text/html; charset=utf-8", err
		})
	case "/summary.json":
		if !protected {
			w.Header().Set("Access-Control-Allow-Origin", "*")
		}
		p.sendView(w, r, pg, "summary|"+base, cache, func(v app.StatusView, c app.PublicPageConfig) ([]byte, string, error) {
			b, err := statuspage.SummaryJSON(v.Page, p.pageURL(r, base))
			return b, "application/json", err
		})
	case "/history.atom":
		p.sendView(w, r, pg, "atom|"+base, cache, func(v app.StatusView, c app.PublicPageConfig) ([]byte, string, error) {
			b, err := Feed(v.Page, v.Recent, p.pageURL(r, base))
			return b, "application/atom+xml; charset=utf-8", err
		})
	case "/history":
		p.serveHistory(w, r, pg, cfg, base, cache)
	default:
		p.notFound(w, r)
	}
}

// pageURL is the page's absolute URL as this request reached it.
func (p *Pages) pageURL(r *http.Request, base string) string {
	if base != "" && p.opts.BaseURL != "" {
		return strings.TrimSuffix(p.opts.BaseURL, "/") + base
	}
	scheme := "http"
	if r.TLS != nil || p.secure {
		scheme = "https"
	}
	return scheme + "://" + r.Host + base
}

// sendView sends what render makes of the page's current view.
func (p *Pages) sendView(w http.ResponseWriter, r *http.Request, pg *page, key, cache string,
	render func(app.StatusView, app.PublicPageConfig) ([]byte, string, error)) {
	rd, asOf, err := pg.rendering(key, render)
	if err != nil {
		p.log.Error("status page render", "page", pg.id(), "what", key, "err", err)
		plain(w, http.StatusInternalServerError, "This status page could not be shown.\n")
		return
	}
	p.send(w, r, rd, cache, asOf)
}

// send writes rd, answering conditional requests, with its Age when it
// is a render of a view: the time since asOf, when what it shows was last
// known current.
func (p *Pages) send(w http.ResponseWriter, r *http.Request, rd *rendered, cache string, asOf time.Time) {
	h := w.Header()
	if rd.compressible() {
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			h.Set("Content-Encoding", "gzip")
			rd = rd.gzipped()
		}
	}
	h.Set("Content-Type", rd.ctype)
	h.Set("Cache-Control", cache)
	h.Set("ETag", rd.etag)
	if !asOf.IsZero() {
		h.Set("Age", strconv.Itoa(max(int(p.opts.Now().Sub(asOf)/time.Second), 0)))
	}
	if !unconditional(r) {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(rd.body))
		return
	}
	// What http.ServeContent answers such a request, in one write: it
	// copies a body 32 KiB a write, which doubled the CPU a cached page of
	// 50 components (650 KiB) took to send.
	h.Set("Accept-Ranges", "bytes")
	h.Set("Content-Length", strconv.Itoa(len(rd.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(rd.body)
	}
}

// acceptsGzip reports whether r's Accept-Encoding takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.TrimSpace(coding) != "*" {
				continue
			}
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// unconditional reports whether r asks for the whole body whatever it
// is: no range and no precondition.
func unconditional(r *http.Request) bool {
	for _, k := range []string{"Range", "If-Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"} {
		if _, ok := r.Header[k]; ok {
			return false
		}
	}
	return true
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg))
}

func (p *Pages) notFound(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header(), pageCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		_, _ = w.Write(notFoundPage)
	}
}

var notFoundPage = RenderNotFound()

// unavailable answers when a page cannot be shown: not found, or never
// rendered because the database is away.
func (p *Pages) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	if errs.KindOf(err) == errs.KindNotFound {
		p.notFound(w, r)
		return
	}
	if errors.Is(err, context.Canceled) {
		return // the reader left
	}
	p.log.Warn("status page unavailable", "path", r.URL.Path, "err", err)
	w.Header().Set("Retry-After", "5")
	plain(w, http.StatusServiceUnavailable, "This status page is briefly unavailable; try again in a few seconds.\n")
}

// serveBadge answers /badge/{component}.svg: the component's state, or with
// ?uptime=24h|7d|30d its availability over that span.
func (p *Pages) serveBadge(w http.ResponseWriter, r *http.Request, pg *page, name string) {
	id, ok := strings.CutSuffix(name, ".svg")
	window := r.URL.Query().Get("uptime")
	if !ok || (window != "" && window != "24h" && window != "7d" && window != "30d") {
		p.notFound(w, r)
		return
	}
	rd, asOf, err := pg.rendering("badge|"+id+"|"+window, func(v app.StatusView, _ app.PublicPageConfig) ([]byte, string, error) {
		for _, g := range v.Page.Groups {
			for _, c := range g.Components {
				if c.ID != id {
					continue
				}
				if window == "" {
					return StateBadge(c), "image/svg+xml", nil
				}
				b, err := UptimeBadge(c, window)
				return b, "image/svg+xml", err
			}
		}
		return nil, "", errs.ErrNotFound
	})
	if err != nil {
		p.notFound(w, r)
		return
	}
	securityHeaders(w.Header(), imageCSP)
	w.Header().Del("X-Frame-Options")
	p.send(w, r, rd, badgeCache, asOf)
}

// serveLogo answers /logo?v=…: the page's uploaded logo, cached forever
// under its version.
func (p *Pages) serveLogo(w http.ResponseWriter, r *http.Request, pg *page, cfg app.PublicPageConfig) {
	if cfg.LogoVersion == "" {
		p.notFound(w, r)
		return
	}
	pg.mu.Lock()
	rd := pg.logo
	pg.mu.Unlock()
	if rd == nil || rd.etag != `"`+cfg.LogoVersion+`"` {
		ctype, data, version, err := p.app.PublicStatusPageLogo(r.Context(), cfg.ID)
		if err != nil {
			p.unavailable(w, r, err)
			return
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
}

// serveHistory answers /history?month=YYYY-MM (default: this month).
func (p *Pages) serveHistory(w http.ResponseWriter, r *http.Request, pg *page, cfg app.PublicPageConfig, base, cache string) {
	now := p.opts.Now().UTC()
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	if q := r.URL.Query().Get("month"); q != "" {
		m, err := time.Parse("2006-01", q)
		if err != nil || m.After(month) || m.Year() < 2000 {
			plain(w, http.StatusNotFound, "No such month; give ?month=YYYY-MM, up to this month.\n")
			return
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
			p.unavailable(w, r, err)
			return
		default:
			p.log.Warn("status page history failed; serving the last one", "page", cfg.ID, "err", err)
		}
	}
	p.send(w, r, rd, cache, rd.builtAt)
}
