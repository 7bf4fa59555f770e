package console

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clientaddr"
	"github.com/tocsin/tocsin/internal/errs"
)

// The web app: server-rendered pages over the same app functions as the
// API. A signed-in browser carries a session token in a cookie; every
// page that acts in a workspace builds its app.Actor with app.WebActor,
// so the browser can do exactly what the person's role allows, checked by
// the same Require as an API key's request. Every state change is a POST
// form, refused when it comes from another site (http.CrossOriginProtection:
// the browser's Sec-Fetch-Site, or Origin against Host).

// Options tune the web app.
type Options struct {
	// BaseURL is where people reach the service; https makes the session
	// cookie Secure (and __Host- named).
	BaseURL string
	// TrustedProxies decide who a request's client is (sign-in limits, the
	// sessions list).
	TrustedProxies clientaddr.Resolver
	// LivePoll is how often the live view reads a watched workspace's
	// states (2 s when zero); LiveRecheck how often a live stream checks
	// that its person may still read (5 s); LiveKeepAlive how often an
	// idle stream sends a comment (15 s).
	LivePoll, LiveRecheck, LiveKeepAlive time.Duration
}

// Server serves the signed-in pages and the sign-in flow.
type Server struct {
	app     *app.App
	log     *slog.Logger
	opts    Options
	base    string
	secure  bool
	cookie  string
	cop     *http.CrossOriginProtection
	handler http.Handler
	hub     *liveHub
}

const (
	maxAppForm  = 16 << 10
	flashCookie = "tocsin_flash"
)

// New returns the web app's handler.
func New(a *app.App, log *slog.Logger, opts Options) *Server {
	w := &Server{app: a, log: log, opts: opts, base: strings.TrimRight(opts.BaseURL, "/"), cookie: "tocsin_session",
		cop: http.NewCrossOriginProtection(), hub: newLiveHub(a, log, opts)}
	if u, err := url.Parse(opts.BaseURL); err == nil && u.Scheme == "https" {
		w.secure = true
		w.cookie = "__Host-tocsin_session" // Secure, Path=/, no Domain: no subdomain may set it
	}
	w.cop.SetDenyHandler(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.errorPage(rw, r, nil, http.StatusForbidden, "Refused", "This form was sent from another site, so it was not acted on.")
	}))
	mux := http.NewServeMux()
	w.routes(mux)
	w.handler = w.cop.Handler(mux)
	return w
}

// Paths are the patterns the web app answers; serve mounts them on the
// root mux.
var appPatterns = []string{"/{$}", "/sign-in", "/sign-in/", "/sign-out", "/account", "/account/", "/workspaces",
	"/switch-workspace", "/w/", "/invite/", "/assets/"}

// Mount registers the web app's paths on mux.
func (w *Server) Mount(mux *http.ServeMux) {
	for _, p := range appPatterns {
		mux.Handle(p, w)
	}
}

// Close ends the live streams and their pollers: the server shuts down,
// and would otherwise wait for streams that never end on their own
// (register it with http.Server.RegisterOnShutdown).
func (w *Server) Close() { w.hub.close() }

func (w *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	h := rw.Header()
	securityHeaders(h, CSP)
	h.Set("Referrer-Policy", "same-origin") // the app's own links may say where they come from
	h.Set("Cache-Control", "no-store")
	if r.Method == http.MethodPost {
		limit := int64(maxAppForm)
		if strings.HasSuffix(r.URL.Path, "/logo") { // a status page's logo upload
			limit = maxLogoForm
		}
		r.Body = http.MaxBytesReader(rw, r.Body, limit)
	}
	w.handler.ServeHTTP(rw, r)
}

// route is one line of the web app's route table: a ServeMux pattern and
// its handler.
type route struct {
	pattern string
	handler http.HandlerFunc
}

