package public_test

import (
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/statuspage"
	"github.com/tocsin/tocsin/internal/web/public"
	"golang.org/x/net/html"
)

var acme = public.Location{Base: "/status/acme"}

func render(t *testing.T, p statuspage.Page, o public.Location) string {
	t.Helper()
	b, err := public.RenderPage(p, o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPageSaysEveryStatusInWords(t *testing.T) {
	html := render(t, fixture(), acme)
	for _, want := range []string{
		`s-operational">operational<`,
		`s-degraded">degraded performance<`,
		`s-outage">outage<`,
		`s-maintenance">under maintenance<`,
		`s-no_data">no data<`,
		`s-not_monitored">not monitored<`,
		`<h2 id="overall">Partial outage</h2>`,
		`<title>Acme Cloud: Partial outage</title>`,
		`<html lang="en">`,
		"<header", "<main", "<footer",
		"Powered by Tocsin",
		`<h3 id="group-1">Website</h3>`, `<h3 id="group-3">Background jobs</h3>`,
		// the open incident, its updates newest first with their stage
		"REST API returns errors",
		"<strong>Identified</strong> <time datetime=\"2026-11-26T09:10:00Z\">26 Nov 2026, 09:10 UTC</time>",
		// maintenance, active and scheduled, in UTC
		"<strong>In progress</strong>", "<strong>Scheduled</strong> <time datetime=\"2026-11-28T09:30:00Z\">28 Nov 2026, 09:30 UTC</time>",
		"Affects REST API, Webhooks",
		// uptime figures
		"99.95 % uptime", `<span class="uptime">no data</span>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if i, j := strings.Index(html, "<strong>Identified</strong>"), strings.Index(html, "<strong>Investigating</strong>"); i < 0 || j < i {
		t.Errorf("updates are not newest first: Identified at %d, Investigating at %d", i, j)
	}
}

func TestHeadline(t *testing.T) {
	page := func(ss ...statuspage.Status) statuspage.Page {
		var g statuspage.Group
		for i, s := range ss {
			g.Components = append(g.Components, statuspage.Component{ID: string(rune('a' + i)), Name: "c", Status: s})
		}
		return statuspage.Page{Groups: []statuspage.Group{g}}
	}
	op, dg, dn, mt, nd, nm := statuspage.Operational, statuspage.Degraded, statuspage.Outage, statuspage.UnderMaint, statuspage.NoData, statuspage.NotMonitored
	withIncident := page(op, op)
	withIncident.Incidents = []statuspage.Incident{{ID: "inc_1", Title: "Slow", Stage: statuspage.Investigating}}
	withMaint := page(op, op)
	withMaint.Maintenance = []statuspage.Maintenance{{ID: "mw_1", Active: true}}
	scheduledOnly := page(op, op)
	scheduledOnly.Maintenance = []statuspage.Maintenance{{ID: "mw_1"}}
	for _, tc := range []struct {
		name      string
		p         statuspage.Page
		sentence  string
		indicator statuspage.Indicator
	}{
		{"all up", page(op, op, nm), "All systems operational", statuspage.IndicatorNone},
		{"one down of four", page(op, op, op, dn), "Partial outage", statuspage.IndicatorMajor},
		{"half down is partial", page(op, dn), "Partial outage", statuspage.IndicatorMajor},
		{"most down", page(dn, dn, op), "Major outage", statuspage.IndicatorCritical},
		{"all down, paused ignored", page(dn, nm, nm), "Major outage", statuspage.IndicatorCritical},
		{"degraded", page(op, dg, nd), "Degraded performance", statuspage.IndicatorMinor},
		{"maintenance", page(op, mt), "Under maintenance", statuspage.IndicatorMaintenance},
		{"some without data", page(op, nd), "No data for some systems", statuspage.IndicatorUnknown},
		{"none with data", page(nd, nd), "No data", statuspage.IndicatorUnknown},
		{"nothing monitored", page(nm), "No data", statuspage.IndicatorUnknown},
		{"no components", page(), "No data", statuspage.IndicatorUnknown},
		{"open incident", withIncident, "Incident in progress", statuspage.IndicatorMinor},
		{"active maintenance", withMaint, "Under maintenance", statuspage.IndicatorMaintenance},
		{"scheduled maintenance only", scheduledOnly, "All systems operational", statuspage.IndicatorNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.p.Headline()
			if h.Sentence != tc.sentence || h.Indicator != tc.indicator {
				t.Errorf("Headline = %q (%s), want %q (%s)", h.Sentence, h.Indicator, tc.sentence, tc.indicator)
			}
			if html := render(t, tc.p, acme); !strings.Contains(html, ">"+tc.sentence+"</h2>") {
				t.Errorf("page does not say %q", tc.sentence)
			}
		})
	}
}

func TestPercentNeverRoundsUp(t *testing.T) {
	for in, want := range map[float64]string{
		1: "100 %", 0.99999: "99.999 %", 0.9995: "99.95 %", 0.99951: "99.951 %",
		0.5: "50.00 %", 0.123456: "12.345 %", 0: "0 %", 0.97: "97.00 %",
	} {
		if got := statuspage.Percent(in); got != want {
			t.Errorf("Percent(%v) = %q, want %q", in, got, want)
		}
	}
}

var dayRE = regexp.MustCompile(`<li class="day (d-[a-z]+)" title="([^"]*)"><span class="vh">([^<]*)</span></li>`)

func TestEveryDayHasItsTextAlternative(t *testing.T) {
	html := render(t, fixture(), acme)
	days := dayRE.FindAllStringSubmatch(html, -1)
	if len(days) != 12*90 {
		t.Fatalf("found %d days with a title and hidden text, want %d", len(days), 12*90)
	}
	if n := strings.Count(html, `<li class="day `); n != len(days) {
		t.Errorf("%d day items, %d of them with text alternatives", n, len(days))
	}
	classes := map[string]bool{}
	for _, d := range days {
		classes[d[1]] = true
		if d[2] != d[3] {
			t.Errorf("title %q and hidden text %q differ", d[2], d[3])
		}
		if !strings.Contains(d[3], "available") && !strings.Contains(d[3], "no data") {
			t.Errorf("day %q gives no availability in words", d[3])
		}
	}
	for _, c := range []string{"d-ok", "d-degraded", "d-partial", "d-down", "d-maint", "d-none"} {
		if !classes[c] {
			t.Errorf("no day is coloured %s", c)
		}
	}
	for _, want := range []string{
		"Thu 26 Nov 2026: 89.58 % available, down 2 h 30 min. Incident: REST API returns errors.",
		"Sat 7 Nov 2026: 50.00 % available, down 12 h. Incidents: API unavailable; Database failover.",
		"Sat 29 Aug 2026: no data.",
		"degraded 1 h 35 min.",
		"maintenance 2 h.",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("no day says %q", want)
		}
	}
}

func TestDayText(t *testing.T) {
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	a := 0.99
	for _, tc := range []struct {
		d    statuspage.Day
		want string
	}{
		{statuspage.Day{Date: day}, "Sun 1 Mar 2026: no data."},
		{statuspage.Day{Date: day, Maintenance: 30 * time.Minute}, "Sun 1 Mar 2026: no data, maintenance 30 min."},
		{statuspage.Day{Date: day, Availability: &a, Down: 14*time.Minute + 24*time.Second, Degraded: 20 * time.Second},
			"Sun 1 Mar 2026: 99.00 % available, down 14 min, degraded under a minute."},
	} {
		if got := statuspage.DayText(tc.d); got != tc.want {
			t.Errorf("DayText = %q, want %q", got, tc.want)
		}
	}
}

var (
	srcRE  = regexp.MustCompile(`(?:src|href|action)="([^"]*)"`)
	linkRE = regexp.MustCompile(`<link [^>]*href="([^"]*)"`)
)

func TestURLsStartAtBase(t *testing.T) {
	for _, base := range []string{"/status/acme", ""} {
		p := fixture()
		p.LogoVersion = "v7"
		o := public.Location{Base: base}
		html := render(t, p, o)
		for _, want := range []string{
			`<link rel="stylesheet" href="` + base + public.StylesheetPath() + `">`,
			`<link rel="stylesheet" href="` + base + public.ThemePath(p.Accent) + `">`,
			`<img src="` + base + `/logo?v=v7" alt="Acme Cloud">`,
			`<link rel="alternate" type="application/atom+xml" title="Acme Cloud: incidents" href="` + base + `/history.atom">`,
			`href="` + base + `/summary.json"`,
			`<a href="` + base + `/history">Incident history</a>`,
		} {
			if !strings.Contains(html, want) {
				t.Errorf("base %q: page lacks %q", base, want)
			}
		}
		// Nothing is loaded from another host: every asset is the page's own.
		for _, m := range linkRE.FindAllStringSubmatch(html, -1) {
			if !strings.HasPrefix(m[1], base+"/") {
				t.Errorf("base %q: <link> to %q", base, m[1])
			}
		}
		for _, m := range srcRE.FindAllStringSubmatch(html, -1) {
			if strings.HasPrefix(m[1], "http") && !strings.HasPrefix(m[1], "https://acme.example/") {
				t.Errorf("base %q: URL %q of another host", base, m[1])
			}
		}
	}
}

func TestStylesheetAndThemeAreContentAddressed(t *testing.T) {
	css := public.Stylesheet()
	if !strings.Contains(string(css), "prefers-color-scheme: dark") {
		t.Error("the stylesheet has no dark mode")
	}
	if !regexp.MustCompile(`^/assets/style-[0-9a-f]{12}\.css$`).MatchString(public.StylesheetPath()) {
		t.Errorf("StylesheetPath = %q", public.StylesheetPath())
	}
	css[0] = 'X' // a copy: the served stylesheet is unchanged
	if public.Stylesheet()[0] == 'X' {
		t.Error("Stylesheet returns its own bytes")
	}
	if got := string(public.Theme("#8250DF")); got != ":root{--accent:#8250df}\n" {
		t.Errorf("Theme = %q", got)
	}
	for _, bad := range []string{"", "red", "#fff;}body{display:none", "#12345g"} {
		if got := string(public.Theme(bad)); got != ":root{--accent:"+public.DefaultAccent+"}\n" {
			t.Errorf("Theme(%q) = %q, want the default", bad, got)
		}
	}
	a, b := public.ThemePath("#8250df"), public.ThemePath("#1a7f37")
	if a == b || !regexp.MustCompile(`^/theme-[0-9a-f]{12}\.css$`).MatchString(a) {
		t.Errorf("ThemePath = %q and %q", a, b)
	}
	if public.ThemePath("#8250DF") != a {
		t.Error("an accent's case changes its theme's name")
	}
}

func TestNoScriptNoInlineStyle(t *testing.T) {
	h := history()
	pw, _ := public.RenderPassword(fixture(), acme, true)
	hist, _ := public.RenderHistory(h, acme)
	hostileHist, _ := public.RenderHistory(statuspage.History{Page: hostile(), Incidents: hostile().Incidents}, acme)
	for name, html := range map[string]string{
		"page": render(t, fixture(), acme), "history": string(hist), "password": string(pw),
		"not found": string(public.RenderNotFound()), "hostile page": render(t, hostile(), acme),
		"hostile history": string(hostileHist),
	} {
		checkMarkup(t, name, html)
	}
}

// checkMarkup parses a page as a browser would and fails on script,
// inline style, event handlers, javascript: URLs and headings that skip
// a level.
func checkMarkup(t *testing.T, name, page string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(page))
	level := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Errorf("%s: %v", name, z.Err())
			}
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		switch tok.Data {
		case "script", "style", "iframe", "object", "embed", "base":
			t.Errorf("%s: a <%s> element", name, tok.Data)
		case "h1", "h2", "h3", "h4", "h5", "h6":
			n := int(tok.Data[1] - '0')
			if n > level+1 {
				t.Errorf("%s: <%s> after <h%d>", name, tok.Data, level)
			}
			level = n
		}
		for _, a := range tok.Attr {
			switch {
			case a.Key == "style":
				t.Errorf("%s: a style attribute on <%s>", name, tok.Data)
			case strings.HasPrefix(a.Key, "on"):
				t.Errorf("%s: an event handler %s on <%s>", name, a.Key, tok.Data)
			case (a.Key == "href" || a.Key == "src" || a.Key == "action") && !strings.HasPrefix(a.Val, "/") && !strings.HasPrefix(a.Val, "#") && !strings.HasPrefix(a.Val, "https://acme.example/"):
				t.Errorf("%s: %s=%q on <%s>", name, a.Key, a.Val, tok.Data)
			}
		}
	}
}

