package console

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
)

// Live updates: GET /w/{ws}/live is a stream of server-sent events that
// tells an open page when a monitor or heartbeat changes. A state may
// change on any node sharing the database, so nothing here listens
// in-process: one poller per watched workspace reads every subject's
// state in one query (app.WorkspaceStates) every few seconds, while at
// least one stream of that workspace is open, and hands the differences
// to every open stream; a hundred people watching cost one query a tick.
//
// A stream starts with a snapshot of every subject (event "snapshot", a
// JSON array), then an event "state" per change. Events carry no id: a
// reconnecting browser gets a fresh snapshot, which is what any node can
// give it. A change of a person's access made through this node (removed
// from the workspace, signed out, signed out everywhere, a new password)
// ends their streams here at once; every stream also re-checks its
// person's session and role every few seconds, which is how a change made
// through another node reaches it, and ends when they no longer allow
// monitors:read.

const (
	defaultLivePoll      = 2 * time.Second
	defaultLiveRecheck   = 5 * time.Second
	defaultLiveKeepAlive = 15 * time.Second
	// liveRetry is how long a browser waits before reconnecting.
	liveRetry = 5 * time.Second
	// liveWriteWait is how long one write may take before the stream is
	// given up: a client that reads nothing for so long is gone.
	liveWriteWait = 20 * time.Second
	// maxLiveStreams bounds one person's open streams (tabs) on a node.
	maxLiveStreams = 10
	// liveBacklog is how many ticks of changes wait for a slow stream;
	// past it the stream ends, and the browser comes back to a snapshot.
	liveBacklog = 16
)

// liveState is one subject as the stream sends it: only what any member
// who may read monitors sees on the monitors list.
type liveState struct {
	ID          string        `json:"id"`
	Kind        string        `json:"kind"`
	State       monitor.State `json:"state"`
	Since       time.Time     `json:"since"`
	Paused      bool          `json:"paused"`
	LastCheckAt *time.Time    `json:"lastCheckAt"`
	LatencyMs   *int64        `json:"latencyMs"`
	Reason      string        `json:"reason"`
}

func liveStateOf(s app.LiveState) liveState {
	v := liveState{ID: s.ID, Kind: s.Kind, State: s.State, Since: s.Since.UTC(), Paused: s.Paused, Reason: s.Reason}
	if !s.LastCheckAt.IsZero() {
		at := s.LastCheckAt.UTC()
		v.LastCheckAt = &at
	}
	if s.Latency >= 0 {
		ms := s.Latency.Milliseconds()
		v.LatencyMs = &ms
	}
	return v
}

// sameLive reports whether a stream would see no difference between a and b.
func sameLive(a, b app.LiveState) bool {
	return a.ID == b.ID && a.Kind == b.Kind && a.State == b.State && a.Since.Equal(b.Since) && a.Paused == b.Paused &&
		a.LastCheckAt.Equal(b.LastCheckAt) && a.Latency.Milliseconds() == b.Latency.Milliseconds() &&
		(a.Latency < 0) == (b.Latency < 0) && a.Reason == b.Reason
}

// liveHub owns the pollers and counts the open streams.
type liveHub struct {
	app       *app.App
	log       *slog.Logger
	poll      time.Duration
	recheck   time.Duration
	keepAlive time.Duration

	ctx     context.Context // ends every stream and poller: the server shuts down
	stop    context.CancelFunc
	pollers sync.WaitGroup

	mu      sync.Mutex
	feeds   map[string]*feed // by workspace id
	persons map[string]int   // open streams by user id
}

func newLiveHub(a *app.App, log *slog.Logger, opts Options) *liveHub {
	h := &liveHub{app: a, log: log, poll: opts.LivePoll, recheck: opts.LiveRecheck, keepAlive: opts.LiveKeepAlive,
		feeds: map[string]*feed{}, persons: map[string]int{}}
	if h.poll <= 0 {
		h.poll = defaultLivePoll
	}
	if h.recheck <= 0 {
		h.recheck = defaultLiveRecheck
	}
	if h.keepAlive <= 0 {
		h.keepAlive = defaultLiveKeepAlive
	}
	h.ctx, h.stop = context.WithCancel(context.Background())
	return h
}

// close ends every stream and waits for the pollers.
func (h *liveHub) close() {
	h.stop()
	h.pollers.Wait()
}

// feed is one workspace's poller and the streams it feeds.
type feed struct {
	hub   *liveHub
	ws    string
	actor app.Actor // the member who opened it: its reads need a role that may read
	stop  context.CancelFunc

	mu       sync.Mutex
	subs     map[*liveSub]struct{}
	last     map[string]app.LiveState // nil until the first read
	snapshot []byte                   // the "snapshot" event of last, built on demand
}

