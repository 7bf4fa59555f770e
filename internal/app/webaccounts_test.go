package app

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// webEnv is an app with a keyring and a clock the test moves, and a
// workspace whose owner is owner@acme.test (password ownerPassword).
type webEnv struct {
	db    *store.DB
	a     *App
	mu    sync.Mutex
	clock time.Time
	ws    account.Workspace
}

const ownerPassword = "correct horse battery"

func (e *webEnv) now() time.Time { e.mu.Lock(); defer e.mu.Unlock(); return e.clock }
func (e *webEnv) advance(d time.Duration) {
	e.mu.Lock()
	e.clock = e.clock.Add(d)
	e.mu.Unlock()
}

func newWebEnv(t *testing.T, eng storetest.Engine) *webEnv {
	t.Helper()
	kr, err := secrets.ParseKeyring("k1:" + strings.Repeat("ab", 32))
	check(t, err)
	e := &webEnv{db: storetest.OpenDB(t, eng), clock: time.Now().UTC()}
	e.a = New(e.db, kr, e.now, slog.New(slog.DiscardHandler), Config{})
	u, err := e.a.CreateUser(ctx, UserRequest{Email: "owner@acme.test", Password: ownerPassword, Workspace: "acme", Role: account.RoleOwner})
	check(t, err)
	e.ws = u.Workspace
	return e
}

// signIn signs in and returns the session.
func (e *webEnv) signIn(t *testing.T, email, password string) WebSession {
	t.Helper()
	res, err := e.a.SignIn(ctx, SignInRequest{Email: email, Password: password, ClientAddr: "192.0.2.1", UserAgent: "test"})
	check(t, err)
	ws, err := e.a.WebSession(ctx, res.Token)
	check(t, err)
	return ws
}

func wantKind(t *testing.T, what string, err error, k errs.Kind) {
	t.Helper()
	if errs.KindOf(err) != k {
		t.Fatalf("%s: %v (kind %d), want kind %d", what, err, errs.KindOf(err), k)
	}
}