// routeTable lists every page and form of the web app, one line each.
func (w *Server) routeTable() []route {
	return []route{
		{"GET /assets/{name}", w.asset},
		{"GET /{$}", w.signedIn(w.root)},
		{"GET /sign-in", w.signInPage},
		{"POST /sign-in", w.signIn},
		{"GET /sign-in/two-factor", w.twoFactorPage},
		{"POST /sign-in/two-factor", w.twoFactor},
		{"POST /sign-out", w.signOut},
		{"GET /account", w.signedIn(w.account)},
		{"GET /account/password", w.anySession(w.passwordPage)},
		{"POST /account/password", w.anySession(w.changePassword)},
		{"POST /account/sign-out-everywhere", w.signedIn(w.signOutEverywhere)},
		{"GET /account/two-factor/setup", w.signedIn(w.twoFactorSetupPage)},
		{"POST /account/two-factor/setup", w.signedIn(w.twoFactorSetup)},
		{"POST /account/two-factor/disable", w.signedIn(w.twoFactorDisable)},
		{"GET /workspaces", w.signedIn(w.workspaces)},
		{"POST /workspaces", w.signedIn(w.createWorkspace)},
		{"POST /switch-workspace", w.signedIn(w.switchWorkspace)},
		{"GET /w/{ws}/{$}", w.inWorkspace(w.home)},
		{"GET /w/{ws}/live", w.inWorkspace(w.live)},
		{"GET /w/{ws}/keys", w.inWorkspace(w.keys)},
		{"POST /w/{ws}/keys", w.inWorkspace(w.createKey)},
		{"POST /w/{ws}/keys/{key}/revoke", w.inWorkspace(w.revokeKey)},
		{"GET /w/{ws}/members", w.inWorkspace(w.members)},
		{"POST /w/{ws}/members/invites", w.inWorkspace(w.invite)},
		{"POST /w/{ws}/members/invites/{invite}/revoke", w.inWorkspace(w.revokeInvite)},
		{"POST /w/{ws}/members/{user}/role", w.inWorkspace(w.changeRole)},
		{"POST /w/{ws}/members/{user}/remove", w.inWorkspace(w.removeMember)},
		{"GET /w/{ws}/monitors/new", w.inWorkspace(w.newMonitor)},
		{"POST /w/{ws}/monitors", w.inWorkspace(w.createMonitor)},
		{"POST /w/{ws}/monitors/test", w.inWorkspace(w.testMonitor)},
		{"GET /w/{ws}/monitors/{id}/edit", w.inWorkspace(w.editMonitor)},
		{"POST /w/{ws}/monitors/{id}/edit", w.inWorkspace(w.updateMonitor)},
		{"GET /w/{ws}/monitors", w.inWorkspace(w.monitors)},
		{"GET /w/{ws}/monitors/{id}", w.inWorkspace(w.monitorPage)},
		{"POST /w/{ws}/monitors/{id}/pause", w.inWorkspace(w.pauseMonitor)},
		{"POST /w/{ws}/monitors/{id}/resume", w.inWorkspace(w.resumeMonitor)},
		{"POST /w/{ws}/monitors/{id}/delete", w.inWorkspace(w.deleteMonitor)},
		{"GET /w/{ws}/channels", w.inWorkspace(w.channels)},
		{"GET /w/{ws}/channels/new", w.inWorkspace(w.newChannel)},
		{"POST /w/{ws}/channels", w.inWorkspace(w.createChannel)},
		{"GET /w/{ws}/channels/{id}", w.inWorkspace(w.channelPage)},
		{"POST /w/{ws}/channels/{id}/edit", w.inWorkspace(w.updateChannel)},
		{"POST /w/{ws}/channels/{id}/delete", w.inWorkspace(w.deleteChannel)},
		{"POST /w/{ws}/channels/{id}/test", w.inWorkspace(w.testChannel)},
		{"POST /w/{ws}/channels/{id}/rotate", w.inWorkspace(w.rotateChannel)},
		{"POST /w/{ws}/deliveries/{id}/redeliver", w.inWorkspace(w.redeliver)},
		{"GET /w/{ws}/heartbeats/new", w.inWorkspace(w.newHeartbeat)},
		{"POST /w/{ws}/heartbeats", w.inWorkspace(w.createHeartbeat)},
		{"GET /w/{ws}/heartbeats/{id}/edit", w.inWorkspace(w.editHeartbeat)},
		{"POST /w/{ws}/heartbeats/{id}/edit", w.inWorkspace(w.updateHeartbeat)},
		{"GET /w/{ws}/heartbeats", w.inWorkspace(w.heartbeats)},
		{"GET /w/{ws}/heartbeats/{id}", w.inWorkspace(w.heartbeatPage)},
		{"POST /w/{ws}/heartbeats/{id}/pause", w.inWorkspace(w.pauseHeartbeat)},
		{"POST /w/{ws}/heartbeats/{id}/resume", w.inWorkspace(w.resumeHeartbeat)},
		{"POST /w/{ws}/heartbeats/{id}/delete", w.inWorkspace(w.deleteHeartbeat)},
		{"POST /w/{ws}/heartbeats/{id}/rotate", w.inWorkspace(w.rotateHeartbeat)},
		{"GET /w/{ws}/incidents", w.inWorkspace(w.incidents)},
		{"POST /w/{ws}/incidents", w.inWorkspace(w.createIncident)},
		{"GET /w/{ws}/incidents/{id}", w.inWorkspace(w.incidentPage)},
		{"POST /w/{ws}/incidents/{id}/acknowledge", w.inWorkspace(w.acknowledgeIncident)},
		{"POST /w/{ws}/incidents/{id}/updates", w.inWorkspace(w.postIncidentUpdate)},
		{"POST /w/{ws}/incidents/{id}/resolve", w.inWorkspace(w.resolveIncident)},
		{"POST /w/{ws}/incidents/{id}/edit", w.inWorkspace(w.updateIncident)},
		{"GET /w/{ws}/maintenance", w.inWorkspace(w.maintenance)},
		{"POST /w/{ws}/maintenance", w.inWorkspace(w.createMaintenance)},
		{"GET /w/{ws}/maintenance/{id}/edit", w.inWorkspace(w.editMaintenance)},
		{"POST /w/{ws}/maintenance/{id}/edit", w.inWorkspace(w.updateMaintenance)},
		{"POST /w/{ws}/maintenance/{id}/delete", w.inWorkspace(w.deleteMaintenance)},
		{"GET /w/{ws}/status-pages", w.inWorkspace(w.statusPages)},
		{"POST /w/{ws}/status-pages", w.inWorkspace(w.createStatusPage)},
		{"GET /w/{ws}/status-pages/{id}", w.inWorkspace(w.statusPageEditor)},
		{"POST /w/{ws}/status-pages/{id}", w.inWorkspace(w.saveStatusPage)},
		{"GET /w/{ws}/status-pages/{id}/preview", w.inWorkspace(w.statusPagePreview)},
		{"POST /w/{ws}/status-pages/{id}/publish", w.inWorkspace(w.publishStatusPage)},
		{"POST /w/{ws}/status-pages/{id}/unpublish", w.inWorkspace(w.unpublishStatusPage)},
		{"POST /w/{ws}/status-pages/{id}/delete", w.inWorkspace(w.deleteStatusPage)},
		{"POST /w/{ws}/status-pages/{id}/components", w.inWorkspace(w.addComponent)},
		{"POST /w/{ws}/status-pages/{id}/components/{component}/move", w.inWorkspace(w.moveComponent)},
		{"POST /w/{ws}/status-pages/{id}/components/{component}/remove", w.inWorkspace(w.removeComponent)},
		{"POST /w/{ws}/status-pages/{id}/groups", w.inWorkspace(w.addGroup)},
		{"POST /w/{ws}/status-pages/{id}/groups/{group}/move", w.inWorkspace(w.moveGroup)},
		{"POST /w/{ws}/status-pages/{id}/groups/{group}/remove", w.inWorkspace(w.removeGroup)},
		{"POST /w/{ws}/status-pages/{id}/order", w.inWorkspace(w.reorderComponents)},
		{"POST /w/{ws}/status-pages/{id}/logo", w.inWorkspace(w.uploadLogo)},
		{"POST /w/{ws}/status-pages/{id}/logo/remove", w.inWorkspace(w.removeLogo)},
		{"GET /invite/{token}", w.invitePage},
		{"POST /invite/{token}", w.acceptInvite},
		{"/", func(rw http.ResponseWriter, r *http.Request) {
			ws, _ := w.session(r)
			w.errorPage(rw, r, ws, http.StatusNotFound, "", "")
		}},
	}
}

