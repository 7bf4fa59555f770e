// Package web measures the signed-in web app (seed.WebApp's workspace):
// the server's time for the monitors list of -monitors monitors and for
// one monitor's page, next to a bare handler serving the list's bytes;
// the list's first view after a state change and once its figures are a
// minute old; the server idle with no stream open and with -streams open;
// and how soon -changes state changes of a flipped monitor reach every
// stream. The benchmark signs in through the forms, as a browser would.
package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The targets: the server's time for the pages, p99.
const (
	listP99 = 50 * time.Millisecond
	pageP99 = 100 * time.Millisecond
	// overviewMaxAge is how old the list's figures may grow before the
	// server computes them afresh.
	overviewMaxAge = time.Minute
)

type config struct {
	monitors, requests, warmup, streams, changes, staleViews int
	interval, pageTime, idle, settle                         time.Duration
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var c config
	fs.IntVar(&c.monitors, "monitors", 1000, "monitors of the workspace")
	fs.DurationVar(&c.interval, "interval", time.Minute, "the monitors' check interval, in their history and under the server")
	fs.IntVar(&c.requests, "requests", 500, "sequential GETs of each page measured")
	fs.IntVar(&c.warmup, "warmup-requests", 50, "unmeasured GETs of each page before (stopping after a tenth of -page-time)")
	fs.DurationVar(&c.pageTime, "page-time", 3*time.Minute, "the measured GETs of a page stop after this long, if -requests are not done by then")
	fs.IntVar(&c.streams, "streams", 100, "live streams open at once, 10 per viewer")
	fs.DurationVar(&c.idle, "idle", 20*time.Second, "measured idle time with no stream open, and with -streams open")
	fs.IntVar(&c.staleViews, "stale-views", 2, "views of the list, each a minute after the last, when every monitor's figures are computed afresh")
	fs.IntVar(&c.changes, "changes", 6, "state changes of the flipped monitor timed to the streams, each followed by a view of the list")
	fs.DurationVar(&c.settle, "settle", 15*time.Second, "wait after the server starts (its first checks of every monitor) before measuring")
	return func(ctx context.Context, e session.Env) error {
		switch {
		case c.warmup < 0:
			return errors.New("-warmup-requests must not be negative")
		case c.interval < 10*time.Second || c.interval > 24*time.Hour:
			return errors.New("-interval must be from 10s to 24h, a monitor's bounds")
		case c.pageTime < 0 || c.idle <= 0 || c.settle < 0:
			return errors.New("-idle must be positive, -page-time and -settle not negative")
		}
		if err := session.AtLeast1("-monitors, -requests, -streams and -changes", c.monitors, c.requests, c.streams, c.changes); err != nil {
			return err
		}
		title := fmt.Sprintf("Web app: %d monitors, %d live streams", c.monitors, c.streams)
		return session.Measure(ctx, "web", e, false, title, func(s *session.Session) session.Bench { return &bench{Session: s, c: c} })
	}
}

type bench struct {
	*session.Session
	c       config
	results []*result
}

func (b *bench) Run(ctx context.Context) error {
	steady, err := seed.StartTarget()
	if err != nil {
		return err
	}
	defer steady.Close()
	flip, err := seed.StartTarget()
	if err != nil {
		return err
	}
	defer flip.Close()
	b.results, err = session.PerEngine(ctx, b.Session, func(ctx context.Context, e string) (*result, error) {
		flip.Set(http.StatusOK)
		return b.engine(ctx, e, steady, flip)
	})
	return err
}

// result is what was measured of one engine's server.
type result struct {
	engine               string
	fx                   seed.WebFixture
	listBytes, pageBytes int
	list, page, bare     []time.Duration // sorted
	cold                 []time.Duration // the list's first view after each state change, sorted
	stale                []time.Duration // the list's first view once its figures are a minute old, sorted
	quiet, open          idleWindow      // no stream open; -streams open
	latencies            []time.Duration // a state change's arrival at each stream, sorted
}

