package console

import (
	"errors"
	"net/http"

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

// A refusal is an error with an answer of its own: a status and the
// error page's title and message, or a plain text.
type refusal struct {
	status         int
	title, message string
	text           string // the answer in text/plain, when set
}

func (e *refusal) Error() string { return e.message + e.text }

// refuse is the error page with status, title and message (empty for the
// status's defaults).
func refuse(status int, title, message string) error {
	return &refusal{status: status, title: title, message: message}
}

// serveError answers with the error page for err; unexpected errors are
// logged and shown without their text. It is the one error writer: every
// handler's error comes here.
func (w *Server) serveError(q *request, err error) {
	var rf *refusal
	if errors.As(err, &rf) {
		if rf.text != "" {
			plain(q.w, rf.status, rf.text)
			return
		}
		w.errorPage(q, rf.status, rf.title, rf.message)
		return
	}
	status := statusOf(err)
	msg := ""
	var e *errs.Error
	if status == http.StatusInternalServerError || !errors.As(err, &e) {
		w.log.ErrorContext(q.ctx(), "web app", "path", q.r.URL.Path, "err", err)
		status = http.StatusInternalServerError
	} else if status != http.StatusNotFound {
		msg = e.Message
	}
	w.errorPage(q, status, "", msg)
}

// errorPage answers with the error page, in the shell of the person
// signed in, if any.
func (w *Server) errorPage(q *request, status int, title, msg string) {
	v := Error{Status: status, Title: title, Message: msg}
	if ws := q.session(); ws != nil && !ws.User.MustChangePassword {
		if s, err := w.shell(&request{w: q.w, r: q.r, ws: *ws}, NavNone); err == nil {
			v.Shell = s
		}
	}
	b, err := render(v)
	w.html(q.w, q.r, status, b, err)
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

// withDefaults words the page by its status where it says nothing.
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
