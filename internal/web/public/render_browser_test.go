package public_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/web/public"
)

// The browser tests load the rendered pages in a real headless Chromium,
// served with the Content-Security-Policy the status pages are served
// with, and look at them as readers do: with JavaScript off and on, on a
// phone and a desktop, light and dark, by keyboard, and through axe-core's
// accessibility audit.
//
//	TOCSIN_TEST_BROWSER=/path/to/chromium  the browser (default: chromium,
//	                                       chromium-headless-shell… on PATH)
//	TOCSIN_TEST_BROWSER_REQUIRED=1         fail instead of skipping without
//	                                       a browser or axe-core (CI)
//	TOCSIN_TEST_ARTIFACTS=dir              where screenshots go (default:
//	                                       artifacts/ at the repository root)
//	TOCSIN_UPDATE_SCREENSHOTS=1            also write docs/images/status-page-*.png

const csp = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// The status page's phones are narrower than browsertest.Phone: the
// bars of 90 days must fit a 375 px and a 360 px screen.
var (
	phone   = browsertest.Device{Name: "phone", Width: 375, Height: 812, Mobile: true}
	small   = browsertest.Device{Name: "small", Width: 360, Height: 740, Mobile: true}
	desktop = browsertest.Desktop
)

func TestStatusPageInBrowser(t *testing.T) {
	root := browsertest.RepoRoot(t)
	axe := browsertest.Axe(t)
	art := browsertest.Artifacts(t, "statuspage")
	t.Logf("screenshots in %s", art)
	srv := newPageServer(t)

	browser := browsertest.Start(t)

	pages := []struct{ name, path, headline string }{
		{"page", "/status/acme", "Partial outage"},
		{"history", "/status/acme/history", "Incident history: October 2026"},
		{"password", "/status/acme/password", "This status page is protected"},
	}

	for _, js := range []bool{false, true} {
		jsName := map[bool]string{false: "nojs", true: "js"}[js]
		t.Run(jsName, func(t *testing.T) {
			tb := browsertest.OpenTab(t, browser, js)

			// The collector works: a page that breaks the policy is caught.
			tb.Navigate(t, srv.URL+"/control")
			if v := tb.Take(t); !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, "Content Security Policy") }) {
				t.Fatalf("an inline style under the policy left no report in %q: the collector is blind", v)
			}

			// The tab runs script, or not, as asked (this page has no policy).
			tb.Navigate(t, srv.URL+"/control-js")
			ran, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[string](`document.documentElement.dataset.js || "no"`))
			if err != nil || ran != map[bool]string{false: "no", true: "ran"}[js] {
				t.Fatalf("script in the JavaScript-%s tab: %q %v", jsName, ran, err)
			}
			tb.Take(t)

			for _, d := range []browsertest.Device{phone, small, desktop} {
				for _, dark := range []bool{false, true} {
					scheme := map[bool]string{false: "light", true: "dark"}[dark]
					tb.Emulate(t, d, dark)
					for _, pg := range pages {
						name := fmt.Sprintf("%s-%s-%s-%s", pg.name, d.Name, scheme, jsName)
						tb.Navigate(t, srv.URL+pg.path)
						got := inspect(t, tb)
						if !strings.Contains(got.Headline, pg.headline) {
							t.Errorf("%s: headline %q, want %q", name, got.Headline, pg.headline)
						}
						if got.ScrollWidth > got.ClientWidth || got.ClientWidth > int(d.Width) {
							t.Errorf("%s: scrolls sideways: content %d px wide in a %d px viewport", name, got.ScrollWidth, got.ClientWidth)
						}
						wantBg := map[bool]string{false: "rgb(255, 255, 255)", true: "rgb(13, 17, 23)"}[dark]
						if got.Background != wantBg {
							t.Errorf("%s: background %s, want %s (stylesheet not applied, or no dark mode)", name, got.Background, wantBg)
						}
						if got.Accent != "rgb(130, 80, 223)" {
							t.Errorf("%s: header rule %q, want the page's accent (theme not applied)", name, got.Accent)
						}
						if pg.name == "page" {
							if got.Days != 12*90 || got.Bars != 12 {
								t.Errorf("%s: %d bars of %d days, want 12 of 90", name, got.Bars, got.Days)
							}
							if got.NarrowestDay < 1 || got.WidestBar > int(d.Width) {
								t.Errorf("%s: days %.2f px wide, bars %d px: the bar does not fit", name, got.NarrowestDay, got.WidestBar)
							}
						}
						if pg.name == "password" && !got.LogoLoaded {
							t.Errorf("%s: the logo did not load", name)
						}
						if v := tb.Take(t); len(v) > 0 {
							t.Errorf("%s: the browser reported:\n%s", name, strings.Join(v, "\n"))
						}
						browsertest.Write(t, art, name+".png", tb.Screenshot(t, false))
						if pg.name == "page" && d != small {
							browsertest.Write(t, art, name+"-full.png", tb.Screenshot(t, true))
						}
						if pg.name == "page" && js && d != small && os.Getenv("TOCSIN_UPDATE_SCREENSHOTS") == "1" {
							// The docs show the page without its maintenance,
							// so the first screen reaches the bars.
							tb.Navigate(t, srv.URL+"/status/acme/docs")
							browsertest.Write(t, filepath.Join(root, "docs", "images"), "status-page-"+scheme+"-"+d.Name+".png", tb.Screenshot(t, false))
						}
					}
				}
			}
			if missing := srv.missing(); len(missing) > 0 {
				t.Errorf("the pages asked for what is not there: %v", missing)
			}
		})
	}

	t.Run("keyboard", func(t *testing.T) {
		tb := browsertest.OpenTab(t, browser, true)
		tb.Emulate(t, desktop, false)
		tb.Navigate(t, srv.URL+"/status/acme")
		reached := map[string]bool{}
		for i := range 12 {
			if err := chromedp.Do(tb.Ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
				t.Fatal(err)
			}
			f, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[focused](`(() => {
				const e = document.activeElement, s = getComputedStyle(e), r = e.getBoundingClientRect();
				return {tag: e.tagName, text: e.textContent.trim(), outline: s.outlineStyle,
					width: parseFloat(s.outlineWidth), top: r.top, visible: r.width > 0 && r.height > 0};
			})()`))
			if err != nil {
				t.Fatal(err)
			}
			if f.Tag != "A" {
				continue
			}
			reached[f.Text] = true
			if f.Outline == "none" || f.Width < 2 || !f.Visible {
				t.Errorf("focused link %q shows no focus: outline %s %.1f px, visible %v", f.Text, f.Outline, f.Width, f.Visible)
			}
			if i == 0 && (f.Text != "Skip to content" || f.Top < 0) {
				t.Errorf("the first Tab reaches %q at %.0f px, want the skip link, visible", f.Text, f.Top)
			}
			if i == 0 {
				browsertest.Write(t, art, "page-keyboard-skip-link.png", tb.Screenshot(t, false))
			}
		}
		for _, want := range []string{"Skip to content", "Acme Cloud", "Acme home", "Support", "Incident history", "Atom feed", "JSON summary"} {
			if !reached[want] {
				t.Errorf("Tab never reaches %q (reached %v)", want, reached)
			}
		}
	})

	t.Run("axe", func(t *testing.T) {
		tb := browsertest.OpenTab(t, browser, true)
		// The audit sees what it should: an image without alt text.
		tb.Navigate(t, srv.URL+"/control-axe")
		if v := tb.Audit(t, axe); !slices.ContainsFunc(v, func(v browsertest.Violation) bool { return v.ID == "image-alt" && v.Impact == "critical" }) {
			t.Fatalf("axe-core missed an image without alt text: %+v", v)
		}
		tb.Take(t)
		for _, dark := range []bool{false, true} {
			for _, d := range []browsertest.Device{desktop, phone} {
				tb.Emulate(t, d, dark)
				for _, pg := range pages {
					name := fmt.Sprintf("%s-%s-dark=%v", pg.name, d.Name, dark)
					tb.Navigate(t, srv.URL+pg.path)
					for _, v := range tb.Audit(t, axe) {
						if v.Impact == "serious" || v.Impact == "critical" {
							t.Errorf("%s: axe %s (%s): %s\n  %s", name, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
						} else {
							t.Logf("%s: axe %s (%s): %s", name, v.ID, v.Impact, v.Help)
						}
					}
					tb.Take(t)
				}
			}
		}
	})
}

