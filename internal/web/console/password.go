package console

import (
	"net/http"

	"github.com/tocsin/tocsin/internal/app"
)

// Password is GET/POST /account/password: fields "current", "new",
// "confirm".
type Password struct {
	// Shell: with Shell.ForcedPassword the page explains that the
	// one-time password must be replaced first, and the header offers
	// only signing out.
	Shell Shell
	// Errors holds the fields' messages ("current", "new", "confirm").
	Errors FormErrors
}

func (Password) template() string { return "password.html" }

func (w *Server) passwordPage(q *request) error {
	return w.renderPassword(q, http.StatusOK, FormErrors{})
}

func (w *Server) renderPassword(q *request, status int, fe FormErrors) error {
	return w.servePage(q, NavAccount, status, func(s Shell) (view, error) {
		return Password{Shell: s, Errors: fe}, nil
	})
}

func (w *Server) changePassword(q *request) error {
	if err := q.parse(); err != nil {
		return err
	}
	f := q.r.PostForm
	token, err := w.app.ChangePassword(q.ctx(), q.ws, app.PasswordChange{Current: f.Get("current"), New: f.Get("new"),
		Confirm: f.Get("confirm"), ClientAddr: w.client(q.r), UserAgent: q.r.UserAgent()})
	if err != nil {
		if fe, ok := formErrors(err, nil); ok {
			return w.renderPassword(q, statusOf(err), fe)
		}
		return err
	}
	w.hub.endPerson(q.ws.User.ID) // every session ended, this one too
	w.setSession(q.w, token)
	if q.ws.User.MustChangePassword {
		// The one-time password is replaced: on to work, as a first sign-in.
		return q.redirect("/", "password-set")
	}
	return q.redirect("/account", "password-changed")
}
