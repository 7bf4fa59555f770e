package console_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/wait"
	"github.com/tocsin/tocsin/internal/web/console"
)

// The browser tests load every page of the fixture in a real headless
// Chromium, served under console.CSP, as people use them: on a desktop and
// a phone, light and dark, with and without JavaScript, by keyboard, and
// through axe-core's accessibility audit. Screenshots go to
// browsertest.Artifacts(t, "console").
//
//	TOCSIN_TEST_BROWSER=/path/to/chromium  the browser
//	TOCSIN_TEST_BROWSER_REQUIRED=1         fail instead of skipping without
//	                                       a browser or axe-core (CI)
//	TOCSIN_TEST_ARTIFACTS=dir              where screenshots go

func TestWebUIInBrowser(t *testing.T) {
	axe := browsertest.Axe(t)
	art := browsertest.Artifacts(t, "console")
	t.Logf("screenshots in %s", art)
	srv := newUIServer(t)

	br := browsertest.Start(t)

	t.Run("pages", func(t *testing.T) {
		tb := browsertest.OpenTab(t, br, true)
		// The collector works: a page that breaks the policy is caught.
		tb.Navigate(t, srv.URL+"/control")
		if v := tb.Take(t); !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, "Content Security Policy") }) {
			t.Fatalf("an inline style under the policy left no report in %q: the collector is blind", v)
		}
		// The audit sees what it should: an image without alt text.
		tb.Navigate(t, srv.URL+"/control-axe")
		if v := tb.Audit(t, axe); !slices.ContainsFunc(v, func(v browsertest.Violation) bool { return v.ID == "image-alt" }) {
			t.Fatalf("axe-core missed an image without alt text: %+v", v)
		}
		tb.Take(t)

		for _, d := range []browsertest.Device{browsertest.Desktop, browsertest.Phone} {
			for _, dark := range []bool{false, true} {
				scheme := map[bool]string{false: "light", true: "dark"}[dark]
				tb.Emulate(t, d, dark)
				for _, p := range pages() {
					name := fmt.Sprintf("%s-%s-%s", p.name, d.Name, scheme)
					tb.Navigate(t, srv.URL+p.path)
					got := inspect(t, tb)
					if got.Heading != p.heading {
						t.Errorf("%s: heading %q, want %q", name, got.Heading, p.heading)
					}
					if got.ScrollWidth > got.ClientWidth || got.ClientWidth > int(d.Width) {
						t.Errorf("%s: scrolls sideways: content %d px wide in a %d px viewport", name, got.ScrollWidth, got.ClientWidth)
					}
					wantBg := map[bool]string{false: "rgb(245, 246, 248)", true: "rgb(15, 17, 21)"}[dark]
					if got.Background != wantBg {
						t.Errorf("%s: background %s, want %s (stylesheet not applied, or no dark mode)", name, got.Background, wantBg)
					}
					if got.Hidden != 0 {
						// With the script, every copy button shows.
						t.Errorf("%s: %d copy buttons, %d of them still hidden", name, got.Copies, got.Hidden)
					}
					if v := tb.Take(t); len(v) > 0 {
						t.Errorf("%s: the browser reported:\n%s", name, strings.Join(v, "\n"))
					}
					browsertest.Write(t, art, name+".png", tb.Screenshot(t, true))
					for _, v := range tb.Audit(t, axe) {
						if v.Serious() {
							t.Errorf("%s: axe %s (%s): %s\n  %s", name, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
						} else {
							t.Logf("%s: axe %s (%s): %s", name, v.ID, v.Impact, v.Help)
						}
					}
					tb.Take(t)
				}
			}
		}
		if missing := srv.missing(); len(missing) > 0 {
			t.Errorf("the pages asked for what is not there: %v", missing)
		}
	})

	t.Run("nojs", func(t *testing.T) {
		tb := browsertest.OpenTab(t, br, false)
		tb.Emulate(t, browsertest.Phone, false)
		for _, p := range pages() {
			tb.Navigate(t, srv.URL+p.path)
			got := inspect(t, tb)
			if got.Heading != p.heading || got.ScrollWidth > got.ClientWidth {
				t.Errorf("%s without script: heading %q, %d px in %d", p.name, got.Heading, got.ScrollWidth, got.ClientWidth)
			}
			if got.Hidden != got.Copies {
				t.Errorf("%s without script: %d copy buttons shown, which cannot copy", p.name, got.Copies-got.Hidden)
			}
			if v := tb.Take(t); len(v) > 0 {
				t.Errorf("%s without script: the browser reported:\n%s", p.name, strings.Join(v, "\n"))
			}
		}
		// The account menu opens without script, and signing out is a
		// button in it, within the phone's width.
		tb.Navigate(t, srv.URL+"/w/ws_01JDQ4K8Z6/keys")
		if err := chromedp.Do(tb.Ctx, chromedp.Click(chromedp.CSS(`.acct summary`))); err != nil {
			t.Fatal(err)
		}
		right, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[float64](`(() => {
			const b = document.querySelector('.acct-panel button'), r = b.getBoundingClientRect(),
				all = [...document.querySelectorAll('a[href="/workspaces"]')].some(a => a.getBoundingClientRect().width > 0);
			return r.width > 0 && r.left >= 0 && all ? r.right : -1;
		})()`))
		if err != nil || right < 0 || right > float64(browsertest.Phone.Width) {
			t.Errorf("the open account menu's sign-out button ends at %.0f px, or All workspaces is nowhere to be seen (%v)", right, err)
		}
		browsertest.Write(t, art, "keys-phone-menu-open-nojs.png", tb.Screenshot(t, false))
		tb.Take(t)
	})

	t.Run("script", func(t *testing.T) {
		tb := browsertest.OpenTab(t, br, true)
		tb.Emulate(t, browsertest.Desktop, false)
		for _, perm := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := chromedp.CallBrowser(tb.Ctx, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: perm, AllowWithoutSanitization: perm == "clipboard-write"},
				Setting:    browser.PermissionSettingGranted, Origin: srv.URL}); err != nil {
				t.Fatalf("grant %s: %v", perm, err)
			}
		}

		// A copy button copies the secret and says so.
		tb.Navigate(t, srv.URL+"/w/ws_01JDQ4K8Z6/keys/created")
		if err := chromedp.Do(tb.Ctx, chromedp.Click(chromedp.CSS(`button[data-copy="key-secret"]`))); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tb.Ctx, chromedp.Poll[chromedp.Void](`document.getElementById('live').textContent === 'Copied'`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatalf("the live region never said Copied: %v", err)
		}
		clip, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
		if err != nil || clip != secret {
			t.Errorf("clipboard %q (%v), want the secret", clip, err)
		}
		browsertest.Write(t, art, "key-created-copied.png", tb.Screenshot(t, false))
		// The secret shown in groups of four is copied without the spaces.
		tb.Navigate(t, srv.URL+"/account/two-factor/setup")
		if err := chromedp.Do(tb.Ctx, chromedp.Click(chromedp.CSS(`button[data-copy="totp-secret"]`)),
			chromedp.Poll[chromedp.Void](`document.getElementById('live').textContent === 'Copied'`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatal(err)
		}
		clip, err = chromedp.Run(tb.Ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
		if err != nil || clip != "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP" {
			t.Errorf("clipboard %q (%v), want the secret without spaces", clip, err)
		}

		// data-confirm asks; no stops the form, yes sends it.
		var accept atomic.Bool
		var asked atomic.Int32
		dialogs := chromedp.Events(tb.Ctx, page.JavascriptDialogOpening)
		go func() {
			for ev, err := range dialogs {
				if err != nil {
					return
				}
				if ev.Type == page.DialogTypeConfirm && strings.Contains(ev.Message, "newcomer@acme.example") {
					asked.Add(1)
				}
				chromedp.Call(tb.Ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept.Load()})
			}
		}()
		remove := `form[action$="/members/usr_01C/remove"] button`
		tb.Navigate(t, srv.URL+"/w/ws_01JDQ4K8Z6/members")
		if err := chromedp.Do(tb.Ctx, chromedp.Click(chromedp.CSS(remove))); err != nil {
			t.Fatal(err)
		}
		tb.Take(t)
		if n := srv.posts("/w/ws_01JDQ4K8Z6/members/usr_01C/remove"); n != 0 || asked.Load() != 1 {
			t.Errorf("after answering no: %d posts, asked %d times", n, asked.Load())
		}
		accept.Store(true)
		if err := chromedp.Do(tb.Ctx, chromedp.Click(chromedp.CSS(remove))); err != nil {
			t.Fatal(err)
		}
		srv.await(t, tb, "/w/ws_01JDQ4K8Z6/members/usr_01C/remove")
		if n := srv.posts("/w/ws_01JDQ4K8Z6/members/usr_01C/remove"); n != 1 || asked.Load() != 2 {
			t.Errorf("after answering yes: %d posts, asked %d times", n, asked.Load())
		}
		// Forms without data-confirm submit without asking.
		tb.Navigate(t, srv.URL+"/w/ws_01JDQ4K8Z6/members")
		if err := chromedp.Do(tb.Ctx, chromedp.Click(chromedp.CSS(`form[action$="/members/usr_01B/role"] button`))); err != nil {
			t.Fatal(err)
		}
		srv.await(t, tb, "/w/ws_01JDQ4K8Z6/members/usr_01B/role")
		if n := srv.posts("/w/ws_01JDQ4K8Z6/members/usr_01B/role"); n != 1 || asked.Load() != 2 {
			t.Errorf("role change: %d posts, asked %d times", n, asked.Load())
		}
		if got := srv.form("/w/ws_01JDQ4K8Z6/members/usr_01B/role"); got != "role=owner" {
			t.Errorf("role form sent %q", got)
		}
		tb.Take(t)
	})

	t.Run("keyboard", func(t *testing.T) {
		tb := browsertest.OpenTab(t, br, true)
		tb.Emulate(t, browsertest.Desktop, false)
		for _, tc := range []struct {
			path string
			want []string
		}{
			{"/sign-in", []string{"Skip to content", "Tocsin", "input:email", "input:password", "Sign in"}},
			{"/w/ws_01JDQ4K8Z6/keys", []string{"Skip to content", "Tocsin", "select:workspace", "Switch", "All workspaces", "summary", "Home", "API keys", "Members",
				"input:name", "input:binding", "input:scope", "Create key", "Revoke"}},
		} {
			tb.Navigate(t, srv.URL+tc.path)
			reached := map[string]bool{}
			for i := range 40 {
				if err := chromedp.Do(tb.Ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
					t.Fatal(err)
				}
				f, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[focused](`(() => {
					const e = document.activeElement, s = getComputedStyle(e), r = e.getBoundingClientRect();
					let name = e.tagName === 'INPUT' || e.tagName === 'SELECT' ? e.tagName.toLowerCase() + ':' + e.name :
						e.tagName === 'SUMMARY' ? 'summary' : e.tagName === 'BODY' ? '' : e.textContent.trim();
					return {name, outline: s.outlineStyle, width: parseFloat(s.outlineWidth), top: r.top,
						visible: r.width > 0 && r.height > 0};
				})()`))
				if err != nil {
					t.Fatal(err)
				}
				reached[f.Name] = true
				if f.Name != "" && (f.Outline == "none" || f.Width < 2 || !f.Visible) {
					t.Errorf("%s: focused %q shows no focus: outline %s %.1f px, visible %v", tc.path, f.Name, f.Outline, f.Width, f.Visible)
				}
				if i == 0 && (f.Name != "Skip to content" || f.Top < 0) {
					t.Errorf("%s: the first Tab reaches %q at %.0f px, want the skip link, visible", tc.path, f.Name, f.Top)
				}
				if i == 0 && tc.path == "/sign-in" {
					browsertest.Write(t, art, "sign-in-skip-link.png", tb.Screenshot(t, false))
				}
				if i == 4 && tc.path != "/sign-in" {
					browsertest.Write(t, art, "keys-keyboard-focus.png", tb.Screenshot(t, false))
				}
			}
			for _, want := range tc.want {
				if !reached[want] {
					t.Errorf("%s: Tab never reaches %q (reached %v)", tc.path, want, reached)
				}
			}
			for name := range reached {
				if strings.Contains(name, "soon") {
					t.Errorf("%s: Tab reaches a placeholder %q", tc.path, name)
				}
			}
			tb.Take(t)
		}
	})
}

