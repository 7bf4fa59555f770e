package browsertest_test

import (
	"bytes"
	"image/png"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tocsin/tocsin/internal/browsertest"
)

// The harness itself: a tab reports what the browser reports, runs
// script only when asked, takes the device and colour scheme it is
// given, and screenshots and audits the page it shows.
func TestTabInBrowser(t *testing.T) {
	axe := browsertest.Axe(t)
	pages := map[string]string{
		"/js":         `<script>document.documentElement.dataset.js = "ran"</script>`,
		"/console":    `<script>console.error("planted")</script>`,
		"/throw":      `<script>throw new Error("planted")</script>`,
		"/password":   `<form method="post"><label>Password <input type="password" name="p"></label></form>`,
		"/tall":       `<div style="height: 3000px">tall</div>`,
		"/alt":        `<img src="/nothing.png">`,
		"/inline":     `<p style="color: red">inline style</p>`,
		"/accessible": `<main><h1>Fine</h1><p>Nothing to see.</p></main>`,
		"/set-cookie": `<p>cookie set</p>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if jar := r.URL.Query().Get("jar"); r.URL.Path == "/set-cookie" && jar != "" {
			http.SetCookie(w, &http.Cookie{Name: "jar", Value: jar, Path: "/"})
		}
		if r.URL.Path == "/inline" {
			w.Header().Set("Content-Security-Policy", "default-src 'none'")
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><html lang="en"><meta name="viewport" content="width=device-width, initial-scale=1"><title>test</title><link rel="icon" href="data:,">` + body))
	}))
	t.Cleanup(srv.Close)
	browser := browsertest.Start(t)

	for _, js := range []bool{false, true} {
		tb := browsertest.OpenTab(t, browser, js)
		tb.Navigate(t, srv.URL+"/js")
		ran, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[string](`document.documentElement.dataset.js || "no"`))
		if want := map[bool]string{false: "no", true: "ran"}[js]; err != nil || ran != want {
			t.Errorf("script with js=%v: %q %v, want %q", js, ran, err, want)
		}
		if v := tb.Take(t); len(v) > 0 {
			t.Errorf("js=%v: a quiet page reported %q", js, v)
		}
	}

	// Tabs share the browser's cookies; an isolated tab has its own jar.
	shared, other, isolated := browsertest.OpenTab(t, browser, false), browsertest.OpenTab(t, browser, false), browsertest.OpenIsolatedTab(t, browser, false)
	shared.Navigate(t, srv.URL+"/set-cookie?jar=shared")
	isolated.Navigate(t, srv.URL+"/set-cookie?jar=isolated")
	for _, c := range []struct {
		name string
		tb   *browsertest.Tab
		want string
	}{{"a tab", shared, "jar=shared"}, {"another tab", other, "jar=shared"}, {"an isolated tab", isolated, "jar=isolated"}} {
		c.tb.Navigate(t, srv.URL+"/accessible")
		if got, err := chromedp.Run(c.tb.Ctx, chromedp.Evaluate[string](`document.cookie`)); err != nil || got != c.want {
			t.Errorf("%s has the cookies %q (%v), want %q", c.name, got, err, c.want)
		}
		c.tb.Take(t)
	}

	tb := browsertest.OpenTab(t, browser, true)
	for _, c := range []struct{ path, want string }{
		{"/inline", "Content Security Policy"},
		{"/console", "console.error"},
		{"/throw", "exception: "},
	} {
		tb.Navigate(t, srv.URL+c.path)
		if v := tb.Take(t); !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, c.want) }) {
			t.Errorf("%s: reports %q, want one with %q", c.path, v, c.want)
		}
		if v := tb.Take(t); len(v) > 0 {
			t.Errorf("%s: taken twice: %q", c.path, v)
		}
	}
	// Chromium's advice on a password form without a username is logged,
	// not reported.
	tb.Navigate(t, srv.URL+"/password")
	if v := tb.Take(t); len(v) > 0 {
		t.Errorf("/password: reports %q, want none", v)
	}

	for _, c := range []struct {
		d    browsertest.Device
		dark bool
	}{{browsertest.Phone, true}, {browsertest.Desktop, false}} {
		tb.Emulate(t, c.d, c.dark)
		tb.Navigate(t, srv.URL+"/tall")
		type seen struct {
			Width int64 `json:"width"`
			Dark  bool  `json:"dark"`
		}
		got, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[seen](`({width: innerWidth, dark: matchMedia('(prefers-color-scheme: dark)').matches})`))
		if err != nil || got.Width != c.d.Width || got.Dark != c.dark {
			t.Errorf("%s dark=%v: the page sees %+v (%v)", c.d.Name, c.dark, got, err)
		}
		for _, full := range []bool{false, true} {
			img, err := png.Decode(bytes.NewReader(tb.Screenshot(t, full)))
			if err != nil {
				t.Fatal(err)
			}
			w, h := int64(img.Bounds().Dx()), int64(img.Bounds().Dy())
			if w != c.d.Width || (!full && h != c.d.Height) || (full && h < 3000) {
				t.Errorf("%s full=%v: screenshot %d×%d", c.d.Name, full, w, h)
			}
		}
	}

	tb.Navigate(t, srv.URL+"/alt")
	if v := tb.Audit(t, axe); !slices.ContainsFunc(v, func(v browsertest.Violation) bool { return v.ID == "image-alt" && v.Serious() }) {
		t.Errorf("axe-core missed an image without alt text: %+v", v)
	}
	tb.Navigate(t, srv.URL+"/accessible")
	for _, v := range tb.Audit(t, axe) {
		if v.Serious() {
			t.Errorf("axe-core on a plain page: %+v", v)
		}
	}
	tb.Take(t)
}
