package console_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/browsertest"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/wait"
	"github.com/tocsin/tocsin/internal/web/public"
)

// TestWebAppInBrowser drives the web app as served (its headers, cookies,
// database) in headless Chromium with its script on, through one story:
// the owner's first sign-in with a one-time password; a wrong password
// and an unknown e-mail answering alike; an invitation taken up in another
// browser; a viewer's read-only key that works, and the write scopes the
// server refuses even when the page is tampered with; the owner promoting,
// demoting and removing the member while the member's key follows at once;
// and signing out everywhere. Every page is checked for what the browser
// reports (a broken Content-Security-Policy fails the test), the sign-in,
// keys and members pages pass axe-core, and screenshots of the pages, on
// a desktop and at 390 px, go to browsertest.Artifacts(t, "web-app").
//
//	TOCSIN_UPDATE_SCREENSHOTS=1  also write docs/images/web-*.png, the
//	                             pages docs/web.md shows (on a desktop,
//	                             light)
//
// The browser tests' other variables are browsertest's (see the status
// page's browser tests).
func TestWebAppInBrowser(t *testing.T) {
	axe := browsertest.Axe(t)
	art := browsertest.Artifacts(t, "web-app")
	docs := docsImages(t)
	browser := browsertest.Start(t)
	first := true
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		shots := first // the pages look the same on both engines
		first = false
		if !shots {
			docs = ""
		}
		webAppStory(t, e, browser, axe, art, docs, shots)
	})
}

const (
	ownerEmail  = "operator@acme.example"
	memberEmail = "member@acme.example"
	ownerPass   = "correct horse battery staple"
	memberPass  = "the member's own long passphrase"
	wsName      = "Acme Ops"
)

