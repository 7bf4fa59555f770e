package app

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ratelimit"
	"github.com/tocsin/tocsin/internal/store"
)

// Receiving pings, and judging heartbeat deadlines.
//
// A ping is acknowledged only once it is committed: handlers queue pings
// on a lane, whose one writer (scheduler.Pings) takes whatever has queued
// up and stores it as one transaction (group commit, WritePings), which
// answers each. Under load the batches grow by themselves, so durability
// costs a transaction per batch, not per ping.

const (
	// pingQueue bounds the pings waiting for the writers (shared among
	// the lanes); a burst beyond it waits for room (up to PingWait) rather
	// than being dropped.
	pingQueue = 20_000
	// PingWait is the longest a ping waits to be stored before it is
	// answered 503 (and not stored): the default of Config.PingWait. The
	// sweeper judges deadlines this far in the past, so that no
	// acknowledged ping arrives after the deadline it answers was judged.
	PingWait = 5 * time.Second
	// pingSlack is the least time a ping must have left to join a
	// transaction: one about to give up would cut the others' time short.
	pingSlack = 500 * time.Millisecond
	// spanEvery is how often a node records that it is receiving pings.
	spanEvery = 5 * time.Second
)

// Ping rate limits, per node (a ping costs no database round trip for
// them): generous for jobs, tight for guessing tokens.
const (
	// PingsPerMinute a heartbeat may receive, in bursts of PingBurst.
	PingsPerMinute = 600
	PingBurst      = 100
	// UnknownPingsPerMinute a client address may send to URLs that name no
	// heartbeat before all its pings are refused for a while.
	UnknownPingsPerMinute = 60
	UnknownPingBurst      = 60
)

// RateLimitedError refuses a ping for now.
type RateLimitedError struct{ RetryAfter time.Duration }