// liveSub is one open stream's mailbox, and whose it is.
type liveSub struct {
	ch      chan []byte
	dropped bool // ch was closed: the stream fell behind

	userID, sessionID string
	end               chan struct{} // closed when the person's access here ends
	ended             bool          // end is closed; under the feed's mu
	kick              chan struct{} // asks for a recheck now
}

// Why a stream cannot open.
var (
	errTooManyStreams = &errs.Error{Kind: errs.KindRateLimited, Message: "Too many live views are open: close a few tabs of Tocsin."}
	errLiveClosed     = &errs.Error{Kind: errs.KindUnavailable, Message: "The server is restarting."}
)

// join adds a stream of the actor's workspace, starting the workspace's
// poller if it is the first.
func (h *liveHub) join(actor app.Actor, sessionID string) (*feed, *liveSub, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx.Err() != nil {
		return nil, nil, errLiveClosed
	}
	if h.persons[actor.UserID] >= maxLiveStreams {
		return nil, nil, errTooManyStreams
	}
	h.persons[actor.UserID]++
	f := h.feeds[actor.WorkspaceID]
	if f == nil {
		ctx, stop := context.WithCancel(h.ctx)
		f = &feed{hub: h, ws: actor.WorkspaceID, actor: actor, stop: stop, subs: map[*liveSub]struct{}{}}
		h.feeds[actor.WorkspaceID] = f
		h.pollers.Add(1)
		go func() {
			defer h.pollers.Done()
			f.run(ctx)
		}()
	}
	s := &liveSub{ch: make(chan []byte, liveBacklog), userID: actor.UserID, sessionID: sessionID,
		end: make(chan struct{}), kick: make(chan struct{}, 1)}
	f.mu.Lock()
	f.subs[s] = struct{}{}
	if f.last != nil {
		s.ch <- f.snapshotEvent()
	}
	f.mu.Unlock()
	return f, s, nil
}

// leave removes a stream; the last one out stops the poller.
func (h *liveHub) leave(f *feed, s *liveSub, userID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.persons[userID]--; h.persons[userID] <= 0 {
		delete(h.persons, userID)
	}
	f.mu.Lock()
	delete(f.subs, s)
	empty := len(f.subs) == 0
	f.mu.Unlock()
	if empty {
		f.stop()
		delete(h.feeds, f.ws)
	}
}

// endStreams ends at once the open streams that match picks (given the
// stream and its workspace): their person's access changed through this
// node. Streams on other nodes end at their next recheck.
func (h *liveHub) endStreams(match func(s *liveSub, ws string) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ws, f := range h.feeds {
		f.mu.Lock()
		for s := range f.subs {
			if !s.ended && match(s, ws) {
				s.ended = true
				close(s.end)
			}
		}
		f.mu.Unlock()
	}
}

// endPerson ends every stream of a person: signed out everywhere, or a
// new password.
func (h *liveHub) endPerson(userID string) {
	h.endStreams(func(s *liveSub, _ string) bool { return s.userID == userID })
}

// endMember ends a person's streams of one workspace: they left it.
func (h *liveHub) endMember(userID, ws string) {
	h.endStreams(func(s *liveSub, in string) bool { return s.userID == userID && in == ws })
}

// endSession ends the streams of one session: it signed out.
func (h *liveHub) endSession(sessionID string) {
	h.endStreams(func(s *liveSub, _ string) bool { return s.sessionID == sessionID })
}

// recheckAll has every open stream check its person's access now, as its
// ticker would.
func (h *liveHub) recheckAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.feeds {
		f.mu.Lock()
		for s := range f.subs {
			select {
			case s.kick <- struct{}{}:
			default: // one is already asked for
			}
		}
		f.mu.Unlock()
	}
}

