package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/app"
)

// page is one status page's cache entry: the view it was last rendered
// from and everything rendered of that view so far (per URL base: a page
// is served under /status/{slug} and on its custom domain).
type page struct {
	mu         sync.Mutex
	cfg        app.PublicPageConfig // what view was built from
	view       app.StatusView
	builtAt    time.Time
	err        error         // why the first build failed
	failedAt   time.Time     // when it did
	ready      chan struct{} // closed once the first build ended
	refreshing bool
	usedAt     time.Time
	renders    map[string]*rendered // of view, by what and base
	history    map[string]*rendered // by month and base; each holds its own build time
	logo       *rendered
}

// rendered is a response body ready to send.
type rendered struct {
	body    []byte
	ctype   string
	etag    string
	builtAt time.Time

	gzipOnce sync.Once
	gz       *rendered // body gzipped, made on the first request that takes it
}

// minGzip is the smallest body worth compressing.
const minGzip = 1 << 10

// compressible reports whether rd is worth sending gzipped: text of at
// least minGzip bytes. A page of 50 components with 90 days each is some
// 650 KiB of HTML, and some 35 KiB gzipped.
func (rd *rendered) compressible() bool {
	return len(rd.body) >= minGzip &&
		(strings.HasPrefix(rd.ctype, "text/") || strings.HasPrefix(rd.ctype, "application/") || rd.ctype == "image/svg+xml")
}

// gzipped is rd compressed with gzip, made once.
func (rd *rendered) gzipped() *rendered {
	rd.gzipOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.DefaultCompression)
		_, _ = zw.Write(rd.body)
		_ = zw.Close()
		rd.gz = &rendered{body: b.Bytes(), ctype: rd.ctype, etag: strings.TrimSuffix(rd.etag, `"`) + `-gz"`, builtAt: rd.builtAt}
	})
	return rd.gz
}

func newRendered(body []byte, ctype string, at time.Time) *rendered {
	sum := sha256.Sum256(body)
	return &rendered{body: body, ctype: ctype, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`, builtAt: at}
}

func (pg *page) idleSince(before time.Time) bool {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return !pg.refreshing && pg.usedAt.Before(before)
}

// errNotBuilt answers requests for a page whose first render failed.
var errNotBuilt = errors.New("status page not rendered yet")

// page returns cfg's cache entry with a view of it: waiting for the first
// build, and starting a new one in the background when the last is older
// than Refresh or was built from an older configuration.
func (p *Public) page(ctx context.Context, cfg app.PublicPageConfig) (*page, error) {
	now := p.opts.Now()
	p.mu.Lock()
	pg := p.pages[cfg.ID]
	if pg == nil || (pg.failed() && now.Sub(pg.failedAt) >= p.opts.Refresh) {
		pg = &page{ready: make(chan struct{}), usedAt: now}
		p.pages[cfg.ID] = pg
		p.mu.Unlock()
		p.build(pg, cfg, true)
	} else {
		p.mu.Unlock()
	}
	select {
	case <-pg.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if pg.builtAt.IsZero() {
		return nil, errors.Join(errNotBuilt, pg.err)
	}
	pg.usedAt = now
	if !pg.refreshing && (now.Sub(pg.builtAt) >= p.opts.Refresh || !pg.cfg.UpdatedAt.Equal(cfg.UpdatedAt) ||
		pg.cfg.PasswordVersion != cfg.PasswordVersion) {
		pg.refreshing = true
		go p.build(pg, cfg, false)
	}
	return pg, nil
}

// failed reports whether pg's first build failed: the next request tries
// again rather than waiting for a refresh.
func (pg *page) failed() bool {
	select {
	case <-pg.ready:
	default:
		return false
	}
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return pg.builtAt.IsZero()
}

// build renders cfg's view into pg. A failed build keeps the last good
// view: readers go on seeing it, with its age, while the database is slow
// or away.
func (p *Public) build(pg *page, cfg app.PublicPageConfig, first bool) {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.Timeout)
	defer cancel()
	view, err := p.app.StatusPageView(ctx, cfg)
	pg.mu.Lock()
	defer pg.mu.Unlock()
	pg.refreshing = false
	if err != nil {
		pg.err, pg.failedAt = err, p.opts.Now()
		p.log.Warn("status page render failed; serving the last good one", "page", cfg.ID, "err", err,
			"age", time.Since(pg.builtAt).Round(time.Second).String())
	} else {
		pg.cfg, pg.view, pg.builtAt, pg.err = cfg, view, p.opts.Now(), nil
		pg.renders = map[string]*rendered{}
		if pg.logo != nil && pg.logo.etag != cfg.LogoVersion {
			pg.logo = nil
		}
	}
	if first {
		close(pg.ready)
	}
}

// rendering returns what render makes of pg's current view, made once per
// view and key. Call with pg.mu unlocked.
func (pg *page) rendering(key string, render func(app.StatusView, app.PublicPageConfig) ([]byte, string, error)) (*rendered, error) {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if r := pg.renders[key]; r != nil {
		return r, nil
	}
	body, ctype, err := render(pg.view, pg.cfg)
	if err != nil {
		return nil, err
	}
	r := newRendered(body, ctype, pg.builtAt)
	pg.renders[key] = r
	return r, nil
}
