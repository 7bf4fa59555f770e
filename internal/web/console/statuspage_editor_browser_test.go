package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web/public"
	"github.com/tocsin/tocsin/internal/web/webtest"
)

// TestStatusPageEditorInBrowser: in Chromium, as served, an admin makes a
// status page in the editor, adds two components, reorders them with the
// keyboard on the "Move up"/"Move down" buttons and by dragging, keeps
// the page behind a password, then publishes it; a reader in a separate,
// signed-out tab is asked for the password before and sees the
// components in the chosen order after. The list and the editor pass
// axe-core and the browser reports nothing.
//
//	TOCSIN_UPDATE_SCREENSHOTS=1  also write docs/images/web-status-pages.png
//	                             and web-status-page-editor.png
func TestStatusPageEditorInBrowser(t *testing.T) {
	axe := browsertest.Axe(t)
	docs := docsImages(t)
	browser := browsertest.Start(t)
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		site := e.Monitor(e.KeyA, "www-prod-1", "https://www.acme.example/", nil)
		shop := e.Monitor(e.KeyA, "checkout-api", "https://api.acme.example/checkout", nil)
		e.Record(site, "", monitor.ResultUp, monitor.ResultUp)
		e.Record(shop, "", monitor.ResultUp)
		// order is the components' names as the editor lists them.
		order := func(tb *appTab) string {
			t.Helper()
			return tb.eval(t, `[...document.querySelectorAll('[data-component] .sp-name')].map(e => e.textContent).join(', ')`).(string)
		}
		wantOrder := func(tb *appTab, what, want string) {
			t.Helper()
			if got := order(tb); got != want {
				t.Fatalf("%s: the editor lists %q, want %q", what, got, want)
			}
		}
		tb := signedInTab(t, browser, e, "admin@acme.example", account.RoleAdmin)

		ws := "/w/" + e.WsA.ID
		tb.open(t, ws+"/", 200)
		tb.press(t, `nav a[href="`+ws+`/status-pages"]`, 200)
		tb.want(t, "the empty list", shown{URL: ws + "/status-pages", Heading: "Status pages"})
		tb.audited(t, axe, "status page list, empty")
		tb.fill(t, "#f-title", "Acme status")
		tb.fill(t, "#f-slug", "acme")
		tb.press(t, `form[action="`+ws+`/status-pages"] button[type="submit"]`, 200)
		if got := tb.page(t); got.Heading != "Acme status" || !strings.Contains(got.Flash, "The status page is created") {
			t.Fatalf("after creating: %+v", got)
		}
		for _, c := range [][2]string{{site, "Website"}, {shop, "Checkout"}} {
			tb.choose(t, "#f-c-subject", "monitor:"+c[0])
			tb.fill(t, "#f-c-name", c[1])
			tb.press(t, `form[action$="/components"] button[type="submit"]`, 200)
		}
		wantOrder(tb, "added", "Website, Checkout")

		// With the keyboard: focus Checkout's "Move up", press Enter.
		if err := chromedp.Do(tb.Ctx, chromedp.Focus(chromedp.CSS(`[data-component]:nth-child(2) button[value="up"]`))); err != nil {
			t.Fatal(err)
		}
		tb.load(t, "Enter on Move up", 200, chromedp.KeyEvent("\r"))
		wantOrder(tb, "moved up with the keyboard", "Checkout, Website")

		// By dragging Checkout below Website.
		tb.load(t, "drag", 200, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Evaluate[bool](`(() => {
				const item = n => [...document.querySelectorAll('[data-component]')].find(e => e.querySelector('.sp-name').textContent === n);
				const from = item('Checkout'), to = item('Website'), dt = new DataTransfer(), box = to.getBoundingClientRect();
				const fire = (el, type) => el.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: dt, clientY: box.bottom - 1}));
				fire(from, 'dragstart'); fire(to, 'dragover'); fire(to, 'drop');
				return true;
			})()`)(ctx, tg)
			return chromedp.Void{}, err
		})
		wantOrder(tb, "dragged", "Website, Checkout")

		// With the keyboard again: Website down, below Checkout.
		if err := chromedp.Do(tb.Ctx, chromedp.Focus(chromedp.CSS(`[data-component]:nth-child(1) button[value="down"]`))); err != nil {
			t.Fatal(err)
		}
		tb.load(t, "Enter on Move down", 200, chromedp.KeyEvent("\r"))
		wantOrder(tb, "moved down with the keyboard", "Checkout, Website")
		if got := tb.evalAwait(t, `new Promise(ok => { const f = document.querySelector('.sp-preview iframe');
			const read = () => [...f.contentDocument.querySelectorAll('.name')].map(e => e.textContent).join(', ');
			if (f.contentDocument && f.contentDocument.readyState === 'complete' && read()) ok(read()); else f.addEventListener('load', () => ok(read())); })`); got != "Checkout, Website" {
			t.Errorf("the preview shows %v", got)
		}

		// Behind a password, with a custom domain: not published yet.
		tb.click(t, "#visibility-password")
		tb.fill(t, "#f-password", "a password for readers")
		tb.fill(t, "#f-domain", "status.acme.example")
		tb.press(t, `form[action="`+ws+`/status-pages/`+strings.TrimPrefix(tb.page(t).URL, ws+"/status-pages/")+`"] button.primary`, 200)
		if got := tb.text(t, ".sp-dns pre"); !strings.Contains(got, "status.acme.example. A 127.0.0.1") {
			t.Errorf("the DNS record: %q", got)
		}
		if tb.eval(t, `document.getElementById('f-password').value`) != "" {
			t.Error("the password field is filled after saving")
		}
		tb.audited(t, axe, "status page editor")
		// The public pages follow an edit made through the same server on
		// the very next request (the preview's assets had them read the
		// page before it).
		readers := func(status int, want string) {
			t.Helper()
			if r := e.Get("/status/acme"); r.Status != status || !webtest.Contains(r.Body, want) {
				t.Errorf("the next reader: %d, want %d with %q", r.Status, status, want)
			}
		}
		readers(401, "password")
		reader := openAppTab(t, browser, e.Srv.URL)

		tb.press(t, `form[action$="/publish"] button`, 200)
		if got := tb.text(t, ".sp-publish"); !strings.Contains(got, "public") {
			t.Errorf("after publishing: %q", got)
		}
		tb.document(t, docs, "status-page-editor")
		readers(200, "Checkout")
		reader.open(t, "/status/acme", 200)
		if got := reader.eval(t, `[...document.querySelectorAll('.name')].map(e => e.textContent).join(', ')`); got != "Checkout, Website" {
			t.Errorf("the public page shows %v: %v", got, reader.eval(t, `document.body.innerText`))
		}

		tb.open(t, ws+"/status-pages", 200)
		if got := tb.text(t, "table"); !strings.Contains(got, "Acme status") || !strings.Contains(got, "/status/acme") ||
			!strings.Contains(got, "public") || !strings.Contains(got, "status.acme.example") {
			t.Errorf("the list: %q", got)
		}
		tb.audited(t, axe, "status page list")
		tb.document(t, docs, "status-pages")
		docs = "" // once: the pages look the same on both engines
	})
}
