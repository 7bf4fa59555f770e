package console_test

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/web/console"
	"golang.org/x/net/html"
)

func renderPage(t *testing.T, p uiPage) string {
	t.Helper()
	b, err := p.render()
	if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	return string(b)
}

func TestPagesMarkup(t *testing.T) {
	for _, p := range pages() {
		t.Run(p.name, func(t *testing.T) {
			out := renderPage(t, p)
			for _, want := range p.want {
				if !strings.Contains(out, want) {
					t.Errorf("lacks %q", want)
				}
			}
			if !strings.Contains(out, "<h1>"+escapedText(p.heading)) && !strings.Contains(out, ">"+escapedText(p.heading)+"</h1>") {
				t.Errorf("no heading %q", p.heading)
			}
			for _, want := range []string{`<html lang="en">`, `<a class="skip" href="#main">`, `<main id="main"`, ` · Tocsin</title>`,
				`<meta name="viewport"`, `aria-live="polite"`} {
				if !strings.Contains(out, want) {
					t.Errorf("layout lacks %q", want)
				}
			}
			checkMarkup(t, out)
		})
	}
}

// escapedText is how html/template writes a heading's text.
func escapedText(s string) string {
	return strings.NewReplacer("&", "&amp;", "'", "&#39;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// checkMarkup holds the rules the pages keep everywhere: nothing inline
// for the CSP, POST forms to local paths, a label for every control,
// aria-describedby pointing at what exists, unique ids, table headers
// with a scope.
func checkMarkup(t reporter, out string) {
	t.Helper()
	for _, bad := range []string{" style=", "<style", "javascript:"} {
		if strings.Contains(strings.ToLower(out), bad) {
			t.Errorf("output contains %q", bad)
		}
	}
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Errorf("parse: %v", err)
		return
	}
	ids := map[string]int{}
	labelled := map[string]bool{}
	var describedBy []string
	var controls []*html.Node
	var walk func(*html.Node, bool)
	walk = func(n *html.Node, inLabel bool) {
		if n.Type == html.ElementNode {
			a := attrs(n)
			for k := range a {
				if strings.HasPrefix(k, "on") {
					t.Errorf("<%s> has an event-handler attribute %s", n.Data, k)
				}
			}
			if id, ok := a["id"]; ok {
				ids[id]++
			}
			if v, ok := a["aria-describedby"]; ok {
				describedBy = append(describedBy, strings.Fields(v)...)
			}
			switch n.Data {
			case "script":
				if a["src"] == "" || n.FirstChild != nil {
					t.Errorf("an inline script")
				}
				if !strings.HasPrefix(a["src"], "/assets/") {
					t.Errorf("script from %q", a["src"])
				}
			case "link":
				if !strings.HasPrefix(a["href"], "/assets/") {
					t.Errorf("<link> to %q", a["href"])
				}
			case "form":
				// Every form POSTs, but a search, which changes nothing.
				if a["method"] != "post" && (a["method"] != "get" || a["role"] != "search") {
					t.Errorf("a form with method %q (every form POSTs, a search GETs)", a["method"])
				}
				if !strings.HasPrefix(a["action"], "/") || strings.HasPrefix(a["action"], "//") {
					t.Errorf("a form to %q", a["action"])
				}
			case "a":
				if h := a["href"]; !strings.HasPrefix(h, "/") && !strings.HasPrefix(h, "#") || strings.HasPrefix(h, "//") {
					t.Errorf("a link to %q", h)
				}
			case "label":
				if f := a["for"]; f != "" {
					labelled[f] = true
				}
				inLabel = true
			case "th":
				if a["scope"] != "col" && a["scope"] != "row" {
					t.Errorf("<th> without scope")
				}
			case "input", "select", "textarea", "button":
				if n.Data == "input" && a["type"] == "hidden" || a["aria-hidden"] == "true" {
					break
				}
				if n.Data == "button" {
					if a["type"] == "" {
						t.Errorf("a button without a type")
					}
					break
				}
				if !inLabel && a["aria-label"] == "" {
					controls = append(controls, n)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inLabel)
		}
	}
	walk(doc, false)
	for id, n := range ids {
		if n > 1 {
			t.Errorf("id %q used %d times", id, n)
		}
	}
	for _, id := range describedBy {
		if ids[id] == 0 {
			t.Errorf("aria-describedby names %q, which is not there", id)
		}
	}
	for _, c := range controls {
		if a := attrs(c); !labelled[a["id"]] {
			t.Errorf("<%s name=%q> has no label", c.Data, a["name"])
		}
	}
}

func attrs(n *html.Node) map[string]string {
	m := map[string]string{}
	for _, a := range n.Attr {
		m[a.Key] = a.Val
	}
	return m
}

// reporter is what checkMarkup reports to: a test, or a reportRecorder.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// reportRecorder notes that something was reported.
type reportRecorder struct{ failed bool }

func (r *reportRecorder) Errorf(string, ...any) { r.failed = true }
func (r *reportRecorder) Helper()               {}

func TestCheckMarkupSeesWhatItShould(t *testing.T) {
	for _, bad := range []string{
		`<p style="color:red">x</p>`,
		`<script>alert(1)</script>`,
		`<script src="https://cdn.example/x.js"></script>`,
		`<button type="button" onclick="x()">x</button>`,
		`<button>x</button>`,
		`<form method="get" action="/x"></form>`,
		`<form method="post" action="https://evil.example/x"></form>`,
		`<input name="q" id="q">`,
		`<input name="q" id="q" aria-describedby="nope"><label for="q">Q</label>`,
		`<table><tr><th>x</th></tr></table>`,
		`<p id="a"></p><p id="a"></p>`,
		`<a href="javascript:x()">x</a>`,
	} {
		r := &reportRecorder{}
		checkMarkup(r, `<!doctype html><html lang="en"><body>`+bad+`</body></html>`)
		if !r.failed {
			t.Errorf("checkMarkup passed %s", bad)
		}
	}
	r := &reportRecorder{}
	checkMarkup(r, `<!doctype html><html lang="en"><body><form method="post" action="/x"><label for="q">Q</label><input id="q" name="q"><button type="submit">Go</button></form>`+
		`<form method="get" action="/s" role="search"><label for="s">S</label><input id="s" name="s"><button type="submit">Find</button></form></body></html>`)
	if r.failed {
		t.Error("checkMarkup failed good markup")
	}
}

func TestMinimalAndForcedLayouts(t *testing.T) {
	for _, p := range pages() {
		out := renderPage(t, p)
		signedOut := strings.HasPrefix(p.name, "sign-in") || p.name == "two-factor" || p.name == "invite-signed-out" ||
			p.name == "invite-invalid" || p.name == "error-404"
		forced := p.name == "password-forced"
		hasNav := strings.Contains(out, `aria-label="Main"`)
		hasSwitch := strings.Contains(out, `action="/switch-workspace"`)
		hasSignOut := strings.Contains(out, `action="/sign-out"`)
		switch {
		case signedOut:
			if hasNav || hasSwitch || strings.Contains(out, `href="/account"`) {
				t.Errorf("%s: a signed-out page shows navigation", p.name)
			}
		case forced:
			if hasNav || hasSwitch || strings.Contains(out, `href="/account"`) || strings.Contains(out, `href="/workspaces"`) || strings.Contains(out, `href="/w/`) || !hasSignOut {
				t.Errorf("%s: the forced password page offers more than signing out", p.name)
			}
		default:
			if !hasNav || !hasSwitch || !hasSignOut || !strings.Contains(out, `href="/account"`) || !strings.Contains(out, `href="/workspaces"`) {
				t.Errorf("%s: nav %v, switcher %v, sign-out %v", p.name, hasNav, hasSwitch, hasSignOut)
			}
			for _, want := range []string{`<select id="switch-workspace" name="workspace">`, `<option value="ws_01JDQ4K8Z6" selected>Acme Cloud (`,
				`<option value="ws_01JDQ4N7XC">Globex &lt;Ops&gt; &amp; Co (viewer)</option>`, `<span class="who">`,
				`<a href="/w/ws_01JDQ4K8Z6/monitors"`, `<a href="/w/ws_01JDQ4K8Z6/heartbeats"`} {
				if !strings.Contains(out, want) {
					t.Errorf("%s: header lacks %q", p.name, want)
				}
			}
			if regexp.MustCompile(`<li class="soon"><span>[^<]*<a `).MatchString(out) {
				t.Errorf("%s: the placeholders are links", p.name)
			}
		}
	}
}

func TestPasswordsAreNotRefilled(t *testing.T) {
	// The view models have no password fields; a password input never
	// carries a value.
	for _, p := range pages() {
		doc, err := html.Parse(strings.NewReader(renderPage(t, p)))
		if err != nil {
			t.Fatal(err)
		}
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			if a := attrs(n); n.Type == html.ElementNode && n.Data == "input" && a["type"] == "password" {
				if _, ok := a["value"]; ok {
					t.Errorf("%s: password field %q has a value", p.name, a["name"])
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
	}
}

func TestConfirmations(t *testing.T) {
	mine, _ := keyRows()
	b, err := console.Render(console.Keys{Shell: shell(console.NavKeys), Mine: mine})
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	// Two active keys of three: two revoke forms, each asking first.
	if n := strings.Count(out, `/revoke" data-confirm="Revoke the key`); n != 2 {
		t.Errorf("%d revoke forms with data-confirm, want 2 (the revoked key gets none)", n)
	}
	if strings.Contains(out, "key_01JDQ5C/revoke") {
		t.Error("a revoked key offers to be revoked")
	}
	b, err = console.Render(console.Keys{Shell: viewer(console.NavKeys), Mine: mine})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "Other members") {
		t.Error("a viewer is shown other members' keys")
	}
}

func TestAssets(t *testing.T) {
	paths := console.AssetPaths()
	if len(paths) != 4 {
		t.Fatalf("assets %v, want the stylesheet, the scripts (the app's and the status page editor's) and the icon", paths)
	}
	out := renderPage(t, pages()[0])
	// The editor's script is on the status page editor only.
	for _, p := range pages() {
		if editor := strings.Contains(renderPage(t, p), "/assets/editor-"); editor != (p.name == "status-page-editor") {
			t.Errorf("%s: loads the editor's script: %v", p.name, editor)
		} else if editor {
			out += renderPage(t, p)
		}
	}
	for _, p := range paths {
		body, typ, ok := console.Asset(p)
		if !ok || len(body) == 0 || typ == "" {
			t.Errorf("Asset(%q) = %d bytes, %q, %v", p, len(body), typ, ok)
		}
		if !strings.Contains(out, `"`+p+`"`) {
			t.Errorf("the pages do not reference %s", p)
		}
		if !strings.HasPrefix(p, "/assets/") || strings.Count(p, "-") != 1 {
			t.Errorf("asset path %q is not /assets/name-hash.ext", p)
		}
		if strings.HasSuffix(p, ".js") {
			if n := bytes.Count(body, []byte("\n")); n > 60 {
				t.Errorf("%s is %d lines", p, n)
			}
			if typ != "text/javascript; charset=utf-8" {
				t.Errorf("script type %q", typ)
			}
		}
	}
	for _, p := range []string{"/assets/app.css", "/assets/app-000000000000.css", "/assets/", "", "/assets/../render.go"} {
		if _, _, ok := console.Asset(p); ok {
			t.Errorf("Asset(%q) found something", p)
		}
	}
	// The copy is the caller's.
	body, _, _ := console.Asset(paths[0])
	body[0] ^= 0xff
	if again, _, _ := console.Asset(paths[0]); again[0] == body[0] {
		t.Error("Asset hands out its own bytes")
	}
}

func TestHelpers(t *testing.T) {
	when := time.Date(2026, 11, 26, 10, 14, 0, 0, time.FixedZone("CET", 3600))
	if got := console.TimeText(when); got != "2026-11-26 09:14 UTC" {
		t.Errorf("TimeText = %q", got)
	}
	if got := console.TimeISO(when); got != "2026-11-26T09:14:00Z" {
		t.Errorf("TimeISO = %q", got)
	}
	for d, want := range map[time.Duration]string{0: "a moment", time.Second: "1 second", 1500 * time.Millisecond: "2 seconds",
		time.Minute: "60 seconds", 61 * time.Second: "2 minutes", time.Hour: "60 minutes"} {
		if got := console.WaitText(d); got != want {
			t.Errorf("WaitText(%v) = %q, want %q", d, got, want)
		}
	}
	if got := console.SecretGroups("jbswy3dpehpk3pxp=="); got != "JBSW Y3DP EHPK 3PXP" {
		t.Errorf("SecretGroups = %q", got)
	}
	var e console.FormErrors
	if e.Any() || e.SummaryText() != "" || e.Field("x") != "" {
		t.Error("zero FormErrors is an error")
	}
	e.Fields = map[string]string{"name": "Too long."}
	if !e.Any() || e.SummaryText() == "" || e.Field("name") != "Too long." {
		t.Errorf("FormErrors %+v", e)
	}
	if !slices.Contains(strings.Split(console.CSP, "; "), "script-src 'self'") || !strings.Contains(console.CSP, "default-src 'none'") {
		t.Errorf("CSP %q", console.CSP)
	}
}

func TestErrorDefaults(t *testing.T) {
	for status, want := range map[int]string{403: "Not allowed", 404: "Page not found", 429: "Too many requests", 500: "Something went wrong", 502: "Something went wrong"} {
		b, err := console.Render(console.Error{Shell: signedOut(), Status: status})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "<h1>"+want+"</h1>") || !strings.Contains(string(b), "<title>"+want+" · Tocsin</title>") {
			t.Errorf("%d: no %q", status, want)
		}
	}
}

func TestBrowserName(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36":                           "Headless Chrome 156 on Linux",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0":           "Edge 131 on Windows",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14.7; rv:133.0) Gecko/20100101 Firefox/133.0":                                                     "Firefox 133 on macOS",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1": "Safari 18 on iPhone",
		"Mozilla/5.0 (Linux; Android 15) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36":                            "Chrome 131 on Android",
		"curl/8.11.0":   "curl 8",
		"something odd": "something odd",
	} {
		if got := console.BrowserName(ua); got != want {
			t.Errorf("BrowserName(%q) = %q, want %q", ua, got, want)
		}
	}
}
