package console

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
)

// The pages of the web app, one handler each. They parse the form, call
// one app function with the person's session or actor, and render the
// answer; they decide nothing themselves.

// root sends the person to the workspace they last worked in.
func (w *Server) root(q *request) {
	id, err := w.app.HomeWorkspace(q.ctx(), q.ws)
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	if id == "" {
		http.Redirect(q.w, q.r, "/workspaces", http.StatusSeeOther)
		return
	}
	http.Redirect(q.w, q.r, "/w/"+id+"/", http.StatusSeeOther)
}

// --- signing in and out ---

func (w *Server) signInPage(rw http.ResponseWriter, r *http.Request) {
	next := localPath(r.URL.Query().Get("next"))
	if ws, err := w.session(r); err == nil && ws != nil {
		if next == "" {
			next = "/"
		}
		http.Redirect(rw, r, next, http.StatusSeeOther)
		return
	}
	b, err := RenderSignIn(SignIn{Shell: Shell{Flash: w.takeFlash(rw, r)}, Next: next})
	w.html(rw, r, http.StatusOK, b, err)
}

func (w *Server) signIn(rw http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		w.errorPage(rw, r, nil, http.StatusBadRequest, "", "The form could not be read.")
		return
	}
	email, next := r.PostForm.Get("email"), localPath(r.PostForm.Get("next"))
	res, err := w.app.SignIn(r.Context(), app.SignInRequest{Email: email, Password: r.PostForm.Get("password"),
		ClientAddr: w.client(r), UserAgent: r.UserAgent()})
	v := SignIn{Email: email, Next: next}
	switch {
	case res.RetryAfter > 0:
		v.RetryAfter = res.RetryAfter
		rw.Header().Set("Retry-After", retryAfter(res.RetryAfter))
		b, rerr := RenderSignIn(v)
		w.html(rw, r, http.StatusTooManyRequests, b, rerr)
		return
	case errs.KindOf(err) == errs.KindUnauthenticated:
		v.Errors = FormErrors{Summary: err.(*errs.Error).Message}
		b, rerr := RenderSignIn(v)
		w.html(rw, r, http.StatusUnauthorized, b, rerr)
		return
	case err != nil:
		w.fail(rw, r, nil, err)
		return
	}
	// A session this browser held before (another person's, or a
	// half-finished one) ends: one browser, one session.
	if err := w.app.SignOut(r.Context(), w.token(r)); err != nil {
		w.fail(rw, r, nil, err)
		return
	}
	w.setSession(rw, res.Token)
	switch {
	case res.NeedsSecondFactor:
		to := "/sign-in/two-factor"
		if next != "" {
			to += "?next=" + url.QueryEscape(next)
		}
		http.Redirect(rw, r, to, http.StatusSeeOther)
	case res.MustChangePassword:
		http.Redirect(rw, r, "/account/password", http.StatusSeeOther)
	case next != "":
		http.Redirect(rw, r, next, http.StatusSeeOther)
	default:
		http.Redirect(rw, r, "/", http.StatusSeeOther)
	}
}

func (w *Server) twoFactorPage(rw http.ResponseWriter, r *http.Request) {
	if !w.app.PendingSecondFactor(r.Context(), w.token(r)) {
		http.Redirect(rw, r, "/sign-in", http.StatusSeeOther)
		return
	}
	b, err := RenderTwoFactor(TwoFactor{})
	w.html(rw, r, http.StatusOK, b, err)
}

func (w *Server) twoFactor(rw http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		w.errorPage(rw, r, nil, http.StatusBadRequest, "", "The form could not be read.")
		return
	}
	res, err := w.app.SecondFactor(r.Context(), w.token(r), r.PostForm.Get("code"), w.client(r), r.UserAgent())
	switch {
	case res.RetryAfter > 0:
		rw.Header().Set("Retry-After", retryAfter(res.RetryAfter))
		b, rerr := RenderTwoFactor(TwoFactor{RetryAfter: res.RetryAfter})
		w.html(rw, r, http.StatusTooManyRequests, b, rerr)
		return
	case errors.Is(err, app.ErrNoSession):
		http.Redirect(rw, r, "/sign-in", http.StatusSeeOther)
		return
	case errs.KindOf(err) == errs.KindUnauthenticated:
		b, rerr := RenderTwoFactor(TwoFactor{Errors: FormErrors{Fields: map[string]string{"code": err.(*errs.Error).Message}}})
		w.html(rw, r, http.StatusUnauthorized, b, rerr)
		return
	case err != nil:
		w.fail(rw, r, nil, err)
		return
	}
	w.setSession(rw, res.Token)
	to := localPath(r.URL.Query().Get("next"))
	if res.MustChangePassword {
		to = "/account/password"
	} else if to == "" {
		to = "/"
	}
	http.Redirect(rw, r, to, http.StatusSeeOther)
}

