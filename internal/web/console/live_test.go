package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/wait"
	"github.com/tocsin/tocsin/internal/web/console"
	"github.com/tocsin/tocsin/internal/web/public"
)

// liveServer serves the web app (and any routes of the test's) over a's
// database on its own loopback server, with the given live options and read and write timeouts much
// shorter than a stream lives. Cookies of env's server work here: a
// cookie names a host, not a port.
func liveServer(t testing.TB, a *app.App, opts console.Options, routes ...func(*http.ServeMux)) (*console.Server, string) {
	t.Helper()
	return liveServerTimeout(t, a, opts, 2*time.Second, routes...)
}

// liveServerTimeout is liveServer with the server's read and write
// timeouts.
func liveServerTimeout(t testing.TB, a *app.App, opts console.Options, timeout time.Duration, routes ...func(*http.ServeMux)) (*console.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	opts.BaseURL = "http://" + srv.Listener.Addr().String()
	w := console.New(a, slog.New(slog.DiscardHandler), opts)
	mux := http.NewServeMux()
	w.Mount(mux)
	for _, r := range routes {
		r(mux)
	}
	srv.Config.Handler = mux
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = timeout, timeout
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(w.Close) // before srv.Close, which waits for every request
	return w, srv.URL
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data string
}

// stream is an open event stream, read in the background.
type stream struct {
	res    *http.Response
	events chan sseEvent
	retry  string
}

// openStream opens GET path on base with client c and wants it open.
func openStream(t testing.TB, c *http.Client, base, path string) *stream {
	t.Helper()
	res := getStream(t, c, base, path)
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	s := &stream{res: res, events: make(chan sseEvent, 1000)}
	t.Cleanup(func() { res.Body.Close() })
	r := bufio.NewReader(res.Body)
	// The first frame is the reconnection delay.
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "retry: ") {
		t.Fatalf("first line %q, %v", line, err)
	}
	s.retry = strings.TrimSpace(strings.TrimPrefix(line, "retry: "))
	go func() {
		defer close(s.events)
		var ev sseEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				if ev.name != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s
}

func getStream(t testing.TB, c *http.Client, base, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// next is the stream's next event; ok is false when it ended.
func (s *stream) next(t testing.TB) (sseEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		return ev, ok
	case <-time.After(20 * time.Second):
		t.Fatal("no event in 20 s")
		return sseEvent{}, false
	}
}

// liveState is an event's state as a browser reads it.
type liveState struct {
	ID          string     `json:"id"`
	Kind        string     `json:"kind"`
	State       string     `json:"state"`
	Since       time.Time  `json:"since"`
	Paused      bool       `json:"paused"`
	LastCheckAt *time.Time `json:"lastCheckAt"`
	LatencyMs   *int64     `json:"latencyMs"`
	Reason      string     `json:"reason"`
}

// snapshot reads the stream's first event, the snapshot, by id.
func (s *stream) snapshot(t testing.TB) map[string]liveState {
	t.Helper()
	ev, ok := s.next(t)
	if !ok || ev.name != "snapshot" {
		t.Fatalf("first event %+v (open %v), want the snapshot", ev, ok)
	}
	var all []liveState
	if err := json.Unmarshal([]byte(ev.data), &all); err != nil {
		t.Fatalf("snapshot %s: %v", ev.data, err)
	}
	out := map[string]liveState{}
	for _, st := range all {
		out[st.ID] = st
	}
	return out
}

// stateOf reads events until one about id, and returns it.
func (s *stream) stateOf(t testing.TB, id string) liveState {
	t.Helper()
	for {
		ev, ok := s.next(t)
		if !ok {
			t.Fatalf("the stream ended before an event about %s", id)
		}
		if ev.name != "state" {
			t.Fatalf("event %+v, want a state", ev)
		}
		var st liveState
		if err := json.Unmarshal([]byte(ev.data), &st); err != nil {
			t.Fatalf("state %s: %v", ev.data, err)
		}
		if st.ID == id {
			return st
		}
	}
}