// engine seeds a database of engine e, serves it, and measures it.
func (b *bench) engine(ctx context.Context, e string, steady, flip *seed.Target) (*result, error) {
	res := &result{engine: e}
	dbURL, keys, err := b.FreshDB(ctx, e)
	if err != nil {
		return nil, err
	}
	b.Logf("%s: seeding %d monitors with their history and checks", e, b.c.monitors)
	if res.fx, err = seed.WebApp(ctx, dbURL, keys, seed.Web{Monitors: b.c.monitors, Streams: b.c.streams, Interval: b.c.interval,
		Steady: steady.URL, Flip: flip.URL, Logf: b.Logf}); err != nil {
		return nil, fmt.Errorf("seeding: %w", err)
	}
	fx := res.fx
	srv, err := b.Serve(ctx, "tocsin-"+e, dbURL)
	if err != nil {
		return nil, err
	}
	if err := session.Sleep(ctx, b.c.settle); err != nil {
		return nil, err
	}
	owner, err := signInOwner(ctx, srv.Base, fx.OwnerOTP)
	if err != nil {
		return nil, fmt.Errorf("signing the owner in: %w", err)
	}
	hdr := cookieHeader(owner)
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
		return nil, err
	}
	page, _, err := fetch(pageURL, "Recent checks")
	if err != nil {
		return nil, err
	}
	res.listBytes, res.pageBytes = len(body), len(page)
	measure := func(what, url string, h http.Header) ([]time.Duration, error) {
		if b.c.warmup > 0 {
			if _, err := session.Sequential(ctx, rt, url, h, b.c.warmup, b.c.pageTime/10); err != nil {
				return nil, err
			}
		}
		lat, err := session.Sequential(ctx, rt, url, h, b.c.requests, b.c.pageTime)
		if err == nil {
			b.Logf("%s: %d sequential GETs of %s: p50 %s, p99 %s, max %s", e, len(lat), what, session.P(lat, 0.5), session.P(lat, 0.99), session.P(lat, 1))
		}
		return lat, err
	}
	if res.list, err = measure("the monitors list", listURL, hdr); err != nil {
		return nil, err
	}
	if res.page, err = measure("a monitor's page", pageURL, hdr); err != nil {
		return nil, err
	}

	bare, err := b.BareChild(ctx, "bare-"+e, header, body) // what Tocsin just answered
	if err != nil {
		return nil, err
	}
	if res.bare, err = measure("the bare handler", bare.Base+"/", hdr); err != nil {
		return nil, err
	}
	rt.CloseIdleConnections()

	if err := b.live(ctx, res, srv, dbURL, ws, flip, hdr); err != nil {
		return nil, fmt.Errorf("live streams: %w", err)
	}
	return res, nil
}

func (b *bench) Report(w *session.Report) {
	c, p := b.c, session.P
	w.Printf("Each engine's database: one workspace of %d HTTP monitors checked every %s with 100 days of state changes and their checks "+
		"as the store holds them under the default retention, and one more monitor checked every %d s that the benchmark turns DOWN and UP; "+
		"the server runs every monitor's checks meanwhile. Times from sending a GET with the owner's session cookie to reading the whole "+
		"answer over keep-alive loopback: up to %d sequential GETs (or as many as %s allows) after up to %d unmeasured ones.\n",
		c.monitors, c.interval, seed.LiveInterval, c.requests, c.pageTime, c.warmup)
	w.Table("engine", "page", "GETs:", "p50:", "p99:", "max:", "size:", "target")
	for _, r := range b.results {
		for _, row := range []struct {
			name   string
			lat    []time.Duration
			size   int
			target time.Duration
		}{{"monitors list", r.list, r.listBytes, listP99}, {"bare handler, the list's bytes", r.bare, r.listBytes, 0},
			{"monitors list, first view after a state change", r.cold, r.listBytes, 0},
			{"monitors list, first view with its figures a minute old", r.stale, r.listBytes, 0}, {"a monitor's page", r.page, r.pageBytes, pageP99}} {
			verdict := "–"
			if row.target > 0 {
				verdict = fmt.Sprintf("p99 under %s: %s", session.Dur(row.target), session.Verdict(session.Percentile(row.lat, 0.99) < row.target))
			}
			if len(row.lat) > 0 {
				w.Printf("| %s | %s | %d | %s | %s | %s | %.0f KiB | %s |\n", r.engine, row.name, len(row.lat), p(row.lat, 0.5),
					p(row.lat, 0.99), p(row.lat, 1), float64(row.size)/1024, verdict)
			}
		}
	}
	w.Printf("\n## Live streams\n\nIdle for %s with no stream open, then with %d open (10 per viewer); CPU per second of wall time, "+
		"resident memory at the window's end.\n", c.idle, c.streams)
	w.Table("engine", "streams:", "server CPU/s:", "PostgreSQL CPU/s:", "server RSS:", "other processes:")
	for _, r := range b.results {
		for i, x := range []idleWindow{r.quiet, r.open} {
			w.Printf("| %s | %d | %s | %s | %s | %.0f%% |\n", r.engine, i*c.streams, session.Dur(perSecond(x.cpu.ServerTime, x.elapsed)),
				session.Dur(perSecond(x.cpu.PostgresTime, x.elapsed)), session.MiB(x.rss, 1), x.cpu.Other)
		}
	}
	w.Printf("\nA state change reaching the streams, from its moment as the server recorded it (the event's `since`) to the event read "+
		"at each stream; %d changes of the flipped monitor:\n", c.changes)
	w.Table("engine", "deliveries:", "p50:", "p90:", "max:")
	for _, r := range b.results {
		w.Printf("| %s | %d | %s | %s | %s |\n", r.engine, len(r.latencies), p(r.latencies, 0.5), p(r.latencies, 0.9), p(r.latencies, 1))
	}
}

