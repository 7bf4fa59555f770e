// Package web measures the signed-in web app: the monitors list and a
// monitor's page next to a bare handler serving the list's bytes;
// docs/benchmarks.md ("Web") tells the method. It signs in through the
// forms and keeps the session cookie, as a browser would; as a client
// that is not a browser, it sends no Origin or Sec-Fetch-Site header,
// which cross-origin protection lets through.
package web

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
)

// The targets: the server's time for the pages, p99.
const (
	listP99 = 50 * time.Millisecond
	pageP99 = 100 * time.Millisecond
)

type config struct {
	monitors, requests, warmup int
	interval, pageTime, settle time.Duration
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var c config
	fs.IntVar(&c.monitors, "monitors", 1000, "monitors of the workspace")
	fs.DurationVar(&c.interval, "interval", time.Minute, "the monitors' check interval, in their history and under the server")
	fs.IntVar(&c.requests, "requests", 500, "sequential GETs of each page measured")
	fs.IntVar(&c.warmup, "warmup-requests", 50, "unmeasured GETs of each page before (stopping after a tenth of -page-time)")
	fs.DurationVar(&c.pageTime, "page-time", 3*time.Minute, "the measured GETs of a page stop after this long, if -requests are not done by then")
	fs.DurationVar(&c.settle, "settle", 15*time.Second, "wait after the server starts (its first checks of every monitor) before measuring")
	return func(ctx context.Context, e session.Env) error {
		if c.interval < 10*time.Second || c.interval > 24*time.Hour || min(c.warmup, int(c.pageTime), int(c.settle)) < 0 {
			return errors.New("-interval must be from 10s to 24h (a monitor's bounds), -warmup-requests, -page-time and -settle not negative")
		}
		if err := session.AtLeast1("-monitors and -requests", c.monitors, c.requests); err != nil {
			return err
		}
		title := fmt.Sprintf("Web app: %d monitors", c.monitors)
		return session.Measure(ctx, "web", e, false, title, func(s *session.Session) session.Bench { return &bench{Session: s, c: c} })
	}
}

type bench struct {
	*session.Session
	c       config
	results []*result
}

// result is what was measured of one engine's server.
type result struct {
	engine               string
	listBytes, pageBytes int
	list, page, bare     []time.Duration // sorted
}

// Engine seeds a database of engine e, serves it, and measures it.
func (b *bench) Engine(ctx context.Context, e string) error {
	res := &result{engine: e}
	dbURL, keys, target, err := seed.Fresh(ctx, b.Session, e)
	if err != nil {
		return err
	}
	b.Logf("%s: seeding %d monitors with their history and checks", e, b.c.monitors)
	fx, err := seed.WebApp(ctx, dbURL, keys, seed.Web{Monitors: b.c.monitors, Interval: b.c.interval, Target: target.URL, Logf: b.Logf})
	if err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	srv, err := b.Serve(ctx, "tocsin-"+e, dbURL)
	if err != nil {
		return err
	}
	if err := session.Sleep(ctx, b.c.settle); err != nil {
		return err
	}
	// The owner has a one-time password and sets one of their own
	// through the password form, which pages require first.
	cookie, err := post(ctx, srv.Base, "/sign-in", "", url.Values{"email": {seed.OwnerEmail}, "password": {fx.OwnerOTP}})
	if err == nil {
		cookie, err = post(ctx, srv.Base, "/account/password", cookie,
			url.Values{"current": {fx.OwnerOTP}, "new": {seed.OwnerPassword}, "confirm": {seed.OwnerPassword}})
	}
	if err != nil {
		return fmt.Errorf("signing the owner in: %w", err)
	}
	hdr := http.Header{"Cookie": {sessionCookie + "=" + cookie}}
	ws := srv.Base + "/w/" + fx.Workspace
	listURL, pageURL := ws+"/monitors", ws+"/monitors/"+fx.FirstID

	rt := session.Transport(1)
	defer rt.CloseIdleConnections()
	// The pages the benchmark means to measure: the list and the first
	// monitor's page, each showing what it should.
	fetch := func(url, word string) ([]byte, http.Header, error) {
		body, header, _, err := session.Fetch(ctx, rt, url, hdr)
		if err == nil {
			err = session.Shows(body, fx.FirstName, word)
		}
		return body, header, err
	}
	body, header, err := fetch(listURL, "Availability")
	if err != nil {
		return err
	}
	page, _, err := fetch(pageURL, "Recent checks")
	if err != nil {
		return err
	}
	res.listBytes, res.pageBytes = len(body), len(page)
	measure := func(what, url string) ([]time.Duration, error) {
		if b.c.warmup > 0 {
			if _, err := session.Sequential(ctx, rt, url, hdr, b.c.warmup, b.c.pageTime/10); err != nil {
				return nil, err
			}
		}
		lat, err := session.Sequential(ctx, rt, url, hdr, b.c.requests, b.c.pageTime)
		if err == nil {
			b.Logf("%s: %d sequential GETs of %s: p50 %s, p99 %s, max %s", e, len(lat), what, session.P(lat, 0.5), session.P(lat, 0.99), session.P(lat, 1))
		}
		return lat, err
	}
	if res.list, err = measure("the monitors list", listURL); err != nil {
		return err
	}
	if res.page, err = measure("a monitor's page", pageURL); err != nil {
		return err
	}
	bare, err := b.BareChild(ctx, "bare-"+e, header, body) // what Tocsin just answered
	if err != nil {
		return err
	}
	res.bare, err = measure("the bare handler", bare.Base+"/")
	b.results = append(b.results, res)
	return err
}