// run reads the workspace's states every tick until stopped.
func (f *feed) run(ctx context.Context) {
	t := time.NewTicker(f.hub.poll)
	defer t.Stop()
	for {
		f.tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tick reads the states once and sends what changed to every stream; the
// first read sends every stream the snapshot.
func (f *feed) tick(ctx context.Context) {
	states, err := f.hub.app.WorkspaceStates(ctx, f.actor)
	if err != nil {
		if ctx.Err() == nil {
			f.hub.log.ErrorContext(ctx, "live states", "workspace", f.ws, "err", err)
		}
		return // the next tick tries again; the streams stay open
	}
	next := make(map[string]app.LiveState, len(states))
	var changes bytes.Buffer
	f.mu.Lock()
	defer f.mu.Unlock()
	first, kept := f.last == nil, 0
	for _, s := range states {
		next[s.ID] = s
		old, ok := f.last[s.ID]
		if ok {
			kept++
		}
		if !first && (!ok || !sameLive(old, s)) {
			writeEvent(&changes, "state", liveStateOf(s))
		}
	}
	gone := kept < len(f.last) // a subject was deleted: later snapshots leave it out
	f.last = next
	if gone || changes.Len() > 0 {
		f.snapshot = nil
	}
	var msg []byte
	switch {
	case first:
		msg = f.snapshotEvent()
	case changes.Len() > 0:
		msg = changes.Bytes()
	default:
		return
	}
	for s := range f.subs {
		if s.dropped {
			continue
		}
		select {
		case s.ch <- msg:
		default: // too far behind: end it, and it reconnects to a snapshot
			s.dropped = true
			close(s.ch)
		}
	}
}

// snapshotEvent is the "snapshot" event of the last read; f.mu is held.
func (f *feed) snapshotEvent() []byte {
	if f.snapshot == nil {
		all := make([]liveState, 0, len(f.last))
		for _, v := range f.last {
			all = append(all, liveStateOf(v))
		}
		slices.SortFunc(all, func(a, b liveState) int { return strings.Compare(a.ID, b.ID) })
		var b bytes.Buffer
		writeEvent(&b, "snapshot", all)
		f.snapshot = b.Bytes()
	}
	return f.snapshot
}

// writeEvent appends one server-sent event; JSON holds no newline.
func writeEvent(b *bytes.Buffer, name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // the types above always marshal
	}
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
}

// live serves GET /w/{ws}/live.
func (w *Server) live(q *request) error {
	if err := w.may(q, account.ScopeMonitorsRead); err != nil {
		return err
	}
	if q.r.Method == http.MethodHead {
		q.w.Header().Set("Content-Type", "text/event-stream")
		return nil
	}
	h := w.hub
	f, sub, err := h.join(q.actor, q.ws.Session.ID)
	if err != nil {
		// Plain text, not the error page: an EventSource gives up on any
		// answer but 200 and shows nothing of it (the page stays as it is).
		q.w.Header().Set("Retry-After", "30")
		return &refusal{status: statusOf(err), text: err.(*errs.Error).Message + "\n"}
	}
	defer h.leave(f, sub, q.actor.UserID)

	rc := http.NewResponseController(q.w)
	// The server's read and write timeouts are for requests, not for a
	// stream: a write deadline renewed before each write, and no read
	// deadline (net/http lifts it for HTTP/1 once the request is read;
	// this says so for any protocol).
	_ = rc.SetReadDeadline(time.Time{})
	hdr := q.w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("X-Accel-Buffering", "no") // a proxy in front must not hold events back
	q.w.WriteHeader(http.StatusOK)
	send := func(b []byte) bool {
		if err := rc.SetWriteDeadline(time.Now().Add(liveWriteWait)); err != nil {
			return false
		}
		if _, err := q.w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send([]byte("retry: " + strconv.FormatInt(liveRetry.Milliseconds(), 10) + "\n\n")) {
		return nil
	}
	ctx := q.ctx()
	keepAlive := time.NewTicker(h.keepAlive)
	defer keepAlive.Stop()
	recheck := time.NewTicker(h.recheck)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done(): // the client went away
			return nil
		case <-h.ctx.Done(): // the server shuts down
			return nil
		case msg, open := <-sub.ch:
			if !open || !send(msg) {
				return nil
			}
		case <-keepAlive.C:
			if !send([]byte(": keep-alive\n\n")) {
				return nil
			}
		case <-sub.end: // the person's access changed through this node
			send(liveEnd)
			return nil
		case <-recheck.C:
			if !w.mayStillWatch(q) {
				send(liveEnd)
				return nil
			}
		case <-sub.kick:
			if !w.mayStillWatch(q) {
				send(liveEnd)
				return nil
			}
		}
	}
}

// liveEnd tells the browser the stream ends for good: its script stops
// reconnecting.
var liveEnd = []byte("event: end\ndata: {}\n\n")

// mayStillWatch reports whether the stream's session is still signed in
// and its person's role here still reads monitors. Like any request, it
// counts as the session's use: an open page keeps its session from idling
// out, as a wall screen of the monitors list should.
func (w *Server) mayStillWatch(q *request) bool {
	ctx := q.ctx()
	ws, err := w.app.WebSession(ctx, w.token(q.r))
	if err != nil {
		if errs.KindOf(err) != errs.KindUnauthenticated && ctx.Err() == nil {
			w.log.ErrorContext(ctx, "live recheck", "err", err)
			return true // the database is unwell: not the person's fault
		}
		return false
	}
	// Acting here is not working here: the stream does not move where the
	// person last worked (WebActor remembers the workspace otherwise).
	ws.Session.WorkspaceID = q.actor.WorkspaceID
	actor, err := w.app.WebActor(ctx, ws, q.actor.WorkspaceID)
	if err != nil {
		if k := errs.KindOf(err); k != errs.KindNotFound && k != errs.KindForbidden && k != errs.KindUnauthenticated && ctx.Err() == nil {
			w.log.ErrorContext(ctx, "live recheck", "err", err)
			return true
		}
		return false
	}
	return actor.Require(account.ScopeMonitorsRead) == nil
}