// The benchmark as a browser of the web app: it signs in through the
// forms and keeps the session cookie; as a client that is not a browser,
// it sends no Origin or Sec-Fetch-Site header, which cross-origin
// protection lets through.

const sessionCookie = "tocsin_session" // on an http base URL

// post sends a form and returns the session cookie the answer sets (the
// one given when it sets none); the answer must be a redirect to a page
// other than the sign-in page, or the form was refused.
func post(ctx context.Context, c *http.Client, base, path, cookie string, form url.Values) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: cookie})
	}
	resp, err := c.Do(req)
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

// noRedirects is a client that shows the benchmark each redirect.
func noRedirects() *http.Client {
	return &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signIn signs email in through the sign-in form and returns the session.
func signIn(ctx context.Context, base, email, password string) (string, error) {
	return post(ctx, noRedirects(), base, "/sign-in", "", url.Values{"email": {email}, "password": {password}})
}

// signInOwner signs the owner in with the one-time password and sets a
// password of their own through the password form, which pages require
// first; it returns the session that follows.
func signInOwner(ctx context.Context, base, otp string) (string, error) {
	c := noRedirects()
	cookie, err := post(ctx, c, base, "/sign-in", "", url.Values{"email": {seed.OwnerEmail}, "password": {otp}})
	if err != nil {
		return "", err
	}
	return post(ctx, c, base, "/account/password", cookie, url.Values{"current": {otp}, "new": {seed.OwnerPassword}, "confirm": {seed.OwnerPassword}})
}

// cookieHeader is the request header that carries a session.
func cookieHeader(session string) http.Header {
	return http.Header{"Cookie": {sessionCookie + "=" + session}}
}

// liveEvent is a subject's state as a stream sends it.
type liveEvent struct {
	ID    string        `json:"id"`
	State monitor.State `json:"state"`
	Since time.Time     `json:"since"`
}

// arrival is a state event of the watched monitor read by one stream.
type arrival struct {
	stream int
	ev     liveEvent
	at     time.Time
}

// streams are open live streams, read until Close.
type streams struct {
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	ready    chan int     // a stream's index once its snapshot came
	arrivals chan arrival // the watched monitor's state events
	errs     chan error
}

// openStreams opens one stream per session given (each session may
// appear up to 10 times), reads them, and hands on the state events of
// the monitor watch.
func openStreams(ctx context.Context, url string, sessions []string, watch string) *streams {
	ctx, cancel := context.WithCancel(ctx)
	s := &streams{cancel: cancel, ready: make(chan int, len(sessions)), arrivals: make(chan arrival, 64*len(sessions)),
		errs: make(chan error, len(sessions))}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: len(sessions)}}
	for i, session := range sessions {
		s.wg.Go(func() {
			if err := s.read(ctx, client, url, session, i, watch); err != nil && ctx.Err() == nil {
				s.errs <- fmt.Errorf("stream %d: %w", i+1, err)
			}
		})
	}
	return s
}

func (s *streams) read(ctx context.Context, c *http.Client, url, session string, i int, watch string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header = cookieHeader(session)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var event string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		at := time.Now()
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := []byte(strings.TrimPrefix(line, "data: "))
			switch event {
			case "snapshot":
				var all []liveEvent
				if err := json.Unmarshal(data, &all); err != nil {
					return fmt.Errorf("snapshot: %w", err)
				}
				if !slices.ContainsFunc(all, func(e liveEvent) bool { return e.ID == watch }) {
					return fmt.Errorf("the snapshot of %d subjects lacks %s", len(all), watch)
				}
				s.ready <- i
			case "state":
				var ev liveEvent
				if err := json.Unmarshal(data, &ev); err != nil {
					return fmt.Errorf("state event: %w", err)
				}
				if ev.ID == watch {
					s.arrivals <- arrival{stream: i, ev: ev, at: at}
				}
			case "end":
				return fmt.Errorf("the server ended the stream")
			}
		case line == "":
			event = ""
		}
	}
}

// Close ends every stream and waits for their readers.
func (s *streams) Close() {
	s.cancel()
	s.wg.Wait()
}

// idleWindow is what the server and PostgreSQL used over an idle window.
type idleWindow struct {
	elapsed time.Duration
	cpu     session.Share
	rss     int64 // the server's, at the window's end
}

