// Package web serves what people read in a browser: the public status
// pages (this file and its neighbours) and, later, the web app. It reaches
// the database only through package app.
//
// A status page must stay up and fast while everything else is on fire, so
// nothing a reader asks for waits on the database once the page has been
// rendered: every page lives in a cache, rendered from one app.StatusView,
// and a request that finds its render older than Refresh starts a new one
// in the background and is answered from the old (with its Age). Only the
// first request for a page (or for a page whose database is gone) waits for
// a render. The public routes never touch the API's keys or rate limits;
// they have a per-address limit of their own, far above human use.
package web

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clientaddr"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ratelimit"
)

// StatusPrefix is the path every status page lives under, by slug.
const StatusPrefix = "/status/"

// PublicOptions tune the public pages; zero values take the defaults.
type PublicOptions struct {
	// BaseURL is where readers reach the service; requests for its host
	// are never taken for a custom domain.
	BaseURL string
	// TrustedProxies decide who a request's client is (the per-address
	// limit).
	TrustedProxies clientaddr.Resolver
	// Refresh is how old a render may grow before a request starts the
	// next one (default 3 s): a page is rendered at most that often, and a
	// change shows within about that long, on every node.
	Refresh time.Duration
	// Timeout bounds a render (default 10 s).
	Timeout time.Duration
	// PerMinute and Burst are each client address's budget over all
	// pages (default 1200 a minute in bursts of 300).
	PerMinute, Burst int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Public serves /status/{slug}/… and pages' custom domains.
type Public struct {
	app      *app.App
	log      *slog.Logger
	opts     PublicOptions
	baseHost string
	secure   bool // cookies need HTTPS: the base URL is https
	limits   *ratelimit.Memory

	mu     sync.Mutex
	pages  map[string]*page   // by page id
	slugs  map[string]*lookup // by slug
	hosts  map[string]*lookup // by custom domain
	closed bool
}

// NewPublic returns the public pages' handler.
func NewPublic(a *app.App, log *slog.Logger, opts PublicOptions) *Public {
	if opts.Refresh <= 0 {
		opts.Refresh = 3 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.PerMinute <= 0 {
		opts.PerMinute, opts.Burst = 1200, 300
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := &Public{app: a, log: log, opts: opts, limits: ratelimit.New(),
		pages: map[string]*page{}, slugs: map[string]*lookup{}, hosts: map[string]*lookup{}}
	if i := strings.Index(opts.BaseURL, "://"); i >= 0 {
		p.secure = strings.HasPrefix(opts.BaseURL, "https://")
		host := opts.BaseURL[i+3:]
		if j := strings.IndexByte(host, '/'); j >= 0 {
			host = host[:j]
		}
		p.baseHost = hostOnly(host)
	}
	return p
}

// hostOnly is a Host header's name, lower case, without its port.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// customDomain reports whether host may name a page's custom domain: a
// dotted name that is not an address and not the service's own host.
func (p *Public) customDomain(host string) bool {
	if host == "" || host == p.baseHost || !strings.Contains(host, ".") || len(host) > 253 {
		return false
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return false
	}
	return true
}

// ServeDomain serves r when its Host is a page's custom domain, and
// reports whether it did. A request for any other host is left alone.
func (p *Public) ServeDomain(w http.ResponseWriter, r *http.Request) bool {
	host := hostOnly(r.Host)
	if !p.customDomain(host) {
		return false
	}
	l := p.find(r.Context(), p.hosts, host, func(ctx context.Context) (app.PublicPageConfig, error) {
		return p.app.PublicStatusPageByDomain(ctx, host)
	})
	if l.notFound() {
		return false
	}
	p.serve(w, r, l, "", r.URL.Path)
	return true
}

// ServeHTTP serves /status/{slug}/….
func (p *Public) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, StatusPrefix)
	if !ok {
		p.notFound(w, r)
		return
	}
	slug, sub, _ := strings.Cut(rest, "/")
	if !validSlug(slug) {
		p.notFound(w, r)
		return
	}
	l := p.find(r.Context(), p.slugs, slug, func(ctx context.Context) (app.PublicPageConfig, error) {
		return p.app.PublicStatusPage(ctx, slug)
	})
	p.serve(w, r, l, StatusPrefix+slug, "/"+sub)
}

// validSlug spares the database names no page can have.
func validSlug(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// lookup is a page's configuration as last read by its slug or domain.
type lookup struct {
	mu         sync.Mutex
	cfg        app.PublicPageConfig
	err        error // errs not-found, or why the first read failed
	at         time.Time
	ready      chan struct{} // closed once the first read ended
	refreshing bool
	usedAt     time.Time
}

func (l *lookup) notFound() bool {
	<-l.ready
	return errs.KindOf(l.err) == errs.KindNotFound
}

// maxLookups bounds each lookup map: names asked for that match no page
// are remembered too, and a flood of them must not grow memory.
const maxLookups = 10000

// find returns the lookup of key in m, reading it with read when it is
// missing (the caller waits) or older than Refresh (in the background).
func (p *Public) find(ctx context.Context, m map[string]*lookup, key string, read func(context.Context) (app.PublicPageConfig, error)) *lookup {
	now := p.opts.Now()
	p.mu.Lock()
	l := m[key]
	if l == nil {
		if len(m) >= maxLookups {
			clear(m)
		}
		l = &lookup{ready: make(chan struct{})}
		m[key] = l
		p.mu.Unlock()
		p.readLookup(l, read, true)
		return l
	}
	p.mu.Unlock()
	select {
	case <-l.ready:
	case <-ctx.Done():
		return l
	}
	l.mu.Lock()
	l.usedAt = now
	stale := now.Sub(l.at) >= p.opts.Refresh && !l.refreshing
	if stale {
		l.refreshing = true
	}
	l.mu.Unlock()
	if stale {
		go p.readLookup(l, read, false)
	}
	return l
}

// readLookup reads l anew. A failed read keeps what l had: a page goes on
// being served while its database is away.
func (p *Public) readLookup(l *lookup, read func(context.Context) (app.PublicPageConfig, error), first bool) {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.Timeout)
	defer cancel()
	cfg, err := read(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refreshing = false
	switch {
	case err == nil:
		l.cfg, l.err, l.at = cfg, nil, p.opts.Now()
	case errs.KindOf(err) == errs.KindNotFound:
		l.cfg, l.err, l.at = app.PublicPageConfig{}, err, p.opts.Now()
	case first:
		l.err, l.at = err, time.Time{} // try again on the next request
	default:
		p.log.Warn("status page lookup failed; serving the last one read", "err", err)
	}
	if first {
		close(l.ready)
	}
}

// current is l's configuration, or why there is none.
func (l *lookup) current() (app.PublicPageConfig, error) {
	<-l.ready
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cfg.ID == "" && l.err == nil {
		return l.cfg, errors.New("status page lookup did not finish")
	}
	if l.cfg.ID == "" {
		return l.cfg, l.err
	}
	return l.cfg, nil
}

// allow spends one request of the client's budget; false means the
// request has been answered with 429.
func (p *Public) allow(w http.ResponseWriter, r *http.Request) bool {
	st := p.limits.Take("addr|"+p.opts.TrustedProxies.Client(r), p.opts.Now(), p.opts.PerMinute, p.opts.Burst)
	if st.OK {
		return true
	}
	secs := max(int((st.Retry+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	plain(w, http.StatusTooManyRequests, "Too many requests; try again in "+strconv.Itoa(secs)+" s.\n")
	return false
}

// Run drops, every minute, the pages and lookups nobody has asked for in
// ten minutes, until ctx ends.
func (p *Public) Run(ctx context.Context) error {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			p.forget(p.opts.Now().Add(-10 * time.Minute))
		}
	}
}

func (p *Public) forget(before time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, pg := range p.pages {
		if pg.idleSince(before) {
			delete(p.pages, id)
		}
	}
	for _, m := range []map[string]*lookup{p.slugs, p.hosts} {
		for k, l := range m {
			l.mu.Lock()
			idle := l.usedAt.Before(before) && l.at.Before(before)
			l.mu.Unlock()
			if idle {
				delete(m, k)
			}
		}
	}
	p.limits.Purge(p.opts.Now().UnixMicro())
}
