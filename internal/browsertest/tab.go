package browsertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tocsin/tocsin/internal/racedetector"
)

// Device is a screen a page is looked at on.
type Device struct {
	Name          string
	Width, Height int64 // CSS pixels, at a scale of 1
	Mobile        bool  // a touch screen with a mobile browser's viewport
}

// The screens most tests look at.
var (
	Desktop = Device{"desktop", 1280, 900, false}
	Phone   = Device{"phone", 390, 844, true}
)

// Start starts headless Chromium (see Chromium) for the test, and ends
// it when the test and its subtests are done. The context it returns is
// the browser's, for OpenTab.
//
// Under the race detector it skips the test (see racedetector): chromedp
// reads a node's attributes while its DOM event loop writes them, a race
// in the driver, not in Tocsin, which would fail any run.
func Start(t testing.TB) context.Context {
	t.Helper()
	racedetector.Skip(t, "drives a browser")
	bin := Chromium(t)
	// No sandbox: Chromium's refuses to run as root and needs user
	// namespaces many containers lack; the browser only loads our pages.
	// The scrollbars are hidden and the colours sRGB so that screenshots
	// and computed widths are the same on every machine.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("hide-scrollbars", true), chromedp.Flag("force-color-profile", "srgb"))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	// Cleanups run last first: the browser closes, then its process ends.
	t.Cleanup(cancelBrowser)
	// The first action starts the browser with its first tab.
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	return browser
}

// Tab is one browser tab and what the browser reported in it: console
// messages, log entries (Content-Security-Policy violations, failed
// loads) and uncaught exceptions.
type Tab struct {
	Ctx context.Context // the tab's, for chromedp.Run and chromedp.Do

	mu      sync.Mutex
	reports []string
	advice  []string
	seen    map[string]bool
}

// OpenTab opens a tab in browser (from Start), closed when the test ends,
// with the page's scripts on or off (js). The tab emulates focus: keys
// and the clipboard need a focused page, which a headless tab among
// others need not be. The tabs OpenTab opens share the browser's
// cookies and storage; see OpenIsolatedTab for a tab with its own.
func OpenTab(t testing.TB, browser context.Context, js bool) *Tab {
	t.Helper()
	return openTab(t, browser, js)
}

// OpenIsolatedTab is OpenTab in a browser context of its own: the tab's
// cookies, storage and cache are its own, as a separate browser's would
// be, and go when the test ends. Two people signed in at once each need
// one.
func OpenIsolatedTab(t testing.TB, browser context.Context, js bool) *Tab {
	t.Helper()
	return openTab(t, browser, js, chromedp.WithNewBrowserContext())
}

func openTab(t testing.TB, browser context.Context, js bool, opts ...chromedp.ContextOption) *Tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, opts...)
	t.Cleanup(cancel)
	tb := &Tab{Ctx: ctx, seen: map[string]bool{}}
	if err := chromedp.Listen(ctx, tb.collect); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !js}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	return tb
}

// collect notes one event of the tab's, if it is a report or advice.
func (tb *Tab) collect(ev any) {
	var s string
	switch e := ev.(type) {
	case *log.EventEntryAdded:
		s = fmt.Sprintf("log %s %s: %s (%s)", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL)
		if (e.Entry.Level == log.EntryLevelVerbose || e.Entry.Level == log.EntryLevelInfo) && !strings.Contains(e.Entry.Text, "Content Security Policy") {
			// Chromium's advice (a password form without a username
			// field): worth reading once, not a failure.
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
}

// Take returns what the browser reported since the last Take, and logs
// its advice (each piece once per tab).
func (tb *Tab) Take(t testing.TB) []string {
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

// Emulate makes the tab's viewport d's, and its prefers-color-scheme
// dark or light, for the pages navigated to next.
func (tb *Tab) Emulate(t testing.TB, d Device, dark bool) {
	t.Helper()
	opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
	if d.Mobile {
		opts = append(opts, chromedp.EmulateMobile)
	}
	scheme := map[bool]string{false: "light", true: "dark"}[dark]
	err := chromedp.Do(tb.Ctx,
		chromedp.EmulateViewport(d.Width, d.Height, opts...),
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

// Navigate loads url in the tab and waits for it to load, for at most
// 30 seconds.
func (tb *Tab) Navigate(t testing.TB, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.Ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate %s: %v", url, err)
	}
}

// Screenshot is a PNG of the whole page (full) or of what the viewport
// shows.
func (tb *Tab) Screenshot(t testing.TB, full bool) []byte {
	t.Helper()
	var png []byte
	var err error
	if full {
		png, err = chromedp.Run(tb.Ctx, chromedp.FullScreenshot(100))
	} else {
		png, err = chromedp.Run(tb.Ctx, chromedp.CaptureScreenshot())
	}
	if err != nil {
		t.Fatal(err)
	}
	return png
}

// Audit runs axe-core (its script, from Axe) in the tab's page; see the
// function Audit.
func (tb *Tab) Audit(t testing.TB, axe string) []Violation {
	t.Helper()
	return Audit(t, tb.Ctx, axe)
}

// Fill sets the value of the form field sel (an input, a textarea or a
// select) as a person typing or choosing would leave it, and fires its
// input and change events. It does so in the page, through one script,
// rather than with chromedp's key events: those read the node's
// attributes while chromedp's DOM event loop may be writing them after a
// live update. It fails the test when no field matches.
func (tb *Tab) Fill(t testing.TB, sel, value string) {
	t.Helper()
	js := fmt.Sprintf(`((sel, value) => {
		const e = document.querySelector(sel);
		if (!e) return false;
		e.focus();
		e.value = value;
		e.dispatchEvent(new Event('input', {bubbles: true}));
		e.dispatchEvent(new Event('change', {bubbles: true}));
		return true;
	})(%q, %q)`, sel, value)
	ok, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[bool](js))
	if err != nil {
		t.Fatalf("fill %s: %v", sel, err)
	}
	if !ok {
		t.Fatalf("fill %s: no such field", sel)
	}
}
