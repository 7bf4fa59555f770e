package console_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/browsertest"
)

// The browser tests' shared steps: a signed-in tab, its audit and the
// docs' screenshots.

// docsImages is where the browser tests write the screenshots docs/web.md
// shows: docs/images with TOCSIN_UPDATE_SCREENSHOTS=1, "" (none) without.
func docsImages(t *testing.T) string {
	t.Helper()
	if os.Getenv("TOCSIN_UPDATE_SCREENSHOTS") != "1" {
		return ""
	}
	return filepath.Join(browsertest.RepoRoot(t), "docs", "images")
}

// signedInTab makes a new user with role in e's workspace A, opens a tab
// of its own and signs the user in through the sign-in form.
func signedInTab(t *testing.T, browser context.Context, e *env, email string, role account.Role) *appTab {
	t.Helper()
	const pass = "a new user's long passphrase"
	if _, err := e.App.CreateUser(context.Background(), app.UserRequest{Email: email, Password: pass, Workspace: e.WsA.ID, Role: role}); err != nil {
		t.Fatal(err)
	}
	tb := openAppTab(t, browser, e.Srv.URL)
	tb.open(t, "/sign-in", 200)
	tb.fill(t, "#f-email", email)
	tb.fill(t, "#f-password", pass)
	tb.press(t, `form[action="/sign-in"] button[type="submit"]`, 200)
	return tb
}

// audited fails the test for each serious axe violation on the tab's page
// (and logs the others) and for anything the browser reported; name says
// which page.
func (tb *appTab) audited(t *testing.T, axe, name string) {
	t.Helper()
	for _, v := range tb.Audit(t, axe) {
		if v.Serious() {
			t.Errorf("%s: axe %s (%s): %s\n  %s", name, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
		} else {
			t.Logf("%s: axe %s (%s): %s", name, v.ID, v.Impact, v.Help)
		}
	}
	tb.quiet(t, name+" audit")
}

// document writes docs/images/web-name.png, the tab's whole page, when
// docs (docsImages) is set.
func (tb *appTab) document(t *testing.T, docs, name string) {
	t.Helper()
	if docs != "" {
		browsertest.Write(t, docs, "web-"+name+".png", tb.Screenshot(t, true))
	}
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
