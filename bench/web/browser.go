// The benchmark as a browser of the web app: it signs in through the
// forms and keeps the session cookie; as a client that is not a browser,
// it sends no Origin or Sec-Fetch-Site header, which cross-origin
// protection lets through.

package web

import (
	"bufio"
	"context"
	"encoding/json"
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

// signIn signs email in through the sign-in form and returns the session.
func signIn(ctx context.Context, base, email, password string) (string, error) {
	return post(ctx, base, "/sign-in", "", url.Values{"email": {email}, "password": {password}})
}

// signInOwner signs the owner in with the one-time password and sets a
// password of their own through the password form, which pages require
// first; it returns the session that follows.
func signInOwner(ctx context.Context, base, otp string) (string, error) {
	cookie, err := signIn(ctx, base, seed.OwnerEmail, otp)
	if err != nil {
		return "", err
	}
	return post(ctx, base, "/account/password", cookie, url.Values{"current": {otp}, "new": {seed.OwnerPassword}, "confirm": {seed.OwnerPassword}})
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
	return nil
}