func (w *Server) routes(mux *http.ServeMux) {
	for _, rt := range w.routeTable() {
		mux.HandleFunc(rt.pattern, rt.handler)
	}
}

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

// Flash messages survive one redirect in a cookie holding a code, never
// text, so nobody can put words on a page through it.
var flashes = map[string]Flash{
	"key-revoked":       {Kind: FlashSuccess, Message: "The API key is revoked. It stopped working at once."},
	"role-changed":      {Kind: FlashSuccess, Message: "The role is changed. Their API keys follow it from the next request."},
	"member-removed":    {Kind: FlashSuccess, Message: "The member is removed. Their API keys lost all power here at once."},
	"invite-revoked":    {Kind: FlashSuccess, Message: "The invitation is withdrawn."},
	"password-changed":  {Kind: FlashSuccess, Message: "Your password is changed. Every other browser is signed out."},
	"password-set":      {Kind: FlashSuccess, Message: "Your password is set. Welcome to Tocsin."},
	"two-factor-off":    {Kind: FlashSuccess, Message: "Two-factor sign-in is off."},
	"signed-out":        {Kind: FlashSuccess, Message: "You are signed out."},
	"signed-out-all":    {Kind: FlashSuccess, Message: "You are signed out everywhere, this browser too."},
	"workspace-created": {Kind: FlashSuccess, Message: "The workspace is made, and you are its owner."},
	"joined":            {Kind: FlashSuccess, Message: "Welcome: you are now a member of this workspace."},
	"left":              {Kind: FlashSuccess, Message: "You left the workspace."},
	"monitor-created":   {Kind: FlashSuccess, Message: "The monitor is created. Its first check runs shortly."},
	"monitor-saved":     {Kind: FlashSuccess, Message: "The monitor is saved. Changes apply from its next check."},
	"monitor-paused":    {Kind: FlashSuccess, Message: "The monitor is paused: no checks run until you resume it."},
	"monitor-resumed":   {Kind: FlashSuccess, Message: "The monitor is resumed: its state is known again after the next check."},
	"monitor-deleted":   {Kind: FlashSuccess, Message: "The monitor is deleted."},
	"channel-created":   {Kind: FlashSuccess, Message: "The channel is created. Events go to it from now on; “Send a test” tries it."},
	"channel-saved":     {Kind: FlashSuccess, Message: "The channel is saved."},
	"channel-deleted":   {Kind: FlashSuccess, Message: "The channel is deleted. Events no longer go to it."},
	"channel-tested":    {Kind: FlashSuccess, Message: "A test event is on its way: its delivery is at the top of the log. Reload the page to see how it went."},
	"redelivered":       {Kind: FlashSuccess, Message: "The delivery goes again, with the same id. Reload the page to see how it went."},
	"heartbeat-created": {Kind: FlashSuccess, Message: "The heartbeat is created: have its job call the ping URL below."},
	"heartbeat-saved":   {Kind: FlashSuccess, Message: "The heartbeat is saved."},
	"heartbeat-paused":  {Kind: FlashSuccess, Message: "The heartbeat is paused: pings are kept but change nothing, and nothing alerts."},
	"heartbeat-resumed": {Kind: FlashSuccess, Message: "The heartbeat is resumed: it is pending until its next ping."},
	"heartbeat-deleted": {Kind: FlashSuccess, Message: "The heartbeat is deleted; its ping URL no longer works."},
	"heartbeat-rotated": {Kind: FlashSuccess, Message: "The heartbeat has a new ping URL, below; the old one no longer works."},

	// The status pages'.
	"status-page-created": {Kind: FlashSuccess, Message: "The status page is created and live at its address. Add its components below."},
	"status-page-saved":   {Kind: FlashSuccess, Message: "The status page is saved. Its readers see the change from their next visit on."},
	"status-page-deleted": {Kind: FlashSuccess, Message: "The status page is deleted. Its address answers “not found”."},
}