// TestSignIn: right and wrong passwords, unknown e-mails that answer the
// same, sessions that end by idleness, age, signing out and a password
// change. TestSignInLimits has the limits.
func TestSignIn(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newWebEnv(t, eng)
			wrong, err := e.a.SignIn(ctx, SignInRequest{Email: "owner@acme.test", Password: "not it at all", ClientAddr: "192.0.2.1"})
			wantKind(t, "wrong password", err, errs.KindUnauthenticated)
			_, err2 := e.a.SignIn(ctx, SignInRequest{Email: "nobody@acme.test", Password: "not it at all", ClientAddr: "192.0.2.1"})
			if err2 == nil || err.Error() != err2.Error() || wrong.Token != "" {
				t.Fatalf("unknown e-mail %v and wrong password %v answer differently", err2, err)
			}

			res, err := e.a.SignIn(ctx, SignInRequest{Email: " Owner@ACME.test ", Password: ownerPassword, ClientAddr: "192.0.2.1", UserAgent: "Firefox"})
			check(t, err)
			if res.NeedsSecondFactor || res.MustChangePassword || len(res.Token) != 43 {
				t.Fatalf("sign-in: %+v", res)
			}
			ws, err := e.a.WebSession(ctx, res.Token)
			check(t, err)
			if ws.User.Email != "owner@acme.test" || ws.Session.UserAgent != "Firefox" {
				t.Fatalf("session: %+v", ws)
			}
			for _, bad := range []string{"", "x", res.Token[:42] + "!", strings.Repeat("A", 43)} {
				_, err := e.a.WebSession(ctx, bad)
				wantKind(t, "token "+bad, err, errs.KindUnauthenticated)
			}

			// Idle: used within the idle time it lives on; then it ends.
			e.advance(SessionIdle - time.Minute)
			_, err = e.a.WebSession(ctx, res.Token)
			check(t, err)
			e.advance(SessionIdle - time.Minute)
			_, err = e.a.WebSession(ctx, res.Token)
			check(t, err)
			e.advance(SessionIdle)
			_, err = e.a.WebSession(ctx, res.Token)
			wantKind(t, "idle session", err, errs.KindUnauthenticated)

			// Age: busy or not, a session ends after SessionLife.
			res, err = e.a.SignIn(ctx, SignInRequest{Email: "owner@acme.test", Password: ownerPassword, ClientAddr: "192.0.2.1"})
			check(t, err)
			for range 5 {
				e.advance(SessionLife / 5)
				_, err = e.a.WebSession(ctx, res.Token)
			}
			wantKind(t, "old session", err, errs.KindUnauthenticated)

			// Sign out; sign out everywhere.
			a1, a2 := e.signIn(t, "owner@acme.test", ownerPassword), e.signIn(t, "owner@acme.test", ownerPassword)
			list, err := e.a.Sessions(ctx, a1)
			check(t, err)
			if len(list) != 2 {
				t.Fatalf("sessions: %d, want 2", len(list))
			}
			n, err := e.a.SignOutEverywhere(ctx, a2)
			check(t, err)
			if n != 2 {
				t.Fatalf("signed out %d sessions, want 2", n)
			}

			// A password change ends every session and starts a new one.
			b1, b2 := e.signIn(t, "owner@acme.test", ownerPassword), e.signIn(t, "owner@acme.test", ownerPassword)
			tok1 := mustToken(t, e, "owner@acme.test", ownerPassword)
			_, err = e.a.ChangePassword(ctx, b1, PasswordChange{Current: "nope", New: "a brand new secret", Confirm: "a brand new secret"})
			if errs.KindOf(err) != errs.KindInvalid || !hasField(err, "/current") {
				t.Fatalf("wrong current password: %v", err)
			}
			_, err = e.a.ChangePassword(ctx, b1, PasswordChange{Current: ownerPassword, New: "short", Confirm: "other"})
			if !hasField(err, "/new") || !hasField(err, "/confirm") {
				t.Fatalf("short, unconfirmed password: %v", err)
			}
			fresh, err := e.a.ChangePassword(ctx, b1, PasswordChange{Current: ownerPassword, New: "a brand new secret", Confirm: "a brand new secret"})
			check(t, err)
			for _, old := range []string{tok1} {
				_, err := e.a.WebSession(ctx, old)
				wantKind(t, "session from before the password change", err, errs.KindUnauthenticated)
			}
			list, err = e.a.Sessions(ctx, b2)
			check(t, err)
			if len(list) != 1 {
				t.Fatalf("after the change %d sessions, want only the new one", len(list))
			}
			if _, err := e.a.WebSession(ctx, fresh); err != nil {
				t.Fatalf("the new session: %v", err)
			}
			_, err = e.a.SignIn(ctx, SignInRequest{Email: "owner@acme.test", Password: ownerPassword, ClientAddr: "192.0.2.9"})
			wantKind(t, "old password", err, errs.KindUnauthenticated)
		})
	}
}

func mustToken(t *testing.T, e *webEnv, email, pw string) string {
	t.Helper()
	res, err := e.a.SignIn(ctx, SignInRequest{Email: email, Password: pw, ClientAddr: "192.0.2.2"})
	check(t, err)
	return res.Token
}

func hasField(err error, pointer string) bool {
	e, ok := err.(*errs.Error)
	if !ok {
		return false
	}
	for _, f := range e.Fields {
		if f.Pointer == pointer {
			return true
		}
	}
	return false
}

// TestOneTimePassword: a generated password must be replaced before the
// person may act anywhere.
func TestOneTimePassword(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newWebEnv(t, eng)
			u, err := e.a.CreateUser(ctx, UserRequest{Email: "new@acme.test", Workspace: e.ws.ID, Role: account.RoleEditor})
			check(t, err)
			res, err := e.a.SignIn(ctx, SignInRequest{Email: "new@acme.test", Password: u.GeneratedPassword, ClientAddr: "192.0.2.1"})
			check(t, err)
			if !res.MustChangePassword {
				t.Fatal("a one-time password did not ask for a new one")
			}
			ws, err := e.a.WebSession(ctx, res.Token)
			check(t, err)
			_, err = e.a.WebActor(ctx, ws, e.ws.ID)
			wantKind(t, "acting before the change", err, errs.KindForbidden)
			_, err = e.a.CreateWorkspace(ctx, ws, "mine")
			wantKind(t, "a workspace before the change", err, errs.KindForbidden)
			tok, err := e.a.ChangePassword(ctx, ws, PasswordChange{Current: u.GeneratedPassword, New: "my own password!", Confirm: "my own password!"})
			check(t, err)
			ws, err = e.a.WebSession(ctx, tok)
			check(t, err)
			actor, err := e.a.WebActor(ctx, ws, e.ws.ID)
			check(t, err)
			if actor.Role != account.RoleEditor || actor.KeyID != "" || actor.UserID != u.User.ID {
				t.Fatalf("actor: %+v", actor)
			}
		})
	}
}

