package webui_test

import (
	"context"
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
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/webui"
)

// The browser tests load every page of the fixture in a real headless
// Chromium, served under webui.CSP, as people use them: on a desktop and
// a phone, light and dark, with and without JavaScript, by keyboard, and
// through axe-core's accessibility audit. Screenshots go to
// browsertest.Artifacts(t, "webui").
//
//	TOCSIN_TEST_BROWSER=/path/to/chromium  the browser
//	TOCSIN_TEST_BROWSER_REQUIRED=1         fail instead of skipping without
//	                                       a browser or axe-core (CI)
//	TOCSIN_TEST_ARTIFACTS=dir              where screenshots go

type device struct {
	name          string
	width, height int64
	mobile        bool
}

var (
	phone   = device{"phone", 390, 844, true}
	desktop = device{"desktop", 1280, 900, false}
)

func TestWebUIInBrowser(t *testing.T) {
	bin := browsertest.Chromium(t)
	axe := browsertest.Axe(t)
	art := browsertest.Artifacts(t, "webui")
	t.Logf("screenshots in %s", art)
	srv := newUIServer(t)

	// No sandbox: Chromium's refuses to run as root and needs user
	// namespaces many containers lack; the browser only loads our pages.
	alloc := []chromedp.ExecAllocatorOption{chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("hide-scrollbars", true), chromedp.Flag("force-color-profile", "srgb")}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:], alloc...)...)
	defer cancelAlloc()
	br, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(br); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}

	t.Run("pages", func(t *testing.T) {
		tb := openTab(t, br, true)
		// The collector works: a page that breaks the policy is caught.
		tb.navigate(t, srv.URL+"/control")
		if v := tb.take(t); !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, "Content Security Policy") }) {
			t.Fatalf("an inline style under the policy left no report in %q: the collector is blind", v)
		}
		// The audit sees what it should: an image without alt text.
		tb.navigate(t, srv.URL+"/control-axe")
		if v := browsertest.Audit(t, tb.ctx, axe); !slices.ContainsFunc(v, func(v browsertest.Violation) bool { return v.ID == "image-alt" }) {
			t.Fatalf("axe-core missed an image without alt text: %+v", v)
		}
		tb.take(t)

		for _, d := range []device{desktop, phone} {
			for _, dark := range []bool{false, true} {
				scheme := map[bool]string{false: "light", true: "dark"}[dark]
				tb.emulate(t, d, dark)
				for _, p := range pages() {
					name := fmt.Sprintf("%s-%s-%s", p.name, d.name, scheme)
					tb.navigate(t, srv.URL+p.path)
					got := tb.inspect(t)
					if got.Heading != p.heading {
						t.Errorf("%s: heading %q, want %q", name, got.Heading, p.heading)
					}
					if got.ScrollWidth > got.ClientWidth || got.ClientWidth > int(d.width) {
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
					if v := tb.take(t); len(v) > 0 {
						t.Errorf("%s: the browser reported:\n%s", name, strings.Join(v, "\n"))
					}
					browsertest.Write(t, art, name+".png", tb.screenshot(t, true))
					for _, v := range browsertest.Audit(t, tb.ctx, axe) {
						if v.Serious() {
							t.Errorf("%s: axe %s (%s): %s\n  %s", name, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
						} else {
							t.Logf("%s: axe %s (%s): %s", name, v.ID, v.Impact, v.Help)
						}
					}
					tb.take(t)
				}
			}
		}
		if missing := srv.missing(); len(missing) > 0 {
			t.Errorf("the pages asked for what is not there: %v", missing)
		}
	})

	t.Run("nojs", func(t *testing.T) {
		tb := openTab(t, br, false)
		tb.emulate(t, phone, false)
		for _, p := range pages() {
			tb.navigate(t, srv.URL+p.path)
			got := tb.inspect(t)
			if got.Heading != p.heading || got.ScrollWidth > got.ClientWidth {
				t.Errorf("%s without script: heading %q, %d px in %d", p.name, got.Heading, got.ScrollWidth, got.ClientWidth)
			}
			if got.Hidden != got.Copies {
				t.Errorf("%s without script: %d copy buttons shown, which cannot copy", p.name, got.Copies-got.Hidden)
			}
			if v := tb.take(t); len(v) > 0 {
				t.Errorf("%s without script: the browser reported:\n%s", p.name, strings.Join(v, "\n"))
			}
		}
		// The account menu opens without script, and signing out is a
		// button in it, within the phone's width.
		tb.navigate(t, srv.URL+"/w/ws_01JDQ4K8Z6/keys")
		if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.CSS(`.acct summary`))); err != nil {
			t.Fatal(err)
		}
		right, err := chromedp.Run(tb.ctx, chromedp.Evaluate[float64](`(() => {
			const b = document.querySelector('.acct-panel button'), r = b.getBoundingClientRect(),
				all = [...document.querySelectorAll('a[href="/workspaces"]')].some(a => a.getBoundingClientRect().width > 0);
			return r.width > 0 && r.left >= 0 && all ? r.right : -1;
		})()`))
		if err != nil || right < 0 || right > float64(phone.width) {
			t.Errorf("the open account menu's sign-out button ends at %.0f px, or All workspaces is nowhere to be seen (%v)", right, err)
		}
		browsertest.Write(t, art, "keys-phone-menu-open-nojs.png", tb.screenshot(t, false))
		tb.take(t)
	})

	t.Run("script", func(t *testing.T) {
		tb := openTab(t, br, true)
		tb.emulate(t, desktop, false)
		for _, perm := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := chromedp.CallBrowser(tb.ctx, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: perm, AllowWithoutSanitization: perm == "clipboard-write"},
				Setting:    browser.PermissionSettingGranted, Origin: srv.URL}); err != nil {
				t.Fatalf("grant %s: %v", perm, err)
			}
		}

		// A copy button copies the secret and says so.
		tb.navigate(t, srv.URL+"/w/ws_01JDQ4K8Z6/keys/created")
		if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.CSS(`button[data-copy="key-secret"]`))); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tb.ctx, chromedp.Poll[chromedp.Void](`document.getElementById('live').textContent === 'Copied'`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatalf("the live region never said Copied: %v", err)
		}
		clip, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
		if err != nil || clip != secret {
			t.Errorf("clipboard %q (%v), want the secret", clip, err)
		}
		browsertest.Write(t, art, "key-created-copied.png", tb.screenshot(t, false))
		// The secret shown in groups of four is copied without the spaces.
		tb.navigate(t, srv.URL+"/account/two-factor/setup")
		if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.CSS(`button[data-copy="totp-secret"]`)),
			chromedp.Poll[chromedp.Void](`document.getElementById('live').textContent === 'Copied'`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatal(err)
		}
		clip, err = chromedp.Run(tb.ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
		if err != nil || clip != "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP" {
			t.Errorf("clipboard %q (%v), want the secret without spaces", clip, err)
		}

		// data-confirm asks; no stops the form, yes sends it.
		var accept atomic.Bool
		var asked atomic.Int32
		dialogs := chromedp.Events(tb.ctx, page.JavascriptDialogOpening)
		go func() {
			for ev, err := range dialogs {
				if err != nil {
					return
				}
				if ev.Type == page.DialogTypeConfirm && strings.Contains(ev.Message, "grace@acme.example") {
					asked.Add(1)
				}
				chromedp.Call(tb.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept.Load()})
			}
		}()
		remove := `form[action$="/members/usr_01C/remove"] button`
		tb.navigate(t, srv.URL+"/w/ws_01JDQ4K8Z6/members")
		if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.CSS(remove))); err != nil {
			t.Fatal(err)
		}
		tb.take(t)
		if n := srv.posts("/w/ws_01JDQ4K8Z6/members/usr_01C/remove"); n != 0 || asked.Load() != 1 {
			t.Errorf("after answering no: %d posts, asked %d times", n, asked.Load())
		}
		accept.Store(true)
		if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.CSS(remove))); err != nil {
			t.Fatal(err)
		}
		srv.await(t, "/w/ws_01JDQ4K8Z6/members/usr_01C/remove")
		if n := srv.posts("/w/ws_01JDQ4K8Z6/members/usr_01C/remove"); n != 1 || asked.Load() != 2 {
			t.Errorf("after answering yes: %d posts, asked %d times", n, asked.Load())
		}
		// Forms without data-confirm submit without asking.
		tb.navigate(t, srv.URL+"/w/ws_01JDQ4K8Z6/members")
		if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.CSS(`form[action$="/members/usr_01B/role"] button`))); err != nil {
			t.Fatal(err)
		}
		srv.await(t, "/w/ws_01JDQ4K8Z6/members/usr_01B/role")
		if n := srv.posts("/w/ws_01JDQ4K8Z6/members/usr_01B/role"); n != 1 || asked.Load() != 2 {
			t.Errorf("role change: %d posts, asked %d times", n, asked.Load())
		}
		if got := srv.form("/w/ws_01JDQ4K8Z6/members/usr_01B/role"); got != "role=owner" {
			t.Errorf("role form sent %q", got)
		}
		tb.take(t)
	})

	t.Run("keyboard", func(t *testing.T) {
		tb := openTab(t, br, true)
		tb.emulate(t, desktop, false)
		for _, tc := range []struct {
			path string
			want []string
		}{
			{"/sign-in", []string{"Skip to content", "Tocsin", "input:email", "input:password", "Sign in"}},
			{"/w/ws_01JDQ4K8Z6/keys", []string{"Skip to content", "Tocsin", "select:workspace", "Switch", "All workspaces", "summary", "Home", "API keys", "Members",
				"input:name", "input:binding", "input:scope", "Create key", "Revoke"}},
		} {
			tb.navigate(t, srv.URL+tc.path)
			reached := map[string]bool{}
			for i := range 40 {
				if err := chromedp.Do(tb.ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
					t.Fatal(err)
				}
				f, err := chromedp.Run(tb.ctx, chromedp.Evaluate[focused](`(() => {
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
					browsertest.Write(t, art, "sign-in-skip-link.png", tb.screenshot(t, false))
				}
				if i == 4 && tc.path != "/sign-in" {
					browsertest.Write(t, art, "keys-keyboard-focus.png", tb.screenshot(t, false))
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
			tb.take(t)
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
// under webui.CSP; it notes every path it does not know, and answers
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
	for _, p := range webui.AssetPaths() {
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
		h.Set("Content-Security-Policy", webui.CSP)
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
		if body, typ, ok := webui.Asset(r.URL.Path); ok {
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

// await waits until a POST to path arrived (or a minute passed).
func (s *uiServer) await(t *testing.T, path string) {
	t.Helper()
	for range 600 {
		if s.posts(path) > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no POST to %s arrived", path)
}

func (s *uiServer) form(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.posted[path]) == 0 {
		return ""
	}
	return s.posted[path][len(s.posted[path])-1]
}

// tab is one browser tab and what the browser reported in it: console
// messages, log entries (CSP violations, failed loads) and exceptions.
type tab struct {
	ctx     context.Context
	mu      sync.Mutex
	reports []string
	advice  []string
	seen    map[string]bool
}

func openTab(t *testing.T, br context.Context, js bool) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(br)
	t.Cleanup(cancel)
	tb := &tab{ctx: ctx, seen: map[string]bool{}}
	err := chromedp.Listen(ctx, func(ev any) {
		var s string
		switch e := ev.(type) {
		case *log.EventEntryAdded:
			s = fmt.Sprintf("log %s %s: %s (%s)", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL)
			if (e.Entry.Level == log.EntryLevelVerbose || e.Entry.Level == log.EntryLevelInfo) && !strings.Contains(e.Entry.Text, "Content Security Policy") {
				// Chromium's advice: worth reading once, not a failure.
				tb.mu.Lock()
				defer tb.mu.Unlock()
				if !tb.seen[e.Entry.Text] {
					tb.seen[e.Entry.Text] = true
					tb.advice = append(tb.advice, s)
				}
				return
			}
		case *runtime.EventConsoleAPICalled:
			s = fmt.Sprintf("console.%s", e.Type)
			for _, a := range e.Args {
				s += " " + string(a.Value) + a.Description
			}
		case *runtime.EventExceptionThrown:
			s = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				s += " " + e.ExceptionDetails.Exception.Description
			}
		default:
			return
		}
		tb.mu.Lock()
		tb.reports = append(tb.reports, s)
		tb.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !js}); err != nil {
			return err
		}
		// Keys and the clipboard need a focused page, which a headless
		// tab among others need not be.
		_, err := cdp.Call(ctx, tg, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	return tb
}

// take returns what was reported since the last take, and logs the
// browser's advice.
func (tb *tab) take(t *testing.T) []string {
	t.Helper()
	time.Sleep(50 * time.Millisecond) // let the last events of a load arrive; this is no assertion on time
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, a := range tb.advice {
		t.Log(a)
	}
	r := tb.reports
	tb.reports, tb.advice = nil, nil
	return r
}

func (tb *tab) emulate(t *testing.T, d device, dark bool) {
	t.Helper()
	opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
	if d.mobile {
		opts = append(opts, chromedp.EmulateMobile)
	}
	scheme := map[bool]string{false: "light", true: "dark"}[dark]
	err := chromedp.Do(tb.ctx,
		chromedp.EmulateViewport(d.width, d.height, opts...),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			})
			return err
		}))
	if err != nil {
		t.Fatal(err)
	}
}

func (tb *tab) navigate(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate %s: %v", url, err)
	}
}

func (tb *tab) screenshot(t *testing.T, full bool) []byte {
	t.Helper()
	var png []byte
	var err error
	if full {
		png, err = chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	} else {
		png, err = chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
	}
	if err != nil {
		t.Fatal(err)
	}
	return png
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

func (tb *tab) inspect(t *testing.T) looks {
	t.Helper()
	l, err := chromedp.Run(tb.ctx, chromedp.Evaluate[looks](`(() => {
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