// Seconds is how long to wait, in whole seconds, rounded up and at least
// one: what Retry-After says, and the message too.
func (e *RateLimitedError) Seconds() int {
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

func (e *RateLimitedError) Error() string {
	return "too many pings; retry in " + strconv.Itoa(e.Seconds()) + "s"
}

func (e *RateLimitedError) Unwrap() error {
	return &errs.Error{Kind: errs.KindRateLimited, Message: e.Error()}
}

// ErrPingsBusy is returned when a ping could not be stored within PingWait.
var ErrPingsBusy = &errs.Error{Kind: errs.KindUnavailable, Message: "pings cannot be stored right now; retry"}

// QueuedPing is a ping on its lane's queue, waiting for the writer.
type QueuedPing struct {
	in       heartbeat.Arrival
	deadline time.Time
	// state is reqQueued until either the writer takes the ping into a
	// transaction or its handler gives up: whichever comes first decides,
	// so a ping answered 503 is never stored and a stored one is answered.
	state atomic.Int32
	done  chan pingResult // capacity 1
	timer *time.Timer     // the handler's wait
}

const (
	reqQueued int32 = iota
	reqTaken
	reqAbandoned
)

type pingResult struct {
	out heartbeat.Outcome
	err error
}

// pinger holds the lanes of pings: as many as the store writes batches
// at once (store.PingWriters), each with one writer. A heartbeat's pings
// always take the same lane, by their token, so they are stored in the
// order they came, and two lanes' transactions never wait on each other's
// heartbeats.
type pinger struct {
	lanes []*PingLane
	held  atomic.Bool
}

func newLanes(n int) []*PingLane {
	n = max(1, n)
	lanes := make([]*PingLane, n)
	for i := range lanes {
		lanes[i] = &PingLane{queue: make(chan *QueuedPing, pingQueue/n)}
	}
	return lanes
}

// PingLane is one writer's queue of pings.
type PingLane struct {
	queue chan *QueuedPing
	ins   []heartbeat.Arrival // the writer's, reused batch to batch
}

// Queue is where the lane's pings wait for its writer, which takes them
// off in batches for WritePings.
func (l *PingLane) Queue() <-chan *QueuedPing { return l.queue }

// PingLanes hands the lanes of pings to their writers (scheduler.Pings),
// one writer each, until release: a second holder is refused, as two
// writers on a lane would store a heartbeat's pings out of order. While
// no writer holds them, a ping waits PingWait and is answered
// ErrPingsBusy, never stored.
func (a *App) PingLanes() (lanes []*PingLane, release func(), err error) {
	if !a.pings.held.CompareAndSwap(false, true) {
		return nil, nil, errors.New("the ping writers are already running")
	}
	return a.pings.lanes, func() { a.pings.held.Store(false) }, nil
}

// lane is the lane of the ping whose token hashes to hash.
func (p *pinger) lane(hash []byte) *PingLane {
	if len(p.lanes) == 1 || len(hash) < 4 {
		return p.lanes[0]
	}
	return p.lanes[binary.BigEndian.Uint32(hash)%uint32(len(p.lanes))]
}

// Ping stores one ping and returns its outcome once it is committed,
// with the budget its answer's rate-limit headers report: the heartbeat's
// own when the token names one, otherwise the client address's budget for
// URLs that name no heartbeat. The ping's time is now; token is the secret
// from the URL. Whatever bytes it carries are made storable
// (heartbeat.Arrival.Clean): a ping is never refused for them.
func (a *App) Ping(ctx context.Context, token string, in heartbeat.Arrival) (heartbeat.Outcome, RateStatus, error) {
	in = in.Clean() // never refused for its bytes
	in.TokenHash = heartbeat.HashToken(token)
	in.Ping.At = a.now()
	guess := "u:" + in.Client
	if g := a.pingLimits.Peek(guess, in.Ping.At, UnknownPingsPerMinute, UnknownPingBurst); !g.OK && !a.knownTokens.has(in.TokenHash) {
		return heartbeat.Outcome{}, unknownPingStatus(g), &RateLimitedError{RetryAfter: g.Retry}
	}
	own := a.pingLimits.Take("t:"+string(in.TokenHash), in.Ping.At, PingsPerMinute, PingBurst)
	if !own.OK {
		return heartbeat.Outcome{}, pingStatus(own), &RateLimitedError{RetryAfter: own.Retry}
	}
	out, err := a.enqueuePing(ctx, a.pings.lane(in.TokenHash), in)
	switch {
	case err != nil:
	case out.Found:
		a.knownTokens.add(in.TokenHash)
	default:
		return out, unknownPingStatus(a.pingLimits.Take(guess, in.Ping.At, UnknownPingsPerMinute, UnknownPingBurst)), nil
	}
	return out, pingStatus(own), err
}

// PingBudget reports what the rate-limit headers say of a ping refused
// before Ping saw it (a bad method, a malformed URL): a heartbeat's own
// budget when the token names one (as far as this node knows), otherwise
// the client address's budget for URLs that name no heartbeat.
func (a *App) PingBudget(token, client string) RateStatus {
	now := a.now()
	var rs RateStatus
	if hash := heartbeat.HashToken(token); a.knownTokens.has(hash) {
		rs = pingStatus(a.pingLimits.Peek("t:"+string(hash), now, PingsPerMinute, PingBurst))
	} else {
		rs = unknownPingStatus(a.pingLimits.Peek("u:"+client, now, UnknownPingsPerMinute, UnknownPingBurst))
	}
	rs.Allowed, rs.RetryAfter = true, 0 // refused for what it said, not for its rate
	return rs
}

func pingStatus(st ratelimit.Status) RateStatus {
	return RateStatus{Allowed: st.OK, Limit: PingsPerMinute, Remaining: st.Left, Reset: st.Reset, RetryAfter: st.Retry}
}

func unknownPingStatus(st ratelimit.Status) RateStatus {
	return RateStatus{Allowed: st.OK, Limit: UnknownPingsPerMinute, Remaining: st.Left, Reset: st.Reset, RetryAfter: st.Retry}
}

// maxKnownTokens bounds the memory of tokenSet (about 100 bytes each).
const maxKnownTokens = 100_000

// tokenSet remembers the token hashes that named a heartbeat on this node.
// An address blocked for sending unknown tokens keeps getting its known
// jobs' pings through: many jobs can share one address (a NAT, a proxy),
// and one of them calling a rotated URL must not silence the others.
type tokenSet struct {
	mu sync.RWMutex
	m  map[string]struct{}
}

func (s *tokenSet) add(hash []byte) {
	if s.has(hash) {
		return // the usual case: read-locked only
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[string(hash)]; ok {
		return
	}
	if s.m == nil || len(s.m) >= maxKnownTokens {
		s.m = make(map[string]struct{}) // start over: a known job is known again at its next ping
	}
	s.m[string(hash)] = struct{}{}
}

func (s *tokenSet) has(hash []byte) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.m[string(hash)]
	return ok
}

// pingReqs recycles requests, with their channel and timer: one is made
// for every ping otherwise.
var pingReqs = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &QueuedPing{done: make(chan pingResult, 1), timer: t}
}}

