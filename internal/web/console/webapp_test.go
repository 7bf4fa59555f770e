package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/web/console"
	"github.com/tocsin/tocsin/internal/web/public"
)

// person is a browser over HTTP: a cookie jar, redirects not followed, so
// each answer can be seen.
type person struct {
	t     *testing.T
	e     *env
	c     *http.Client
	email string
}

func (e *env) browser(email string) *person {
	jar, _ := cookiejar.New(nil)
	return &person{t: e.T, e: e, email: email, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (p *person) do(method, path string, form url.Values, hdr ...string) answer {
	p.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, p.e.Srv.URL+path, body)
	if err != nil {
		p.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin") // as a browser sends its own forms
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := p.c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: string(b)}
}

func (p *person) get(path string) answer { p.t.Helper(); return p.do("GET", path, nil) }
func (p *person) post(path string, form url.Values) answer {
	p.t.Helper()
	return p.do("POST", path, form)
}
func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// signIn signs the person in with their password and expects to land in
// the app.
func (p *person) signIn(password string) {
	p.t.Helper()
	r := p.post("/sign-in", form("email", p.email, "password", password))
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/" {
		p.t.Fatalf("%s signing in: %d %s %.300s", p.email, r.status, r.header.Get("Location"), r.body)
	}
}

// member adds a person with a known password to workspace A.
func (e *env) member(email string, role account.Role) *person {
	e.T.Helper()
	if _, err := e.App.CreateUser(context.Background(), app.UserRequest{Email: email, Password: "a password for " + email,
		Workspace: e.WsA.ID, Role: role}); err != nil {
		e.T.Fatal(err)
	}
	p := e.browser(email)
	p.signIn("a password for " + email)
	return p
}

var secretRE = regexp.MustCompile(`tsk_[A-Za-z0-9_-]{43}`)

func (e *env) userID(email string) string {
	e.T.Helper()
	u, err := e.DB.UserByEmail(context.Background(), email)
	if err != nil {
		e.T.Fatal(err)
	}
	return u.ID
}

// TestWebAppMatrix: every role, every action of the web app, over HTTP;
// and the keys each role makes in the web app, on the API. What the
// browser allows is what the role allows, and what a key made there may
// do on the API is exactly the same.
// action is one thing a role may or may not do in the browser: allowed
// ones must answer ok, refused ones 403 or 404.
type action struct {
	name    string
	method  string
	path    string
	form    url.Values
	allowed bool
	ok      int
}

// judge has p, whose role is role, try every action in order and reports
// each answer that is not what the role deserves; it returns how many
// requests it made. Each area's matrix test (monitors, heartbeats,
// incidents, …) calls it with its own actions.
func judge(t *testing.T, role account.Role, p *person, actions []action) int {
	t.Helper()
	for _, a := range actions {
		r := p.do(a.method, a.path, a.form)
		refused := r.status == http.StatusForbidden || r.status == http.StatusNotFound
		switch {
		case a.allowed && r.status != a.ok:
			t.Errorf("%s may %s: %d, want %d: %.400s", role, a.name, r.status, a.ok, r.body)
		case !a.allowed && !refused:
			t.Errorf("%s may not %s: %d, want 403 or 404: %.400s", role, a.name, r.status, r.body)
		}
	}
	return len(actions)
}

