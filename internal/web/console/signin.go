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

func (v SignIn) withDefaults() view {
	v.Shell.bare = true
	return v
}

func (w *Server) signInPage(rw http.ResponseWriter, r *http.Request) {
	next := localPath(r.URL.Query().Get("next"))
	if ws, err := w.session(r); err == nil && ws != nil {
		if next == "" {
			next = "/"
		}
		http.Redirect(rw, r, next, http.StatusSeeOther)
		return
	}
	b, err := render(SignIn{Shell: Shell{Flash: w.takeFlash(rw, r)}, Next: next})
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
		b, rerr := render(v)
		w.html(rw, r, http.StatusTooManyRequests, b, rerr)
		return
	case errs.KindOf(err) == errs.KindUnauthenticated:
		v.Errors = FormErrors{Summary: err.(*errs.Error).Message}
		b, rerr := render(v)
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