// TestTwoFactor: turning TOTP on, signing in with a code or a recovery
// code (once), and turning it off with the password.
func TestTwoFactor(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newWebEnv(t, eng)
			ws := e.signIn(t, "owner@acme.test", ownerPassword)
			setup, err := e.a.BeginTOTP(ctx, ws)
			check(t, err)
			if !strings.HasPrefix(setup.URI, "otpauth://totp/Tocsin:owner@acme.test?") || len(setup.QRCode) < 100 || setup.Secret == "" {
				t.Fatalf("setup: %+v", setup)
			}
			_, err = e.a.ConfirmTOTP(ctx, ws, setup.Pending, "000000")
			wantKind(t, "wrong code", err, errs.KindInvalid)
			_, err = e.a.ConfirmTOTP(ctx, ws, setup.Pending[:len(setup.Pending)-2]+"AA", code(t, setup.Secret, e.now()))
			wantKind(t, "tampered setup", err, errs.KindInvalid)
			other, err := e.a.CreateUser(ctx, UserRequest{Email: "other@acme.test", Password: ownerPassword, Workspace: e.ws.ID, Role: account.RoleViewer})
			check(t, err)
			_, err = e.a.ConfirmTOTP(ctx, WebSession{User: other.User}, setup.Pending, code(t, setup.Secret, e.now()))
			wantKind(t, "someone else's setup", err, errs.KindInvalid)
			codes, err := e.a.ConfirmTOTP(ctx, ws, setup.Pending, code(t, setup.Secret, e.now()))
			check(t, err)
			if len(codes) != recoveryCodeCount {
				t.Fatalf("%d recovery codes", len(codes))
			}

			// Sign-in now stops half-way.
			res, err := e.a.SignIn(ctx, SignInRequest{Email: "owner@acme.test", Password: ownerPassword, ClientAddr: "192.0.2.1"})
			check(t, err)
			if !res.NeedsSecondFactor {
				t.Fatal("no second factor asked")
			}
			_, err = e.a.WebSession(ctx, res.Token)
			wantKind(t, "half-signed-in session", err, errs.KindUnauthenticated)
			_, err = e.a.SecondFactor(ctx, res.Token, "123456", "192.0.2.1", "")
			wantKind(t, "wrong code", err, errs.KindUnauthenticated)
			// The code that confirmed the setup is used up (TestTOTPReplay).
			_, err = e.a.SecondFactor(ctx, res.Token, code(t, setup.Secret, e.now()), "192.0.2.1", "")
			wantKind(t, "the confirming code", err, errs.KindUnauthenticated)
			done, err := e.a.SecondFactor(ctx, res.Token, code(t, setup.Secret, e.now().Add(30*time.Second)), "192.0.2.1", "")
			check(t, err)
			if done.Token == res.Token {
				t.Fatal("the session kept its half-way token")
			}
			ws2, err := e.a.WebSession(ctx, done.Token)
			check(t, err)

			// A recovery code works once, typed loosely.
			res, err = e.a.SignIn(ctx, SignInRequest{Email: "owner@acme.test", Password: ownerPassword, ClientAddr: "192.0.2.1"})
			check(t, err)
			_, err = e.a.SecondFactor(ctx, res.Token, " "+strings.ToUpper(codes[3])+" ", "192.0.2.1", "")
			check(t, err)
			res, err = e.a.SignIn(ctx, SignInRequest{Email: "owner@acme.test", Password: ownerPassword, ClientAddr: "192.0.2.1"})
			check(t, err)
			_, err = e.a.SecondFactor(ctx, res.Token, codes[3], "192.0.2.1", "")
			wantKind(t, "a used recovery code", err, errs.KindUnauthenticated)
			st, err := e.a.TwoFactor(ctx, ws2)
			check(t, err)
			if !st.On || st.RecoveryCodes != recoveryCodeCount-1 {
				t.Fatalf("status: %+v", st)
			}

			// The step after the password does not wait for ever.
			res, err = e.a.SignIn(ctx, SignInRequest{Email: "owner@acme.test", Password: ownerPassword, ClientAddr: "192.0.2.1"})
			check(t, err)
			e.advance(secondFactorTime)
			_, err = e.a.SecondFactor(ctx, res.Token, code(t, setup.Secret, e.now()), "192.0.2.1", "")
			wantKind(t, "a second factor too late", err, errs.KindUnauthenticated)

			wantKind(t, "disable with a wrong password", e.a.DisableTOTP(ctx, ws2, "wrong password!", "192.0.2.1"), errs.KindInvalid)
			check(t, e.a.DisableTOTP(ctx, ws2, ownerPassword, "192.0.2.1"))
			res, err = e.a.SignIn(ctx, SignInRequest{Email: "owner@acme.test", Password: ownerPassword, ClientAddr: "192.0.2.1"})
			check(t, err)
			if res.NeedsSecondFactor {
				t.Fatal("second factor still asked after turning it off")
			}
		})
	}
}