func TestWebAppMatrix(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		ws := "/w/" + e.WsA.ID
		n := 0
		for _, role := range account.Roles {
			p := e.member(string(role)+"@a.test", role)
			manager := role.ManagesKeys()
			// A colleague whose key, role and membership are acted on.
			colleague := e.member("colleague-of-"+string(role)+"@a.test", account.RoleEditor)
			ck := secretRE.FindString(colleague.post(ws+"/keys", form("name", "theirs", "binding", "workspace", "scope", "monitors:read")).body)
			p2, err := e.App.Authenticate(ctx, ck, "")
			if err != nil {
				t.Fatal(err)
			}
			inv, err := e.App.Invite(ctx, app.Actor{UserID: e.userID("owner@ws-a.test"), WorkspaceID: e.WsA.ID, Role: account.RoleOwner}, "viewer")
			if err != nil {
				t.Fatal(err)
			}
			colleagueID := e.userID(colleague.email)
			mon := e.Monitor(e.KeyA, "checked by "+string(role), "https://www.example.com/", nil)
			writer := role.Grants(account.ScopeMonitorsWrite)
			actions := []action{
				{"see the home", "GET", ws + "/", nil, true, 200},
				{"see the keys", "GET", ws + "/keys", nil, true, 200},
				{"see the members", "GET", ws + "/members", nil, true, 200},
				{"see the account", "GET", "/account", nil, true, 200},
				{"make a workspace", "POST", "/workspaces", form("name", "own of "+string(role)), true, 303},
				{"invite a viewer", "POST", ws + "/members/invites", form("role", "viewer"), manager, 201},
				{"invite an owner", "POST", ws + "/members/invites", form("role", "owner"), role == account.RoleOwner, 201},
				{"withdraw an invitation", "POST", ws + "/members/invites/" + inv.Invite.ID + "/revoke", form(), manager, 303},
				{"revoke another's key", "POST", ws + "/keys/" + p2.KeyID() + "/revoke", form(), manager, 303},
				{"change another's role", "POST", ws + "/members/" + colleagueID + "/role", form("role", "viewer"), manager, 303},
				{"make another an owner", "POST", ws + "/members/" + colleagueID + "/role", form("role", "owner"), role == account.RoleOwner, 303},
				{"remove another", "POST", ws + "/members/" + colleagueID + "/remove", form(), manager, 303},
				{"see the monitors", "GET", ws + "/monitors", nil, true, 200},
				{"see a monitor", "GET", ws + "/monitors/" + mon, nil, true, 200},
				{"pause a monitor", "POST", ws + "/monitors/" + mon + "/pause", form(), writer, 303},
				{"resume a monitor", "POST", ws + "/monitors/" + mon + "/resume", form(), writer, 303},
				{"delete a monitor", "POST", ws + "/monitors/" + mon + "/delete", form(), writer, 303},
			}
			for _, s := range account.Scopes {
				actions = append(actions, action{"make a key with " + string(s), "POST", ws + "/keys",
					form("name", "k", "binding", "workspace", "scope", string(s)), role.Grants(s), 201})
			}
			n += judge(t, role, p, actions)
			for _, a := range actions {
				if !a.allowed && strings.HasPrefix(a.name, "make a key") && !strings.Contains(p.do(a.method, a.path, a.form).body, "does not grant") {
					t.Errorf("%s refused a key without the reason", role)
				}
			}

			// The key the role makes with everything it may: on the API it
			// does exactly what the browser let the role do.
			var all []string
			for _, s := range account.Scopes {
				if role.Grants(s) {
					all = append(all, "scope", string(s))
				}
			}
			key := secretRE.FindString(p.post(ws+"/keys", form(append([]string{"name", "all mine", "binding", "account"}, all...)...)).body)
			if key == "" {
				t.Fatalf("%s made no key with every scope the role grants", role)
			}
			for _, r := range apiSample() {
				res := e.APIReq(r.method, r.path, key, r.body, "X-Workspace-Id", e.WsA.ID)
				n++
				want := r.ok
				if !role.Grants(r.scope) {
					want = http.StatusForbidden
				}
				if res.Status != want {
					t.Errorf("%s's key on %s %s: %d, want %d: %s", role, r.method, r.path, res.Status, want, res.Body)
				}
			}
		}
		t.Logf("%d requests checked", n)
	})
}

type apiCall struct {
	method, path string
	scope        account.Scope
	body         any
	ok           int
}

// apiSample is one API call per scope.
func apiSample() []apiCall {
	return []apiCall{
		{"GET", "/api/v1/monitors", account.ScopeMonitorsRead, nil, 200},
		{"POST", "/api/v1/monitors", account.ScopeMonitorsWrite, map[string]any{"type": "tcp", "name": "db",
			"config": map[string]any{"host": "db.internal", "port": 5432}}, 201},
		{"GET", "/api/v1/incidents", account.ScopeIncidentsRead, nil, 200},
		{"POST", "/api/v1/incidents", account.ScopeIncidentsWrite, map[string]any{"title": "slow", "message": "looking"}, 201},
		{"GET", "/api/v1/metrics", account.ScopeMetricsRead, nil, 200},
		{"GET", "/api/v1/status-pages", account.ScopeStatusPagesRead, nil, 200},
		{"POST", "/api/v1/status-pages", account.ScopeStatusPagesWrite, map[string]any{"slug": "", "title": "x"}, 422},
		{"GET", "/api/v1/notification-channels", account.ScopeNotificationsRead, nil, 200},
		{"POST", "/api/v1/notification-channels", account.ScopeNotificationsWrite, map[string]any{"name": "ops", "kind": "webhook",
			"config": map[string]any{"url": "https://hooks.example.com/tocsin"}, "events": []string{"incident.opened"}}, 201},
	}
}

