package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/wait"
	"github.com/tocsin/tocsin/internal/web/public"
)

// TestChannelsInBrowser: in Chromium, as served, an admin makes a
// webhook channel through the form, pointing at a real receiver, copies
// the signing secret the page shows once into the receiver, sends a
// test, and reloads the channel's page until the delivery shows as
// delivered; the receiver verified its signature. The list, the forms
// and the channel's page pass axe-core and the browser reports nothing.
//
//	TOCSIN_UPDATE_SCREENSHOTS=1  also write docs/images/web-channels.png
//	                             and web-channel.png
func TestChannelsInBrowser(t *testing.T) {
	axe := browsertest.Axe(t)
	docs := docsImages(t)
	browser := browsertest.Start(t)
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		runDeliverer(t, e)
		h := newHook(t)
		tb := signedInTab(t, browser, e, "admin@a.test", account.RoleAdmin)

		ws := "/w/" + e.WsA.ID
		tb.open(t, ws+"/channels", 200)
		tb.press(t, `a[href="`+ws+`/channels/new"]`, 200)
		tb.audited(t, axe, "the choice of kinds")
		tb.press(t, `a[href="`+ws+`/channels/new?kind=webhook"]`, 200)
		tb.audited(t, axe, "the webhook form")

		// Mistakes first: they come back at their fields.
		tb.fill(t, "#f-url", "ftp://example.com/")
		tb.click(t, `input[name="events"][value="incident.opened"]`)
		tb.press(t, `form.channel-form button.primary`, 422)
		for id, want := range map[string]string{"err-name": "Name must not be blank.", "err-url": "URL must be an absolute http or https URL."} {
			if got := tb.text(t, "#"+id); got != want {
				t.Errorf("%s: %q, want %q", id, got, want)
			}
		}
		tb.audited(t, axe, "the webhook form's errors")

		tb.fill(t, "#f-name", "Ops webhook")
		tb.fill(t, "#f-url", h.srv.URL+"/tocsin")
		tb.press(t, `form.channel-form button.primary`, 201)
		secret := tb.text(t, "#signing-secret")
		if !whsecRE.MatchString(secret) || !strings.Contains(tb.text(t, ".once"), "shown only now") {
			t.Fatalf("the created page shows %q", secret)
		}
		h.set(secret, 0, "")
		tb.press(t, `main a.btn.primary`, 200)
		page := tb.eval(t, `location.pathname`).(string)
		if !strings.HasPrefix(page, ws+"/channels/nch_") || strings.Contains(tb.text(t, "body"), "whsec_") {
			t.Fatalf("after Done: %s", page)
		}
		tb.press(t, `form[action$="/test"] button`, 200)
		if got := tb.page(t).Flash; !strings.Contains(got, "A test event is on its way") {
			t.Errorf("the flash after a test: %q", got)
		}
		wait.For(t, 20*time.Second, "the test delivery to succeed", func() bool {
			tb.open(t, page, 200)
			status, _ := tb.eval(t, `(document.querySelector('[data-delivery-id] [data-status]') || {dataset: {}}).dataset.status || ''`).(string)
			return status == "succeeded"
		})
		if got := tb.text(t, "[data-delivery-id]"); !strings.Contains(got, "delivered") || !strings.Contains(got, "HTTP 204") || !strings.Contains(got, "test") {
			t.Errorf("the delivery's row: %q", got)
		}
		if good, bad := h.verified(); len(good) != 1 || bad != 0 {
			t.Errorf("the receiver verified %d deliveries, refused %d", len(good), bad)
		}
		tb.audited(t, axe, "the channel's page")
		tb.document(t, docs, "channel")

		tb.open(t, ws+"/channels", 200)
		if got := tb.text(t, "[data-channel-id]"); !strings.Contains(got, "Ops webhook") || !strings.Contains(got, "delivered") ||
			strings.Contains(got, "whsec_") {
			t.Errorf("the list's row: %q", got)
		}
		tb.audited(t, axe, "the list")
		tb.document(t, docs, "channels")
		docs = "" // the pages look the same on both engines
	})
}