type focused struct {
	Name    string  `json:"name"`
	Outline string  `json:"outline"`
	Width   float64 `json:"width"`
	Top     float64 `json:"top"`
	Visible bool    `json:"visible"`
}

// uiServer serves the fixture's pages at their paths and the assets,
// under console.CSP; it notes every path it does not know, and answers
// every POST with a page at /posted after noting it.
type uiServer struct {
	*httptest.Server
	mu      sync.Mutex
	unknown []string
	posted  map[string][]string // path → bodies
}

func newUIServer(t *testing.T) *uiServer {
	t.Helper()
	var icon string
	for _, p := range console.AssetPaths() {
		if strings.HasSuffix(p, ".svg") {
			icon = p
		}
	}
	files := map[string][]byte{
		"/control":     []byte(`<!doctype html><html lang="en"><title>control</title><link rel="icon" href="` + icon + `"><p style="color:red">inline style</p>`),
		"/control-axe": []byte(`<!doctype html><html lang="en"><title>control</title><link rel="icon" href="` + icon + `"><img src="/nothing.png">`),
	}
	var posted []byte
	for _, p := range pages() {
		if _, dup := files[p.path]; dup {
			t.Fatalf("two pages at %s", p.path)
		}
		b, err := p.render()
		if err != nil {
			t.Fatal(err)
		}
		files[p.path] = b
		if p.name == "home" {
			posted = b
		}
	}
	s := &uiServer{posted: map[string][]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		csp := console.CSP
		if strings.Contains(r.URL.Path, "/status-pages/") {
			csp = console.EditorCSP // the editor frames its preview
		}
		if strings.HasSuffix(r.URL.Path, "/preview") {
			h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'self'")
			h.Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(`<!doctype html><html lang="en"><title>Preview</title><p>The public page</p></html>`))
			return
		}
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			s.mu.Lock()
			s.posted[r.URL.Path] = append(s.posted[r.URL.Path], r.PostForm.Encode())
			s.mu.Unlock()
			http.Redirect(w, r, "/posted", http.StatusSeeOther)
			return
		}
		if r.URL.Path == "/posted" {
			h.Set("Content-Type", "text/html; charset=utf-8")
			w.Write(posted)
			return
		}
		if body, typ, ok := console.Asset(r.URL.Path); ok {
			h.Set("Content-Type", typ)
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
			w.Write(body)
			return
		}
		b, ok := files[r.URL.Path]
		if !ok {
			if r.URL.Path != "/nothing.png" {
				s.mu.Lock()
				s.unknown = append(s.unknown, r.URL.Path)
				s.mu.Unlock()
			}
			http.NotFound(w, r)
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *uiServer) missing() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.unknown)
}

