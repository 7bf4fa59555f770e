package console

import (
	"net/http"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
)

// Invite is GET/POST /invite/{token}. Signed in (Shell.Email set), it
// offers to join; signed out, a sign-up form (fields "email",
// "password", "confirm") and a link to sign in first.
type Invite struct {
	// Shell: Shell.Email says whether the visitor is signed in.
	Shell Shell
	// Token is the invitation's token, in the form's action
	// /invite/{token}.
	Token string
	// WorkspaceName is the workspace it joins.
	WorkspaceName string
	// Role is the role it grants.
	Role account.Role
	// Email re-fills the sign-up form's e-mail after an error.
	Email string
	// Errors holds the form's messages.
	Errors FormErrors
}

// InviteInvalid is GET/POST /invite/{token} for an unknown, used,
// revoked or expired invitation.
type InviteInvalid struct {
	// Shell: signed in or not.
	Shell Shell
}

func (Invite) template() string { return "invite.html" }

func (InviteInvalid) template() string { return "invite_invalid.html" }

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
		b, rerr := render(InviteInvalid{Shell: shell})
		w.html(rw, r, http.StatusNotFound, b, rerr)
		return
	}
	if err != nil {
		w.fail(rw, r, ws, err)
		return
	}
	b, err := render(Invite{Shell: shell, Token: token, WorkspaceName: v.Workspace.Name, Role: v.Invite.Role,
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