// pageServer serves the fixture's pages and assets as the status page
// server does, under the strict policy, and notes every path it does not
// know.
type pageServer struct {
	*httptest.Server
	mu      sync.Mutex
	unknown []string
}

const logo = `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="40" viewBox="0 0 160 40"><rect width="40" height="40" rx="8" fill="#8250df"/><text x="50" y="28" font-family="sans-serif" font-size="22" fill="#8250df">Acme</text></svg>`

func newPageServer(t *testing.T) *pageServer {
	t.Helper()
	p := fixture()
	o := public.Location{Base: "/status/acme"}
	page, err := public.RenderPage(p, o)
	if err != nil {
		t.Fatal(err)
	}
	hist, err := public.RenderHistory(history(), o)
	if err != nil {
		t.Fatal(err)
	}
	docs := p
	docs.Maintenance = nil
	docsPage, err := public.RenderPage(docs, o)
	if err != nil {
		t.Fatal(err)
	}
	withLogo := p
	withLogo.LogoVersion = "1"
	pw, err := public.RenderPassword(withLogo, o, true)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]struct {
		typ  string
		body []byte
	}{
		"/status/acme":                              {"text/html; charset=utf-8", page},
		"/status/acme/docs":                         {"text/html; charset=utf-8", docsPage},
		"/status/acme/history":                      {"text/html; charset=utf-8", hist},
		"/status/acme/password":                     {"text/html; charset=utf-8", pw},
		"/status/acme" + public.StylesheetPath():    {"text/css; charset=utf-8", public.Stylesheet()},
		"/status/acme" + public.ThemePath(p.Accent): {"text/css; charset=utf-8", public.Theme(p.Accent)},
		"/status/acme/logo":                         {"image/svg+xml", []byte(logo)},
		"/control-js":                               {"text/html; charset=utf-8", []byte(`<!doctype html><html lang="en"><title>control</title><link rel="icon" href="/status/acme` + public.IconPath() + `"><script>document.documentElement.dataset.js = "ran"</script>`)},
		"/control-axe":                              {"text/html; charset=utf-8", []byte(`<!doctype html><html><title>control</title><link rel="icon" href="/status/acme` + public.IconPath() + `"><img src="/status/acme/logo">`)},
		"/control":                                  {"text/html; charset=utf-8", []byte(`<!doctype html><html lang="en"><title>control</title><link rel="icon" href="/status/acme` + public.IconPath() + `"><p style="color:red">inline style</p>`)},
	}
	s := &pageServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		if r.URL.Path == "/control-js" {
			h.Del("Content-Security-Policy")
		}
		f, ok := files[r.URL.Path]
		if body, typ, isAsset := public.Asset(strings.TrimPrefix(r.URL.Path, "/status/acme")); isAsset {
			f.typ, f.body, ok = typ, body, true
		}
		if !ok {
			s.mu.Lock()
			s.unknown = append(s.unknown, r.URL.Path)
			s.mu.Unlock()
			http.NotFound(w, r)
			return
		}
		h.Set("Content-Type", f.typ)
		w.Write(f.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *pageServer) missing() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.unknown)
}