// webAppStory tells the story; with shots it writes screenshots to art,
// and with docs those docs/web.md shows to docs.
func webAppStory(t *testing.T, e *env, browser context.Context, axe, art, docs string, shots bool) {
	ctx := context.Background()
	created, err := e.App.CreateUser(ctx, app.UserRequest{Email: ownerEmail, Workspace: wsName, Role: account.RoleOwner})
	if err != nil {
		t.Fatal(err)
	}
	if created.GeneratedPassword == "" || !created.User.MustChangePassword {
		t.Fatalf("the owner got no one-time password: %+v", created)
	}
	ws, ownerID := created.Workspace.ID, created.User.ID
	wsPath := "/w/" + ws + "/"
	// shoot writes a full-page screenshot of the tab's page on a desktop
	// and at a phone's 390 px.
	shoot := func(tb *appTab, name string) {
		t.Helper()
		if !shots {
			return
		}
		browsertest.Write(t, art, name+".png", tb.Screenshot(t, true))
		tb.Emulate(t, browsertest.Phone, false)
		browsertest.Write(t, art, name+"-390.png", tb.Screenshot(t, true))
		tb.Emulate(t, browsertest.Desktop, false)
	}
	// document writes docs/images/web-name.png: the tab's page on a
	// desktop, light, whole (full) or as the first screen shows it.
	document := func(tb *appTab, name string, full bool) {
		t.Helper()
		if docs != "" {
			browsertest.Write(t, docs, "web-"+name+".png", tb.Screenshot(t, full))
		}
	}

	owner := openAppTab(t, browser, e.Srv.URL)
	member := openAppTab(t, browser, e.Srv.URL)
	stranger := openAppTab(t, browser, e.Srv.URL)
	owner2 := openAppTab(t, browser, e.Srv.URL)
	all := []*appTab{owner, member, stranger, owner2}

	group(t, "first sign-in", all, func() {
		owner.open(t, "/sign-in", 200)
		// The collector sees a policy violation on the app's own page: a
		// script added inline is refused, and reported.
		owner.eval(t, `(() => { const s = document.createElement('script'); s.textContent = 'document.title = "ran"'; document.body.append(s); return true })()`)
		if r := owner.Take(t); !slices.ContainsFunc(r, func(s string) bool { return strings.Contains(s, "Content Security Policy") }) {
			t.Fatalf("an inline script under the policy left no report in %q: the collector is blind", r)
		}
		owner.open(t, "/sign-in", 200)
		owner.want(t, "sign-in page", shown{URL: "/sign-in", Heading: "Sign in to Tocsin"})
		shoot(owner, "signin")
		document(owner, "signin", false)
		owner.audited(t, axe, "sign-in")

		owner.fill(t, "#f-email", ownerEmail)
		owner.fill(t, "#f-password", created.GeneratedPassword)
		owner.press(t, `form[action="/sign-in"] button[type="submit"]`, 200)
		owner.want(t, "after the one-time password", shown{URL: "/account/password", Heading: "Choose your own password"})
		// Until the password is replaced no other page opens.
		owner.open(t, wsPath+"keys", 200)
		owner.want(t, "keys before the password", shown{URL: "/account/password", Heading: "Choose your own password"})
		shoot(owner, "forced-password")
		document(owner, "password", false)

		owner.fill(t, "#f-current", created.GeneratedPassword)
		owner.fill(t, "#f-new", ownerPass)
		owner.fill(t, "#f-confirm", ownerPass+" typo")
		owner.press(t, `form[action="/account/password"] button[type="submit"]`, 422)
		if got := owner.page(t); got.URL != "/account/password" || len(got.Errors) == 0 {
			t.Errorf("a mistyped repeat: %+v", got)
		}
		owner.fill(t, "#f-current", created.GeneratedPassword)
		owner.fill(t, "#f-new", ownerPass)
		owner.fill(t, "#f-confirm", ownerPass)
		owner.press(t, `form[action="/account/password"] button[type="submit"]`, 200)
		owner.want(t, "after choosing a password", shown{URL: wsPath, Heading: wsName,
			Flash: "Your password is set. Welcome to Tocsin."})
		if lead := owner.text(t, "main .lead"); lead != "You are owner in this workspace." {
			t.Errorf("home says %q", lead)
		}
		shoot(owner, "home")
	})

	group(t, "wrong password and unknown e-mail", all, func() {
		type answer struct {
			status int64
			page   shown
			main   string
		}
		try := func(email string) answer {
			stranger.open(t, "/sign-in", 200)
			stranger.fill(t, "#f-email", email)
			stranger.fill(t, "#f-password", "not the password at all")
			status := stranger.press(t, `form[action="/sign-in"] button[type="submit"]`, 401)
			main := stranger.eval(t, `document.querySelector('main').outerHTML`).(string)
			if !strings.Contains(main, `value="`+email+`"`) {
				t.Errorf("the form does not keep the e-mail %s", email)
			}
			return answer{status, stranger.page(t), strings.ReplaceAll(main, email, "EMAIL")}
		}
		wrong, unknown := try(ownerEmail), try("nobody@acme.example")
		want := shown{URL: "/sign-in", Heading: "Sign in to Tocsin", Summary: "Wrong e-mail or password."}
		if wrong.page.URL != want.URL || wrong.page.Heading != want.Heading || wrong.page.Summary != want.Summary || len(wrong.page.Errors) > 0 {
			t.Errorf("wrong password: %+v, want %+v", wrong.page, want)
		}
		if wrong.status != unknown.status || !equalShown(wrong.page, unknown.page) || wrong.main != unknown.main {
			t.Errorf("a wrong password and an unknown e-mail answer differently:\n%d %+v\n%s\n%d %+v\n%s",
				wrong.status, wrong.page, wrong.main, unknown.status, unknown.page, unknown.main)
		}
		// Neither signed the browser in.
		stranger.open(t, "/account", 200)
		stranger.want(t, "account after failed sign-ins", shown{URL: "/sign-in?next=%2Faccount", Heading: "Sign in to Tocsin"})
	})

	var memberID string
	group(t, "invitation", all, func() {
		owner.open(t, wsPath+"members", 200)
		owner.want(t, "members", shown{URL: wsPath + "members", Heading: "Members"})
		if got := owner.eval(t, `document.getElementById('f-role').value`); got != "viewer" {
			t.Errorf("the invitation's role is %v by default, want viewer", got)
		}
		owner.press(t, `form[action$="/members/invites"] button[type="submit"]`, 201)
		owner.want(t, "invitation made", shown{URL: wsPath + "members/invites", Heading: "Invitation link"})
		link := owner.text(t, "#invite-link")
		if !strings.HasPrefix(link, e.Srv.URL+"/invite/") {
			t.Fatalf("the invitation link is %q", link)
		}
		if !strings.Contains(owner.text(t, "main .once"), "viewer in "+wsName) {
			t.Errorf("the invitation page does not say what it makes: %q", owner.text(t, "main .once"))
		}

		member.open(t, strings.TrimPrefix(link, e.Srv.URL), 200)
		member.want(t, "invitation", shown{URL: strings.TrimPrefix(link, e.Srv.URL), Heading: "Join " + wsName})
		member.fill(t, "#f-email", memberEmail)
		member.fill(t, "#f-password", memberPass)
		member.fill(t, "#f-confirm", memberPass)
		member.press(t, `main form button[type="submit"]`, 200)
		member.want(t, "joined", shown{URL: wsPath, Heading: wsName, Flash: "Welcome: you are now a member of this workspace."})
		if lead := member.text(t, "main .lead"); lead != "You are viewer in this workspace." {
			t.Errorf("the member's home says %q", lead)
		}
		// The link worked once.
		stranger.open(t, strings.TrimPrefix(link, e.Srv.URL), 404)
		u, err := e.DB.UserByEmail(ctx, memberEmail)
		if err != nil {
			t.Fatal(err)
		}
		memberID = u.ID
	})

	var readKey string
	group(t, "the viewer's keys", all, func() {
		member.open(t, wsPath+"keys", 200)
		member.want(t, "keys", shown{URL: wsPath + "keys", Heading: "API keys"})
		// The scopes a viewer may not have are shown, disabled, with why.
		for _, sc := range account.Scopes {
			id := "scope-" + strings.NewReplacer(":", "-", "_", "-").Replace(string(sc))
			disabled := member.eval(t, fmt.Sprintf(`document.getElementById(%q).disabled`, id)).(bool)
			if disabled == account.RoleViewer.Grants(sc) {
				t.Errorf("%s: disabled %v for a viewer", sc, disabled)
			}
			if disabled {
				if why := member.text(t, "#"+id+"-why"); why != "your role (viewer) does not grant this" {
					t.Errorf("%s: the reason shown is %q", sc, why)
				}
			}
		}
		member.fill(t, "#f-name", "wallboard")
		member.click(t, "#scope-monitors-read")
		member.press(t, `form[action$="/keys"] button[type="submit"]`, 201)
		member.want(t, "key created", shown{URL: wsPath + "keys", Heading: "Key “wallboard” created"})
		readKey = member.text(t, "#key-secret")
		if got := e.API("GET", "/api/v1/monitors", readKey, nil, 200); got["data"] == nil {
			t.Errorf("GET /api/v1/monitors with the viewer's key: %v", got)
		}

		// The page offers no write scope; a tampered form is refused by
		// the server all the same, naming the role and the scope.
		member.open(t, wsPath+"keys", 200)
		member.eval(t, `(() => { const b = document.getElementById('scope-monitors-write'); b.disabled = false; b.removeAttribute('disabled'); return true })()`)
		member.fill(t, "#f-name", "sneaky")
		member.click(t, "#scope-monitors-read")
		member.click(t, "#scope-monitors-write")
		member.press(t, `form[action$="/keys"] button[type="submit"]`, 403)
		got := member.page(t)
		for _, s := range []string{got.Summary, strings.Join(got.Errors, " ")} {
			if !strings.Contains(s, "your role (viewer)") || !strings.Contains(s, "monitors:write") {
				t.Errorf("the refusal says %q, want the role and the scope", s)
			}
		}
		if got.Heading != "API keys" {
			t.Errorf("the refusal is on %+v", got)
		}
		keys, err := e.App.KeysOf(ctx, memberEmail)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0].Name != "wallboard" {
			t.Errorf("after the refusal the member has keys %+v, want only wallboard", keys)
		}
		member.open(t, wsPath+"keys", 200)
		if names := member.eval(t, `[...document.querySelectorAll('table.keys tbody th')].map(e => e.textContent.trim()).join(',')`); names != "wallboard" {
			t.Errorf("the viewer's keys page lists %q", names)
		}

		// The viewer sees members but no form to change them, and a
		// change sent from the page anyway is refused.
		member.open(t, wsPath+"members", 200)
		member.want(t, "members as viewer", shown{URL: wsPath + "members", Heading: "Members"})
		if n := member.eval(t, `document.querySelectorAll('form[action*="/members/"], select').length - document.querySelectorAll('header select').length`); n != 0.0 {
			t.Errorf("the viewer's members page has %v member forms", n)
		}
		if body := member.text(t, "main"); !strings.Contains(body, ownerEmail) || !strings.Contains(body, memberEmail) {
			t.Errorf("the viewer's members page: %q", body)
		}
		answer := member.evalAwait(t, fmt.Sprintf(`fetch('/w/%s/members/%s/role', {method: 'POST', credentials: 'same-origin',
			headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'role=viewer'}).then(r => r.text().then(b => r.status + ' ' + b))`, ws, ownerID))
		if s, _ := answer.(string); !strings.HasPrefix(s, "403 ") || !strings.Contains(s, "Only the workspace&#39;s owners and admins manage its members.") {
			t.Errorf("the viewer's role change answered %.300q, want 403 with the refusal", answer)
		}
		member.quiet(t, "members as viewer", "403")
	})

	group(t, "the owner's view", all, func() {
		// The owner has a key, a member with a key, and an invitation out.
		owner.open(t, wsPath+"keys", 200)
		owner.fill(t, "#f-name", "deploy pipeline")
		owner.click(t, "#scope-monitors-read")
		owner.click(t, "#scope-monitors-write")
		owner.click(t, "#scope-incidents-write")
		owner.press(t, `form[action$="/keys"] button[type="submit"]`, 201)
		owner.want(t, "owner's key created", shown{URL: wsPath + "keys", Heading: "Key “deploy pipeline” created"})
		shoot(owner, "key-created")
		owner.open(t, wsPath+"keys", 200)
		if got := owner.text(t, "main"); !strings.Contains(got, "deploy pipeline") || !strings.Contains(got, "wallboard") || !strings.Contains(got, memberEmail) {
			t.Errorf("the owner's keys page lacks a key: %q", got)
		}
		shoot(owner, "keys")
		document(owner, "keys", true)
		owner.audited(t, axe, "keys")

		owner.open(t, wsPath+"members", 200)
		owner.choose(t, "#f-role", "editor")
		owner.press(t, `form[action$="/members/invites"] button[type="submit"]`, 201)
		owner.open(t, wsPath+"members", 200)
		if got := owner.text(t, "main"); !strings.Contains(got, "Pending invitations") || !strings.Contains(got, memberEmail) ||
			owner.eval(t, `document.querySelectorAll('form[action*="/members/invites/"]').length`) != 1.0 {
			t.Errorf("the members page lacks the member or the invitation: %q", got)
		}
		shoot(owner, "members")
		document(owner, "members", true)
		owner.audited(t, axe, "members")
	})

	group(t, "promote, demote, remove", all, func() {
		role := func(to string) {
			owner.open(t, wsPath+"members", 200)
			owner.choose(t, "#role-"+memberID, to)
			owner.press(t, fmt.Sprintf(`form[action$="/members/%s/role"] button`, memberID), 200)
			owner.want(t, "role changed", shown{URL: wsPath + "members", Heading: "Members",
				Flash: "The role is changed. Their API keys follow it from the next request."})
			if got := owner.eval(t, `document.getElementById('role-`+memberID+`').value`); got != to {
				t.Errorf("the member's role shows %v, want %s", got, to)
			}
		}
		role("editor")
		member.open(t, wsPath+"keys", 200)
		if member.eval(t, `document.getElementById('scope-monitors-write').disabled`).(bool) {
			t.Error("monitors:write is still disabled for an editor")
		}
		member.fill(t, "#f-name", "deploy")
		member.click(t, "#scope-monitors-read")
		member.click(t, "#scope-monitors-write")
		member.press(t, `form[action$="/keys"] button[type="submit"]`, 201)
		member.want(t, "editor's key created", shown{URL: wsPath + "keys", Heading: "Key “deploy” created"})
		writeKey := member.text(t, "#key-secret")
		tcp := map[string]any{"type": "tcp", "name": "db", "config": map[string]any{"host": "db.internal", "port": 5432}}
		e.API("POST", "/api/v1/monitors", writeKey, tcp, 201)

		role("viewer")
		refused := e.API("POST", "/api/v1/monitors", writeKey, tcp, 403)
		if m, _ := refused["error"].(map[string]any); m["code"] != "forbidden" || !strings.Contains(fmt.Sprint(m["message"]), "monitors:write") {
			t.Errorf("a demoted key's write answered %v", refused)
		}
		e.API("GET", "/api/v1/monitors", writeKey, nil, 200)

		owner.open(t, wsPath+"members", 200)
		owner.press(t, fmt.Sprintf(`form[action$="/members/%s/remove"] button`, memberID), 200)
		if d := owner.dialogs(); len(d) != 1 || d[0] != "Remove "+memberEmail+" from "+wsName+"? Their keys stop working here." {
			t.Errorf("the removal asked %q", d)
		}
		owner.want(t, "member removed", shown{URL: wsPath + "members", Heading: "Members",
			Flash: "The member is removed. Their API keys lost all power here at once."})
		if got := owner.text(t, "main table"); strings.Contains(got, memberEmail) {
			t.Errorf("the removed member is still listed: %q", got)
		}
		e.API("GET", "/api/v1/monitors", writeKey, nil, 403)
		e.API("GET", "/api/v1/monitors", readKey, nil, 403)
		// The removed member's browser no longer finds the workspace.
		member.open(t, wsPath, 404)
	})

	group(t, "monitors", all, func() {
		// The owner's monitors: one up with an objective, the editor's db
		// down; the list, a monitor's page with its charts, and its forms.
		actor := app.Actor{UserID: ownerID, WorkspaceID: ws, Role: account.RoleOwner}
		site, err := e.App.CreateMonitor(ctx, actor, monitor.Draft{Type: monitor.TypeHTTP, Name: "Website",
			Config: monitor.Config{URL: "https://www.acme.example/"}, SLO: &monitor.SLO{Target: 0.999, PeriodDays: 30}})
		if err != nil {
			t.Fatal(err)
		}
		dbs, err := e.App.ListMonitors(ctx, actor, app.MonitorFilter{Name: "db"}, app.PageRequest{})
		if err != nil || len(dbs.Items) != 1 {
			t.Fatalf("the editor's monitor: %+v %v", dbs, err)
		}
		db := dbs.Items[0].ID
		e.Record(site.ID, "", monitor.ResultUp, monitor.ResultUp, monitor.ResultUp)
		e.Record(db, "connection refused", monitor.ResultDown, monitor.ResultDown, monitor.ResultDown)

		owner.open(t, wsPath+"monitors", 200)
		owner.want(t, "monitors", shown{URL: wsPath + "monitors", Heading: "Monitors"})
		if got := owner.eval(t, `[...document.querySelectorAll('tr[data-monitor-id] [data-state]')].map(c => c.dataset.state + ' ' + c.textContent.trim()).join(', ')`); got != "DOWN down, UP up" { // the editor's db first, by creation
			t.Errorf("the list's states: %v", got)
		}
		shoot(owner, "monitors")
		document(owner, "monitors", false)
		owner.audited(t, axe, "monitors")

		// A monitor made through the form turns DOWN and UP on the list
		// as its checks come in, without a reload.
		owner.press(t, `a[href$="/monitors/new"]`, 200)
		owner.want(t, "the monitor form", shown{URL: wsPath + "monitors/new", Heading: "New monitor"})
		owner.fill(t, "#f-name", "Checkout")
		owner.fill(t, "#f-url", "https://checkout.acme.example/health")
		document(owner, "monitor-form", true)
		owner.audited(t, axe, "the monitor form")
		owner.press(t, `form.monitor-form button.primary`, 200)
		checkout, _ := strings.CutPrefix(owner.page(t).URL, wsPath+"monitors/")
		if !strings.HasPrefix(checkout, "mon_") {
			t.Fatalf("creating a monitor led to %q", owner.page(t).URL)
		}
		owner.open(t, wsPath+"monitors", 200)
		owner.eval(t, `window.sameDocument = true`)
		badge := func() string {
			return fmt.Sprint(owner.eval(t, `(b => b ? b.textContent.trim() : "")(document.querySelector('tr[data-monitor-id="`+checkout+`"] [data-state]'))`))
		}
		if got := badge(); got != "pending" {
			t.Errorf("the new monitor's badge: %q", got)
		}
		e.Record(checkout, "connection refused", monitor.ResultDown, monitor.ResultDown, monitor.ResultDown)
		wait.For(t, 20*time.Second, "the new monitor to turn DOWN on the list", func() bool { return badge() == "down" })
		e.Record(checkout, "", monitor.ResultUp, monitor.ResultUp, monitor.ResultUp)
		wait.For(t, 20*time.Second, "the new monitor to turn UP on the list", func() bool { return badge() == "up" })
		if owner.eval(t, `window.sameDocument === true`) != true {
			t.Error("the list reloaded to show the changes")
		}

		owner.press(t, `a[href$="/monitors/`+db+`"]`, 200)
		owner.want(t, "a monitor", shown{URL: wsPath + "monitors/" + db, Heading: "db"})
		if got := owner.eval(t, `(() => { const c = document.querySelector('svg.chart').getBoundingClientRect(), u = document.querySelector('svg.uptime').getBoundingClientRect();
			return c.width > 200 && c.height > 50 && u.width > 200 && document.querySelectorAll('svg.uptime rect').length === 90 && document.querySelectorAll('svg.chart path, svg.chart circle').length >= 2 })()`); got != true {
			t.Errorf("the charts are not drawn: %v", got)
		}
		shoot(owner, "monitor")
		document(owner, "monitor", true)
		owner.audited(t, axe, "monitor")
		owner.press(t, `form[action$="/monitors/`+db+`/pause"] button`, 200)
		owner.want(t, "paused", shown{URL: wsPath + "monitors/" + db, Heading: "db", Flash: "The monitor is paused: no checks run until you resume it."})
		owner.press(t, `form[action$="/monitors/`+db+`/resume"] button`, 200)
		owner.want(t, "resumed", shown{URL: wsPath + "monitors/" + db, Heading: "db",
			Flash: "The monitor is resumed: its state is known again after the next check."})
		owner.press(t, `form[action$="/monitors/`+db+`/delete"] button`, 200)
		if d := owner.dialogs(); len(d) != 1 || !strings.HasPrefix(d[0], "Delete the monitor “db”") {
			t.Errorf("deleting asked %q", d)
		}
		owner.want(t, "deleted", shown{URL: wsPath + "monitors", Heading: "Monitors", Flash: "The monitor is deleted."})
	})

	group(t, "sign out everywhere", all, func() {
		owner2.open(t, "/sign-in", 200)
		owner2.fill(t, "#f-email", ownerEmail)
		owner2.fill(t, "#f-password", ownerPass)
		owner2.press(t, `form[action="/sign-in"] button[type="submit"]`, 200)
		owner2.want(t, "second browser signed in", shown{URL: wsPath, Heading: wsName})

		owner.open(t, "/account", 200)
		owner.want(t, "account", shown{URL: "/account", Heading: "Account"})
		if n := owner.eval(t, `document.querySelectorAll('#sessions-h ~ .table-wrap tbody tr').length`); n != 2.0 {
			t.Errorf("the account lists %v sessions, want 2", n)
		}
		shoot(owner, "account")
		document(owner, "account", true)
		owner.press(t, `form[action="/account/sign-out-everywhere"] button`, 200)
		if d := owner.dialogs(); len(d) != 1 || d[0] != "Sign out every browser, this one included?" {
			t.Errorf("signing out everywhere asked %q", d)
		}
		owner.want(t, "signed out everywhere", shown{URL: "/sign-in", Heading: "Sign in to Tocsin",
			Flash: "You are signed out everywhere, this browser too."})
		for _, tb := range []*appTab{owner, owner2} {
			tb.open(t, wsPath, 200)
			tb.want(t, "after signing out everywhere", shown{URL: "/sign-in?next=%2Fw%2F" + ws + "%2F", Heading: "Sign in to Tocsin"})
		}
	})
}

