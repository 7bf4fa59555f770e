package console

import (
	"net/http"
	"time"
)

// Account is GET /account.
type Account struct {
	// Shell: set Shell.Active to NavAccount.
	Shell Shell
	// Email is the person's e-mail address.
	Email string
	// TwoFactor says whether a second factor is on.
	TwoFactor bool
	// TwoFactorSince is when it was turned on (with TwoFactor).
	TwoFactorSince time.Time
	// RecoveryCodesLeft is how many unused recovery codes remain (with
	// TwoFactor).
	RecoveryCodesLeft int
	// DisableErrors holds the message of a failed POST
	// /account/two-factor/disable (field "password").
	DisableErrors FormErrors
	// Sessions are the person's signed-in browsers, newest first.
	Sessions []SessionRow
}

func (Account) template() string { return "account.html" }

// SessionRow is one signed-in browser of the person.
type SessionRow struct {
	// UserAgent is the browser's user agent as it sent it ("" shows
	// "unknown browser").
	UserAgent string
	// Address is the client address it signed in from.
	Address string
	// CreatedAt is when it signed in.
	CreatedAt time.Time
	// LastSeenAt is when it was last used.
	LastSeenAt time.Time
	// Current marks the session of the browser viewing the page.
	Current bool
}

func (w *Server) account(q *request) error {
	return w.renderAccount(q, http.StatusOK, FormErrors{})
}

func (w *Server) renderAccount(q *request, status int, disable FormErrors) error {
	return w.servePage(q, NavAccount, status, func(s Shell) (view, error) {
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
		return v, nil
	})
}

func (w *Server) signOutEverywhere(q *request) error {
	if _, err := w.app.SignOutEverywhere(q.ctx(), q.ws); err != nil {
		return err
	}
	w.hub.endPerson(q.ws.User.ID)
	w.clearSession(q.w)
	return q.redirect("/sign-in", "signed-out-all")
}

func (w *Server) twoFactorDisable(q *request) error {
	if err := q.parse(); err != nil {
		return err
	}
	if err := w.app.DisableTOTP(q.ctx(), q.ws, q.r.PostForm.Get("password"), w.client(q.r)); err != nil {
		if fe, ok := formErrors(err, nil); ok {
			return w.renderAccount(q, statusOf(err), fe)
		}
		return err
	}
	return q.redirect("/account", "two-factor-off")
}
