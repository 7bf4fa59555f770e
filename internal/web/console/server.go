package console

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clientaddr"
)

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
	w.cop.SetDenyHandler(w.handle(func(*request) error {
		return refuse(http.StatusForbidden, "Refused", "This form was sent from another site, so it was not acted on.")
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

// asset serves the pages' files (/assets/…), named by their content.
func (w *Server) asset(q *request) error {
	body, ctype, ok := Asset(q.r.URL.Path)
	if !ok {
		return w.notFound(q)
	}
	q.w.Header().Set("Content-Type", ctype)
	q.w.Header().Set("Cache-Control", immutableCache)
	_, _ = q.w.Write(body)
	return nil
}

// notFound answers a path no page has, in the shell of the person signed
// in, if any.
func (w *Server) notFound(q *request) error {
	if ws, _ := w.session(q.r); ws != nil {
		q.ws = *ws
	}
	return refuse(http.StatusNotFound, "", "")
}