// shown is what a page tells its reader: where it is, its heading, the
// flash, the error summary and the fields' errors.
type shown struct {
	URL     string   `json:"url"`
	Heading string   `json:"heading"`
	Flash   string   `json:"flash"`
	Summary string   `json:"summary"`
	Errors  []string `json:"errors"`
}

func equalShown(a, b shown) bool {
	return a.URL == b.URL && a.Heading == b.Heading && a.Flash == b.Flash && a.Summary == b.Summary && slices.Equal(a.Errors, b.Errors)
}

// group runs a part of the story with a minute's deadline on every tab.
func group(t *testing.T, name string, tabs []*appTab, f func()) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("%s: %s", name, time.Since(start).Round(time.Millisecond)) }()
	for _, tb := range tabs {
		tb.Ctx, tb.cancel = context.WithTimeout(tb.base, time.Minute)
	}
	defer func() {
		for _, tb := range tabs {
			tb.cancel()
			tb.Ctx = tb.base
		}
	}()
	f()
	for _, tb := range tabs {
		tb.quiet(t, name)
	}
}

// appTab is a tab in a browser context of its own (its own cookies),
// with the page's script on, that accepts every confirmation, noting its
// question. Its Ctx is the tab's, within the group's deadline.
type appTab struct {
	*browsertest.Tab
	base   context.Context // the tab's, without a deadline
	cancel context.CancelFunc
	url    string
	mu     sync.Mutex
	asked  []string
}