func code(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, at)
	check(t, err)
	return c
}

// TestMembersAndKeys: invitations, roles and keys under the rules every
// edge shares.
func TestMembersAndKeys(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newWebEnv(t, eng)
			ownerWS := e.signIn(t, "owner@acme.test", ownerPassword)
			owner, err := e.a.WebActor(ctx, ownerWS, e.ws.ID)
			check(t, err)

			// An owner invites a viewer; the link makes an account once.
			inv, err := e.a.Invite(ctx, owner, "viewer")
			check(t, err)
			_, err = e.a.Invite(ctx, owner, "king")
			wantKind(t, "an unknown role", err, errs.KindInvalid)
			res, m, err := e.a.SignUpWithInvite(ctx, SignUp{Token: inv.Token, Email: "Viewer@Acme.test", Password: "viewer's password",
				Confirm: "viewer's password", ClientAddr: "192.0.2.3"})
			check(t, err)
			if m.Role != account.RoleViewer || m.WorkspaceID != e.ws.ID {
				t.Fatalf("membership: %+v", m)
			}
			_, _, err = e.a.SignUpWithInvite(ctx, SignUp{Token: inv.Token, Email: "again@acme.test", Password: "viewer's password",
				Confirm: "viewer's password", ClientAddr: "192.0.2.3"})
			wantKind(t, "a used invitation", err, errs.KindNotFound)
			viewerWS, err := e.a.WebSession(ctx, res.Token)
			check(t, err)
			viewer, err := e.a.WebActor(ctx, viewerWS, e.ws.ID)
			check(t, err)

			// A viewer makes a read-only key, and is refused a write key
			// with the reason; nor may they manage members.
			k, err := e.a.CreateKey(ctx, viewer, KeyRequest{Name: "ci", WorkspaceID: e.ws.ID, Scopes: []account.Scope{account.ScopeMonitorsRead}})
			check(t, err)
			_, err = e.a.CreateKey(ctx, viewer, KeyRequest{Name: "ci", WorkspaceID: e.ws.ID, Scopes: []account.Scope{account.ScopeMonitorsRead, account.ScopeMonitorsWrite}})
			if errs.KindOf(err) != errs.KindForbidden || !strings.Contains(err.Error(), "viewer") || !strings.Contains(err.Error(), "monitors:write") {
				t.Fatalf("viewer's write key: %v", err)
			}
			_, err = e.a.Invite(ctx, viewer, "viewer")
			wantKind(t, "a viewer inviting", err, errs.KindForbidden)
			wantKind(t, "a viewer changing roles", e.a.ChangeRole(ctx, viewer, owner.UserID, "viewer"), errs.KindForbidden)
			other := e.a.newWorkspace("Other", "other")
			check(t, e.db.CreateWorkspace(ctx, other))
			_, err = e.a.CreateKey(ctx, viewer, KeyRequest{Name: "x", WorkspaceID: other.ID, Scopes: []account.Scope{account.ScopeMonitorsRead}})
			wantKind(t, "a key bound elsewhere", err, errs.KindForbidden)
			_, err = e.a.WebActor(ctx, viewerWS, other.ID)
			wantKind(t, "a workspace the viewer is not in", err, errs.KindNotFound)

			// Key lists: the viewer sees their own; the owner sees others'.
			mine, err := e.a.ListKeys(ctx, viewer)
			check(t, err)
			ownerKeys, err := e.a.ListKeys(ctx, owner)
			check(t, err)
			if len(mine.Mine) != 1 || len(mine.Others) != 0 || len(ownerKeys.Others) != 1 || ownerKeys.Others[0].CreatorEmail != "viewer@acme.test" {
				t.Fatalf("lists: viewer %+v, owner %+v", mine, ownerKeys)
			}
			wantKind(t, "a viewer revoking the owner's key", e.a.RevokeKeyAs(ctx, viewer, ownerKeys.Others[0].Key.ID+"x"), errs.KindNotFound)
			check(t, e.a.RevokeKeyAs(ctx, owner, k.Key.ID))
			check(t, e.a.RevokeKeyAs(ctx, owner, k.Key.ID))

			// Admins do not deal in owners; the last owner stays.
			adm, err := e.a.Invite(ctx, owner, "admin")
			check(t, err)
			ar, _, err := e.a.SignUpWithInvite(ctx, SignUp{Token: adm.Token, Email: "admin@acme.test", Password: "admin's password!",
				Confirm: "admin's password!", ClientAddr: "192.0.2.4"})
			check(t, err)
			adminWS, err := e.a.WebSession(ctx, ar.Token)
			check(t, err)
			admin, err := e.a.WebActor(ctx, adminWS, e.ws.ID)
			check(t, err)
			_, err = e.a.Invite(ctx, admin, "owner")
			wantKind(t, "an admin inviting an owner", err, errs.KindForbidden)
			wantKind(t, "an admin making an owner", e.a.ChangeRole(ctx, admin, viewer.UserID, "owner"), errs.KindForbidden)
			wantKind(t, "an admin demoting the owner", e.a.ChangeRole(ctx, admin, owner.UserID, "viewer"), errs.KindForbidden)
			wantKind(t, "an admin removing the owner", e.a.RemoveMember(ctx, admin, owner.UserID), errs.KindForbidden)
			check(t, e.a.ChangeRole(ctx, admin, viewer.UserID, "editor"))
			wantKind(t, "the last owner demoting themself", e.a.ChangeRole(ctx, owner, owner.UserID, "admin"), errs.KindConflict)
			wantKind(t, "the last owner leaving", e.a.RemoveMember(ctx, owner, owner.UserID), errs.KindConflict)
			check(t, e.a.RemoveMember(ctx, admin, viewer.UserID))
			_, err = e.a.WebActor(ctx, viewerWS, e.ws.ID)
			wantKind(t, "a removed member", err, errs.KindNotFound)
			check(t, e.a.RemoveMember(ctx, admin, admin.UserID)) // anyone may leave

			// A workspace of one's own, with a unique slug.
			w1, err := e.a.CreateWorkspace(ctx, ownerWS, "  Acme  ")
			check(t, err)
			w2, err := e.a.CreateWorkspace(ctx, ownerWS, "Acme")
			check(t, err)
			if w1.Name != "Acme" || w1.Slug == w2.Slug || w1.Slug == "" {
				t.Fatalf("workspaces: %+v %+v", w1, w2)
			}
			_, err = e.a.CreateWorkspace(ctx, ownerWS, "bad\x00name")
			wantKind(t, "a name with NUL", err, errs.KindInvalid)
			all, err := e.a.Workspaces(ctx, ownerWS)
			check(t, err)
			if len(all) != 3 {
				t.Fatalf("owner's workspaces: %+v", all)
			}
		})
	}
}
