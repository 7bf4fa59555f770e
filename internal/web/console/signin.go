package console

import (
	"net/http"
	"net/url"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
)

// SignIn is GET/POST /sign-in.
type SignIn struct {
	// Shell carries the flash; Email is ignored (the page is minimal).
	Shell Shell
	// Email re-fills the e-mail field after a failed attempt.
	Email string
	// Next is the local path to return to after signing in, sent back as
	// the hidden field "next"; "" for the default.
	Next string
	// Errors holds the handler's message, e.g. Summary "Wrong e-mail or
	// password." for both an unknown e-mail and a wrong password.
	Errors FormErrors
	// RetryAfter, when positive, says sign-in is rate limited: the page
	// says how long to wait (rounded up to seconds or minutes).
	RetryAfter time.Duration
}

func (SignIn) template() string { return "signin.html" }

// withDefaults gives the page the layout without navigation.
func (v SignIn) withDefaults() view {
	v.Shell.bare = true
	return v
}

func (w *Server) signInPage(q *request) error {
	next := localPath(q.r.URL.Query().Get("next"))
	if ws, err := w.session(q.r); err == nil && ws != nil {
		if next == "" {
			next = "/"
		}
		http.Redirect(q.w, q.r, next, http.StatusSeeOther)
		return nil
	}
	return w.serveBare(q, http.StatusOK, SignIn{Shell: Shell{Flash: w.takeFlash(q.w, q.r)}, Next: next})
}

func (w *Server) signIn(q *request) error {
	if err := q.r.ParseForm(); err != nil {
		return refuse(http.StatusBadRequest, "", "The form could not be read.")
	}
	email, next := q.r.PostForm.Get("email"), localPath(q.r.PostForm.Get("next"))
	res, err := w.app.SignIn(q.ctx(), app.SignInRequest{Email: email, Password: q.r.PostForm.Get("password"),
		ClientAddr: w.client(q.r), UserAgent: q.r.UserAgent()})
	v := SignIn{Email: email, Next: next}
	switch {
	case res.RetryAfter > 0:
		v.RetryAfter = res.RetryAfter
		q.w.Header().Set("Retry-After", retryAfter(res.RetryAfter))
		return w.serveBare(q, http.StatusTooManyRequests, v)
	case errs.KindOf(err) == errs.KindUnauthenticated:
		v.Errors = FormErrors{Summary: err.(*errs.Error).Message}
		return w.serveBare(q, http.StatusUnauthorized, v)
	case err != nil:
		return err
	}
	// A session this browser held before (another person's, or a
	// half-finished one) ends: one browser, one session.
	if err := w.app.SignOut(q.ctx(), w.token(q.r)); err != nil {
		return err
	}
	w.setSession(q.w, res.Token)
	switch {
	case res.NeedsSecondFactor:
		to := "/sign-in/two-factor"
		if next != "" {
			to += "?next=" + url.QueryEscape(next)
		}
		http.Redirect(q.w, q.r, to, http.StatusSeeOther)
	case res.MustChangePassword:
		http.Redirect(q.w, q.r, "/account/password", http.StatusSeeOther)
	case next != "":
		http.Redirect(q.w, q.r, next, http.StatusSeeOther)
	default:
		http.Redirect(q.w, q.r, "/", http.StatusSeeOther)
	}
	return nil
}

func (w *Server) signOut(q *request) error {
	ws, err := w.session(q.r)
	if err != nil {
		return err
	}
	if err := w.app.SignOut(q.ctx(), w.token(q.r)); err != nil {
		return err
	}
	if ws != nil {
		w.hub.endSession(ws.Session.ID)
	}
	w.clearSession(q.w)
	setFlash(q.w, "signed-out")
	http.Redirect(q.w, q.r, "/sign-in", http.StatusSeeOther)
	return nil
}
