package console_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/wait"
	"github.com/tocsin/tocsin/internal/web/public"
)

// TestHeartbeatsInBrowser: in Chromium, as served, an editor creates a
// heartbeat through the form, copies the curl snippet's text off its page,
// runs it, and on reloading sees the heartbeat up; a form with mistakes
// shows each at its field; the list's rows follow the live stream. The list, the page and the form pass axe-core
// and the browser reports nothing.
//
//	TOCSIN_UPDATE_SCREENSHOTS=1  also write docs/images/web-heartbeats.png
//	                             and docs/images/web-heartbeat.png (on a
//	                             desktop, light)
func TestHeartbeatsInBrowser(t *testing.T) {
	axe := browsertest.Axe(t)
	docs := docsImages(t)
	browser := browsertest.Start(t)
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		tb := signedInTab(t, browser, e, "editor@a.test", account.RoleEditor)

		ws := "/w/" + e.WsA.ID
		tb.open(t, ws+"/heartbeats", 200)
		if got := tb.text(t, "#none-h"); got != "No heartbeats yet" {
			t.Errorf("the empty list says %q", got)
		}
		tb.audited(t, axe, "empty heartbeats list")

		// Mistakes first: each at its field.
		tb.open(t, ws+"/heartbeats/new", 200)
		tb.audited(t, axe, "heartbeat form")
		tb.fill(t, "#f-period", "30")
		tb.fill(t, "#f-grace", "soon")
		tb.press(t, `form.heartbeat-form button.primary`, 422)
		for id, want := range map[string]string{"err-name": "Name must not be empty.", "err-period": "Period must be between 60 and 31536000.",
			"err-grace": "Grace must be a whole number."} {
			if got := tb.text(t, "#"+id); got != want {
				t.Errorf("%s: %q, want %q", id, got, want)
			}
		}
		tb.audited(t, axe, "heartbeat form errors")

		// Then a good one, pinged by its own curl snippet.
		tb.fill(t, "#f-name", "Nightly export")
		tb.fill(t, "#f-period", "86400")
		tb.fill(t, "#f-grace", "900")
		tb.press(t, `form.heartbeat-form button.primary`, 200)
		if got := tb.text(t, "main h1"); got != "Nightly export" {
			t.Fatalf("after creating, the page is %q", got)
		}
		if got := tb.eval(t, `document.querySelector('[data-heartbeat-id] [data-state]').getAttribute('data-state')`); got != "PENDING" {
			t.Errorf("a new heartbeat is %v", got)
		}
		snippet, _ := tb.eval(t, `document.getElementById('snippet-curl').textContent`).(string)
		pingURL, _ := tb.eval(t, `document.getElementById('ping-url').textContent`).(string)
		if !strings.HasPrefix(pingURL, e.Srv.URL+"/ping/") || !strings.HasSuffix(snippet, " "+pingURL) {
			t.Fatalf("the snippet %q does not call the ping URL %q", snippet, pingURL)
		}
		if _, err := exec.LookPath("curl"); err == nil {
			if out, err := exec.Command("sh", "-c", snippet).CombinedOutput(); err != nil {
				t.Fatalf("the curl snippet: %v: %s", err, out)
			}
		} else {
			e.ping(pingURL, "")
		}
		detail, _ := tb.eval(t, `location.pathname`).(string)
		wait.For(t, 20*time.Second, "the heartbeat up after a reload", func() bool {
			tb.open(t, detail, 200)
			return tb.eval(t, `document.querySelector('[data-heartbeat-id] [data-state]').getAttribute('data-state')`) == "UP"
		})
		if got := tb.text(t, "table.pings tbody tr"); !strings.Contains(got, "success") || !strings.Contains(got, "curl") {
			t.Errorf("the pings list shows %q", got)
		}
		tb.audited(t, axe, "heartbeat page")

		// The pictures: a few more heartbeats in the list, a run with a
		// start and a log on the page.
		_, backupURL := e.heartbeat(e.KeyA, "Database backup", map[string]any{"cron": "30 2 * * *", "timezone": "Europe/Berlin", "graceSeconds": 1800})
		_, syncURL := e.heartbeat(e.KeyA, "Invoice sync", map[string]any{"periodSeconds": 300})
		e.ping(backupURL+"/start", "")
		e.ping(backupURL+"/0", "dumped 48 tables, 2.1 GiB\nuploaded to s3://backups/2026-11-26.sql.gz")
		e.ping(syncURL+"/1", "error: the ledger API answered 503")
		e.ping(pingURL+"/start", "")
		e.ping(pingURL, "exported 12,408 rows")
		wait.For(t, 20*time.Second, "the list's states", func() bool {
			tb.open(t, ws+"/heartbeats", 200)
			return tb.eval(t, `document.querySelectorAll('[data-state="UP"]').length === 2 && document.querySelectorAll('[data-state="DOWN"]').length === 1`) == true
		})
		tb.audited(t, axe, "heartbeats list")
		tb.document(t, docs, "heartbeats")
		tb.open(t, detail, 200)
		tb.document(t, docs, "heartbeat")
		docs = "" // the pages look the same on both engines

		// The list follows the live stream: a ping turns a row up without a
		// reload.
		tb.open(t, ws+"/heartbeats", 200)
		tb.eval(t, `window.notReloaded = true`)
		e.ping(syncURL, "")
		wait.For(t, 20*time.Second, "the live row", func() bool {
			return tb.eval(t, `document.querySelectorAll('[data-state="UP"]').length === 3 && window.notReloaded === true`) == true
		})
		tb.quiet(t, "live list")
	})
}
