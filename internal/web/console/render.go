// Package webui renders the pages of Tocsin's web app: html/template
// pages over the view models in model.go, with their stylesheet, script
// and icon embedded. It does no I/O: the handlers (package web) fill the
// view models, call a Render function and serve Asset's files.
//
// The markup is built for a strict Content-Security-Policy (CSP): no
// inline script, no inline style, no style or event-handler attribute;
// everything comes from /assets/. Every form works without the script,
// every state change is a POST form (a search form is a GET form with
// role="search").
//
// Which function renders which route (form field names in parentheses):
//
//	GET/POST /sign-in                  RenderSignIn (email, password, next)
//	GET/POST /sign-in/two-factor       RenderTwoFactor (code)
//	GET/POST /account/password         RenderPassword (current, new, confirm)
//	GET /account                       RenderAccount; its forms POST
//	                                   /account/two-factor/disable (password)
//	                                   and /account/sign-out-everywhere
//	GET/POST /account/two-factor/setup RenderTwoFactorSetup (code), then
//	                                   RenderRecoveryCodes once confirmed
//	GET/POST /workspaces               RenderWorkspaces (name)
//	GET /w/{id}/                       RenderWorkspaceHome
//	GET/POST /w/{id}/keys              RenderKeys (name, binding, scope…),
//	                                   RenderKeyCreated after a creation;
//	                                   revoke: POST /w/{id}/keys/{keyID}/revoke
//	GET /w/{id}/members                RenderMembers; its forms POST
//	                                   /w/{id}/members/{userID}/role (role),
//	                                   /w/{id}/members/{userID}/remove,
//	                                   /w/{id}/members/invites (role) →
//	                                   RenderInviteCreated, and
//	                                   /w/{id}/members/invites/{inviteID}/revoke
//	GET /w/{id}/monitors               RenderMonitors (filter: GET state,
//	                                   type, q, cursor)
//	GET /w/{id}/monitors/{monID}       RenderMonitor; its forms POST
//	                                   /w/{id}/monitors/{monID}/pause,
//	                                   …/resume and …/delete
//	GET /w/{id}/heartbeats             RenderHeartbeats (filter: GET state,
//	                                   q, cursor)
//	GET /w/{id}/heartbeats/{hbID}      RenderHeartbeat; its forms POST
//	                                   /w/{id}/heartbeats/{hbID}/pause,
//	                                   …/resume, …/rotate and …/delete
//	GET /w/{id}/heartbeats/new         RenderHeartbeatForm (fields: see
//	                                   HeartbeatForm), POSTed to
//	                                   /w/{id}/heartbeats; an edit's to
//	                                   /w/{id}/heartbeats/{hbID}/edit
//	GET/POST /w/{id}/status-pages      RenderStatusPages (title, slug)
//	GET /w/{id}/status-pages/{spID}    RenderStatusPageEditor (EditorCSP);
//	                                   its forms POST the settings to the
//	                                   same path, and …/publish,
//	                                   …/unpublish, …/delete, …/logo
//	                                   (multipart: logo), …/logo/remove,
//	                                   …/components (subject, c-name, group),
//	                                   …/components/{c}/move (dir) and
//	                                   …/remove, …/groups (g-name),
//	                                   …/groups/{i}/move (dir) and …/remove,
//	                                   …/order (order…, from editor.js)
//	GET/POST /invite/{token}           RenderInvite (signed out: email,
//	                                   password, confirm), RenderInviteInvalid
//	any error                          RenderError
//
// Every signed-in page's header POSTs /switch-workspace (workspace) and
// /sign-out. Serve the pages with the header Content-Security-Policy: CSP,
// and the files of Asset under /assets/.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/clean"
)

// CSP is the Content-Security-Policy to serve the pages with. The
// script is /assets/app-<hash>.js (script-src 'self'); connect-src 'self'
// is for nothing yet but keeps a later fetch to the app's own API
// possible without widening the policy.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; connect-src 'self'"

// APIDocsPath is where the API's reference lives: the OpenAPI document
// the API serves (httpapi serves no docs UI, which would load scripts
// from another host).
const APIDocsPath = "/api/v1/openapi.json"