func setFlash(rw http.ResponseWriter, code string) {
	http.SetCookie(rw, &http.Cookie{Name: flashCookie, Value: code, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: 60})
}

func (w *Server) takeFlash(rw http.ResponseWriter, r *http.Request) Flash {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return Flash{}
	}
	http.SetCookie(rw, &http.Cookie{Name: flashCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: -1})
	return flashes[c.Value]
}

// redirect answers a POST with a redirect to a page and a flash for it.
func (q *request) redirect(to, flash string) {
	if flash != "" {
		setFlash(q.w, flash)
	}
	http.Redirect(q.w, q.r, to, http.StatusSeeOther)
}

// shell is what every signed-in page shares.
func (w *Server) shell(q *request, nav Nav) (Shell, error) {
	s := Shell{Email: q.ws.User.Email, Active: nav, BaseURL: w.base, ForcedPassword: q.ws.User.MustChangePassword,
		Flash: w.takeFlash(q.w, q.r)}
	if s.ForcedPassword {
		return s, nil
	}
	all, err := w.app.Workspaces(q.ctx(), q.ws)
	if err != nil {
		return Shell{}, err
	}
	current := q.actor.WorkspaceID
	if current == "" {
		current = q.ws.Session.WorkspaceID
	}
	for _, m := range all {
		s.Workspaces = append(s.Workspaces, WorkspaceChoice{ID: m.Workspace.ID, Name: m.Workspace.Name, Role: m.Role})
		if m.Workspace.ID == current {
			s.WorkspaceID, s.WorkspaceName, s.Role = m.Workspace.ID, m.Workspace.Name, m.Role
		}
	}
	return s, nil
}

