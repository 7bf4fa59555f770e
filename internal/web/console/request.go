package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
)

// request is one request to a page: on signed-in pages who asks, and on
// workspace pages acting as whom.
type request struct {
	w     http.ResponseWriter
	r     *http.Request
	ws    app.WebSession
	actor app.Actor
}

func (q *request) ctx() context.Context { return q.r.Context() }

// session is the signed-in person's session, or nil on a page for people
// signed out.
func (q *request) session() *app.WebSession {
	if q.ws.Session.ID == "" {
		return nil
	}
	return &q.ws
}

// A handler answers one request to a page. The error it returns is
// answered by serveError, the one error writer: handlers never write
// their own.
type handler func(*request) error

// handle makes h an http.HandlerFunc: the one place where a page's error
// becomes its answer.
func (w *Server) handle(h handler) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		q := &request{w: rw, r: r}
		if err := h(q); err != nil {
			w.serveError(q, err)
		}
	}
}

// session is the signed-in person of r, or nil.
func (w *Server) session(r *http.Request) (*app.WebSession, error) {
	c, err := r.Cookie(w.cookie)
	if err != nil || c.Value == "" {
		return nil, nil
	}
	ws, err := w.app.WebSession(r.Context(), c.Value)
	if errs.KindOf(err) == errs.KindUnauthenticated {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &ws, nil
}

// anySession runs h for a signed-in person, even one who must still
// change a one-time password; others are sent to sign in.
func (w *Server) anySession(h handler) handler {
	return func(q *request) error {
		ws, err := w.session(q.r)
		if err != nil {
			return err
		}
		if ws == nil {
			next := ""
			if q.r.Method == http.MethodGet {
				next = q.r.URL.RequestURI()
			}
			http.Redirect(q.w, q.r, signInURL(next), http.StatusSeeOther)
			return nil
		}
		q.ws = *ws
		return h(q)
	}
}

// signedIn runs h for a signed-in person who has their own password.
func (w *Server) signedIn(h handler) handler {
	return w.anySession(func(q *request) error {
		if q.ws.User.MustChangePassword {
			http.Redirect(q.w, q.r, "/account/password", http.StatusSeeOther)
			return nil
		}
		return h(q)
	})
}

// inWorkspace runs h acting in the path's workspace, with the person's
// role there; a workspace they are not in is not found.
func (w *Server) inWorkspace(h handler) handler {
	return w.signedIn(func(q *request) error {
		actor, err := w.app.WebActor(q.ctx(), q.ws, q.r.PathValue("ws"))
		if err != nil {
			return err
		}
		q.actor = actor
		return h(q)
	})
}

// signInURL is the sign-in page, coming back to next.
func signInURL(next string) string {
	if next == "" || next == "/" {
		return "/sign-in"
	}
	return "/sign-in?next=" + url.QueryEscape(next)
}

// localPath accepts only a path on this site to return to.
func localPath(s string) string {
	if len(s) > 1024 || !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") ||
		strings.ContainsAny(s, "\r\n\t\x00") {
		return ""
	}
	return s
}

func (w *Server) setSession(rw http.ResponseWriter, token string) {
	http.SetCookie(rw, &http.Cookie{Name: w.cookie, Value: token, Path: "/", HttpOnly: true, Secure: w.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: int(app.SessionLife / time.Second)})
}

func (w *Server) clearSession(rw http.ResponseWriter) {
	http.SetCookie(rw, &http.Cookie{Name: w.cookie, Value: "", Path: "/", HttpOnly: true, Secure: w.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: -1})
}

func (w *Server) token(r *http.Request) string {
	if c, err := r.Cookie(w.cookie); err == nil {
		return c.Value
	}
	return ""
}

func (w *Server) client(r *http.Request) string { return w.opts.TrustedProxies.Client(r) }

// redirect answers a POST with a redirect to a page and a flash for it.
// It returns nil, so that a handler may end with it.
func (q *request) redirect(to, flash string) error {
	if flash != "" {
		setFlash(q.w, flash)
	}
	http.Redirect(q.w, q.r, to, http.StatusSeeOther)
	return nil
}

// errUnreadableForm is a POST form that could not be read: answered in
// plain text, 400.
var errUnreadableForm = &refusal{status: http.StatusBadRequest, text: "The form could not be read.\n"}

// parse reads the POST form.
func (q *request) parse() error {
	if err := q.r.ParseForm(); err != nil {
		return errUnreadableForm
	}
	return nil
}

func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(int((d+time.Second-1)/time.Second), 1))
}

// may refuses a person whose role does not grant scope: the app's own
// check, made before a form is read or shown.
func (w *Server) may(q *request, scope account.Scope) error {
	return q.actor.Require(scope)
}
