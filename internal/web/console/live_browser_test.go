package console_test

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/wait"
	"github.com/tocsin/tocsin/internal/web/console"
	"github.com/tocsin/tocsin/internal/web/public"
)

// livePage is a page as the monitors list marks its rows, served under
// the web app's Content-Security-Policy with the app's own script.
var livePage = template.Must(template.New("").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Monitors</title><link rel="icon" href="data:,"><script src="{{.Script}}" defer></script></head>
<body><main id="main" data-live="{{.Live}}"><table>
<tr data-monitor-id="{{.ID}}"><td><a href="#">db</a></td><td data-state="UNKNOWN" class="badge s-unknown">unknown</td></tr>
<tr data-monitor-id="mon_other"><td><a href="#">other</a></td><td data-state="UP" class="badge s-up">up</td></tr>
</table></main><div id="live" class="vh" aria-live="polite"></div></body></html>`))

// TestLiveInBrowser: in Chromium, with the web app's script under its
// Content-Security-Policy, a page with data-live takes the snapshot
// quietly, then patches a monitor's row when its state changes and says
// so in the live region; a row the stream does not know stays as it is.
func TestLiveInBrowser(t *testing.T) {
	browser := browsertest.Start(t)
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		id := e.Monitor(e.KeyA, "db", "http://db.invalid/", nil)
		var script string
		for _, p := range console.AssetPaths() {
			if strings.HasPrefix(p, "/assets/app-") && strings.HasSuffix(p, ".js") { // not the status page editor's
				script = p
			}
		}
		page := func(mux *http.ServeMux) {
			mux.HandleFunc("GET /test/monitors", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Security-Policy", console.CSP)
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_ = livePage.Execute(w, map[string]string{"Script": script, "Live": "/w/" + e.WsA.ID + "/live", "ID": id})
			})
		}
		_, base := liveServer(t, e.App, console.Options{LivePoll: 50 * time.Millisecond}, page)
		viewer := e.member("viewer@a.test", account.RoleViewer)
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		tab := browsertest.OpenIsolatedTab(t, browser, true)
		for _, c := range viewer.c.Jar.Cookies(u) {
			err := chromedp.Do(tab.Ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, network.SetCookie, network.SetCookieParams{Name: c.Name, Value: c.Value, URL: base})
				return err
			}))
			if err != nil {
				t.Fatal(err)
			}
		}
		tab.Navigate(t, base+"/test/monitors")
		cell := func(id string) (text, class string) {
			t.Helper()
			js := fmt.Sprintf(`(c => [c.textContent, c.className, c.getAttribute("data-state")])(document.querySelector('[data-monitor-id=%q] [data-state]'))`, id)
			v, err := chromedp.Run(tab.Ctx, chromedp.Evaluate[[]string](js))
			if err != nil {
				t.Fatal(err)
			}
			if v[0] != strings.ToLower(v[2]) {
				t.Errorf("cell text %q, data-state %q", v[0], v[2])
			}
			return v[0], v[1]
		}
		// The page was rendered stale: the snapshot corrects it, quietly.
		wait.For(t, 20*time.Second, "the snapshot", func() bool { s, _ := cell(id); return s == "pending" })
		e.Record(id, "refused", monitor.ResultDown, monitor.ResultDown, monitor.ResultDown)
		wait.For(t, 20*time.Second, "the row to turn DOWN", func() bool { s, _ := cell(id); return s == "down" })
		if _, class := cell(id); class != "badge s-down" {
			t.Errorf("class %q", class)
		}
		var said string
		wait.For(t, 20*time.Second, "the announcement", func() bool {
			var err error
			if said, err = chromedp.Run(tab.Ctx, chromedp.Evaluate[string](`document.getElementById("live").textContent`)); err != nil {
				t.Fatal(err)
			}
			return said != ""
		})
		if said != "db is down" {
			t.Errorf("announced %q", said)
		}
		if s, class := cell("mon_other"); s != "up" || class != "badge s-up" {
			t.Errorf("a row the stream does not know changed: %q %q", s, class)
		}
		for _, r := range tab.Take(t) {
			t.Errorf("the browser reported: %s", r)
		}
	})
}
