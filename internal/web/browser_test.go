package web_test

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

	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web"
)

// TestServedPagesInBrowser: the pages as the server serves them (its
// headers, its cookie, its data), in headless Chromium with JavaScript
// off: a reader of a protected page signs in through the form and sees
// the page; nothing breaks the Content-Security-Policy or fails to load;
// and axe-core finds no serious or critical violation on the page read.
func TestServedPagesInBrowser(t *testing.T) {
	bin := browsertest.Chromium(t)
	axe := browsertest.Axe(t)
	alloc := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), alloc...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	forEachEngine(t, web.PublicOptions{}, func(t *testing.T, e *env) {
		m := e.monitor(e.keyA, "ledger-db", "http://127.0.0.1:9/", nil)
		d := e.monitor(e.keyA, "queue", "http://127.0.0.1:9/q", nil)
		e.record(m, "x", monitor.ResultUp, monitor.ResultUp)
		e.record(d, "x", monitor.ResultDown, monitor.ResultDown)
		e.page(e.keyA, map[string]any{"slug": "vault", "title": "Vault status", "visibility": "password", "password": "open sesame 2",
			"accent": "#8250df", "footerLinks": []any{map[string]any{"label": "Support", "url": "https://support.example.com/"}},
			"groups": []any{map[string]any{"name": "Storage", "components": []any{
				component("monitorId", m, "Ledger", "Where balances live."), component("monitorId", d, "Queue", "")}}}})

		tab := openTab(t, browser)
		tab.run(t, chromedp.Navigate(e.srv.URL+"/status/vault"))
		if got := tab.text(t, "main"); strings.Contains(got, "Ledger") || !strings.Contains(tab.text(t, "body"), "Vault status") {
			t.Fatalf("the form shows the page: %q", got)
		}
		for _, r := range tab.reports() { // the form comes with 401, which the browser notes
			if !strings.Contains(r, "status of 401") {
				t.Errorf("the browser reported: %q", r)
			}
		}
		tab.run(t, chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), "open sesame 2"),
			chromedp.Click(chromedp.CSS(`form button, form input[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`.bar`)))
		body := tab.text(t, "body")
		for _, want := range []string{"Ledger", "Where balances live.", "Queue", "Storage", "Support"} {
			if !strings.Contains(body, want) {
				t.Errorf("signed-in page lacks %q", want)
			}
		}
		if strings.Contains(body, "ledger-db") || strings.Contains(body, "127.0.0.1") {
			t.Error("the page shows a monitor's name or target")
		}
		if r := tab.reports(); len(r) > 0 {
			t.Errorf("the browser reported: %q", r)
		}
		png, err := chromedp.Run(tab.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		browsertest.Write(t, browsertest.Artifacts(t, "web"), "served-"+e.db.Engine()+".png", png)
		for _, v := range tab.audit(t, axe) {
			if v.Serious() {
				t.Errorf("axe: %s (%s): %s %q", v.ID, v.Impact, v.Help, v.Nodes)
			}
		}
	})
}

type tab struct {
	ctx context.Context
	mu  sync.Mutex
	got []string
}

// openTab opens a tab with JavaScript off that collects what the browser
// reports: console messages, exceptions, policy violations, failed loads.
func openTab(t *testing.T, browser context.Context) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	tb := &tab{ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		var s string
		switch e := ev.(type) {
		case *log.EventEntryAdded:
			if e.Entry.Level != log.EntryLevelError && e.Entry.Level != log.EntryLevelWarning {
				return // the browser's advice, not a fault
			}
			s = fmt.Sprintf("%s: %s (%s)", e.Entry.Level, e.Entry.Text, e.Entry.URL)
		case *runtime.EventConsoleAPICalled:
			s = "console." + string(e.Type)
		case *runtime.EventExceptionThrown:
			s = "exception: " + e.ExceptionDetails.Text
		default:
			return
		}
		tb.mu.Lock()
		tb.got = append(tb.got, s)
		tb.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	tb.scripts(t, false)
	return tb
}

// scripts turns the page's JavaScript on or off.
func (tb *tab) scripts(t *testing.T, on bool) {
	t.Helper()
	tb.run(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
		return err
	}))
}

func (tb *tab) run(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

func (tb *tab) text(t *testing.T, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// reports returns what the browser reported since the last call.
func (tb *tab) reports() []string {
	time.Sleep(100 * time.Millisecond) // the last events of a load; no assertion on time
	tb.mu.Lock()
	defer tb.mu.Unlock()
	r := tb.got
	tb.got = nil
	return r
}

// audit runs axe-core in the tab's page, with its scripts on for axe's
// timers.
func (tb *tab) audit(t *testing.T, axe string) []browsertest.Violation {
	t.Helper()
	tb.scripts(t, true)
	return browsertest.Audit(t, tb.ctx, axe)
}
