package public

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/statuspage"
)

// The HTML is built for a strict Content-Security-Policy (default-src
// 'none'; style-src 'self'; img-src 'self'; form-action 'self'): no
// script at all, no inline style, no style attribute; every asset comes
// from the page's own path. The stylesheet is one embedded file; the
// page's accent colour comes from a small generated stylesheet (Theme).

//go:embed templates/*.html assets/style.css assets/icon.svg
var files embed.FS

// Location says where the page lives.
type Location struct {
	// Base is the path prefix of the page's URLs: "/status/acme", or ""
	// when the page is served at the root of its custom domain. Every
	// link and asset URL of a rendered page starts with it.
	Base string
}

func (o Location) home() string {
	if o.Base == "" {
		return "/"
	}
	return o.Base
}

var (
	stylesheet     = mustRead("assets/style.css")
	stylesheetPath = "/assets/style-" + shortHash(stylesheet) + ".css"
	icon           = mustRead("assets/icon.svg")
	iconPath       = "/assets/icon-" + shortHash(icon) + ".svg"
	templates      = template.Must(template.New("").Funcs(funcs).ParseFS(files, "templates/*.html"))
)

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return b
}

func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// Stylesheet is the pages' CSS, served at Base+StylesheetPath().
func Stylesheet() []byte { return slices.Clone(stylesheet) }

// StylesheetPath is the stylesheet's path under a page's Base,
// "/assets/style-<hash>.css": the name changes with the content, so it
// may be cached forever (immutable).
func StylesheetPath() string { return stylesheetPath }

// Asset is a file of the pages under a page's Base ("/assets/…": the
// stylesheet and the icon a page without a logo shows in its tab), with
// its content type; ok is false for any other path. Asset names carry a
// hash of their content, so they may be cached forever (immutable).
func Asset(path string) (body []byte, contentType string, ok bool) {
	switch path {
	case stylesheetPath:
		return Stylesheet(), "text/css; charset=utf-8", true
	case iconPath:
		return slices.Clone(icon), "image/svg+xml", true
	}
	return nil, "", false
}

// IconPath is the path of the icon under a page's Base.
func IconPath() string { return iconPath }

// DefaultAccent is the accent of a page that chose none.
const DefaultAccent = "#2f6feb"

var (
	accentRE   = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
	shortHexRE = regexp.MustCompile(`^#[0-9a-fA-F]{3}$`)
)

func accentOf(accent string) string {
	if !accentRE.MatchString(accent) {
		return DefaultAccent
	}
	return strings.ToLower(accent)
}

// Theme is the stylesheet that carries a page's accent colour (a page
// saved with an invalid accent gets the default). The accent only
// decorates (the header's rule, the banner's edge), so text contrast
// never depends on it.
func Theme(accent string) []byte {
	return []byte(":root{--accent:" + accentOf(accent) + "}\n")
}

// ThemePath is the theme's path under a page's Base,
// "/theme-<hash of the accent>.css": cacheable forever, like the
// stylesheet.
func ThemePath(accent string) string {
	return "/theme-" + shortHash(Theme(accent)) + ".css"
}

// view is what the templates see.
type view struct {
	Page      statuspage.Page
	Base      string
	Home      string
	Style     string
	Theme     string
	Logo      string
	Icon      string
	Headline  statuspage.Headline
	Active    []statuspage.Maintenance
	Scheduled []statuspage.Maintenance
	Names     map[string]string // component id → name
	// History
	Month        time.Time
	Past         []statuspage.Incident
	Older, Newer time.Time
	// Password
	Failed bool
}

func newView(p statuspage.Page, o Location) view {
	v := view{
		Page:  p,
		Base:  o.Base,
		Home:  o.home(),
		Style: o.Base + stylesheetPath,
		Theme: o.Base + ThemePath(p.Accent),
		Names: map[string]string{},
	}
	v.Icon = o.Base + iconPath
	if p.LogoVersion != "" {
		v.Logo = o.Base + "/logo?v=" + p.LogoVersion
		v.Icon = v.Logo
	}
	for _, g := range p.Groups {
		for _, c := range g.Components {
			v.Names[c.ID] = c.Name
		}
	}
	return v
}

func execute(name string, v view) ([]byte, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, v); err != nil {
		return nil, fmt.Errorf("statuspage: render %s: %w", name, err)
	}
	return b.Bytes(), nil
}

var funcs = template.FuncMap{
	"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"when":     func(t time.Time) string { return t.UTC().Format("2 Jan 2006, 15:04 UTC") },
	"date":     func(t time.Time) string { return t.UTC().Format("2 Jan 2006") },
	"monthOf":  func(t time.Time) string { return t.UTC().Format("January 2006") },
	"monthArg": func(t time.Time) string { return t.UTC().Format("2006-01") },
	"bar":      bar,
	"uptime":   statuspage.UptimeText,
	"newest":   newestFirst,
	"lower":    strings.ToLower,
	"groupID":  func(i int) string { return fmt.Sprintf("group-%d", i+1) },
	"affects": func(names map[string]string, ids []string) string {
		var out []string
		for _, id := range ids {
			if n, ok := names[id]; ok {
				out = append(out, n)
			}
		}
		return strings.Join(out, ", ")
	},
	"lastDays": func(days []statuspage.Day) string {
		if len(days) == 1 {
			return "today"
		}
		return fmt.Sprintf("%d days ago", len(days)-1)
	},
}

// bar is the items of a component's bar: each day a coloured square with
// its text alternative, visually hidden and as a title. It is written
// here rather than in the template, because 4,500 days through the
// template's escapers cost ten times more (a page of 50 components); the
// text is escaped here, and the class comes from a fixed set.
func bar(days []statuspage.Day) template.HTML {
	var b strings.Builder
	b.Grow(len(days) * 200)
	for _, d := range days {
		text := template.HTMLEscapeString(statuspage.DayText(d))
		b.WriteString(`<li class="day `)
		b.WriteString(statuspage.DayClass(d))
		b.WriteString(`" title="`)
		b.WriteString(text)
		b.WriteString(`"><span class="vh">`)
		b.WriteString(text)
		b.WriteString(`</span></li>`)
	}
	return template.HTML(b.String())
}

// newestFirst lists an incident's updates newest first: the latest word
// is what a reader came for.
func newestFirst(us []statuspage.Update) []statuspage.Update {
	out := slices.Clone(us)
	slices.Reverse(out)
	return out
}
