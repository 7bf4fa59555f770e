package console

import (
	"errors"
	"net/http"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
)

// statusOf is the HTTP status of an error's kind.
func statusOf(err error) int {
	switch errs.KindOf(err) {
	case errs.KindNotFound:
		return http.StatusNotFound
	case errs.KindInvalid:
		return http.StatusUnprocessableEntity
	case errs.KindUnauthenticated:
		return http.StatusUnauthorized
	case errs.KindForbidden, errs.KindInsufficientScope:
		return http.StatusForbidden
	case errs.KindConflict:
		return http.StatusConflict
	case errs.KindQuota:
		return http.StatusPaymentRequired
	case errs.KindRateLimited:
		return http.StatusTooManyRequests
	case errs.KindUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// fail answers with the error page for err; unexpected errors are logged
// and shown without their text.
func (w *Server) fail(rw http.ResponseWriter, r *http.Request, ws *app.WebSession, err error) {
	status := statusOf(err)
	msg := ""
	var e *errs.Error
	if status == http.StatusInternalServerError || !errors.As(err, &e) {
		w.log.ErrorContext(r.Context(), "web app", "path", r.URL.Path, "err", err)
		status = http.StatusInternalServerError
	} else if status != http.StatusNotFound {
		msg = e.Message
	}
	w.errorPage(rw, r, ws, status, "", msg)
}

func (w *Server) errorPage(rw http.ResponseWriter, r *http.Request, ws *app.WebSession, status int, title, msg string) {
	v := Error{Status: status, Title: title, Message: msg}
	if ws != nil && !ws.User.MustChangePassword {
		q := &request{w: rw, r: r, ws: *ws}
		if s, err := w.shell(q, NavNone); err == nil {
			v.Shell = s
		}
	}
	b, err := render(v)
	w.html(rw, r, status, b, err)
}

// Error is an error page.
type Error struct {
	// Shell: signed in or not.
	Shell Shell
	// Status is the HTTP status (403, 404, 429, 500…).
	Status int
	// Title is the page's heading; empty for the status's default.
	Title string
	// Message is one sentence of explanation; empty for the status's
	// default.
	Message string
}

func (Error) template() string { return "error.html" }

func (v Error) withDefaults() view {
	title, msg := errorWords(v.Status)
	if v.Title == "" {
		v.Title = title
	}
	if v.Message == "" {
		v.Message = msg
	}
	return v
}

func errorWords(status int) (title, message string) {
	switch status {
	case 400:
		return "Bad request", "The request could not be understood."
	case 403:
		return "Not allowed", "Your role in this workspace does not allow this."
	case 404:
		return "Page not found", "There is nothing at this address, or it is not yours to see."
	case 429:
		return "Too many requests", "Please wait a moment and try again."
	}
	return "Something went wrong", "The server could not finish this request. Please try again in a moment."
}