//go:embed templates/*.html assets/*
var files embed.FS

type asset struct {
	path, contentType string
	body              []byte
}

var (
	assets    = map[string]asset{}  // by hashed path
	assetPath = map[string]string{} // file name → hashed path
)

func init() {
	types := map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
	names, err := fs.Glob(files, "assets/*")
	if err != nil {
		panic(err)
	}
	for _, name := range names {
		body, err := files.ReadFile(name)
		if err != nil {
			panic(err)
		}
		base := strings.TrimPrefix(name, "assets/")
		dot := strings.LastIndexByte(base, '.')
		sum := sha256.Sum256(body)
		p := "/assets/" + base[:dot] + "-" + hex.EncodeToString(sum[:6]) + base[dot:]
		assets[p] = asset{path: p, contentType: types[base[dot:]], body: body}
		assetPath[base] = p
	}
}

// Asset is one of the pages' files, by the hashed path the pages use
// ("/assets/app-<hash>.css", "/assets/app-<hash>.js",
// "/assets/icon-<hash>.svg"), with its content type; ok is false for any
// other path. The name changes with the content, so a file may be cached
// forever (immutable).
func Asset(path string) (body []byte, contentType string, ok bool) {
	a, ok := assets[path]
	if !ok {
		return nil, "", false
	}
	return slices.Clone(a.body), a.contentType, true
}