// TestWebAppSignIn: the sign-in page's answers, its cookie, its limits,
// the forced password change, and cross-site forms.
func TestWebAppSignIn(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		u, err := e.App.CreateUser(ctx, app.UserRequest{Email: "new@a.test", Workspace: e.WsA.ID, Role: account.RoleEditor})
		if err != nil {
			t.Fatal(err)
		}
		p := e.browser("new@a.test")
		if r := p.get("/w/" + e.WsA.ID + "/keys"); r.status != 303 || r.header.Get("Location") != "/sign-in?next=%2Fw%2F"+e.WsA.ID+"%2Fkeys" {
			t.Fatalf("signed out: %d %q", r.status, r.header.Get("Location"))
		}
		r := p.get("/sign-in")
		if r.status != 200 || r.header.Get("Content-Security-Policy") == "" || r.header.Get("X-Frame-Options") != "DENY" ||
			!strings.Contains(r.body, `name="password"`) {
			t.Fatalf("sign-in page: %d %v", r.status, r.header)
		}

		// One answer for a wrong password and an unknown e-mail.
		wrong := p.post("/sign-in", form("email", "new@a.test", "password", "not the password"))
		unknown := p.post("/sign-in", form("email", "nobody@a.test", "password", "not the password"))
		strip := func(s string) string {
			return strings.ReplaceAll(strings.ReplaceAll(s, "nobody@a.test", "E"), "new@a.test", "E")
		}
		if wrong.status != 401 || unknown.status != 401 || strip(wrong.body) != strip(unknown.body) || !strings.Contains(wrong.body, "Wrong e-mail or password.") {
			t.Fatalf("wrong password %d and unknown e-mail %d answer differently", wrong.status, unknown.status)
		}

		// The one-time password leads to the forced change, and nowhere else.
		r = p.post("/sign-in", form("email", "new@a.test", "password", u.GeneratedPassword, "next", "https://evil.example/"))
		if r.status != 303 || r.header.Get("Location") != "/account/password" {
			t.Fatalf("one-time sign-in: %d %q", r.status, r.header.Get("Location"))
		}
		var cookie *http.Cookie
		for _, c := range (&http.Response{Header: r.header}).Cookies() {
			if c.Name == "tocsin_session" {
				cookie = c
			}
		}
		if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/" || cookie.Secure {
			t.Fatalf("session cookie on plain http: %+v", cookie)
		}
		for _, path := range []string{"/w/" + e.WsA.ID + "/", "/w/" + e.WsA.ID + "/keys", "/account", "/workspaces"} {
			if r := p.get(path); r.status != 303 || r.header.Get("Location") != "/account/password" {
				t.Errorf("%s before the password change: %d %q", path, r.status, r.header.Get("Location"))
			}
		}
		if r := p.post("/w/"+e.WsA.ID+"/keys", form("name", "x", "scope", "monitors:read")); r.status != 303 {
			t.Errorf("a key before the password change: %d", r.status)
		}
		// A form from another site is refused, whoever sends it.
		if r := p.do("POST", "/account/password", form("current", u.GeneratedPassword, "new", "my own password", "confirm", "my own password"),
			"Sec-Fetch-Site", "cross-site"); r.status != 403 {
			t.Fatalf("cross-site password change: %d", r.status)
		}
		if r := p.do("POST", "/account/password", form("current", u.GeneratedPassword, "new", "my own password", "confirm", "my own password"),
			"Sec-Fetch-Site", "", "Origin", "https://evil.example"); r.status != 403 {
			t.Fatalf("password change with a foreign Origin: %d", r.status)
		}
		if r := p.post("/account/password", form("current", u.GeneratedPassword, "new", "short", "confirm", "short")); r.status != 422 ||
			!strings.Contains(r.body, "at least 12 characters") {
			t.Fatalf("short password: %d %.300s", r.status, r.body)
		}
		r = p.post("/account/password", form("current", u.GeneratedPassword, "new", "my own password", "confirm", "my own password"))
		if r.status != 303 || r.header.Get("Location") != "/" {
			t.Fatalf("password change: %d %q %.300s", r.status, r.header.Get("Location"), r.body)
		}
		if r := p.get("/"); r.status != 303 || r.header.Get("Location") != "/w/"+e.WsA.ID+"/" {
			t.Fatalf("home: %d %q", r.status, r.header.Get("Location"))
		}
		if r := p.get("/w/" + e.WsA.ID + "/"); r.status != 200 || !strings.Contains(r.body, "Your password is set.") {
			t.Fatalf("workspace home after the change: %d", r.status)
		}
		// A later change goes back to the account page, and says so.
		if r := p.post("/account/password", form("current", "my own password", "new", "my newer password", "confirm", "my newer password")); r.status != 303 ||
			r.header.Get("Location") != "/account" {
			t.Fatalf("second change: %d %q", r.status, r.header.Get("Location"))
		}
		if r := p.get("/account"); r.status != 200 || !strings.Contains(r.body, "Every other browser is signed out") {
			t.Fatalf("account after the second change: %d", r.status)
		}
		if r := p.get("/sign-in?next=//evil.example/"); r.status != 303 || r.header.Get("Location") != "/" {
			t.Fatalf("an open redirect: %d %q", r.status, r.header.Get("Location"))
		}

		// Signing in again from the same browser leaves one session.
		before := p.c.Jar.Cookies(mustURL(t, e.Srv.URL))
		p.signIn("my newer password")
		stale := e.browser("new@a.test")
		stale.c.Jar.SetCookies(mustURL(t, e.Srv.URL), before)
		if r := stale.get("/account"); r.status != 303 {
			t.Fatalf("the session before signing in again still works: %d", r.status)
		}

		// Sign out: the old cookie is worth nothing.
		old := p.c.Jar.Cookies(mustURL(t, e.Srv.URL))
		if r := p.post("/sign-out", form()); r.status != 303 {
			t.Fatalf("sign out: %d", r.status)
		}
		q := e.browser("new@a.test")
		q.c.Jar.SetCookies(mustURL(t, e.Srv.URL), old)
		if r := q.get("/account"); r.status != 303 {
			t.Fatalf("an old cookie after signing out: %d", r.status)
		}

		// Guessing at one account from one address is limited.
		limited := false
		for i := range 15 {
			r := e.browser("x").post("/sign-in", form("email", "new@a.test", "password", fmt.Sprint("guess ", i)))
			if r.status == http.StatusTooManyRequests {
				limited = r.header.Get("Retry-After") != "" && strings.Contains(r.body, "try again")
				break
			}
		}
		if !limited {
			t.Fatal("no 429 with Retry-After after many wrong passwords")
		}
	})
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSecureCookie: behind https the session cookie is Secure and
// __Host- named.
func TestSecureCookie(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		if _, err := e.App.CreateUser(context.Background(), app.UserRequest{Email: "s@a.test", Password: "a long password",
			Workspace: e.WsA.ID, Role: account.RoleViewer}); err != nil {
			t.Fatal(err)
		}
		h := console.New(e.App, slog.New(slog.DiscardHandler), console.Options{BaseURL: "https://tocsin.example"})
		rec := &recorder{h: http.Header{}}
		req, _ := http.NewRequest("POST", "https://tocsin.example/sign-in", strings.NewReader("email=s%40a.test&password=a+long+password"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		h.ServeHTTP(rec, req)
		c := (&http.Response{Header: rec.h}).Cookies()
		if rec.status != 303 || len(c) != 1 || c[0].Name != "__Host-tocsin_session" || !c[0].Secure || !c[0].HttpOnly {
			t.Fatalf("https sign-in: %d %+v", rec.status, c)
		}
	})
}

