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
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/monitor"
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

// A view is a page's view model: it names its template. A view that
// has defaults (a form's mode, an error page's words) fills them in
// withDefaults before it is rendered.
type view interface{ template() string }

// render renders the page v: its template, with the layout and the
// partials.
func render(v view) ([]byte, error) {
	if d, ok := v.(interface{ withDefaults() view }); ok {
		v = d.withDefaults()
	}
	return execute(v.template(), v)
}

func execute(name string, v any) ([]byte, error) {
	var b bytes.Buffer
	if err := pages[name].ExecuteTemplate(&b, "page", v); err != nil {
		return nil, fmt.Errorf("console: render %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// monitorFuncs are the templates' helpers for the monitor pages.
var monitorFuncs = template.FuncMap{
	"pct":          PercentText,
	"ms":           LatencyText,
	"msp":          func(v *float64) string { return millisText(v) },
	"every":        IntervalText,
	"stateText":    StateText,
	"stateClass":   stateClass,
	"resultClass":  func(r monitor.Result) string { return stateClass(monitor.State(strings.ToUpper(string(r)))) },
	"latencyChart": LatencyChart,
	"uptimeBar":    UptimeBar,
	"states":       func() []monitor.State { return monitor.States },
	"types":        func() []monitor.Type { return monitor.Types },
	"lower":        func(s monitor.State) string { return strings.ToLower(string(s)) },
	"budget":       budgetText,
	"rate":         func(v *float64) string { return rateText(v) },
	"target":       func(t float64) string { return strconv.FormatFloat(math.Round(t*1e5)/1e3, 'f', -1, 64) + " %" },
	"left":         leftText,
}

// incidentFuncs are the templates' helpers for these pages.
var incidentFuncs = template.FuncMap{
	"lasted":      LastedText,
	"recurrence":  RecurrenceText,
	"incClass":    incidentClass,
	"in":          func(list []string, s string) bool { return slices.Contains(list, s) },
	"newStatuses": func() []string { return IncidentStatuses[:3] },
	"local":       func(t time.Time, tz string) string { return LocalText(t, tz) },
	"dict":        dict,
	// statusChoices are the statuses an update may give: a resolved
	// incident takes notes with status resolved only.
	"statusChoices": func(open bool) []string {
		if open {
			return IncidentStatuses
		}
		return IncidentStatuses[3:]
	},
	"updateHint": func(public bool) string {
		if public {
			return "Status page readers see it exactly as written."
		}
		return "Resolved resolves the incident."
	},
}

// IncidentStatuses are the statuses an update may give, in order.
var IncidentStatuses = []string{"investigating", "identified", "monitoring", "resolved"}

// servePage answers with a signed-in page: build gets the shell for nav
// and makes the page's view model, reading what it needs.
func (w *Server) servePage(q *request, nav Nav, status int, build func(Shell) (view, error)) error {
	s, err := w.shell(q, nav)
	if err != nil {
		return err
	}
	v, err := build(s)
	if err != nil {
		return err
	}
	b, err := render(v)
	if err != nil {
		return err
	}
	w.html(q.w, q.r, status, b, nil)
	return nil
}

// serveBare answers with a page outside the signed-in shell (signing in,
// an invitation).
func (w *Server) serveBare(q *request, status int, v view) error {
	b, err := render(v)
	w.html(q.w, q.r, status, b, err)
	return nil
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