// looks is what a page looks like, read from the rendered DOM.
type looks struct {
	Headline     string  `json:"headline"`
	ScrollWidth  int     `json:"scrollWidth"`
	ClientWidth  int     `json:"clientWidth"`
	Background   string  `json:"background"`
	Accent       string  `json:"accent"`
	Bars         int     `json:"bars"`
	Days         int     `json:"days"`
	WidestBar    int     `json:"widestBar"`
	NarrowestDay float64 `json:"narrowestDay"`
	LogoLoaded   bool    `json:"logoLoaded"`
}

type focused struct {
	Tag     string  `json:"tag"`
	Text    string  `json:"text"`
	Outline string  `json:"outline"`
	Width   float64 `json:"width"`
	Top     float64 `json:"top"`
	Visible bool    `json:"visible"`
}

func inspect(t *testing.T, tb *browsertest.Tab) looks {
	t.Helper()
	l, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[looks](`(() => {
		const h = document.querySelector('main h2'), days = [...document.querySelectorAll('.day')],
			bars = [...document.querySelectorAll('.bar')], img = document.querySelector('header img');
		return {
			headline: h ? h.textContent : '',
			scrollWidth: document.documentElement.scrollWidth,
			clientWidth: document.documentElement.clientWidth,
			background: getComputedStyle(document.body).backgroundColor,
			accent: getComputedStyle(document.querySelector('header')).borderTopColor,
			bars: bars.length, days: days.length,
			widestBar: Math.max(0, ...bars.map(b => Math.ceil(b.getBoundingClientRect().right))),
			narrowestDay: Math.min(1e9, ...days.map(d => d.getBoundingClientRect().width)),
			logoLoaded: !!img && img.complete && img.naturalWidth > 0,
		};
	})()`))
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	return l
}