type recorder struct {
	h      http.Header
	status int
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(s int)           { r.status = s }

// TestWebAppHostileInput: bytes no person types are refused with the
// form's error, never stored, and never a server error, on both engines.
func TestWebAppHostileInput(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		p := e.member("h@a.test", account.RoleOwner)
		ws := "/w/" + e.WsA.ID
		for _, bad := range []string{"nul\x00byte", "bad \xff utf-8", strings.Repeat("long ", 60)} {
			cases := []struct {
				name, path string
				form       url.Values
				want       []int
			}{
				{"sign-in e-mail", "/sign-in", form("email", bad, "password", "x"), []int{401, 429}},
				{"sign-in password", "/sign-in", form("email", "h@a.test", "password", bad), []int{401, 429}},
				{"key name", ws + "/keys", form("name", bad, "binding", "workspace", "scope", "monitors:read"), []int{422}},
				{"key scope", ws + "/keys", form("name", "k", "binding", "workspace", "scope", bad), []int{422}},
				{"key binding", ws + "/keys", form("name", "k", "binding", bad, "scope", "monitors:read"), []int{422}},
				{"workspace name", "/workspaces", form("name", bad), []int{422}},
				{"invite role", ws + "/members/invites", form("role", bad), []int{422}},
				{"new password", "/account/password", form("current", "a password for h@a.test", "new", bad, "confirm", bad), []int{422}},
				{"switch", "/switch-workspace", form("workspace", bad), []int{404}},
				{"revoke key", ws + "/keys/" + url.PathEscape(bad) + "/revoke", form(), []int{404}},
				{"member role", ws + "/members/" + url.PathEscape(bad) + "/role", form("role", "viewer"), []int{404}},
				{"remove member", ws + "/members/" + url.PathEscape(bad) + "/remove", form(), []int{404}},
				{"withdraw invite", ws + "/members/invites/" + url.PathEscape(bad) + "/revoke", form(), []int{404}},
				{"invitation", "/invite/" + url.PathEscape(bad), form("email", "z@a.test", "password", "a fine password", "confirm", "a fine password"), []int{404}},
			}
			for _, c := range cases {
				var r answer
				if c.name == "sign-in e-mail" || c.name == "sign-in password" {
					r = e.browser("x").post(c.path, c.form)
				} else {
					r = p.post(c.path, c.form)
				}
				if !slices.Contains(c.want, r.status) {
					t.Errorf("%s %q: %d, want %v: %.300s", c.name, bad, r.status, c.want, r.body)
				}
			}
			// An invitation's sign-up refuses it too, and makes no account.
			inv := secretFromInvite(t, p.post(ws+"/members/invites", form("role", "viewer")).body)
			r := e.browser("y").post("/invite/"+inv, form("email", bad+"@a.test", "password", "a fine password", "confirm", "a fine password"))
			if r.status != 422 {
				t.Errorf("sign-up e-mail %q: %d: %.300s", bad, r.status, r.body)
			}
		}
		members, err := e.App.Members(context.Background(), app.Actor{UserID: e.userID("h@a.test"), WorkspaceID: e.WsA.ID, Role: account.RoleOwner})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			if !utf8.ValidString(m.Email) || strings.ContainsRune(m.Email, 0) {
				t.Errorf("stored e-mail %q", m.Email)
			}
		}
	})
}