// TestLiveStream: a viewer's stream starts with every monitor and
// heartbeat, then tells each change as it is recorded, keeps going past
// the server's read and write timeouts, and ends once the viewer is
// removed from the workspace.
func TestLiveStream(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		db := e.Monitor(e.KeyA, "db", "http://db.invalid/", nil)
		e.Monitor(e.KeyB, "elsewhere", "http://b.invalid/", nil)
		hb := e.API("POST", "/api/v1/heartbeats", e.KeyA, map[string]any{"name": "backup",
			"schedule": map[string]any{"periodSeconds": 3600, "graceSeconds": 300}}, 201)
		job := hb["id"].(string)
		// The server's timeouts are short, so that a stream outlives them
		// soon.
		const timeout = time.Second
		_, base := liveServerTimeout(t, e.App, console.Options{LivePoll: 50 * time.Millisecond, LiveRecheck: 100 * time.Millisecond}, timeout)
		viewer := e.member("viewer@a.test", account.RoleViewer)

		s := openStream(t, viewer.c, base, "/w/"+e.WsA.ID+"/live")
		h := s.res.Header
		if h.Get("Content-Type") != "text/event-stream" || h.Get("Cache-Control") != "no-store" ||
			!strings.Contains(h.Get("Content-Security-Policy"), "connect-src 'self'") || s.retry != "5000" {
			t.Errorf("headers %v, retry %q", h, s.retry)
		}
		snap := s.snapshot(t)
		if len(snap) != 2 || snap[db].State != "PENDING" || snap[db].Kind != "monitor" || snap[db].LastCheckAt != nil ||
			snap[db].LatencyMs != nil || snap[job].Kind != "heartbeat" || snap[job].State == "" {
			t.Fatalf("snapshot %+v", snap)
		}

		e.Record(db, "connection refused", monitor.ResultDown, monitor.ResultDown, monitor.ResultDown)
		for st := s.stateOf(t, db); st.State != "DOWN"; st = s.stateOf(t, db) {
		}
		// A heartbeat's ping is told too.
		if r := e.Get(strings.TrimPrefix(hb["pingUrl"].(string), e.Srv.URL)); r.Status != http.StatusOK {
			t.Fatalf("ping: %d %s", r.Status, r.Body)
		}
		if st := s.stateOf(t, job); st.State != "UP" || st.Kind != "heartbeat" || st.LastCheckAt == nil {
			t.Errorf("after a ping: %+v", st)
		}
		// Past the server's timeouts, events still come.
		time.Sleep(timeout + timeout/2)
		e.Record(db, "", monitor.ResultUp)
		st := s.stateOf(t, db)
		if st.State != "UP" || st.LastCheckAt == nil || st.LatencyMs == nil || *st.LatencyMs != 42 || st.Reason != "" {
			t.Errorf("after an up check: %+v", st)
		}

		// Removed from the workspace, the viewer's stream ends.
		owner := app.Actor{UserID: e.userID("owner@ws-a.test"), WorkspaceID: e.WsA.ID, Role: account.RoleOwner}
		if err := e.App.RemoveMember(ctx, owner, e.userID("viewer@a.test")); err != nil {
			t.Fatal(err)
		}
		for {
			ev, ok := s.next(t)
			if !ok {
				break
			}
			if ev.name == "end" {
				if _, ok := s.next(t); ok {
					t.Fatal("events after the end")
				}
				break
			}
		}
		// And cannot be opened again.
		if r := getStream(t, viewer.c, base, "/w/"+e.WsA.ID+"/live"); r.StatusCode != http.StatusNotFound {
			t.Errorf("a removed member's stream: %d", r.StatusCode)
		} else {
			r.Body.Close()
		}
	})
}

