package console_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/web/public"
)

// TestMonitorFormInAppBrowser: in Chromium, as served, an editor tries a
// monitor with "Test now" against a real server, sees each assertion's
// verdict, then sends a form with mistakes and sees them at their fields;
// both pages pass axe-core and the browser reports nothing.
func TestMonitorFormInAppBrowser(t *testing.T) {
	axe := browsertest.Axe(t)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"up"}`))
	}))
	t.Cleanup(target.Close)
	browser := browsertest.Start(t)
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		tb := signedInTab(t, browser, e, "editor@a.test", account.RoleEditor)

		ws := "/w/" + e.WsA.ID
		tb.open(t, ws+"/monitors/new", 200)
		tb.fill(t, "#f-name", "Shop")
		tb.fill(t, "#f-url", target.URL+"/health")
		tb.fill(t, "#f-status-codes", "200")
		tb.fill(t, "#f-assertion-0-path", "$.status")
		tb.fill(t, "#f-assertion-0-value", "up")
		tb.press(t, `button[formaction$="/monitors/test"]`, 200)
		got := tb.text(t, ".test-result")
		for _, want := range []string{"Test result: down", "✗ Failed: Status code is 200 — status 503 is not among the expected codes",
			"✓ Passed: JSON $.status equals \"up\""} {
			if !strings.Contains(got, want) {
				t.Errorf("test result %q lacks %q", got, want)
			}
		}
		if tb.eval(t, `document.getElementById('f-url').value`) != target.URL+"/health" {
			t.Errorf("the URL typed is gone after the test")
		}
		tb.audited(t, axe, "monitor test result")

		tb.fill(t, "#f-name", " ")
		tb.fill(t, "#f-interval", "often")
		tb.fill(t, "#f-assertion-1-path", "$[")
		tb.press(t, `form.monitor-form button.primary`, 422)
		for id, want := range map[string]string{"err-name": "Name must not be empty.", "err-interval": "Check interval must be a whole number.",
			"err-assertion-1-path": "Path 2 is not an RFC 9535 JSONPath"} {
			if got := tb.text(t, "#"+id); !strings.Contains(got, want) {
				t.Errorf("%s: %q, want %q", id, got, want)
			}
		}
		tb.audited(t, axe, "monitor form errors")
		if got := e.API("GET", "/api/v1/monitors", e.KeyA, nil, 200); len(got["data"].([]any)) != 0 {
			t.Errorf("monitors made: %v", got["data"])
		}
	})
}