const sessionCookie = "tocsin_session" // on an http base URL

// post sends a form with the session cookie (none: ""), and returns the
// session cookie the answer sets (the one given when it sets none); the
// answer must be a redirect to a page other than the sign-in page, or the
// form was refused.
func post(ctx context.Context, base, path, cookie string, form url.Values) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: cookie})
	}
	resp, err := http.DefaultTransport.RoundTrip(req) // which follows no redirect
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || strings.HasPrefix(resp.Header.Get("Location"), "/sign-in") {
		return "", fmt.Errorf("POST %s: %s, to %q: %.300s", path, resp.Status, resp.Header.Get("Location"), body)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == sessionCookie && ck.Value != "" {
			cookie = ck.Value
		}
	}
	return cookie, nil
}

func (b *bench) Report(w *session.Report) {
	c, p := b.c, session.P
	w.Printf("Each engine's database: one workspace of %d HTTP monitors checked every %s with 100 days of state changes and their checks "+
		"as the store holds them under the default retention; the server runs every monitor's checks meanwhile. Times from sending a GET "+
		"with the owner's session cookie to reading the whole answer over keep-alive loopback: up to %d sequential GETs (or as many as %s "+
		"allows) after up to %d unmeasured ones.\n", c.monitors, c.interval, c.requests, c.pageTime, c.warmup)
	w.Table("engine", "page", "GETs:", "p50:", "p99:", "max:", "size:", "target")
	for _, r := range b.results {
		for _, row := range []struct {
			name   string
			lat    []time.Duration
			size   int
			target time.Duration
		}{{"monitors list", r.list, r.listBytes, listP99}, {"bare handler, the list's bytes", r.bare, r.listBytes, 0},
			{"a monitor's page", r.page, r.pageBytes, pageP99}} {
			verdict := "–"
			if row.target > 0 {
				verdict = fmt.Sprintf("p99 under %s: %s", session.Dur(row.target), session.Verdict(session.Percentile(row.lat, 0.99) < row.target))
			}
			w.Printf("| %s | %s | %d | %s | %s | %s | %.0f KiB | %s |\n", r.engine, row.name, len(row.lat), p(row.lat, 0.5),
				p(row.lat, 0.99), p(row.lat, 1), float64(row.size)/1024, verdict)
		}
	}
}