func openAppTab(t *testing.T, browser context.Context, url string) *appTab {
	t.Helper()
	tb := &appTab{Tab: browsertest.OpenIsolatedTab(t, browser, true), cancel: func() {}, url: url}
	tb.base = tb.Ctx
	dialogs := chromedp.Events(tb.base, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.asked = append(tb.asked, ev.Message)
			tb.mu.Unlock()
			_, _ = chromedp.Call(tb.base, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	tb.Emulate(t, browsertest.Desktop, false)
	return tb
}

var statusReport = regexp.MustCompile(`the server responded with a status of (\d+)`)

// quiet fails the test for anything the browser reported but a page
// answered with one of the statuses allowed.
func (tb *appTab) quiet(t *testing.T, where string, allowed ...string) {
	t.Helper()
	for _, r := range tb.Take(t) {
		if m := statusReport.FindStringSubmatch(r); m != nil && !strings.Contains(r, "Content Security Policy") &&
			slices.Contains(allowed, m[1]) {
			continue
		}
		t.Errorf("%s: the browser reported: %s", where, r)
	}
}

func (tb *appTab) dialogs() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	d := tb.asked
	tb.asked = nil
	return d
}

// open loads path and wants the final answer's status (after redirects).
func (tb *appTab) open(t *testing.T, path string, status int64) {
	t.Helper()
	tb.load(t, "open "+path, status, chromedp.Navigate(tb.url+path))
}

// press clicks a button that sends a form, and wants the answer's status.
func (tb *appTab) press(t *testing.T, sel string, status int64) int64 {
	t.Helper()
	return tb.load(t, "press "+sel, status, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

func (tb *appTab) load(t *testing.T, what string, status int64, a chromedp.Action[chromedp.Void]) int64 {
	t.Helper()
	res, err := chromedp.RunResponse(tb.Ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if res == nil || res.Status != status {
		t.Fatalf("%s: answered %v, want %d", what, responseStatus(res), status)
	}
	var allowed []string
	if status >= 400 {
		allowed = append(allowed, fmt.Sprint(status))
	}
	tb.quiet(t, what, allowed...)
	return res.Status
}

func responseStatus(r *network.Response) string {
	if r == nil {
		return "nothing"
	}
	return fmt.Sprintf("%d at %s", r.Status, r.URL)
}

// fill sets an input's value (see browsertest.Tab.Fill).
func (tb *appTab) fill(t *testing.T, sel, value string) { t.Helper(); tb.Fill(t, sel, value) }

// choose picks an option of a select.
func (tb *appTab) choose(t *testing.T, sel, value string) { t.Helper(); tb.Fill(t, sel, value) }

func (tb *appTab) click(t *testing.T, sel string) {
	t.Helper()
	if err := chromedp.Do(tb.Ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
}

func (tb *appTab) text(t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => { const e = document.querySelector(%q);
		return e ? e.textContent.trim().replace(/\s+/g, ' ') : '(no %s)' })()`, sel, sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (tb *appTab) eval(t *testing.T, js string) any {
	t.Helper()
	v, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[any](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func (tb *appTab) evalAwait(t *testing.T, js string) any {
	t.Helper()
	v, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[any](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// page reads what the page shows.
func (tb *appTab) page(t *testing.T) shown {
	t.Helper()
	s, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[shown](`(() => {
		const q = s => { const e = document.querySelector(s); return e ? e.textContent.trim().replace(/\s+/g, ' ') : '' };
		return {url: location.pathname + location.search, heading: q('main h1'), flash: q('main .flash'), summary: q('main .summary p'),
			errors: [...document.querySelectorAll('main .error')].map(e => e.textContent.trim())};
	})()`))
	if err != nil {
		t.Fatalf("read the page: %v", err)
	}
	return s
}

// want checks the page's place, heading, flash and summary, and that it
// shows no field errors.
func (tb *appTab) want(t *testing.T, what string, w shown) {
	t.Helper()
	got := tb.page(t)
	if !equalShown(got, w) {
		t.Fatalf("%s: the page shows %+v, want %+v", what, got, w)
	}
}