func perSecond(cpu, elapsed time.Duration) time.Duration {
	return time.Duration(float64(cpu) / max(elapsed.Seconds(), 1e-9))
}

// live measures the server idle without streams and with -streams open,
// and then the time state changes of the flipped monitor take to reach
// them; after each change, one view of the workspace ws's list, whose
// availability figures the change makes the server compute again.
func (b *bench) live(ctx context.Context, res *result, srv *session.Process, dbURL, ws string, flip *seed.Target, hdr http.Header) error {
	e, fx, listURL := res.engine, res.fx, ws+"/monitors"
	// view times the list's first view on a new connection.
	view := func(to *[]time.Duration, when string) error {
		rt := session.Transport(1)
		defer rt.CloseIdleConnections()
		body, _, d, err := session.Fetch(ctx, rt, listURL, hdr)
		if err == nil {
			err = session.Shows(body, fx.FirstName, "Availability")
		}
		b.Logf("%s: the list's first view %s: %s", e, when, session.Dur(d))
		*to = append(*to, d)
		return err
	}
	window := func(to *idleWindow, streams int) error {
		t0 := time.Now()
		to.cpu = b.Window(ctx, srv.Pid(), dbURL, func() { _ = session.Sleep(ctx, b.c.idle) })
		to.elapsed, to.rss = time.Since(t0), session.RSS(srv.Pid())
		b.Logf("%s: idle, %d streams: server CPU %s a second, RSS %s", e, streams, session.Dur(perSecond(to.cpu.ServerTime, to.elapsed)), session.MiB(to.rss, 1))
		return ctx.Err()
	}
	if err := window(&res.quiet, 0); err != nil {
		return err
	}

	// The viewers sign in, each opening up to 10 streams.
	var sessions []string
	for i, email := range fx.Viewers {
		s, err := signIn(ctx, srv.Base, email, seed.ViewerPassword)
		if err != nil {
			return fmt.Errorf("signing %s in: %w", email, err)
		}
		for range min(seed.PerPerson, b.c.streams-i*seed.PerPerson) {
			sessions = append(sessions, s)
		}
	}
	st := openStreams(ctx, ws+"/live", sessions, fx.LiveID)
	defer st.Close()
	deadline := time.After(time.Minute)
	for range sessions {
		select {
		case <-st.ready:
		case err := <-st.errs:
			return err
		case <-deadline:
			return fmt.Errorf("not every stream had its snapshot within a minute")
		}
	}
	b.Logf("%s: %d streams open", e, len(sessions))
	if err := window(&res.open, len(sessions)); err != nil {
		return err
	}

	// State changes: the target fails, the monitor's next check turns it
	// DOWN; it answers again, the next turns it UP.
	wait := 3*time.Duration(seed.LiveInterval)*time.Second + 30*time.Second
	for k := range b.c.changes {
		want, status := monitor.StateDown, http.StatusInternalServerError
		if k%2 == 1 {
			want, status = monitor.StateUp, http.StatusOK
		}
		flipped := time.Now()
		flip.Set(status)
		got := map[int]bool{}
		timeout := time.After(wait)
		var lat []time.Duration
		for len(got) < len(sessions) {
			select {
			case a := <-st.arrivals:
				// A check under way as the target flipped may bring the
				// change a moment before it; the changes before are to
				// the other state, or at least an interval older.
				if a.ev.State != want || a.ev.Since.Before(flipped.Add(-time.Second)) || got[a.stream] {
					continue
				}
				got[a.stream] = true
				lat = append(lat, a.at.Sub(a.ev.Since))
			case err := <-st.errs:
				return err
			case <-timeout:
				return fmt.Errorf("change %d to %s: %d of %d streams had it within %s", k+1, want, len(got), len(sessions), wait)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		slices.Sort(lat)
		b.Logf("%s: change %d to %s reached %d streams: p50 %s, max %s", e, k+1, want, len(lat), session.P(lat, 0.5), session.P(lat, 1))
		res.latencies = append(res.latencies, lat...)

		if err := view(&res.cold, "after a state change"); err != nil {
			return err
		}
	}
	slices.Sort(res.latencies)
	slices.Sort(res.cold)

	// Every monitor's figures are computed afresh once they are a minute
	// old: the first view after that pays for all of them.
	for k := range b.c.staleViews {
		if err := session.Sleep(ctx, overviewMaxAge+time.Second); err != nil {
			return err
		}
		if err := view(&res.stale, fmt.Sprintf("with its figures a minute old (%d)", k+1)); err != nil {
			return err
		}
	}
	slices.Sort(res.stale)
	return nil
}