// render answers with a signed-in page: view gets the shell for nav and
// renders the page, reading what it needs; any error becomes the error
// page.
func (w *Server) render(q *request, nav Nav, status int, view func(Shell) ([]byte, error)) {
	s, err := w.shell(q, nav)
	var b []byte
	if err == nil {
		b, err = view(s)
	}
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	w.html(q.w, q.r, status, b, nil)
}

// html writes a rendered page.
func (w *Server) html(rw http.ResponseWriter, r *http.Request, status int, body []byte, err error) {
	if err != nil {
		w.log.ErrorContext(r.Context(), "web app render", "path", r.URL.Path, "err", err)
		plain(rw, http.StatusInternalServerError, "This page could not be shown.\n")
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = rw.Write(body)
	}
}

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
	b, err := RenderError(v)
	w.html(rw, r, status, b, err)
}

// formErrors turns an app error into a form's messages: field errors by
// the form field their pointer names, the rest as the summary. ok is
// false for errors that are not the person's to fix.
func formErrors(err error, fieldOf map[string]string) (FormErrors, bool) {
	var e *errs.Error
	if !errors.As(err, &e) || statusOf(err) == http.StatusInternalServerError {
		return FormErrors{}, false
	}
	return errorFields(e, func(pointer string) string {
		name := strings.TrimPrefix(pointer, "/")
		if i := strings.IndexByte(name, '/'); i >= 0 {
			name = name[:i]
		}
		if m, ok := fieldOf[name]; ok {
			name = m
		}
		return name
	}), true
}

// errorFields are the form's messages for e: each field's first message
// at the form field fieldOf names for its pointer, and e's message as the
// summary unless it only says the fields are invalid.
func errorFields(e *errs.Error, fieldOf func(pointer string) string) FormErrors {
	fe := FormErrors{}
	for _, f := range e.Fields {
		name := fieldOf(f.Pointer)
		if fe.Fields == nil {
			fe.Fields = map[string]string{}
		}
		if _, dup := fe.Fields[name]; !dup {
			fe.Fields[name] = f.Message
		}
	}
	if len(e.Fields) == 0 || e.Message != "the request has invalid fields" {
		fe.Summary = e.Message
	}
	return fe
}

func (w *Server) asset(rw http.ResponseWriter, r *http.Request) {
	body, ctype, ok := Asset(r.URL.Path)
	if !ok {
		ws, _ := w.session(r)
		w.errorPage(rw, r, ws, http.StatusNotFound, "", "")
		return
	}
	rw.Header().Set("Content-Type", ctype)
	rw.Header().Set("Cache-Control", immutableCache)
	_, _ = rw.Write(body)
}

// immutableCache is for assets named by their content.
const immutableCache = "public, max-age=31536000, immutable"

func securityHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg))
}

// hostOnly is a Host header's name, lower case, without its port.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}
