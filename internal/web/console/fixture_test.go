package console_test

import (
	"slices"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/web/console"
)

// at is a fixture time: 2026-11-26 at hh:mm UTC, days later.
func at(days, hh, mm int) time.Time {
	return time.Date(2026, 11, 26+days, hh, mm, 0, 0, time.UTC)
}

const (
	wsID   = "ws_01JDQ4K8Z6"
	secret = "tsk_AbC123xYz789QrStUvWxYz0123456789abcdEFGH"
)

// shell is a signed-in admin of Acme Cloud.
func shell(active console.Nav) console.Shell {
	return console.Shell{
		Email: "lead.engineer@acme.example",
		Workspaces: []console.WorkspaceChoice{
			{ID: wsID, Name: "Acme Cloud", Role: account.RoleAdmin},
			{ID: "ws_01JDQ4M2PA", Name: "Side project", Role: account.RoleOwner},
			{ID: "ws_01JDQ4N7XC", Name: "Globex <Ops> & Co", Role: account.RoleViewer},
		},
		WorkspaceID:   wsID,
		WorkspaceName: "Acme Cloud",
		Role:          account.RoleAdmin,
		Active:        active,
		BaseURL:       "https://tocsin.acme.example",
	}
}

// viewer is the shell of a viewer of Acme Cloud.
func viewer(active console.Nav) console.Shell {
	s := shell(active)
	s.Email = "newcomer@acme.example"
	s.Role = account.RoleViewer
	return s
}

func signedOut() console.Shell { return console.Shell{BaseURL: "https://tocsin.acme.example"} }

func keyRows() (mine, others []console.KeyRow) {
	mine = []console.KeyRow{
		{ID: "key_01JDQ5A", Name: "deploy pipeline", Prefix: "tsk_AbC123", Scopes: []account.Scope{account.ScopeMonitorsRead, account.ScopeMonitorsWrite, account.ScopeIncidentsWrite},
			CreatorEmail: "lead.engineer@acme.example", CreatedAt: at(-30, 8, 2), LastUsedAt: at(0, 9, 11)},
		{ID: "key_01JDQ5B", Name: "Grafana", Prefix: "tsk_Qw9Er8", Scopes: []account.Scope{account.ScopeMetricsRead}, AccountWide: true,
			CreatorEmail: "lead.engineer@acme.example", CreatedAt: at(-2, 14, 40)},
		{ID: "key_01JDQ5C", Name: "old laptop", Prefix: "tsk_Zx7Cv6", Scopes: []account.Scope{account.ScopeMonitorsRead},
			CreatorEmail: "lead.engineer@acme.example", CreatedAt: at(-90, 10, 0), LastUsedAt: at(-40, 17, 3), RevokedAt: at(-35, 12, 30)},
	}
	others = []console.KeyRow{
		{ID: "key_01JDQ5D", Name: "status bot", Prefix: "tsk_Lk3Jh2", Scopes: []account.Scope{account.ScopeStatusPagesRead, account.ScopeIncidentsRead},
			CreatorEmail: "site.owner@acme.example", CreatedAt: at(-12, 7, 45), LastUsedAt: at(0, 8, 59)},
	}
	return mine, others
}

// page is one rendered page of the fixture, the path the browser test
// serves it at, the heading it shows and markup it must contain.
type uiPage struct {
	name, path, heading string
	render              func() ([]byte, error)
	want                []string
}

