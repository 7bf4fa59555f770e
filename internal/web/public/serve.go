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
// domain), for the path sub below it; what fails is answered by fail.
func (p *Pages) serve(w http.ResponseWriter, r *http.Request, l *lookup, base, sub string) {
	if err := p.route(w, r, l, base, sub); err != nil {
		p.fail(w, r, err)
	}
}

// route sends a request to the handler of its path.
func (p *Pages) route(w http.ResponseWriter, r *http.Request, l *lookup, base, sub string) error {
	if err := p.allow(r); err != nil {
		return err
	}
	securityHeaders(w.Header(), pageCSP)
	if sub == "" {
		sub = "/"
	}
	post := sub == "/password"
	if !post && r.Method != http.MethodGet && r.Method != http.MethodHead {
		return &refusal{status: http.StatusMethodNotAllowed, text: "Method not allowed.\n", header: [2]string{"Allow", "GET, HEAD"}}
	}
	// The stylesheet and icon are the same for every page: no lookup.
	if strings.HasPrefix(sub, "/assets/") {
		body, ctype, ok := Asset(sub)
		if !ok {
			return errs.ErrNotFound
		}
		if ctype == "image/svg+xml" {
			securityHeaders(w.Header(), imageCSP)
		}
		p.send(w, r, newRendered(body, ctype, time.Time{}), immutableCache, time.Time{})
		return nil
	}
	pg, cfg, err := p.current(r.Context(), l)
	if err != nil {
		return err
	}
	protected := cfg.Visibility == statuspage.Protected
	cache := publicCache
	if protected {
		cache = protectedCache
	}
	switch {
	case strings.HasPrefix(sub, "/theme-") && strings.HasSuffix(sub, ".css"):
		if sub != ThemePath(cfg.Accent) {
			return errs.ErrNotFound
		}
		p.send(w, r, newRendered(Theme(cfg.Accent), "text/css; charset=utf-8", time.Time{}), immutableCache, time.Time{})
		return nil
	case sub == "/logo":
		return p.serveLogo(w, r, pg, cfg)
	case strings.HasPrefix(sub, "/badge/"):
		// Badges are embedded where no cookie goes (a README): on a
		// protected page they are reached by the component's id, which
		// only the page's readers and the API know.
		return p.serveBadge(w, r, pg, strings.TrimPrefix(sub, "/badge/"))
	case post:
		return p.signIn(w, r, cfg, base)
	}
	if protected && !p.signedIn(r, cfg) {
		return p.askPassword(w, r, cfg, base, false, http.StatusUnauthorized)
	}
	if protected {
		w.Header().Set("Vary", "Cookie")
	}
	switch sub {
	case "/":
		return p.servePage(w, r, pg, base, cache)
	case "/summary.json":
		return p.serveSummary(w, r, pg, base, cache, protected)
	case "/history.atom":
		return p.serveFeed(w, r, pg, base, cache)
	case "/history":
		return p.serveHistory(w, r, pg, cfg, base, cache)
	}
	return errs.ErrNotFound
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
	render func(app.StatusView, app.PublicPageConfig) ([]byte, string, error)) error {
	rd, asOf, err := pg.rendering(key, render)
	if err != nil {
		p.log.Error("status page render", "page", pg.id(), "what", key, "err", err)
		return errNotShown
	}
	p.send(w, r, rd, cache, asOf)
	return nil
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

// A refusal is an error answered in plain text: its status, its text
// and a header that goes with it.
type refusal struct {
	status int
	text   string
	header [2]string // name, value
}

func (e *refusal) Error() string { return e.text }

// errNotShown is a page that could not be rendered (the cause is logged
// where it happened).
var errNotShown = &refusal{status: http.StatusInternalServerError, text: "This status page could not be shown.\n"}

// fail answers err, what a handler returned: its own plain answer, the
// not-found page, nothing when the reader left, or, when a page cannot
// be shown because the database is away, 503. It is the pages' one error
// writer.
func (p *Pages) fail(w http.ResponseWriter, r *http.Request, err error) {
	var rf *refusal
	switch {
	case errors.As(err, &rf):
		if rf.header[0] != "" {
			w.Header().Set(rf.header[0], rf.header[1])
		}
		plain(w, rf.status, rf.text)
	case errs.KindOf(err) == errs.KindNotFound:
		p.notFound(w, r)
	case errors.Is(err, context.Canceled):
		// the reader left
	default:
		p.log.Warn("status page unavailable", "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", "5")
		plain(w, http.StatusServiceUnavailable, "This status page is briefly unavailable; try again in a few seconds.\n")
	}
}
