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

// withDefaults gives the page the layout without navigation.
func (v TwoFactor) withDefaults() view {
	v.Shell.bare = true
	return v
}

func (w *Server) twoFactorPage(q *request) error {
	if !w.app.PendingSecondFactor(q.ctx(), w.token(q.r)) {
		http.Redirect(q.w, q.r, "/sign-in", http.StatusSeeOther)
		return nil
	}
	return w.serveBare(q, http.StatusOK, TwoFactor{})
}

func (w *Server) twoFactor(q *request) error {
	if err := q.r.ParseForm(); err != nil {
		return refuse(http.StatusBadRequest, "", "The form could not be read.")
	}
	res, err := w.app.SecondFactor(q.ctx(), w.token(q.r), q.r.PostForm.Get("code"), w.client(q.r), q.r.UserAgent())
	switch {
	case res.RetryAfter > 0:
		q.w.Header().Set("Retry-After", retryAfter(res.RetryAfter))
		return w.serveBare(q, http.StatusTooManyRequests, TwoFactor{RetryAfter: res.RetryAfter})
	case errors.Is(err, app.ErrNoSession):
		http.Redirect(q.w, q.r, "/sign-in", http.StatusSeeOther)
		return nil
	case errs.KindOf(err) == errs.KindUnauthenticated:
		return w.serveBare(q, http.StatusUnauthorized, TwoFactor{Errors: FormErrors{Fields: map[string]string{"code": err.(*errs.Error).Message}}})
	case err != nil:
		return err
	}
	w.setSession(q.w, res.Token)
	to := localPath(q.r.URL.Query().Get("next"))
	if res.MustChangePassword {
		to = "/account/password"
	} else if to == "" {
		to = "/"
	}
	http.Redirect(q.w, q.r, to, http.StatusSeeOther)
	return nil
}