// TestLiveSignedOut: a stream needs a session, and ends with it.
func TestLiveSignedOut(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		_, base := liveServer(t, e.App, console.Options{LivePoll: 50 * time.Millisecond, LiveRecheck: 100 * time.Millisecond})
		stranger := e.browser("nobody@a.test")
		if r := getStream(t, stranger.c, base, "/w/"+e.WsA.ID+"/live"); r.StatusCode != http.StatusSeeOther {
			t.Errorf("no session: %d", r.StatusCode)
		} else {
			r.Body.Close()
		}
		p := e.member("editor@a.test", account.RoleEditor)
		s := openStream(t, p.c, base, "/w/"+e.WsA.ID+"/live")
		s.snapshot(t)
		if r := p.post("/sign-out", url.Values{}); r.status != http.StatusSeeOther {
			t.Fatalf("sign out: %d", r.status)
		}
		if ev, ok := s.next(t); ok && ev.name != "end" {
			t.Fatalf("after signing out: %+v", ev)
		}
	})
}

// TestLiveFanOut: a hundred streams of one workspace are fed by one poller
// (one read a tick, counted by the app), and each gets every change; a
// person may hold ten open, no more.
func TestLiveFanOut(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		id := e.Monitor(e.KeyA, "db", "http://db.invalid/", nil)
		// The ticker never fires: every read below is one the test makes.
		w, base := liveServer(t, e.App, console.Options{LivePoll: time.Hour})
		reads := e.App.StateReads()
		var streams []*stream
		for i := range 10 {
			p := e.member(fmt.Sprintf("watcher-%d@a.test", i), account.RoleViewer)
			for range 10 {
				s := openStream(t, p.c, base, "/w/"+e.WsA.ID+"/live")
				if snap := s.snapshot(t); snap[id].State != "PENDING" {
					t.Fatalf("snapshot %+v", snap)
				}
				streams = append(streams, s)
			}
			if i == 0 {
				r := getStream(t, p.c, base, "/w/"+e.WsA.ID+"/live")
				b, _ := io.ReadAll(r.Body)
				r.Body.Close()
				if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "Too many live views") {
					t.Errorf("an eleventh stream: %d %s", r.StatusCode, b)
				}
			}
		}
		if n := e.App.StateReads() - reads; n != 1 || w.LiveFeeds() != 1 {
			t.Fatalf("100 streams opened with %d reads and %d pollers, want 1 and 1", n, w.LiveFeeds())
		}
		e.Record(id, "refused", monitor.ResultDown, monitor.ResultDown, monitor.ResultDown)
		if !w.LiveTick(e.WsA.ID) {
			t.Fatal("no poller")
		}
		if n := e.App.StateReads() - reads; n != 2 {
			t.Fatalf("one tick for 100 streams made %d reads, want 1", n-1)
		}
		var wg sync.WaitGroup
		for _, s := range streams {
			wg.Go(func() {
				if st := s.stateOf(t, id); st.State != "DOWN" {
					t.Errorf("state %+v", st)
				}
			})
		}
		wg.Wait()
		// Everyone gone, the poller stops.
		for _, s := range streams {
			s.res.Body.Close()
		}
		wait.For(t, 20*time.Second, "the poller to stop", func() bool { return w.LiveFeeds() == 0 })
	})
}

// TestLiveShutdown: closing the web app, as serve does when the server
// shuts down, ends every stream and refuses new ones.
func TestLiveShutdown(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		w, base := liveServer(t, e.App, console.Options{LivePoll: 50 * time.Millisecond})
		p := e.member("viewer@a.test", account.RoleViewer)
		s := openStream(t, p.c, base, "/w/"+e.WsA.ID+"/live")
		s.snapshot(t)
		w.Close()
		if ev, ok := s.next(t); ok {
			t.Fatalf("after Close: %+v", ev)
		}
		if w.LiveFeeds() != 0 {
			t.Error("a poller runs on")
		}
		r := getStream(t, p.c, base, "/w/"+e.WsA.ID+"/live")
		r.Body.Close()
		if r.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("a stream after Close: %d", r.StatusCode)
		}
	})
}