func (w *Server) signOut(rw http.ResponseWriter, r *http.Request) {
	ws, err := w.session(r)
	if err != nil {
		w.fail(rw, r, nil, err)
		return
	}
	if err := w.app.SignOut(r.Context(), w.token(r)); err != nil {
		w.fail(rw, r, nil, err)
		return
	}
	if ws != nil {
		w.hub.endSession(ws.Session.ID)
	}
	w.clearSession(rw)
	setFlash(rw, "signed-out")
	http.Redirect(rw, r, "/sign-in", http.StatusSeeOther)
}

// --- the account ---

func (w *Server) passwordPage(q *request) {
	w.renderPassword(q, http.StatusOK, FormErrors{})
}

func (w *Server) renderPassword(q *request, status int, fe FormErrors) {
	w.render(q, NavAccount, status, func(s Shell) ([]byte, error) {
		return RenderPassword(Password{Shell: s, Errors: fe})
	})
}

func (w *Server) changePassword(q *request) {
	if !q.parse() {
		return
	}
	f := q.r.PostForm
	token, err := w.app.ChangePassword(q.ctx(), q.ws, app.PasswordChange{Current: f.Get("current"), New: f.Get("new"),
		Confirm: f.Get("confirm"), ClientAddr: w.client(q.r), UserAgent: q.r.UserAgent()})
	if err != nil {
		if fe, ok := formErrors(err, nil); ok {
			w.renderPassword(q, statusOf(err), fe)
			return
		}
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	w.hub.endPerson(q.ws.User.ID) // every session ended, this one too
	w.setSession(q.w, token)
	if q.ws.User.MustChangePassword {
		// The one-time password is replaced: on to work, as a first sign-in.
		q.redirect("/", "password-set")
		return
	}
	q.redirect("/account", "password-changed")
}

func (w *Server) account(q *request) {
	w.renderAccount(q, http.StatusOK, FormErrors{})
}

func (w *Server) renderAccount(q *request, status int, disable FormErrors) {
	w.render(q, NavAccount, status, func(s Shell) ([]byte, error) {
		tf, err := w.app.TwoFactor(q.ctx(), q.ws)
		if err != nil {
			return nil, err
		}
		sessions, err := w.app.Sessions(q.ctx(), q.ws)
		if err != nil {
			return nil, err
		}
		v := Account{Shell: s, Email: q.ws.User.Email, TwoFactor: tf.On, TwoFactorSince: tf.Since,
			RecoveryCodesLeft: tf.RecoveryCodes, DisableErrors: disable}
		for _, ss := range sessions {
			v.Sessions = append(v.Sessions, SessionRow{UserAgent: ss.UserAgent, Address: ss.ClientAddr,
				CreatedAt: ss.CreatedAt, LastSeenAt: ss.LastSeenAt, Current: ss.ID == q.ws.Session.ID})
		}
		return RenderAccount(v)
	})
}

func (w *Server) signOutEverywhere(q *request) {
	if _, err := w.app.SignOutEverywhere(q.ctx(), q.ws); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	w.hub.endPerson(q.ws.User.ID)
	w.clearSession(q.w)
	q.redirect("/sign-in", "signed-out-all")
}

func (w *Server) twoFactorSetupPage(q *request) {
	setup, err := w.app.BeginTOTP(q.ctx(), q.ws)
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	w.renderSetup(q, http.StatusOK, setup, FormErrors{})
}

func (w *Server) renderSetup(q *request, status int, setup app.TOTPSetup, fe FormErrors) {
	w.render(q, NavAccount, status, func(s Shell) ([]byte, error) {
		return RenderTwoFactorSetup(TwoFactorSetup{Shell: s, Secret: setup.Secret, URI: setup.URI,
			QRCode: setup.QRCode, Pending: setup.Pending, Errors: fe})
	})
}

func (w *Server) twoFactorSetup(q *request) {
	if !q.parse() {
		return
	}
	codes, err := w.app.ConfirmTOTP(q.ctx(), q.ws, q.r.PostForm.Get("pending"), q.r.PostForm.Get("code"))
	if err != nil {
		fe, ok := formErrors(err, nil)
		if !ok || errs.KindOf(err) != errs.KindInvalid {
			w.fail(q.w, q.r, &q.ws, err)
			return
		}
		// A fresh secret: the old one was shown with a wrong code.
		setup, serr := w.app.BeginTOTP(q.ctx(), q.ws)
		if serr != nil {
			w.fail(q.w, q.r, &q.ws, serr)
			return
		}
		fe.Summary = "That code did not match, so here is a new secret. Scan it again and type the code it shows."
		w.renderSetup(q, statusOf(err), setup, fe)
		return
	}
	w.render(q, NavAccount, http.StatusOK, func(s Shell) ([]byte, error) {
		return RenderRecoveryCodes(RecoveryCodes{Shell: s, Codes: codes})
	})
}

func (w *Server) twoFactorDisable(q *request) {
	if !q.parse() {
		return
	}
	if err := w.app.DisableTOTP(q.ctx(), q.ws, q.r.PostForm.Get("password"), w.client(q.r)); err != nil {
		if fe, ok := formErrors(err, nil); ok {
			w.renderAccount(q, statusOf(err), fe)
			return
		}
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect("/account", "two-factor-off")
}

// --- workspaces ---

func (w *Server) workspaces(q *request) { w.renderWorkspaces(q, http.StatusOK, "", FormErrors{}) }

func (w *Server) renderWorkspaces(q *request, status int, name string, fe FormErrors) {
	w.render(q, NavWorkspaces, status, func(s Shell) ([]byte, error) {
		return RenderWorkspaces(Workspaces{Shell: s, List: s.Workspaces, Name: name, Errors: fe})
	})
}

func (w *Server) createWorkspace(q *request) {
	if !q.parse() {
		return
	}
	name := q.r.PostForm.Get("name")
	ws, err := w.app.CreateWorkspace(q.ctx(), q.ws, name)
	if err != nil {
		if fe, ok := formErrors(err, nil); ok {
			w.renderWorkspaces(q, statusOf(err), name, fe)
			return
		}
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect("/w/"+ws.ID+"/", "workspace-created")
}

func (w *Server) switchWorkspace(q *request) {
	if !q.parse() {
		return
	}
	id := q.r.PostForm.Get("workspace")
	if _, err := w.app.WebActor(q.ctx(), q.ws, id); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	http.Redirect(q.w, q.r, "/w/"+id+"/", http.StatusSeeOther)
}

func (w *Server) home(q *request) {
	w.render(q, NavHome, http.StatusOK, func(s Shell) ([]byte, error) {
		members, err := w.app.Members(q.ctx(), q.actor)
		if err != nil {
			return nil, err
		}
		keys, err := w.app.ListKeys(q.ctx(), q.actor)
		if err != nil {
			return nil, err
		}
		active := 0
		for _, k := range keys.Mine {
			if k.Key.RevokedAt.IsZero() {
				active++
			}
		}
		return RenderWorkspaceHome(WorkspaceHome{Shell: s, Members: len(members), ActiveKeys: active})
	})
}

// --- API keys ---

func (w *Server) keys(q *request) {
	w.renderKeys(q, http.StatusOK, KeyForm{}, FormErrors{})
}

func keyRows(in []account.KeyListing) []KeyRow {
	out := make([]KeyRow, 0, len(in))
	for _, k := range in {
		out = append(out, KeyRow{ID: k.Key.ID, Name: k.Key.Name, Prefix: k.Key.Prefix, Scopes: k.Key.Scopes,
			AccountWide: k.Key.WorkspaceID == "", CreatorEmail: k.CreatorEmail, CreatedAt: k.Key.CreatedAt,
			LastUsedAt: k.Key.LastUsedAt, RevokedAt: k.Key.RevokedAt})
	}
	return out
}

func (w *Server) renderKeys(q *request, status int, form KeyForm, fe FormErrors) {
	w.render(q, NavKeys, status, func(s Shell) ([]byte, error) {
		keys, err := w.app.ListKeys(q.ctx(), q.actor)
		if err != nil {
			return nil, err
		}
		return RenderKeys(Keys{Shell: s, Mine: keyRows(keys.Mine), Others: keyRows(keys.Others), Form: form, Errors: fe})
	})
}

func (w *Server) createKey(q *request) {
	if !q.parse() {
		return
	}
	f := q.r.PostForm
	form := KeyForm{Name: f.Get("name"), Binding: f.Get("binding")}
	for _, s := range f["scope"] {
		form.Scopes = append(form.Scopes, account.Scope(s))
	}
	req := app.KeyRequest{Name: form.Name, Scopes: form.Scopes}
	switch form.Binding {
	case BindingWorkspace, "":
		req.WorkspaceID = q.actor.WorkspaceID
	case BindingAccount:
	default:
		w.renderKeys(q, http.StatusUnprocessableEntity, form, FormErrors{Fields: map[string]string{"binding": "must be this workspace or every workspace"}})
		return
	}
	k, err := w.app.CreateKey(q.ctx(), q.actor, req)
	if err != nil {
		fe, ok := formErrors(err, map[string]string{"scopes": "scope"})
		if !ok {
			w.fail(q.w, q.r, &q.ws, err)
			return
		}
		if errs.KindOf(err) == errs.KindForbidden {
			fe.Fields = map[string]string{"scope": fe.Summary}
		}
		w.renderKeys(q, statusOf(err), form, fe)
		return
	}
	w.render(q, NavKeys, http.StatusCreated, func(s Shell) ([]byte, error) {
		return RenderKeyCreated(KeyCreated{Shell: s, Name: k.Key.Name, Secret: k.Secret, Scopes: k.Key.Scopes,
			AccountWide: k.Key.WorkspaceID == ""})
	})
}

func (w *Server) revokeKey(q *request) {
	if err := w.app.RevokeKeyAs(q.ctx(), q.actor, q.r.PathValue("key")); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect("/w/"+q.actor.WorkspaceID+"/keys", "key-revoked")
}

// --- members ---

func (w *Server) members(q *request) {
	w.renderMembers(q, http.StatusOK, account.RoleViewer, FormErrors{})
}

func (w *Server) renderMembers(q *request, status int, role account.Role, fe FormErrors) {
	w.render(q, NavMembers, status, func(s Shell) ([]byte, error) {
		members, err := w.app.Members(q.ctx(), q.actor)
		if err != nil {
			return nil, err
		}
		v := Members{Shell: s, InviteRole: role, Errors: fe}
		emails := map[string]string{}
		for _, m := range members {
			emails[m.UserID] = m.Email
			v.Members = append(v.Members, MemberRow{UserID: m.UserID, Email: m.Email, Role: m.Role, JoinedAt: m.JoinedAt,
				You: m.UserID == q.ws.User.ID})
		}
		if q.actor.Role.ManagesKeys() {
			invites, err := w.app.PendingInvites(q.ctx(), q.actor)
			if err != nil {
				return nil, err
			}
			for _, inv := range invites {
				v.Invites = append(v.Invites, InviteRow{ID: inv.ID, Role: inv.Role, CreatedAt: inv.CreatedAt,
					ExpiresAt: inv.ExpiresAt, CreatedBy: emails[inv.CreatedBy]})
			}
		}
		return RenderMembers(v)
	})
}

func (w *Server) invite(q *request) {
	if !q.parse() {
		return
	}
	role := q.r.PostForm.Get("role")
	inv, err := w.app.Invite(q.ctx(), q.actor, role)
	if err != nil {
		if fe, ok := formErrors(err, nil); ok {
			r, _ := account.ParseRole(role)
			w.renderMembers(q, statusOf(err), r, fe)
			return
		}
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	w.render(q, NavMembers, http.StatusCreated, func(s Shell) ([]byte, error) {
		return RenderInviteCreated(InviteCreated{Shell: s, Link: w.base + "/invite/" + inv.Token,
			Role: inv.Invite.Role, ExpiresAt: inv.Invite.ExpiresAt})
	})
}

func (w *Server) revokeInvite(q *request) {
	if err := w.app.RevokeInvite(q.ctx(), q.actor, q.r.PathValue("invite")); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect("/w/"+q.actor.WorkspaceID+"/members", "invite-revoked")
}

func (w *Server) changeRole(q *request) {
	if !q.parse() {
		return
	}
	if err := w.app.ChangeRole(q.ctx(), q.actor, q.r.PathValue("user"), q.r.PostForm.Get("role")); err != nil {
		w.memberFailed(q, err)
		return
	}
	q.redirect("/w/"+q.actor.WorkspaceID+"/members", "role-changed")
}

func (w *Server) removeMember(q *request) {
	user := q.r.PathValue("user")
	if err := w.app.RemoveMember(q.ctx(), q.actor, user); err != nil {
		w.memberFailed(q, err)
		return
	}
	w.hub.endMember(user, q.actor.WorkspaceID)
	if user == q.ws.User.ID {
		q.redirect("/", "left")
		return
	}
	q.redirect("/w/"+q.actor.WorkspaceID+"/members", "member-removed")
}

// memberFailed shows why a change to a member was refused on the members
// page itself (the last owner, a role only owners give).
func (w *Server) memberFailed(q *request, err error) {
	if k := errs.KindOf(err); k == errs.KindConflict || k == errs.KindInvalid || (k == errs.KindForbidden && q.actor.Role.ManagesKeys()) {
		fe, _ := formErrors(err, map[string]string{"role": "member-role"})
		for _, m := range fe.Fields {
			if fe.Summary == "" {
				fe.Summary = m
			}
		}
		w.renderMembers(q, statusOf(err), account.RoleViewer, FormErrors{Summary: fe.Summary})
		return
	}
	w.fail(q.w, q.r, &q.ws, err)
}

// --- invitations ---

func (w *Server) invitePage(rw http.ResponseWriter, r *http.Request) {
	w.renderInvite(rw, r, http.StatusOK, "", FormErrors{})
}

func (w *Server) renderInvite(rw http.ResponseWriter, r *http.Request, status int, email string, fe FormErrors) {
	ws, err := w.session(r)
	if err != nil {
		w.fail(rw, r, nil, err)
		return
	}
	var shell Shell
	if ws != nil {
		q := &request{w: rw, r: r, ws: *ws}
		if shell, err = w.shell(q, NavNone); err != nil {
			w.fail(rw, r, ws, err)
			return
		}
	}
	token := r.PathValue("token")
	v, err := w.app.OpenInvite(r.Context(), token)
	if errs.KindOf(err) == errs.KindNotFound {
		b, rerr := RenderInviteInvalid(InviteInvalid{Shell: shell})
		w.html(rw, r, http.StatusNotFound, b, rerr)
		return
	}
	if err != nil {
		w.fail(rw, r, ws, err)
		return
	}
	b, err := RenderInvite(Invite{Shell: shell, Token: token, WorkspaceName: v.Workspace.Name, Role: v.Invite.Role,
		Email: email, Errors: fe})
	w.html(rw, r, status, b, err)
}

func (w *Server) acceptInvite(rw http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		w.errorPage(rw, r, nil, http.StatusBadRequest, "", "The form could not be read.")
		return
	}
	token := r.PathValue("token")
	ws, err := w.session(r)
	if err != nil {
		w.fail(rw, r, nil, err)
		return
	}
	if ws != nil {
		if ws.User.MustChangePassword {
			http.Redirect(rw, r, "/account/password", http.StatusSeeOther)
			return
		}
		m, err := w.app.AcceptInvite(r.Context(), *ws, token)
		if err != nil {
			if fe, ok := formErrors(err, nil); ok && errs.KindOf(err) != errs.KindNotFound {
				w.renderInvite(rw, r, statusOf(err), "", fe)
				return
			}
			w.renderInvite(rw, r, http.StatusNotFound, "", FormErrors{})
			return
		}
		setFlash(rw, "joined")
		http.Redirect(rw, r, "/w/"+m.WorkspaceID+"/", http.StatusSeeOther)
		return
	}
	f := r.PostForm
	res, m, err := w.app.SignUpWithInvite(r.Context(), app.SignUp{Token: token, Email: f.Get("email"), Password: f.Get("password"),
		Confirm: f.Get("confirm"), ClientAddr: w.client(r), UserAgent: r.UserAgent()})
	switch {
	case res.RetryAfter > 0:
		rw.Header().Set("Retry-After", retryAfter(res.RetryAfter))
		w.renderInvite(rw, r, http.StatusTooManyRequests, f.Get("email"),
			FormErrors{Summary: "Too many attempts from your address. Try again in " + WaitText(res.RetryAfter) + "."})
		return
	case err != nil:
		if fe, ok := formErrors(err, nil); ok && errs.KindOf(err) != errs.KindNotFound {
			w.renderInvite(rw, r, statusOf(err), f.Get("email"), fe)
			return
		}
		if errs.KindOf(err) == errs.KindNotFound {
			w.renderInvite(rw, r, http.StatusNotFound, "", FormErrors{})
			return
		}
		w.fail(rw, r, nil, err)
		return
	}
	w.setSession(rw, res.Token)
	setFlash(rw, "joined")
	http.Redirect(rw, r, "/w/"+m.WorkspaceID+"/", http.StatusSeeOther)
}

func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(int((d+time.Second-1)/time.Second), 1))
}

// parse reads the POST form, answering 400 itself when it cannot.
func (q *request) parse() bool {
	if err := q.r.ParseForm(); err != nil {
		plain(q.w, http.StatusBadRequest, "The form could not be read.\n")
		return false
	}
	return true
}
