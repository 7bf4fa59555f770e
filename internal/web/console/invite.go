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

func (Invite) template() string { return "invite.html" }

// InviteInvalid is GET/POST /invite/{token} for an unknown, used,
// revoked or expired invitation.
type InviteInvalid struct {
	// Shell: signed in or not.
	Shell Shell
}

func (InviteInvalid) template() string { return "invite_invalid.html" }

func (w *Server) invitePage(q *request) error {
	return w.renderInvite(q, http.StatusOK, "", FormErrors{})
}

// renderInvite answers with the invitation's page, in the shell of the
// person signed in, if any.
func (w *Server) renderInvite(q *request, status int, email string, fe FormErrors) error {
	ws, err := w.session(q.r)
	if err != nil {
		return err
	}
	var shell Shell
	if ws != nil {
		q.ws = *ws
		if shell, err = w.shell(q, NavNone); err != nil {
			return err
		}
	}
	token := q.r.PathValue("token")
	v, err := w.app.OpenInvite(q.ctx(), token)
	if errs.KindOf(err) == errs.KindNotFound {
		return w.serveBare(q, http.StatusNotFound, InviteInvalid{Shell: shell})
	}
	if err != nil {
		return err
	}
	return w.serveBare(q, status, Invite{Shell: shell, Token: token, WorkspaceName: v.Workspace.Name, Role: v.Invite.Role,
		Email: email, Errors: fe})
}

func (w *Server) acceptInvite(q *request) error {
	if err := q.r.ParseForm(); err != nil {
		return refuse(http.StatusBadRequest, "", "The form could not be read.")
	}
	token := q.r.PathValue("token")
	ws, err := w.session(q.r)
	if err != nil {
		return err
	}
	if ws != nil {
		if ws.User.MustChangePassword {
			http.Redirect(q.w, q.r, "/account/password", http.StatusSeeOther)
			return nil
		}
		m, err := w.app.AcceptInvite(q.ctx(), *ws, token)
		if err != nil {
			if fe, ok := formErrors(err, nil); ok && errs.KindOf(err) != errs.KindNotFound {
				return w.renderInvite(q, statusOf(err), "", fe)
			}
			return w.renderInvite(q, http.StatusNotFound, "", FormErrors{})
		}
		setFlash(q.w, "joined")
		http.Redirect(q.w, q.r, "/w/"+m.WorkspaceID+"/", http.StatusSeeOther)
		return nil
	}
	f := q.r.PostForm
	res, m, err := w.app.SignUpWithInvite(q.ctx(), app.SignUp{Token: token, Email: f.Get("email"), Password: f.Get("password"),
		Confirm: f.Get("confirm"), ClientAddr: w.client(q.r), UserAgent: q.r.UserAgent()})
	switch {
	case res.RetryAfter > 0:
		q.w.Header().Set("Retry-After", retryAfter(res.RetryAfter))
		return w.renderInvite(q, http.StatusTooManyRequests, f.Get("email"),
			FormErrors{Summary: "Too many attempts from your address. Try again in " + WaitText(res.RetryAfter) + "."})
	case err != nil:
		if fe, ok := formErrors(err, nil); ok && errs.KindOf(err) != errs.KindNotFound {
			return w.renderInvite(q, statusOf(err), f.Get("email"), fe)
		}
		if errs.KindOf(err) == errs.KindNotFound {
			return w.renderInvite(q, http.StatusNotFound, "", FormErrors{})
		}
		return err
	}
	w.setSession(q.w, res.Token)
	setFlash(q.w, "joined")
	http.Redirect(q.w, q.r, "/w/"+m.WorkspaceID+"/", http.StatusSeeOther)
	return nil
}