func TestPasswordPageShowsNothingOfThePage(t *testing.T) {
	p := fixture()
	p.LogoVersion = "v1"
	for _, failed := range []bool{false, true} {
		b, err := public.RenderPassword(p, acme, failed)
		if err != nil {
			t.Fatal(err)
		}
		html := string(b)
		for _, want := range []string{
			`<form class="password" method="post" action="/status/acme/password">`,
			`<label for="password">Password</label>`,
			`type="password" id="password" name="password"`,
			`<img src="/status/acme/logo?v=v1" alt="Acme Cloud">`,
			public.ThemePath(p.Accent),
		} {
			if !strings.Contains(html, want) {
				t.Errorf("failed=%v: lacks %q", failed, want)
			}
		}
		if got := strings.Contains(html, "That password is not right") && strings.Contains(html, `aria-invalid="true"`); got != failed {
			t.Errorf("failed=%v: error shown %v", failed, got)
		}
		for _, secret := range []string{p.Description, "REST API", "Website", "Acme home", "acme.example", "Search index", "history", "summary.json", "spc_"} {
			if strings.Contains(html, secret) {
				t.Errorf("failed=%v: the password page shows %q", failed, secret)
			}
		}
	}
}

func TestHistoryPage(t *testing.T) {
	h := history()
	b, err := public.RenderHistory(h, acme)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{
		"<h2>Incident history: October 2026</h2>",
		`<article class="incident resolved" id="inc_00" aria-labelledby="inc_00-title">`,
		`<h3 id="inc_00-title">Database failover</h3>`,
		"The API works normally again.", "Traffic moved to the replica.",
		`<a href="/status/acme/history?month=2026-08" rel="prev">Older: August 2026</a>`,
		`<a href="/status/acme/history?month=2026-11" rel="next">Newer: November 2026</a>`,
		`<a href="/status/acme">Current status</a>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("history lacks %q", want)
		}
	}
	h.Incidents, h.Older, h.Newer = nil, time.Time{}, time.Time{}
	b, _ = public.RenderHistory(h, public.Location{})
	html = string(b)
	if !strings.Contains(html, "No incidents were reported in October 2026.") || strings.Contains(html, "?month=") {
		t.Errorf("an empty month without neighbours:\n%s", html)
	}
	if !strings.Contains(html, `<a href="/">Current status</a>`) {
		t.Error("on a custom domain the way home is /")
	}
}

func TestAssets(t *testing.T) {
	for _, path := range []string{public.StylesheetPath(), public.IconPath()} {
		body, typ, ok := public.Asset(path)
		if !ok || len(body) == 0 || typ == "" {
			t.Errorf("Asset(%q) = %d bytes, %q, %v", path, len(body), typ, ok)
		}
	}
	if body, _, _ := public.Asset(public.StylesheetPath()); string(body) != string(public.Stylesheet()) {
		t.Error("the stylesheet asset is not the stylesheet")
	}
	for _, path := range []string{"/assets/style.css", "/assets/../render.go", "/assets/icon.svg", ""} {
		if _, _, ok := public.Asset(path); ok {
			t.Errorf("Asset(%q) serves something", path)
		}
	}
	html := render(t, fixture(), acme)
	if !strings.Contains(html, `<link rel="icon" href="/status/acme`+public.IconPath()+`">`) {
		t.Error("a page without a logo does not name the icon")
	}
}

func TestPageWithoutUptime(t *testing.T) {
	p := fixture()
	p.ShowUptime = false
	html := render(t, p, acme)
	if strings.Contains(html, `class="bar"`) || strings.Contains(html, "uptime") {
		t.Error("a page that hides uptime shows bars or figures")
	}
	if !strings.Contains(html, `s-outage">outage<`) {
		t.Error("a page that hides uptime lost its components")
	}
}

// BenchmarkRenderPage renders a page of 50 components with 90 days each
// (the size docs/benchmarks.md measures).
func BenchmarkRenderPage(b *testing.B) {
	p := fixture()
	g := p.Groups[0]
	for len(g.Components) < 50 {
		g.Components = append(g.Components, p.Groups[1].Components...)
	}
	p.Groups = []statuspage.Group{g}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := public.RenderPage(p, acme); err != nil {
			b.Fatal(err)
		}
	}
}