func (a *App) enqueuePing(ctx context.Context, l *PingLane, in heartbeat.Arrival) (heartbeat.Outcome, error) {
	wait := a.cfg.PingWait
	req := pingReqs.Get().(*QueuedPing)
	req.in, req.deadline = in, time.Now().Add(wait)
	req.state.Store(reqQueued)
	req.timer.Reset(wait)
	recycle := func() {
		req.timer.Stop() // since Go 1.23 no stale tick can follow
		req.in = heartbeat.Arrival{}
		pingReqs.Put(req)
	}
	select {
	case l.queue <- req: // the usual case; sparing ctx.Done() its channel
	default:
		select {
		case l.queue <- req:
		case <-req.timer.C:
			recycle()
			return heartbeat.Outcome{}, ErrPingsBusy
		case <-ctx.Done():
			recycle()
			return heartbeat.Outcome{}, ctx.Err()
		}
	}
	select {
	case r := <-req.done:
		recycle()
		return r.out, r.err
	case <-req.timer.C:
		if req.state.CompareAndSwap(reqQueued, reqAbandoned) {
			// The writer will still answer into done: not recycled.
			return heartbeat.Outcome{}, ErrPingsBusy
		}
		// The writer has it in a transaction, which ends by the deadline:
		// its answer is the truth.
		r := <-req.done
		recycle()
		return r.out, r.err
	}
}

// WritePings stores batch, pings its writer took off lane l's queue, as
// one transaction, and answers each: a ping whose handler gave up, or
// with too little time left to share the transaction, is answered
// ErrPingsBusy and not stored. The transaction ends by the earliest
// deadline in it; a batch the database refuses for what one ping carries
// is stored apart, so that only that ping fails.
func (a *App) WritePings(l *PingLane, batch []*QueuedPing) {
	now := time.Now()
	ins := l.ins[:0] // only the lane's writer uses it
	defer func() { clear(ins); l.ins = ins[:0] }()
	live := batch[:0]
	var deadline time.Time
	for _, r := range batch {
		if r.deadline.Sub(now) < pingSlack || !r.state.CompareAndSwap(reqQueued, reqTaken) {
			r.done <- pingResult{err: ErrPingsBusy} // not stored; its handler gives up, or has
			continue
		}
		ins = append(ins, r.in)
		live = append(live, r)
		if deadline.IsZero() || r.deadline.Before(deadline) {
			deadline = r.deadline
		}
	}
	if len(live) == 0 {
		return
	}
	// The transaction ends by the earliest deadline in it, so every ping
	// is answered within its wait and the sweeper's margin holds.
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	outs, changes, err := a.RecordPings(ctx, ins)
	if store.IsDataError(err) {
		a.isolatePings(ctx, live)
		return
	}
	if err != nil {
		a.log.Warn("storing pings", "err", err, "pings", len(ins))
		for _, r := range live {
			r.done <- pingResult{err: ErrPingsBusy}
		}
		return
	}
	for i, r := range live {
		r.done <- pingResult{out: outs[i]}
	}
	a.logChanges(changes)
}