// AssetPaths lists the hashed paths of every asset.
func AssetPaths() []string {
	var out []string
	for p := range assets {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// BrowserName sums a user agent up the way people name it: "Firefox 133
// on Linux". The whole string stays available as the element's title.
func BrowserName(ua string) string {
	find := func(names [][2]string) string {
		for _, n := range names {
			if i := strings.Index(ua, n[0]); i >= 0 {
				if n[0][len(n[0])-1] != '/' {
					return n[1]
				}
				v := ua[i+len(n[0]):]
				if j := strings.IndexAny(v, ". ;)"); j >= 0 {
					v = v[:j]
				}
				return n[1] + " " + v
			}
		}
		return ""
	}
	// Order matters: Edge and Opera say Chrome too; Chrome says Safari.
	b := find([][2]string{{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"HeadlessChrome/", "Headless Chrome"},
		{"Chrome/", "Chrome"}, {"Version/", "Safari"}, {"curl/", "curl"}})
	os := find([][2]string{{"Android", "Android"}, {"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Windows", "Windows"},
		{"Mac OS X", "macOS"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"}})
	switch {
	case b == "":
		return clean.Shorten(ua, 60)
	case os == "":
		return b
	}
	return b + " on " + os
}

// TimeText is how the pages write a time: "2026-11-26 09:14 UTC".
func TimeText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// TimeISO is a time's machine-readable form, for <time datetime>.
func TimeISO(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// WaitText says how long to wait, rounded up: "30 seconds", "1 minute",
// "5 minutes".
func WaitText(d time.Duration) string {
	if d <= 0 {
		return "a moment"
	}
	if d <= time.Minute {
		s := int((d + time.Second - 1) / time.Second)
		return plural(s, "second")
	}
	return plural(int((d+time.Minute-1)/time.Minute), "minute")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// SecretGroups writes a base32 secret in groups of four for reading it
// into an app by hand.
func SecretGroups(s string) string {
	var b strings.Builder
	for i, r := range strings.ToUpper(strings.TrimRight(s, "=")) {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// field is one labelled input of a form, for the templates of
// parts.html ("field" is a required "input"). Note is said after the
// label, muted ("optional"); Spell is the input's spellcheck.
type field struct {
	Name, Label, Note, Type, Value, Auto, Spell, Hint, Mode string
	Errors                                                  FormErrors
	Required                                                bool
}

// Mandatory is the field as a required input.
func (f field) Mandatory() field {
	f.Required = true
	return f
}

// newField builds a field from name/value pairs.
func newField(kv ...any) (field, error) {
	var f field
	if len(kv)%2 != 0 {
		return f, fmt.Errorf("webui: field: odd arguments")
	}
	for i := 0; i < len(kv); i += 2 {
		k, _ := kv[i].(string)
		if k == "Errors" {
			e, ok := kv[i+1].(FormErrors)
			if !ok {
				return f, fmt.Errorf("webui: field: Errors is %T", kv[i+1])
			}
			f.Errors = e
			continue
		}
		v, ok := kv[i+1].(string)
		if !ok {
			return f, fmt.Errorf("webui: field: %s is %T", k, kv[i+1])
		}
		switch k {
		case "Name":
			f.Name = v
		case "Label":
			f.Label = v
		case "Note":
			f.Note = v
		case "Spell":
			f.Spell = v
		case "Type":
			f.Type = v
		case "Value":
			f.Value = v
		case "Auto":
			f.Auto = v
		case "Hint":
			f.Hint = v
		case "Mode":
			f.Mode = v
		default:
			return f, fmt.Errorf("webui: field: unknown key %q", k)
		}
	}
	if f.Type == "" {
		f.Type = "text"
	}
	return f, nil
}

// describedBy is an input's aria-describedby: its hint and its error.
func (f field) DescribedBy() string {
	var ids []string
	if f.Hint != "" {
		ids = append(ids, "hint-"+f.Name)
	}
	if f.Errors.Field(f.Name) != "" {
		ids = append(ids, "err-"+f.Name)
	}
	return strings.Join(ids, " ")
}

var funcs = template.FuncMap{
	"asset":   func(name string) string { return assetPath[name] },
	"iso":     TimeISO,
	"when":    TimeText,
	"wait":    WaitText,
	"groups":  SecretGroups,
	"browser": BrowserName,
	// png is a PNG as a data: URL for an <img> (the CSP allows data:
	// images); the bytes are ours, made by the server.
	"png": func(b []byte) template.URL {
		return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b))
	},
	"field":  newField,
	"scopes": func() []account.Scope { return account.Scopes },
	"roles":  func() []account.Role { return account.Roles },
	"grants": func(r account.Role, s account.Scope) bool { return r.Grants(s) },
	"granted": func(r account.Role) []account.Scope {
		var out []account.Scope
		for _, s := range account.Scopes {
			if r.Grants(s) {
				out = append(out, s)
			}
		}
		return out
	},
	"manages": func(r account.Role) bool { return r.ManagesKeys() },
	"has":     func(ss []account.Scope, s account.Scope) bool { return slices.Contains(ss, s) },
	"scopeID": func(s account.Scope) string {
		return "scope-" + strings.NewReplacer(":", "-", "_", "-").Replace(string(s))
	},
	"scopeSay": scopeWords,
	"docs":     func() string { return APIDocsPath },
	"keyRows": func(s Shell, rows []KeyRow, caption string, others bool) keyTable {
		return keyTable{WorkspaceID: s.WorkspaceID, Caption: caption, Rows: rows, ShowCreator: others}
	},
	"join": func(ss []account.Scope) string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = string(s)
		}
		return strings.Join(out, ", ")
	},
}

// keyTable is a list of keys for the "keytable" template; the creator's
// column is only in the list of other members' keys (one's own keys are
// one's own).
type keyTable struct {
	WorkspaceID, Caption string
	Rows                 []KeyRow
	ShowCreator          bool
}

// scopeWords says what a scope allows, for the workspace's home.
func scopeWords(s account.Scope) string {
	return map[account.Scope]string{
		account.ScopeMonitorsRead:       "see monitors and heartbeats",
		account.ScopeMonitorsWrite:      "create, change and delete monitors and heartbeats",
		account.ScopeIncidentsRead:      "see incidents",
		account.ScopeIncidentsWrite:     "open, update and resolve incidents",
		account.ScopeMetricsRead:        "read response times and uptime",
		account.ScopeStatusPagesRead:    "see status pages",
		account.ScopeStatusPagesWrite:   "create and change status pages",
		account.ScopeNotificationsRead:  "see notification channels",
		account.ScopeNotificationsWrite: "create and change notification channels",
	}[s]
}

// pages are the templates, each parsed with the layout and the
// partials: every file named parts.html or *_parts.html.
var pages = func() map[string]*template.Template {
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		panic(err)
	}
	shared := []string{"templates/layout.html"}
	for _, name := range names {
		if strings.HasSuffix(name, "/parts.html") || strings.HasSuffix(name, "_parts.html") {
			shared = append(shared, name)
		}
	}
	out := map[string]*template.Template{}
	for _, name := range names {
		if slices.Contains(shared, name) {
			continue
		}
		base := strings.TrimPrefix(name, "templates/")
		out[base] = template.Must(template.New(base).Funcs(funcs).Funcs(monitorFuncs).Funcs(incidentFuncs).ParseFS(files, append(shared, name)...))
	}
	return out
}()

func execute(name string, v any) ([]byte, error) {
	var b bytes.Buffer
	if err := pages[name].ExecuteTemplate(&b, "page", v); err != nil {
		return nil, fmt.Errorf("webui: render %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// Minimal reports whether the page gets the layout without navigation:
// for people not signed in, or still signing in.
func (s Shell) Minimal() bool { return s.bare || s.Email == "" }

// Home is where the product name in the header leads.
func (s Shell) Home() string {
	if s.WorkspaceID != "" {
		return "/w/" + s.WorkspaceID + "/"
	}
	return "/workspaces"
}

// RenderSignIn renders GET/POST /sign-in.
func RenderSignIn(v SignIn) ([]byte, error) {
	v.Shell.bare = true
	return execute("signin.html", v)
}

// RenderTwoFactor renders GET/POST /sign-in/two-factor.
func RenderTwoFactor(v TwoFactor) ([]byte, error) {
	v.Shell.bare = true
	return execute("twofactor.html", v)
}

// RenderPassword renders GET/POST /account/password.
func RenderPassword(v Password) ([]byte, error) { return execute("password.html", v) }

// RenderAccount renders GET /account.
func RenderAccount(v Account) ([]byte, error) { return execute("account.html", v) }

// RenderTwoFactorSetup renders GET/POST /account/two-factor/setup.
func RenderTwoFactorSetup(v TwoFactorSetup) ([]byte, error) {
	return execute("twofactor_setup.html", v)
}

// RenderRecoveryCodes renders the recovery codes after a second factor
// was confirmed.
func RenderRecoveryCodes(v RecoveryCodes) ([]byte, error) {
	return execute("recovery_codes.html", v)
}

// RenderWorkspaces renders GET /workspaces.
func RenderWorkspaces(v Workspaces) ([]byte, error) { return execute("workspaces.html", v) }

// RenderWorkspaceHome renders GET /w/{id}/.
func RenderWorkspaceHome(v WorkspaceHome) ([]byte, error) { return execute("home.html", v) }

// RenderKeys renders GET /w/{id}/keys.
func RenderKeys(v Keys) ([]byte, error) { return execute("keys.html", v) }

// RenderKeyCreated renders a new key's secret, once.
func RenderKeyCreated(v KeyCreated) ([]byte, error) { return execute("key_created.html", v) }

// RenderMembers renders GET /w/{id}/members.
func RenderMembers(v Members) ([]byte, error) { return execute("members.html", v) }

// RenderInviteCreated renders a new invitation's link, once.
func RenderInviteCreated(v InviteCreated) ([]byte, error) {
	return execute("invite_created.html", v)
}

// RenderInvite renders GET/POST /invite/{token}.
func RenderInvite(v Invite) ([]byte, error) { return execute("invite.html", v) }

// RenderInviteInvalid renders the page of an invitation that does not
// work (unknown, used, revoked or expired).
func RenderInviteInvalid(v InviteInvalid) ([]byte, error) {
	return execute("invite_invalid.html", v)
}

// RenderError renders an error page. Title and Message default by Status.
func RenderError(v Error) ([]byte, error) {
	title, msg := errorWords(v.Status)
	if v.Title == "" {
		v.Title = title
	}
	if v.Message == "" {
		v.Message = msg
	}
	return execute("error.html", v)
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