func pages() []uiPage {
	mine, others := keyRows()
	return append([]uiPage{
		{"sign-in", "/sign-in", "Sign in to Tocsin", func() ([]byte, error) {
			return console.Render(console.SignIn{Shell: signedOut(), Email: "lead.engineer@acme.example", Next: "/w/ws_01JDQ4K8Z6/keys",
				Errors: console.FormErrors{Summary: "Wrong e-mail or password."}})
		}, []string{`action="/sign-in"`, `name="email"`, `value="lead.engineer@acme.example"`, `name="password"`, `autocomplete="current-password"`,
			`type="hidden" name="next" value="/w/ws_01JDQ4K8Z6/keys"`, `role="alert"`, "Wrong e-mail or password."}},
		{"sign-in-limited", "/sign-in/limited", "Sign in to Tocsin", func() ([]byte, error) {
			return console.Render(console.SignIn{Shell: signedOut(), RetryAfter: 4*time.Minute + 10*time.Second})
		}, []string{"Please wait 5 minutes and try again."}},
		{"two-factor", "/sign-in/two-factor", "Enter your code", func() ([]byte, error) {
			return console.Render(console.TwoFactor{Shell: signedOut(), Errors: console.FormErrors{Fields: map[string]string{"code": "That code is not right. Check your phone's clock."}}})
		}, []string{`action="/sign-in/two-factor"`, `name="code"`, `inputmode="numeric"`, `autocomplete="one-time-code"`, "recovery code",
			`aria-describedby="hint-code err-code"`, `aria-invalid="true"`, `id="err-code"`, `action="/sign-out"`}},
		{"password-forced", "/account/password/forced", "Choose your own password", func() ([]byte, error) {
			s := shell(console.NavAccount)
			s.ForcedPassword = true
			return console.Render(console.Password{Shell: s})
		}, []string{`action="/account/password"`, `name="current"`, `name="new"`, `name="confirm"`, `autocomplete="new-password"`, "one-time password", `action="/sign-out"`}},
		{"password", "/account/password", "Change password", func() ([]byte, error) {
			return console.Render(console.Password{Shell: shell(console.NavAccount), Errors: console.FormErrors{Fields: map[string]string{
				"current": "That is not your current password.", "confirm": "The two new passwords differ."}}})
		}, []string{`action="/account/password"`, `id="err-current"`, `id="err-confirm"`, `href="#f-confirm"`, `/switch-workspace`}},
		{"account", "/account", "Account", func() ([]byte, error) {
			return console.Render(console.Account{Shell: shell(console.NavAccount), Email: "lead.engineer@acme.example",
				TwoFactor: true, TwoFactorSince: at(-20, 16, 5), RecoveryCodesLeft: 7,
				Sessions: []console.SessionRow{
					{UserAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0 Safari/537.36", Address: "203.0.113.7", CreatedAt: at(-1, 8, 0), LastSeenAt: at(0, 9, 14), Current: true},
					{UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 19_1 like Mac OS X) Safari/605.1.15", Address: "2001:db8::42", CreatedAt: at(-6, 19, 30), LastSeenAt: at(-1, 22, 1)},
					{Address: "198.51.100.23", CreatedAt: at(-9, 6, 0), LastSeenAt: at(-9, 6, 5)},
				}})
		}, []string{`href="/account/password"`, `action="/account/two-factor/disable"`, `name="password"`, "7 recovery codes left",
			"this browser", `action="/account/sign-out-everywhere"`, `data-confirm=`, `<time datetime="2026-11-26T09:14:00Z">2026-11-26 09:14 UTC</time>`, `<th scope="col" role="columnheader">`}},
		{"account-2fa-off", "/account/off", "Account", func() ([]byte, error) {
			return console.Render(console.Account{Shell: shell(console.NavAccount), Email: "lead.engineer@acme.example",
				Sessions: []console.SessionRow{{UserAgent: "curl/8.11", Address: "127.0.0.1", CreatedAt: at(0, 9, 0), LastSeenAt: at(0, 9, 1), Current: true}}})
		}, []string{`href="/account/two-factor/setup"`}},
		{"two-factor-setup", "/account/two-factor/setup", "Set up two-factor authentication", func() ([]byte, error) {
			return console.Render(console.TwoFactorSetup{Shell: shell(console.NavAccount), Secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
				URI:    "otpauth://totp/Tocsin:lead.engineer%40acme.example?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Tocsin",
				Errors: console.FormErrors{Fields: map[string]string{"code": "That code is not right."}}})
		}, []string{"JBSW Y3DP EHPK 3PXP JBSW Y3DP EHPK 3PXP", "otpauth://totp/Tocsin:lead.engineer%40acme.example?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&amp;issuer=Tocsin",
			`data-copy="totp-uri"`, `action="/account/two-factor/setup"`, `name="code"`}},
		{"recovery-codes", "/account/two-factor/codes", "Two-factor authentication is on", func() ([]byte, error) {
			return console.Render(console.RecoveryCodes{Shell: shell(console.NavAccount), Codes: []string{"7f3k-q9m2-x8d1", "p2w8-n4c7-t6z5", "h5j3-r8v1-b9k4", "c6x2-m7q4-w3n8", "z9d5-k2h7-f1p6", "t4b8-y3s6-g7j2", "m1n9-v5c3-q8r4", "e6w2-u4k9-a3x7"}})
		}, []string{`id="recovery-codes"`, "7f3k-q9m2-x8d1", "shown only now", "Store your recovery codes now", `data-copy="recovery-codes"`}},
		{"workspaces", "/workspaces", "Your workspaces", func() ([]byte, error) {
			s := shell(console.NavWorkspaces)
			return console.Render(console.Workspaces{Shell: s, List: s.Workspaces, Name: "Acme", Errors: console.FormErrors{Fields: map[string]string{"name": "You already have a workspace with this name."}}})
		}, []string{`href="/w/ws_01JDQ4K8Z6/"`, `action="/workspaces"`, `name="name"`, `value="Acme"`, "Globex &lt;Ops&gt; &amp; Co"}},
		{"home", "/w/ws_01JDQ4K8Z6/", "Acme Cloud", func() ([]byte, error) {
			s := shell(console.NavHome)
			s.Role = account.RoleEditor
			s.Flash = console.Flash{Kind: console.FlashSuccess, Message: "Welcome to Acme Cloud."}
			return console.Render(console.WorkspaceHome{Shell: s, Members: 4, ActiveKeys: 2})
		}, []string{`href="/w/ws_01JDQ4K8Z6/keys"`, `href="/w/ws_01JDQ4K8Z6/members"`, "<code>monitors:write</code>", `href="/api/v1/openapi.json"`,
			`role="status"`, "Welcome to Acme Cloud.", `aria-current="page"`}},
		{"keys", "/w/ws_01JDQ4K8Z6/keys", "API keys", func() ([]byte, error) {
			return console.Render(console.Keys{Shell: shell(console.NavKeys), Mine: mine, Others: others,
				Form:   console.KeyForm{Name: "deploy", Binding: console.BindingAccount, Scopes: []account.Scope{account.ScopeMonitorsRead}},
				Errors: console.FormErrors{Fields: map[string]string{"scope": "Choose at least one scope."}}})
		}, []string{`action="/w/ws_01JDQ4K8Z6/keys"`, `name="binding" value="workspace"`, `name="binding" value="account" aria-describedby="binding-account-hint" checked`,
			`name="scope" value="monitors:read" checked`, `name="scope" value="notifications:write"`, `id="err-scope"`,
			"Other members&#39; keys in this workspace", `action="/w/ws_01JDQ4K8Z6/keys/key_01JDQ5A/revoke"`, "tsk_AbC123…", "never", "account-wide", "this workspace",
			"site.owner@acme.example", "revoked"}},
		{"keys-viewer", "/w/ws_01JDQ4K8Z6/keys/viewer", "API keys", func() ([]byte, error) {
			return console.Render(console.Keys{Shell: viewer(console.NavKeys)})
		}, []string{"your role (viewer) does not grant this", `value="monitors:write" disabled`, "You have no keys"}},
		{"key-created", "/w/ws_01JDQ4K8Z6/keys/created", "Key “deploy pipeline” created", func() ([]byte, error) {
			return console.Render(console.KeyCreated{Shell: shell(console.NavKeys), Name: "deploy pipeline", Secret: secret,
				Scopes: []account.Scope{account.ScopeMonitorsRead, account.ScopeMonitorsWrite}, AccountWide: true})
		}, []string{`<code id="key-secret" class="secret">` + secret + `</code>`, "shown only now", `curl -H "Authorization: Bearer ` + secret + `" \`,
			`X-Workspace-Id: ws_01JDQ4K8Z6`, "https://tocsin.acme.example/api/v1/monitors", `data-copy="key-secret"`}},
		{"members", "/w/ws_01JDQ4K8Z6/members", "Members", func() ([]byte, error) {
			return console.Render(console.Members{Shell: shell(console.NavMembers),
				Members: []console.MemberRow{
					{UserID: "usr_01A", Email: "lead.engineer@acme.example", Role: account.RoleAdmin, JoinedAt: at(-200, 9, 0), You: true},
					{UserID: "usr_01B", Email: "site.owner@acme.example", Role: account.RoleOwner, JoinedAt: at(-300, 11, 20)},
					{UserID: "usr_01C", Email: "newcomer@acme.example", Role: account.RoleViewer, JoinedAt: at(-3, 15, 45)},
				},
				Invites:    []console.InviteRow{{ID: "inv_01X", Role: account.RoleEditor, CreatedAt: at(-1, 10, 0), ExpiresAt: at(6, 10, 0), CreatedBy: "lead.engineer@acme.example"}},
				InviteRole: account.RoleEditor})
		}, []string{`action="/w/ws_01JDQ4K8Z6/members/usr_01B/role"`, `<select id="role-usr_01B" name="role">`, `action="/w/ws_01JDQ4K8Z6/members/usr_01C/remove"`,
			`action="/w/ws_01JDQ4K8Z6/members/invites/inv_01X/revoke"`, `action="/w/ws_01JDQ4K8Z6/members/invites"`, `<option value="editor" selected>`, `<th scope="row" role="rowheader">`}},
		{"members-viewer", "/w/ws_01JDQ4K8Z6/members/viewer", "Members", func() ([]byte, error) {
			return console.Render(console.Members{Shell: viewer(console.NavMembers),
				Members: []console.MemberRow{{UserID: "usr_01C", Email: "newcomer@acme.example", Role: account.RoleViewer, JoinedAt: at(-3, 15, 45), You: true}}})
		}, []string{"newcomer@acme.example"}},
		{"invite-created", "/w/ws_01JDQ4K8Z6/members/invites/created", "Invitation link", func() ([]byte, error) {
			return console.Render(console.InviteCreated{Shell: shell(console.NavMembers), Link: "https://tocsin.acme.example/invite/Yh7Kq2Lm9Np4Rs6Tv8Wx0Za3Bc5De7Fg", Role: account.RoleEditor, ExpiresAt: at(7, 9, 14)})
		}, []string{`id="invite-link"`, "https://tocsin.acme.example/invite/Yh7Kq2Lm9Np4Rs6Tv8Wx0Za3Bc5De7Fg", `data-copy="invite-link"`, "2026-12-03 09:14 UTC"}},
		{"invite-signed-in", "/invite/in", "Join Acme Cloud", func() ([]byte, error) {
			return console.Render(console.Invite{Shell: shell(console.NavNone), Token: "Yh7Kq2Lm9Np4", WorkspaceName: "Acme Cloud", Role: account.RoleEditor})
		}, []string{`action="/invite/Yh7Kq2Lm9Np4"`, "Join Acme Cloud as editor"}},
		{"invite-signed-out", "/invite/out", "Join Acme Cloud", func() ([]byte, error) {
			return console.Render(console.Invite{Shell: signedOut(), Token: "Yh7Kq2Lm9Np4", WorkspaceName: "Acme Cloud", Role: account.RoleEditor,
				Email: "new@acme.example", Errors: console.FormErrors{Fields: map[string]string{"password": "Must be at least 12 characters."}}})
		}, []string{`action="/invite/Yh7Kq2Lm9Np4"`, `name="email"`, `value="new@acme.example"`, `name="password"`, `name="confirm"`, `href="/sign-in?next=/invite/Yh7Kq2Lm9Np4"`, "I have an account: sign in"}},
		{"invite-invalid", "/invite/bad", "This invitation does not work", func() ([]byte, error) {
			return console.Render(console.InviteInvalid{Shell: signedOut()})
		}, []string{`href="/sign-in"`}},
		{"error-403", "/error/403", "Not allowed", func() ([]byte, error) {
			return console.Render(console.Error{Shell: viewer(console.NavNone), Status: 403})
		}, []string{"Error 403", `href="/w/ws_01JDQ4K8Z6/"`}},
		{"error-404", "/error/404", "Page not found", func() ([]byte, error) {
			return console.Render(console.Error{Shell: signedOut(), Status: 404})
		}, []string{"Error 404"}},
		{"error-429", "/error/429", "Too many requests", func() ([]byte, error) {
			return console.Render(console.Error{Shell: shell(console.NavNone), Status: 429})
		}, []string{"Error 429"}},
		{"error-500", "/error/500", "Something went wrong", func() ([]byte, error) {
			return console.Render(console.Error{Shell: shell(console.NavNone), Status: 500, Message: "The database did not answer in time."})
		}, []string{"Error 500", "The database did not answer in time."}},
	}, slices.Concat(monitorFormPages(), monitorPages(), heartbeatPages(), incidentPages(), statusPagePages(), channelPages())...)
}
