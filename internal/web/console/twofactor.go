package console

import (
	"errors"
	"net/http"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
)

// TwoFactor is GET/POST /sign-in/two-factor: the second step of signing
// in, field "code" (a TOTP code or a recovery code).
type TwoFactor struct {
	// Shell carries the flash; the page is minimal.
	Shell Shell
	// Errors holds a wrong code's message (field "code").
	Errors FormErrors
	// RetryAfter, when positive, says attempts are rate limited and how
	// long to wait.
	RetryAfter time.Duration
}

func (TwoFactor) template() string { return "twofactor.html" }

func (v TwoFactor) withDefaults() view {
	v.Shell.bare = true
	return v
}

func (w *Server) twoFactorPage(rw http.ResponseWriter, r *http.Request) {
	if !w.app.PendingSecondFactor(r.Context(), w.token(r)) {
		http.Redirect(rw, r, "/sign-in", http.StatusSeeOther)
		return
	}
	b, err := render(TwoFactor{})
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
		b, rerr := render(TwoFactor{RetryAfter: res.RetryAfter})
		w.html(rw, r, http.StatusTooManyRequests, b, rerr)
		return
	case errors.Is(err, app.ErrNoSession):
		http.Redirect(rw, r, "/sign-in", http.StatusSeeOther)
		return
	case errs.KindOf(err) == errs.KindUnauthenticated:
		b, rerr := render(TwoFactor{Errors: FormErrors{Fields: map[string]string{"code": err.(*errs.Error).Message}}})
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