var inviteRE = regexp.MustCompile(`/invite/([A-Za-z0-9_-]{43})`)

func secretFromInvite(t *testing.T, body string) string {
	t.Helper()
	m := inviteRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no invitation link in %.300s", body)
	}
	return m[1]
}

// filtered is a list's query and the ids it shows and hides.
type filtered struct {
	query      string
	show, hide []string
}

// wantFiltered checks that p's list at path, with each case's query,
// answers 200 and shows the rows (attr="id") of the ids it shows and not
// those of the ids it hides.
func wantFiltered(t *testing.T, p *person, path, attr string, cases []filtered) {
	t.Helper()
	for _, c := range cases {
		r := p.get(path + c.query)
		if r.status != 200 {
			t.Errorf("%s: %d", c.query, r.status)
			continue
		}
		for _, id := range c.show {
			if !strings.Contains(r.body, attr+`="`+id+`"`) {
				t.Errorf("%s: %s is missing", c.query, id)
			}
		}
		for _, id := range c.hide {
			if strings.Contains(r.body, attr+`="`+id+`"`) {
				t.Errorf("%s: %s is shown", c.query, id)
			}
		}
	}
}

// row is a list's row of id, the row whose attribute attr
// ("data-monitor-id") is id.
func row(t *testing.T, body, attr, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr role="row" ` + regexp.QuoteMeta(attr) + `="` + regexp.QuoteMeta(id) + `"[^>]*>.*?</tr>`).FindString(body)
	if m == "" {
		t.Fatalf("no row for %s in %.2000s", id, body)
	}
	return m
}
