package console

import (
	"net/http"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
)

// TwoFactorSetup is GET/POST /account/two-factor/setup: the secret to
// enter in an authenticator app, and field "code" to confirm it.
type TwoFactorSetup struct {
	// Shell: set Shell.Active to NavAccount.
	Shell Shell
	// Secret is the TOTP secret in base32 (shown in groups of four).
	Secret string
	// URI is the otpauth:// URI of the secret, shown as text to copy.
	URI string
	// QRCode is the URI as a QR code (PNG) for the app's camera; nil
	// shows none.
	QRCode []byte
	// Pending is the sealed secret the form sends back (hidden field
	// "pending") with the first code.
	Pending string
	// Errors holds a wrong confirmation code's message (field "code").
	Errors FormErrors
}

func (TwoFactorSetup) template() string { return "twofactor_setup.html" }

// RecoveryCodes is the page after a second factor was confirmed: the
// recovery codes, shown once.
type RecoveryCodes struct {
	// Shell: set Shell.Active to NavAccount.
	Shell Shell
	// Codes are the recovery codes, each shown on its own line.
	Codes []string
}

func (RecoveryCodes) template() string { return "recovery_codes.html" }

func (w *Server) twoFactorSetupPage(q *request) error {
	setup, err := w.app.BeginTOTP(q.ctx(), q.ws)
	if err != nil {
		return err
	}
	return w.renderSetup(q, http.StatusOK, setup, FormErrors{})
}

func (w *Server) renderSetup(q *request, status int, setup app.TOTPSetup, fe FormErrors) error {
	return w.servePage(q, NavAccount, status, func(s Shell) (view, error) {
		return TwoFactorSetup{Shell: s, Secret: setup.Secret, URI: setup.URI,
			QRCode: setup.QRCode, Pending: setup.Pending, Errors: fe}, nil
	})
}

func (w *Server) twoFactorSetup(q *request) error {
	if err := q.parse(); err != nil {
		return err
	}
	codes, err := w.app.ConfirmTOTP(q.ctx(), q.ws, q.r.PostForm.Get("pending"), q.r.PostForm.Get("code"))
	if err != nil {
		fe, ok := formErrors(err, nil)
		if !ok || errs.KindOf(err) != errs.KindInvalid {
			return err
		}
		// A fresh secret: the old one was shown with a wrong code.
		setup, serr := w.app.BeginTOTP(q.ctx(), q.ws)
		if serr != nil {
			return serr
		}
		fe.Summary = "That code did not match, so here is a new secret. Scan it again and type the code it shows."
		return w.renderSetup(q, statusOf(err), setup, fe)
	}
	return w.servePage(q, NavAccount, http.StatusOK, func(s Shell) (view, error) {
		return RecoveryCodes{Shell: s, Codes: codes}, nil
	})
}
