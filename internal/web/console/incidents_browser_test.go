package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web/public"
)

// TestIncidentsInBrowser: in Chromium, as served, a monitor goes DOWN and
// its incident opens; an editor finds it in the list, opens it,
// acknowledges it, posts an update and resolves it, seeing each on the
// timeline; then makes a recurring maintenance window. The incident list,
// the incident's page and the maintenance page pass axe-core, and the
// browser reports nothing.
//
//	TOCSIN_UPDATE_SCREENSHOTS=1  also write docs/images/web-incidents.png,
//	                             web-incident.png and web-maintenance.png
func TestIncidentsInBrowser(t *testing.T) {
	axe := browsertest.Axe(t)
	docs := docsImages(t)
	browser := browsertest.Start(t)
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		// write fills a textarea.
		write := func(tb *appTab, sel, value string) { t.Helper(); tb.Fill(t, sel, value) }
		timeline := func(tb *appTab) string { t.Helper(); return tb.text(t, "ol.timeline") }

		checkout := e.Monitor(e.KeyA, "Checkout API", "https://shop.example.com/health", nil)
		website := e.Monitor(e.KeyA, "Website", "https://www.example.com/", nil)
		e.API("POST", "/api/v1/heartbeats", e.KeyA, map[string]any{"name": "Nightly backup",
			"schedule": map[string]any{"periodSeconds": 86400, "graceSeconds": 3600}}, 201)
		earlier := e.API("POST", "/api/v1/incidents", e.KeyA, map[string]any{"title": "Slow logins", "status": "identified",
			"message": "Sign-in takes up to 20 seconds.", "affectedMonitors": []string{website}, "public": true}, 201)["id"].(string)
		e.API("POST", "/api/v1/incidents/"+earlier+"/resolve", e.KeyA, map[string]any{"message": "Sign-in is fast again."}, 200)
		e.Record(checkout, "HTTP 503: status 503 is not among the expected codes", monitor.ResultDown, monitor.ResultDown)
		open := e.API("GET", "/api/v1/incidents?status=open", e.KeyA, nil, 200)["data"].([]any)
		if len(open) != 1 {
			t.Fatalf("open incidents after the outage: %v", open)
		}
		id := open[0].(map[string]any)["id"].(string)
		ws := "/w/" + e.WsA.ID

		tb := signedInTab(t, browser, e, "editor@acme.example", account.RoleEditor)

		tb.open(t, ws+"/", 200)
		tb.load(t, "follow the Incidents link", 200, chromedp.Click(chromedp.CSS(`nav a[href$="/incidents"]`), chromedp.NodeVisible))
		row := `tr[data-incident-id="` + id + `"]`
		if got := tb.text(t, row); !strings.Contains(got, "Checkout API") || !strings.Contains(got, "open") || !strings.Contains(got, "investigating") {
			t.Errorf("the open incident's row: %q", got)
		}
		if got := tb.text(t, `tr[data-incident-id="`+earlier+`"]`); !strings.Contains(got, "manual") || !strings.Contains(got, "resolved") ||
			!strings.Contains(got, "public") {
			t.Errorf("the resolved incident's row: %q", got)
		}
		tb.audited(t, axe, "incident list")
		tb.document(t, docs, "incidents")

		tb.load(t, "open the incident", 200, chromedp.Click(chromedp.CSS(row+` th a`), chromedp.NodeVisible))
		if got := tb.page(t); !strings.Contains(got.Heading, "Checkout API") {
			t.Errorf("the incident's page: %+v", got)
		}
		if got := timeline(tb); !strings.Contains(got, "Opened by Tocsin") || !strings.Contains(got, "HTTP 503") {
			t.Errorf("the timeline at first: %q", got)
		}

		tb.press(t, `form[action$="/acknowledge"] button`, 200)
		if got := tb.page(t); got.Flash != "The incident is acknowledged." {
			t.Errorf("after acknowledging: %+v", got)
		}
		if got := tb.text(t, "[data-incident-state]"); got != "acknowledged" {
			t.Errorf("state after acknowledging: %q", got)
		}
		if !strings.Contains(timeline(tb), "Acknowledged") {
			t.Errorf("the timeline lacks the acknowledgement: %q", timeline(tb))
		}

		tb.choose(t, "#f-update-status", "identified")
		write(tb, "#f-update-message", "The payment provider times out; we are failing over.")
		tb.press(t, `form[action$="/updates"] button`, 200)
		if got := tb.page(t); got.Flash != "The update is posted." {
			t.Errorf("after the update: %+v", got)
		}
		if got := timeline(tb); !strings.Contains(got, "identified The payment provider times out; we are failing over.") {
			t.Errorf("the timeline lacks the update: %q", got)
		}
		tb.audited(t, axe, "incident page")
		tb.document(t, docs, "incident")

		write(tb, "#f-resolve-message", "Failed over; checkout works again.")
		tb.press(t, `form[action$="/resolve"] button`, 200)
		if got := tb.page(t); got.Flash != "The incident is resolved." {
			t.Errorf("after resolving: %+v", got)
		}
		if got := tb.text(t, "[data-incident-state]"); got != "resolved" {
			t.Errorf("state after resolving: %q", got)
		}
		got := timeline(tb)
		for _, want := range []string{"Opened", "Acknowledged", "identified The payment provider", "Resolved", "resolved Failed over; checkout works again."} {
			if !strings.Contains(got, want) {
				t.Errorf("the timeline lacks %q: %q", want, got)
			}
		}
		if n := tb.eval(t, `document.querySelectorAll('form[action$="/acknowledge"], form[action$="/resolve"]').length`); n != float64(0) {
			t.Errorf("a resolved incident still offers %v acknowledge or resolve forms", n)
		}
		tb.audited(t, axe, "resolved incident page")
		if inc := e.API("GET", "/api/v1/incidents/"+id, e.KeyA, nil, 200); inc["status"] != "resolved" || inc["acknowledgedAt"] == nil {
			t.Errorf("the incident on the API: %v", inc)
		}

		// A recurring maintenance window, made in the browser.
		e.API("POST", "/api/v1/maintenance-windows", e.KeyA, map[string]any{"name": "Database upgrade", "description": "Postgres 18",
			"monitorIds": []string{checkout}, "startsAt": e.Clock.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339),
			"endsAt": e.Clock.Now().Add(50 * time.Minute).UTC().Format(time.RFC3339)}, 201)
		tb.load(t, "follow the Maintenance link", 200, chromedp.Click(chromedp.CSS(`nav a[href$="/maintenance"]`), chromedp.NodeVisible))
		tb.fill(t, "#f-name", "Weekly patching")
		tb.click(t, "#kind-recurring")
		tb.fill(t, "#f-timezone", "Europe/Berlin")
		tb.fill(t, "#f-cron", "30 2 * * 6")
		tb.fill(t, "#f-duration", "90")
		tb.click(t, `input[name="monitor"][value="`+website+`"]`)
		tb.press(t, `form.maintenance-form button.primary`, 200)
		if got := tb.page(t); !strings.HasPrefix(got.Flash, "The maintenance window is created.") {
			t.Errorf("after making the window: %+v", got)
		}
		if got := tb.text(t, "table.maintenance"); !strings.Contains(got, "every Saturday at 02:30, for 1 h 30 min each") ||
			!strings.Contains(got, "Europe/Berlin") || !strings.Contains(got, "active") {
			t.Errorf("the windows: %q", got)
		}
		tb.audited(t, axe, "maintenance page")
		tb.document(t, docs, "maintenance")
		docs = "" // the pages look the same on the other engine
	})
}
