package public_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web/public"
)

// TestServedPagesInBrowser: the pages as the server serves them (its
// headers, its cookie, its data), in headless Chromium with JavaScript
// off: a reader of a protected page signs in through the form and sees
// the page; nothing breaks the Content-Security-Policy or fails to load;
// and axe-core finds no serious or critical violation on the page read.
func TestServedPagesInBrowser(t *testing.T) {
	axe := browsertest.Axe(t)
	browser := browsertest.Start(t)
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		m := e.Monitor(e.KeyA, "ledger-db", "http://127.0.0.1:9/", nil)
		d := e.Monitor(e.KeyA, "queue", "http://127.0.0.1:9/q", nil)
		e.Record(m, "x", monitor.ResultUp, monitor.ResultUp)
		e.Record(d, "x", monitor.ResultDown, monitor.ResultDown)
		statusPage(e, e.KeyA, map[string]any{"slug": "vault", "title": "Vault status", "visibility": "password", "password": "open sesame 2",
			"accent": "#8250df", "footerLinks": []any{map[string]any{"label": "Support", "url": "https://support.example.com/"}},
			"groups": []any{map[string]any{"name": "Storage", "components": []any{
				component("monitorId", m, "Ledger", "Where balances live."), component("monitorId", d, "Queue", "")}}}})

		tab := browsertest.OpenTab(t, browser, false)
		tab.Navigate(t, e.Srv.URL+"/status/vault")
		if got := visibleText(t, tab, "main"); strings.Contains(got, "Ledger") || !strings.Contains(visibleText(t, tab, "body"), "Vault status") {
			t.Fatalf("the form shows the page: %q", got)
		}
		for _, r := range tab.Take(t) { // the form comes with 401, which the browser notes
			if !strings.Contains(r, "status of 401") {
				t.Errorf("the browser reported: %q", r)
			}
		}
		tab.Fill(t, `input[name="password"]`, "open sesame 2")
		run(t, tab, chromedp.Click(chromedp.CSS(`form button, form input[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`.bar`)))
		body := visibleText(t, tab, "body")
		for _, want := range []string{"Ledger", "Where balances live.", "Queue", "Storage", "Support"} {
			if !strings.Contains(body, want) {
				t.Errorf("signed-in page lacks %q", want)
			}
		}
		if strings.Contains(body, "ledger-db") || strings.Contains(body, "127.0.0.1") {
			t.Error("the page shows a monitor's name or target")
		}
		if r := tab.Take(t); len(r) > 0 {
			t.Errorf("the browser reported: %q", r)
		}
		browsertest.Write(t, browsertest.Artifacts(t, "web"), "served-"+e.DB.Engine()+".png", tab.Screenshot(t, false))
		// axe-core's timers need the page's scripts.
		scripts(t, tab, true)
		for _, v := range tab.Audit(t, axe) {
			if v.Serious() {
				t.Errorf("axe: %s (%s): %s %q", v.ID, v.Impact, v.Help, v.Nodes)
			}
		}
	})
}

// scripts turns the page's JavaScript on or off.
func scripts(t *testing.T, tb *browsertest.Tab, on bool) {
	t.Helper()
	run(t, tb, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
		return err
	}))
}

// run runs actions in the tab, for at most 30 seconds.
func run(t *testing.T, tb *browsertest.Tab, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.Ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// visibleText is the text of the first element sel selects, as shown.
func visibleText(t *testing.T, tb *browsertest.Tab, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.Ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