func (s *uiServer) posts(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.posted[path])
}

// await waits until a POST to path arrived and the tab has loaded the
// page the answer sends it to (or a minute passed): a navigation the test
// starts before that would be cut short by the answer's.
func (s *uiServer) await(t *testing.T, tb *browsertest.Tab, path string) {
	t.Helper()
	wait.For(t, time.Minute, "a POST to "+path, func() bool { return s.posts(path) > 0 })
	wait.For(t, time.Minute, "the tab to load the answer to the POST to "+path, func() bool {
		landed, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[bool](`location.pathname === "/posted" && document.readyState === "complete"`))
		return err == nil && landed
	})
}

func (s *uiServer) form(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.posted[path]) == 0 {
		return ""
	}
	return s.posted[path][len(s.posted[path])-1]
}

// looks is what a page looks like, read from the rendered DOM.
type looks struct {
	Heading     string `json:"heading"`
	ScrollWidth int    `json:"scrollWidth"`
	ClientWidth int    `json:"clientWidth"`
	Background  string `json:"background"`
	Copies      int    `json:"copies"`
	Hidden      int    `json:"hidden"`
}

func inspect(t *testing.T, tb *browsertest.Tab) looks {
	t.Helper()
	l, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[looks](`(() => {
		const h = document.querySelector('main h1'), copies = [...document.querySelectorAll('button[data-copy]')];
		return {
			heading: h ? h.textContent.trim() : '',
			scrollWidth: document.documentElement.scrollWidth,
			clientWidth: document.documentElement.clientWidth,
			background: getComputedStyle(document.body).backgroundColor,
			copies: copies.length,
			hidden: copies.filter(b => b.getBoundingClientRect().width === 0).length,
		};
	})()`))
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	return l
}
