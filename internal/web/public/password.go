package public

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// A password-protected page's readers sign in once per browser: the page's
// password (checked against its argon2id hash, a few attempts a minute per
// address) buys a cookie scoped to the page's path that says until when it
// holds, signed with the page's password hash. Nothing is stored, every
// node can check it, and changing the password (a new hash) ends every
// session at once.

// RenderPassword renders the form that asks for a protected page's
// password (POSTed as "password" to Base+"/password"); failed says the
// last attempt was wrong. Only the page's title, logo and accent appear:
// nothing else of a protected page.
func RenderPassword(p statuspage.Page, o Location, failed bool) ([]byte, error) {
	v := newView(statuspage.Page{Title: p.Title, LogoVersion: p.LogoVersion, Accent: p.Accent}, o)
	v.Failed = failed
	return execute("password.html", v)
}

const (
	sessionCookie = "tocsin_status"
	sessionLife   = 30 * 24 * time.Hour
	// attemptsPerMinute and attemptsBurst bound password guesses per page
	// and client address.
	attemptsPerMinute, attemptsBurst = 5, 5
	maxFormBytes                     = 4 << 10
)

// sessionMAC signs a session of the page cfg that ends at exp.
func sessionMAC(cfg app.PublicPageConfig, exp int64) string {
	m := hmac.New(sha256.New, []byte(cfg.PasswordHash))
	m.Write([]byte(cfg.ID + "|" + strconv.FormatInt(cfg.PasswordVersion, 10) + "|" + strconv.FormatInt(exp, 10)))
	return hex.EncodeToString(m.Sum(nil))
}

// signedIn reports whether r carries a live session of the page cfg.
func (p *Pages) signedIn(r *http.Request, cfg app.PublicPageConfig) bool {
	if cfg.PasswordHash == "" {
		return false // protected, but no password set: nobody gets in
	}
	for _, c := range r.CookiesNamed(sessionCookie) {
		expText, mac, ok := strings.Cut(c.Value, ".")
		exp, err := strconv.ParseInt(expText, 10, 64)
		if !ok || err != nil || p.opts.Now().Unix() >= exp {
			continue
		}
		if hmac.Equal([]byte(mac), []byte(sessionMAC(cfg, exp))) {
			return true
		}
	}
	return false
}

var crossOrigin = http.NewCrossOriginProtection()

// signIn answers POST …/password.
func (p *Pages) signIn(w http.ResponseWriter, r *http.Request, cfg app.PublicPageConfig, base string) error {
	if r.Method != http.MethodPost {
		return &refusal{status: http.StatusMethodNotAllowed, text: "Method not allowed.\n", header: [2]string{"Allow", "POST"}}
	}
	if cfg.Visibility != statuspage.Protected {
		http.Redirect(w, r, base+"/", http.StatusSeeOther)
		return nil
	}
	if err := crossOrigin.Check(r); err != nil {
		return &refusal{status: http.StatusForbidden, text: "Cross-origin sign-in refused.\n"}
	}
	st := p.limits.Take("pw|"+cfg.ID+"|"+p.opts.TrustedProxies.Client(r), p.opts.Now(), attemptsPerMinute, attemptsBurst)
	if !st.OK {
		w.Header().Set("Retry-After", strconv.Itoa(max(int((st.Retry+time.Second-1)/time.Second), 1)))
		return p.askPassword(w, r, cfg, base, true, http.StatusTooManyRequests)
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return p.askPassword(w, r, cfg, base, true, http.StatusBadRequest)
	}
	if !p.app.CheckStatusPagePassword(cfg, r.PostForm.Get("password")) {
		return p.askPassword(w, r, cfg, base, true, http.StatusUnauthorized)
	}
	exp := p.opts.Now().Add(sessionLife).Unix()
	path := base
	if path == "" {
		path = "/"
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: strconv.FormatInt(exp, 10) + "." + sessionMAC(cfg, exp),
		Path: path, MaxAge: int(sessionLife / time.Second), HttpOnly: true, Secure: p.secure || r.TLS != nil,
		SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, base+"/", http.StatusSeeOther)
	return nil
}

// askPassword answers with the page's password form: its title and logo,
// nothing else of it.
func (p *Pages) askPassword(w http.ResponseWriter, r *http.Request, cfg app.PublicPageConfig, base string, failed bool, status int) error {
	body, err := RenderPassword(p.app.StatusPageHeader(cfg), Location{Base: base}, failed)
	if err != nil {
		p.log.Error("status page password form", "page", cfg.ID, "err", err)
		return errNotShown
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
	return nil
}
