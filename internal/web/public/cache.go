package public

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
	"github.com/tocsin/tocsin/internal/errs"
)

// page is one status page's cache entry: the configuration and view it
// was last rendered from, and everything rendered of that view so far
// (per URL base: a page is served under /status/{slug} and on its custom
// domain).
type page struct {
	mu        sync.Mutex
	cfg       app.PublicPageConfig // what view was built from
	view      app.StatusView
	stamp     string        // app.StatusPageStamp when view was built
	builtAt   time.Time     // when view was made; zero until the first build
	checkedAt time.Time     // when view was last known current: built, or its stamp unchanged
	changes   uint64        // app.StatusPagesChanged when it was
	gone      bool          // the page was deleted
	err       error         // why the last check failed
	busy      bool          // a check runs
	wake      chan struct{} // closed once the running check has an answer
	usedAt    time.Time
	renders   map[string]*rendered // of view, by what and base
	history   map[string]*rendered // by month and base; each holds its own build time
	logo      *rendered
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
	return !pg.busy && pg.usedAt.Before(before)
}

// errNotBuilt answers requests for a page never rendered: its first
// render failed or did not finish in time.
var errNotBuilt = errors.New("status page not rendered yet")

// fresh returns the cache entry of cfg's page, known current within
// Fresh, and the page's configuration as of then (which may be newer than
// cfg). A page unchecked for Check is checked again: its stamp is read,
// and only when it moved are the configuration and the view read anew. A
// reader of a page unchecked for Fresh (a quiet spell), or changed by this
// process since, waits for that, for at most Wait; then, or when the
// database fails, the last good render is served, with its age. The first
// render is waited for up to Timeout.
func (p *Pages) fresh(ctx context.Context, cfg app.PublicPageConfig) (*page, app.PublicPageConfig, error) {
	now := p.opts.Now()
	changes := p.app.StatusPagesChanged()
	p.mu.Lock()
	pg := p.pages[cfg.ID]
	if pg == nil {
		pg = &page{cfg: cfg}
		p.pages[cfg.ID] = pg
	}
	p.mu.Unlock()

	pg.mu.Lock()
	pg.usedAt = now
	age := now.Sub(pg.checkedAt)
	first := pg.builtAt.IsZero()
	must := first || age >= p.opts.Fresh || pg.changes != changes
	var wake chan struct{}
	if must || age >= p.opts.Check {
		if !pg.busy {
			pg.busy, pg.wake = true, make(chan struct{})
			go p.check(pg, changes)
		}
		wake = pg.wake
	}
	pg.mu.Unlock()

	if must {
		wait := p.opts.Wait
		if first {
			wait = p.opts.Timeout
		}
		timer := time.NewTimer(wait)
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, cfg, ctx.Err()
		}
		timer.Stop()
	}
	pg.mu.Lock()
	defer pg.mu.Unlock()
	switch {
	case pg.gone:
		return nil, cfg, errs.ErrNotFound
	case pg.builtAt.IsZero():
		return nil, cfg, errors.Join(errNotBuilt, pg.err)
	}
	return pg, pg.cfg, nil
}

// check finds out whether pg is still current, and renders it anew when
// it is not (or when its render is older than Rerender, for the figures
// over windows that slide with the clock). Readers waiting on pg.wake are
// let go as soon as the answer is known: a page whose stamp stands is
// served while it is rendered again for the clock. A failed check keeps
// the last good view: readers go on seeing it, with its age, while the
// database is slow or away.
func (p *Pages) check(pg *page, changes uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.Timeout)
	defer cancel()
	now := p.opts.Now()
	pg.mu.Lock()
	cfg, stamp, builtAt, seen := pg.cfg, pg.stamp, pg.builtAt, pg.changes
	pg.mu.Unlock()
	answered := false
	answer := func(update func()) {
		pg.mu.Lock()
		defer pg.mu.Unlock()
		update()
		if !answered {
			answered = true
			close(pg.wake)
		}
	}
	defer answer(func() { pg.busy = false })
	fail := func(err error) {
		answer(func() { pg.err = err })
		p.log.Warn("status page check failed; serving the last good render", "page", cfg.ID, "err", err,
			"age", now.Sub(builtAt).Round(time.Second).String())
	}

	if !builtAt.IsZero() && seen == changes {
		s, err := p.app.StatusPageStamp(ctx, cfg)
		if err != nil {
			fail(err)
			return
		}
		if s == stamp {
			answer(func() { pg.checkedAt, pg.err = now, nil })
			if now.Sub(builtAt) < p.opts.Rerender {
				return
			}
		}
	}
	// Something changed, or the render is old: the configuration first
	// (the page may be gone, or its subjects other), then its stamp, then
	// the view, so that a change while the view is read shows at the next
	// check.
	next, err := p.app.PublicStatusPageByID(ctx, cfg.WorkspaceID, cfg.ID)
	if errs.KindOf(err) == errs.KindNotFound {
		answer(func() { pg.gone, pg.checkedAt, pg.changes = true, now, changes })
		return
	}
	if err != nil {
		fail(err)
		return
	}
	s, err := p.app.StatusPageStamp(ctx, next)
	if err != nil {
		fail(err)
		return
	}
	view, err := p.app.StatusPageView(ctx, next)
	if err != nil {
		fail(err)
		return
	}
	answer(func() {
		pg.cfg, pg.view, pg.stamp, pg.err = next, view, s, nil
		pg.builtAt, pg.checkedAt, pg.changes = now, now, changes
		pg.renders = map[string]*rendered{}
		if pg.logo != nil && pg.logo.etag != `"`+next.LogoVersion+`"` {
			pg.logo = nil
		}
	})
}

// rendering returns what render makes of pg's current view, made once per
// view and key, and when the view was last known current. Call with pg.mu
// unlocked.
func (pg *page) rendering(key string, render func(app.StatusView, app.PublicPageConfig) ([]byte, string, error)) (*rendered, time.Time, error) {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if r := pg.renders[key]; r != nil {
		return r, pg.checkedAt, nil
	}
	body, ctype, err := render(pg.view, pg.cfg)
	if err != nil {
		return nil, time.Time{}, err
	}
	r := newRendered(body, ctype, pg.builtAt)
	pg.renders[key] = r
	return r, pg.checkedAt, nil
}

// id is pg's page id.
func (pg *page) id() string {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return pg.cfg.ID
}