// RecordPings stores a batch of pings at once, as a ping writer does:
// each moves its heartbeat's state machine by app's decisions, and each
// state change is recorded with what follows from it. It returns each
// ping's outcome and the state changes made; when it returns without an
// error every recorded ping is durable.
func (a *App) RecordPings(ctx context.Context, batch []heartbeat.Arrival) ([]heartbeat.Outcome, []StateChange, error) {
	return a.store.RecordPings(ctx, a.steps, batch)
}

// ApplyPings starts applying the pings the store holds back (SQLite's
// journal), beside the ping writer, if they are due, and returns when
// they will be next (zero: none pending) and the error of an apply that
// failed since the last call. The ping writers call it between batches,
// and when it said the pings would be due.
func (a *App) ApplyPings(ctx context.Context) (time.Time, error) {
	return a.store.ApplyPings(ctx, a.steps)
}

// FlushPings applies every acknowledged ping the store holds back, so
// that what follows reads them from the tables, replaying first what a
// stopped process left in SQLite's journal.
func (a *App) FlushPings(ctx context.Context) error {
	return a.store.FlushPings(ctx, a.steps)
}

// isolatePings stores the pings of a batch the database refused for what
// one of them carries, so that one tenant's ping never fails another's:
// in arrival order, the batch split in halves down to the ping refused
// (storeApart). Only a failed batch pays for it.
func (a *App) isolatePings(ctx context.Context, live []*QueuedPing) {
	slices.SortStableFunc(live, func(x, y *QueuedPing) int { return x.in.Ping.At.Compare(y.in.Ping.At) })
	ins := make([]heartbeat.Arrival, len(live))
	for i, r := range live {
		ins[i] = r.in
	}
	res := make([]pingResult, len(live))
	changes := a.storeApart(ctx, ins, res)
	for i, r := range live {
		r.done <- res[i]
	}
	a.logChanges(changes)
}

// storeApart stores ins and puts each one's answer in res. A batch the
// database refuses for its content is stored as two halves, each the same
// way; a single ping refused is stored cleaned once more, and if it is
// still refused, answered with that error alone. A data error is never
// retried as it was, so this ends after about 2·log2(len(ins)) batches.
func (a *App) storeApart(ctx context.Context, ins []heartbeat.Arrival, res []pingResult) []StateChange {
	outs, changes, err := a.RecordPings(ctx, ins)
	switch {
	case err == nil:
		for i := range res {
			res[i] = pingResult{out: outs[i]}
		}
		return changes
	case !store.IsDataError(err):
		a.log.Warn("storing pings", "err", err, "pings", len(ins))
		for i := range res {
			res[i] = pingResult{err: ErrPingsBusy}
		}
		return nil
	case len(ins) > 1:
		h := len(ins) / 2
		return append(a.storeApart(ctx, ins[:h], res[:h]), a.storeApart(ctx, ins[h:], res[h:])...)
	}
	outs, changes, cerr := a.RecordPings(ctx, []heartbeat.Arrival{ins[0].Clean()})
	switch {
	case cerr == nil:
		a.log.Warn("a ping the database refused was stored cleaned", "err", err)
		res[0] = pingResult{out: outs[0]}
		return changes
	case store.IsDataError(cerr):
		res[0] = pingResult{err: fmt.Errorf("the database refuses this ping even cleaned: %w", cerr)}
	default:
		a.log.Warn("storing pings", "err", cerr, "pings", 1)
		res[0] = pingResult{err: ErrPingsBusy}
	}
	return nil
}

func (a *App) logChanges(changes []StateChange) {
	for _, c := range changes {
		a.log.Info("heartbeat state changed", "heartbeat", c.SubjectID, "from", c.From, "to", c.To, "cause", c.Cause)
	}
}

