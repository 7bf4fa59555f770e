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

// request is one signed-in request: who, and, on workspace pages, acting
// as whom.
type request struct {
	w     http.ResponseWriter
	r     *http.Request
	ws    app.WebSession
	actor app.Actor
}

func (q *request) ctx() context.Context { return q.r.Context() }

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
func (w *Server) anySession(h func(*request)) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		ws, err := w.session(r)
		if err != nil {
			w.fail(rw, r, nil, err)
			return
		}
		if ws == nil {
			next := ""
			if r.Method == http.MethodGet {
				next = r.URL.RequestURI()
			}
			http.Redirect(rw, r, signInURL(next), http.StatusSeeOther)
			return
		}
		h(&request{w: rw, r: r, ws: *ws})
	}
}

// signedIn runs h for a signed-in person who has their own password.
func (w *Server) signedIn(h func(*request)) http.HandlerFunc {
	return w.anySession(func(q *request) {
		if q.ws.User.MustChangePassword {
			http.Redirect(q.w, q.r, "/account/password", http.StatusSeeOther)
			return
		}
		h(q)
	})
}

// inWorkspace runs h acting in the path's workspace, with the person's
// role there; a workspace they are not in is not found.
func (w *Server) inWorkspace(h func(*request)) http.HandlerFunc {
	return w.signedIn(func(q *request) {
		actor, err := w.app.WebActor(q.ctx(), q.ws, q.r.PathValue("ws"))
		if err != nil {
			w.fail(q.w, q.r, &q.ws, err)
			return
		}
		q.actor = actor
		h(q)
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
func (q *request) redirect(to, flash string) {
	if flash != "" {
		setFlash(q.w, flash)
	}
	http.Redirect(q.w, q.r, to, http.StatusSeeOther)
}

// parse reads the POST form, answering 400 itself when it cannot.
func (q *request) parse() bool {
	if err := q.r.ParseForm(); err != nil {
		plain(q.w, http.StatusBadRequest, "The form could not be read.\n")
		return false
	}
	return true
}

func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(int((d+time.Second-1)/time.Second), 1))
}

// may refuses, with the error page, a person whose role does not grant
// scope: the app's own check, made before a form is read or shown.
func (w *Server) may(q *request, scope account.Scope) bool {
	if err := q.actor.Require(scope); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return false
	}
	return true
}
