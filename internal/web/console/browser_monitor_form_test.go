package console_test

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tocsin/tocsin/internal/browsertest"
)

// TestMonitorFormInBrowser: without any script, the monitor form shows
// only the chosen type's settings and the chosen credential's fields,
// and "Test now" sends the form to the test route.
func TestMonitorFormInBrowser(t *testing.T) {
	srv := newUIServer(t)
	br := browsertest.Start(t)
	tb := browsertest.OpenTab(t, br, false)
	tb.Emulate(t, browsertest.Phone, false)
	tb.Navigate(t, srv.URL+"/w/ws_01JDQ4K8Z6/monitors/new")
	shown := func() map[string]bool {
		t.Helper()
		got, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[map[string]bool](`(() => {
			const out = {};
			for (const s of ['type-http', 'type-tcp', 'type-dns', 'type-tls', 'auth-basic', 'auth-bearer', 'auth-header'])
				out[s] = document.querySelector('.' + s).getBoundingClientRect().height > 0;
			return out;
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	check := func(step string, want ...string) {
		t.Helper()
		got := shown()
		for name, on := range got {
			want1 := false
			for _, w := range want {
				want1 = want1 || w == name
			}
			if on != want1 {
				t.Errorf("%s: %s shown %v", step, name, on)
			}
		}
	}
	check("new form", "type-http")
	if err := chromedp.Do(tb.Ctx, chromedp.Click(chromedp.CSS(`#type-tcp`))); err != nil {
		t.Fatal(err)
	}
	check("tcp chosen", "type-tcp")
	if err := chromedp.Do(tb.Ctx, chromedp.Click(chromedp.CSS(`#type-http`)),
		chromedp.Click(chromedp.CSS(`#auth-bearer`))); err != nil {
		t.Fatal(err)
	}
	check("bearer chosen", "type-http", "auth-bearer")
	browsertest.Write(t, browsertest.Artifacts(t, "console"), "monitor-new-bearer-phone-nojs.png", tb.Screenshot(t, true))

	tb.Fill(t, `#f-name`, "Shop")
	tb.Fill(t, `#f-url`, "https://shop.example/")
	if err := chromedp.Do(tb.Ctx, chromedp.Click(chromedp.CSS(`button[formaction$="/monitors/test"]`))); err != nil {
		t.Fatal(err)
	}
	srv.await(t, tb, "/w/ws_01JDQ4K8Z6/monitors/test")
	sent, err := url.ParseQuery(srv.form("/w/ws_01JDQ4K8Z6/monitors/test"))
	if err != nil || sent.Get("type") != "http" || sent.Get("name") != "Shop" || sent.Get("url") != "https://shop.example/" ||
		sent.Get("auth-type") != "bearer" || sent.Get("mode") != "new" || !sent.Has("assertion-2-path") {
		t.Errorf("Test now sent %v (%v)", sent, err)
	}
	if n := srv.posts("/w/ws_01JDQ4K8Z6/monitors"); n != 0 {
		t.Errorf("Test now also saved: %d posts", n)
	}
	tb.Take(t)
}
