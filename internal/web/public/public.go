// Package public serves the public status pages: /status/{slug} and
// custom domains, with their history, summary.json, Atom feed, badges,
// password form and assets, rendered here from the statuspage model. It
// reaches the database only through package app.
//
// Each of a page's answers is a file holding its handler and what renders
// it, and a template where it is HTML: page.go, history.go, password.go,
// feed.go, summary.go, badge.go, logo.go, notfound.go; serve.go routes a
// request to them and sends what they made.
//
// A status page must tell the truth and stay up while everything else is
// on fire. Every page lives in a cache, rendered from one app.StatusView,
// and is never served more than Fresh (5 s) behind the database while the
// database answers: a page is checked at most once every Check (1 s) while
// it is read, through a cheap stamp (app.StatusPageStamp) that says
// whether anything it shows has changed, and only then rendered anew. A
// reader after a quiet spell waits for that check, and for a new render
// if one is needed, for at most Wait (1 s); a change made through this
// process (a page edited, a new password) is waited for by the very next
// request. Only when the database does not answer in that time is the
// last good render served, with its Age and its "Updated" time. The
// public routes never touch the API's keys or rate limits; they have a
// per-address limit of their own, far above human use.
package public

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

// Options tune the public pages; zero values take the defaults.
type Options struct {
	// BaseURL is where readers reach the service; requests for its host
	// are never taken for a custom domain.
	BaseURL string
	// TrustedProxies decide who a request's client is (the per-address
	// limit).
	TrustedProxies clientaddr.Resolver
	// Fresh bounds how far behind the database a page may be served
	// while the database answers (default 5 s), on every node.
	Fresh time.Duration
	// Check is how often at most a page that is read is checked for
	// changes (default 1 s).
	Check time.Duration
	// Wait is how long a reader waits for a page to be checked, and
	// rendered anew if it changed, before the last good render is
	// served (default 1 s).
	Wait time.Duration
	// Rerender is how old a render may grow even when nothing it shows
	// has changed (default 1 min): its figures over the last 24 hours,
	// 7 and 30 days slide with the clock. It is made again in the
	// background, nobody waiting.
	Rerender time.Duration
	// Timeout bounds a check or a render (default 10 s), and how long
	// the first reader of a page waits for its first render.
	Timeout time.Duration
	// PerMinute and Burst are each client address's budget over all
	// pages (default 1200 a minute in bursts of 300).
	PerMinute, Burst int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Pages serves /status/{slug}/… and pages' custom domains.
type Pages struct {
	app      *app.App
	log      *slog.Logger
	opts     Options
	baseHost string
	secure   bool // cookies need HTTPS: the base URL is https
	limits   *ratelimit.Memory

	mu     sync.Mutex
	pages  map[string]*page   // by page id
	slugs  map[string]*lookup // by slug
	hosts  map[string]*lookup // by custom domain
	closed bool
}

// New returns the public pages' handler.
func New(a *app.App, log *slog.Logger, opts Options) *Pages {
	if opts.Fresh <= 0 {
		opts.Fresh = 5 * time.Second
	}
	if opts.Check <= 0 {
		opts.Check = time.Second
	}
	if opts.Wait <= 0 {
		opts.Wait = time.Second
	}
	if opts.Rerender <= 0 {
		opts.Rerender = time.Minute
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
	p := &Pages{app: a, log: log, opts: opts, limits: ratelimit.New(),
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
func (p *Pages) customDomain(host string) bool {
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
func (p *Pages) ServeDomain(w http.ResponseWriter, r *http.Request) bool {
	host := hostOnly(r.Host)
	if !p.customDomain(host) {
		return false
	}
	l := p.find(r.Context(), p.hosts, host, true, func(ctx context.Context) (app.PublicPageConfig, error) {
		return p.app.PublicStatusPageByDomain(ctx, host)
	})
	if l.notFound() {
		return false
	}
	p.serve(w, r, l, "", r.URL.Path)
	return true
}

// ServeHTTP serves /status/{slug}/….
func (p *Pages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, StatusPrefix)
	if !ok {
		p.fail(w, r, errs.ErrNotFound)
		return
	}
	slug, sub, _ := strings.Cut(rest, "/")
	if !validSlug(slug) {
		p.fail(w, r, errs.ErrNotFound)
		return
	}
	l := p.find(r.Context(), p.slugs, slug, false, func(ctx context.Context) (app.PublicPageConfig, error) {
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

// lookup is a page's configuration as last read by its slug or domain:
// which page a name leads to. What the page shows, and its password, come
// from its cache entry (fresh), which reads the page by id.
type lookup struct {
	key    string
	domain bool // key is a custom domain, else a slug
	read   func(context.Context) (app.PublicPageConfig, error)

	mu         sync.Mutex
	cfg        app.PublicPageConfig
	err        error // errs not-found, or why the first read failed
	at         time.Time
	changes    uint64        // app.StatusPagesChanged when read
	ready      chan struct{} // closed once the first read ended
	refreshing bool
	usedAt     time.Time
}

func (l *lookup) notFound() bool {
	<-l.ready
	l.mu.Lock()
	defer l.mu.Unlock()
	return errs.KindOf(l.err) == errs.KindNotFound
}

// names reports whether cfg is still the page l's name leads to.
func (l *lookup) names(cfg app.PublicPageConfig) bool {
	if l.domain {
		return cfg.CustomDomain == l.key
	}
	return cfg.Slug == l.key
}

// maxLookups bounds each lookup map: names asked for that match no page
// are remembered too, and a flood of them must not grow memory.
const maxLookups = 10000

// find returns the lookup of key in m, reading it with read when it is
// missing or when this process has changed a page since it was read (the
// caller waits, for at most Wait after the first read), or in the
// background when it is older than Check.
func (p *Pages) find(ctx context.Context, m map[string]*lookup, key string, domain bool,
	read func(context.Context) (app.PublicPageConfig, error)) *lookup {
	now := p.opts.Now()
	changes := p.app.StatusPagesChanged()
	p.mu.Lock()
	l := m[key]
	if l == nil {
		if len(m) >= maxLookups {
			clear(m)
		}
		l = &lookup{key: key, domain: domain, read: read, ready: make(chan struct{})}
		m[key] = l
		p.mu.Unlock()
		p.readLookup(l, true)
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
	changed := l.changes != changes
	stale := (changed || now.Sub(l.at) >= p.opts.Check) && !l.refreshing
	if stale {
		l.refreshing = true
	}
	l.mu.Unlock()
	switch {
	case stale && changed:
		p.awaitLookup(ctx, l)
	case stale:
		go p.readLookup(l, false)
	}
	return l
}

// awaitLookup reads l anew, waiting for at most Wait.
func (p *Pages) awaitLookup(ctx context.Context, l *lookup) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.readLookup(l, false)
	}()
	timer := time.NewTimer(p.opts.Wait)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	case <-ctx.Done():
	}
}

// readLookup reads l anew. A failed read keeps what l had: a page goes on
// being served while its database is away.
func (p *Pages) readLookup(l *lookup, first bool) {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.Timeout)
	defer cancel()
	changes := p.app.StatusPagesChanged()
	cfg, err := l.read(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refreshing = false
	switch {
	case err == nil:
		l.cfg, l.err, l.at, l.changes = cfg, nil, p.opts.Now(), changes
	case errs.KindOf(err) == errs.KindNotFound:
		l.cfg, l.err, l.at, l.changes = app.PublicPageConfig{}, err, p.opts.Now(), changes
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

// current returns the cache entry of the page l leads to, known current
// (fresh), and its configuration. When the page turns out to have been
// deleted, renamed or moved to another domain since l was read, l is read
// again, once.
func (p *Pages) current(ctx context.Context, l *lookup) (*page, app.PublicPageConfig, error) {
	for try := 0; ; try++ {
		cfg, err := l.current()
		if err != nil {
			return nil, cfg, err
		}
		pg, cfg, err := p.fresh(ctx, cfg)
		if err == nil && l.names(cfg) {
			return pg, cfg, nil
		}
		if err == nil {
			err = errs.ErrNotFound
		}
		if try > 0 || errs.KindOf(err) != errs.KindNotFound {
			return nil, cfg, err
		}
		l.mu.Lock()
		l.refreshing = true
		l.mu.Unlock()
		p.awaitLookup(ctx, l)
	}
}

// allow spends one request of the client's budget; over it, the request
// is refused with 429.
func (p *Pages) allow(r *http.Request) error {
	st := p.limits.Take("addr|"+p.opts.TrustedProxies.Client(r), p.opts.Now(), p.opts.PerMinute, p.opts.Burst)
	if st.OK {
		return nil
	}
	secs := max(int((st.Retry+time.Second-1)/time.Second), 1)
	return &refusal{status: http.StatusTooManyRequests, text: "Too many requests; try again in " + strconv.Itoa(secs) + " s.\n",
		header: [2]string{"Retry-After", strconv.Itoa(secs)}}
}

// Run drops, every minute, the pages and lookups nobody has asked for in
// ten minutes, until ctx ends.
func (p *Pages) Run(ctx context.Context) error {
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

func (p *Pages) forget(before time.Time) {
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