// HeartbeatSweeper keeps one node's record of receiving pings current and
// judges heartbeat deadlines, a sweep at a time (Tick); its runner
// (scheduler.Heartbeats) says when. Every node runs one; the store's
// leases keep nodes from judging one heartbeat twice.
type HeartbeatSweeper struct {
	a        *App
	owner    string
	span     int64
	lastSeen time.Time // when this node's span was last recorded
	// began is when this node's span began, while it is still to be
	// asked whether the service was receiving pings before (zero: asked).
	began time.Time
	// outage is one that ended as this node's span began, while it is
	// still to be recorded on the heartbeats (zero: none).
	outage [2]time.Time
}

// NewHeartbeatSweeper makes the sweeper of node.
func (a *App) NewHeartbeatSweeper(node string) *HeartbeatSweeper {
	return &HeartbeatSweeper{a: a, owner: node + "/" + rand.Text()[:10]}
}

// Tick records, if it is due, that this node is receiving pings; when
// that begins a new span, records on the heartbeats the outage of the
// service before it, if there was one (no node receiving pings); and
// judges the deadlines that have passed: only up to when this node last
// knew itself receiving pings, and no later than an acknowledged ping
// could still be waiting to be stored. It returns the state changes made.
func (s *HeartbeatSweeper) Tick(ctx context.Context) ([]StateChange, error) {
	a := s.a
	if now := a.now(); s.lastSeen.IsZero() || now.Sub(s.lastSeen) >= spanEvery {
		id, err := a.store.TouchSpan(ctx, s.owner, s.span, s.lastSeen, now, heartbeat.SpanGap)
		if err != nil {
			return nil, fmt.Errorf("recording that this node receives pings: %w", err)
		}
		if id != s.span {
			s.began = now
		}
		s.span, s.lastSeen = id, now
	}
	var all []StateChange
	if !s.began.IsZero() {
		from, outage, err := a.store.OutageBefore(ctx, s.span, s.began, heartbeat.SpanGap)
		if err != nil {
			return nil, fmt.Errorf("looking for an outage before this node: %w", err)
		}
		if outage {
			// One not recorded yet is recorded with this one, from its start.
			if s.outage[1].IsZero() {
				s.outage[0] = from
			}
			s.outage[1] = s.began
		}
		s.began = time.Time{}
	}
	if to := s.outage[1]; !to.IsZero() {
		changes, err := a.recordOutage(ctx, s.outage[0], to)
		all = append(all, changes...)
		if err != nil {
			return all, fmt.Errorf("recording the outage from %s to %s: %w", s.outage[0].Format(time.RFC3339), to.Format(time.RFC3339), err)
		}
		s.outage = [2]time.Time{}
	}
	at := a.now().Add(-a.cfg.PingWait)
	if s.lastSeen.Before(at) {
		at = s.lastSeen
	}
	var refused []error
	for {
		changes, claimed, err := a.SweepHeartbeats(ctx, s.owner, at, 500)
		all = append(all, changes...)
		// A verdict the database refused is set aside, leased, while the
		// others were stored: the sweep goes on to the next heartbeats.
		if store.IsDataError(err) && claimed == 500 {
			refused = append(refused, err)
			continue
		}
		if err != nil || claimed < 500 {
			return all, errors.Join(append(refused, err)...)
		}
	}
}

// Stop records, as this node stops, that it was receiving pings until
// now: an outage after it then counts from the stop, not from the span's
// last record, up to spanEvery before. The sweep's runner calls it once
// its context has ended, with a context of its own.
func (s *HeartbeatSweeper) Stop(ctx context.Context) error {
	now := s.a.now()
	if s.span == 0 || now.Sub(s.lastSeen) > heartbeat.SpanGap {
		return nil
	}
	_, err := s.a.store.TouchSpan(ctx, s.owner, s.span, s.lastSeen, now, heartbeat.SpanGap)
	return err
}
