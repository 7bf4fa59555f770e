// Package pings measures heartbeat pings against a bare handler: closed
// and open loops, a burst, and the pings stored after SIGKILL against
// those acknowledged; docs/benchmarks.md ("Pings") tells the method.
package pings

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
)

// The targets.
const (
	sqliteVsBare = 0.60 // SQLite's acknowledged pings/s over the bare handler's
	postgresRate = 5000 // PostgreSQL's acknowledged pings/s
	// keepUpP99 is the p99 latency, from when a ping was due, within which
	// a target keeps up with the rate offered.
	keepUpP99 = time.Second
	// behindLimit is how far behind its schedule the open loop may fall
	// before it counts a ping as not sent.
	behindLimit = 10 * time.Second
)

type config struct {
	bare                                              bool
	clients, heartbeats, burst, burstConns, rateConns int
	rate                                              float64
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var c config
	fs.BoolVar(&c.bare, "bare", true, "measure the bare net/http handler too, as the baseline")
	fs.IntVar(&c.clients, "clients", 64, "concurrent keep-alive clients of the sustained load")
	fs.IntVar(&c.heartbeats, "heartbeats", 10000, "heartbeats the pings are spread over (each takes 600 pings a minute before it answers 429)")
	fs.Float64Var(&c.rate, "rate", postgresRate, "pings a second offered in an open loop after the sustained load; 0: none")
	fs.IntVar(&c.rateConns, "rate-conns", 1000, "keep-alive connections the open loop may use at once")
	fs.IntVar(&c.burst, "burst", 20000, "pings of the burst sent to each target at once; 0: no burst")
	fs.IntVar(&c.burstConns, "burst-conns", 4000, "connections the burst is sent over, opened beforehand")
	return func(ctx context.Context, e session.Env) error {
		var l syscall.Rlimit
		switch {
		case c.rate < 0 || c.burst < 0 || (c.burst > 0 && (c.burstConns < 1 || c.burstConns > c.burst)):
			return errors.New("-rate and -burst must not be negative, and -burst-conns from 1 to -burst")
		case c.burst > 0 && syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && uint64(c.burstConns+256) > l.Cur:
			return fmt.Errorf("-burst-conns %d: this process may open only %d files (ulimit -n)", c.burstConns, l.Cur)
		}
		if err := session.AtLeast1("-clients, -heartbeats, -rounds and -rate-conns", c.clients, c.heartbeats, e.Rounds, c.rateConns); err != nil {
			return err
		}
		return session.Measure(ctx, "pings", e, c.bare, "Pings", func(s *session.Session) session.Bench { return &bench{Session: s, c: c} })
	}
}

type bench struct {
	*session.Session
	c       config
	targets []*target
}

// target is one server under test and what was measured of it.
type target struct {
	name    string // bare, sqlite, postgres
	srv     *session.Process
	urls    []string // the heartbeats' ping URLs
	dbURL   string   // "" for bare
	rounds  []session.Outcome
	offered offered // the open loop at -rate
	burst   session.Outcome
	acked   int   // every acknowledgement of every phase, warm-ups too
	stored  int64 // pings in the database at the end
	peak    int64 // the server's peak RSS
}

type offered struct {
	session.Outcome
	sent int
}

func (o offered) keepsUp() bool { return o.OK == o.sent && o.P(0.99) <= keepUpP99 }

func (b *bench) Run(ctx context.Context) error {
	if b.c.bare {
		// The same headers, and an acknowledgement of the size and shape of Tocsin's.
		p, err := b.BareChild(ctx, "bare", http.Header{"Content-Type": {"application/json"}, "Cache-Control": {"no-store"}},
			[]byte(`{"ok":true,"signal":"success","receivedAt":"2026-01-01T00:00:00.123456Z"}`+"\n"))
		if err != nil {
			return err
		}
		t := &target{name: "bare", srv: p}
		for i := range b.c.heartbeats { // URLs as long as Tocsin's
			t.urls = append(t.urls, fmt.Sprintf("%s/ping/%032d", p.Base, i))
		}
		b.targets = append(b.targets, t)
	}
	for _, e := range b.Engines {
		if err := b.start(ctx, e); err != nil {
			return fmt.Errorf("%s: %w", e, err)
		}
	}
	err := b.Rotate(len(b.targets), func(r, i int) error {
		t := b.targets[i]
		tr := session.Transport(b.c.clients)
		defer tr.CloseIdleConnections()
		next := func(w, i int) *http.Request { return session.Get(t.urls[(w+i*b.c.clients)%len(t.urls)]) }
		w, o := b.Phase(ctx, t.srv.Pid(), t.dbURL, func(d time.Duration) session.Outcome {
			return session.Closed(ctx, tr, b.c.clients, d, next, acked)
		})
		t.acked += w.OK + o.OK
		t.rounds = append(t.rounds, o)
		b.Logf("round %d, %s: %.0f acknowledged/s, p50 %s, p99 %s, %d not acknowledged",
			r+1, t.name, o.Rate(), session.Dur(o.P(0.5)), session.Dur(o.P(0.99)), o.Failures())
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range b.targets {
		if b.c.rate > 0 {
			w, o := b.Phase(ctx, t.srv.Pid(), t.dbURL, func(d time.Duration) session.Outcome {
				return openLoop(ctx, t, b.c.rate, b.c.rateConns, d)
			})
			t.acked += w.OK + o.OK
			t.offered = offered{o, int(b.c.rate * b.Duration.Seconds())}
			b.Logf("%s: %.0f/s offered: %d acknowledged, p99 %s", t.name, b.c.rate, o.OK, session.Dur(o.P(0.99)))
		}
		if b.c.burst > 0 {
			t.burst = burst(ctx, t, b.c.burst, b.c.burstConns)
			t.acked += t.burst.OK
			b.Logf("%s: burst: %d of %d acknowledged in %s", t.name, t.burst.OK, b.c.burst, session.Dur(t.burst.Elapsed))
		}
		t.peak = session.PeakRSS(t.srv.Pid())
		if t.dbURL == "" {
			continue
		}
		// Every acknowledged ping was durable before its answer: kill the
		// server as a crash would, and count what a new process finds.
		t.srv.Kill()
		var err error
		if t.stored, err = seed.CountPings(ctx, t.dbURL); err != nil {
			return fmt.Errorf("%s: counting the stored pings: %w", t.name, err)
		}
	}
	return ctx.Err()
}

// start serves a fresh database and makes its heartbeats (hourly) through
// the API.
func (b *bench) start(ctx context.Context, e string) error {
	t := &target{name: e}
	var err error
	if t.dbURL, _, err = b.FreshDB(ctx, e); err != nil {
		return err
	}
	// The API makes the heartbeats; its limit is per key, not the pings'.
	if t.srv, err = b.Serve(ctx, e, t.dbURL, "--rate-limit", "1000000"); err != nil {
		return err
	}
	b.targets = append(b.targets, t)
	b.Logf("%s: creating %d heartbeats", e, b.c.heartbeats)
	api, err := b.OwnerAPI(ctx, t.srv, t.dbURL, "--heartbeats", b.c.heartbeats)
	if err != nil {
		return err
	}
	t.urls = make([]string, b.c.heartbeats)
	return seed.Many(ctx, b.c.heartbeats, b.Logf, func(i int) error {
		var h struct{ PingURL string }
		err := api.Post(ctx, "/heartbeats", map[string]any{"name": fmt.Sprintf("bench %d", i),
			"schedule": map[string]int{"periodSeconds": 3600}}, &h)
		t.urls[i] = h.PingURL
		return err
	})
}

// acked wants a 200 with an acknowledgement, which Tocsin sends only once
// the ping is committed.
func acked(_ int, resp *http.Response, body []byte) bool {
	return resp.StatusCode == http.StatusOK && bytes.HasPrefix(body, []byte(`{"ok":true`))
}

// openLoop schedules rate pings a second for d, the i-th due at start +
// i/rate, and sends each on the first of conns senders free; a ping's
// latency counts from when it was due, so a server falling behind shows
// in its latencies rather than in a slower load.
func openLoop(ctx context.Context, t *target, rate float64, conns int, d time.Duration) session.Outcome {
	type due struct {
		i  int
		at time.Time
	}
	n := int(rate * d.Seconds())
	queue := make(chan due, n)
	parts := make([]session.Outcome, conns)
	tr := session.Transport(conns)
	defer tr.CloseIdleConnections()
	var wg sync.WaitGroup
	for c := range conns {
		wg.Go(func() {
			o := &parts[c]
			o.Failed = map[string]int{}
			for p := range queue {
				if ctx.Err() != nil {
					continue
				}
				if time.Since(p.at) > behindLimit {
					o.Failed["not sent: the load generator fell behind"]++
					continue
				}
				session.Do(tr, session.Get(t.urls[p.i%len(t.urls)]).WithContext(ctx), c, acked, o, p.at)
			}
		})
	}
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if wait := time.Until(at); wait > time.Millisecond {
			time.Sleep(wait)
		}
		queue <- due{i, at}
	}
	close(queue)
	wg.Wait()
	return session.Pool(parts, time.Duration(float64(n)/rate*float64(time.Second)))
}

// burst opens conns connections (a GET /healthz each), then releases them
// at once: each sends its share of n pings, one after the other. Elapsed
// is from the release to the last answer.
func burst(ctx context.Context, t *target, n, conns int) session.Outcome {
	parts := make([]session.Outcome, conns)
	release := make(chan struct{})
	var ready, wg sync.WaitGroup
	ready.Add(conns)
	opening := make(chan struct{}, 64) // the listen backlog is finite
	var end sync.Mutex
	var last time.Time
	for c := range conns {
		wg.Go(func() {
			tr := session.Transport(1)
			defer tr.CloseIdleConnections()
			opening <- struct{}{}
			var warm session.Outcome
			session.Do(tr, session.Get(t.srv.Base+"/healthz").WithContext(ctx), c, nil, &warm, time.Now())
			<-opening
			ready.Done()
			<-release
			for i := c; i < n; i += conns {
				session.Do(tr, session.Get(t.urls[i%len(t.urls)]).WithContext(ctx), c, acked, &parts[c], time.Now())
			}
			end.Lock()
			if now := time.Now(); now.After(last) {
				last = now
			}
			end.Unlock()
		})
	}
	ready.Wait()
	start := time.Now()
	close(release)
	wg.Wait()
	return session.Pool(parts, last.Sub(start))
}

func (b *bench) Report(w *session.Report) {
	w.Printf("Load: %d keep-alive clients in a closed loop over %d heartbeats; %s warm-up, %s measured, %d round(s) in a rotating order. "+
		"An acknowledged ping is a 200 with an acknowledgement; latencies are of acknowledged pings.\n\n## Sustained load\n",
		b.c.clients, b.c.heartbeats, b.Warmup, b.Duration, b.Rounds)
	w.Table("target", "acknowledged/s:", "vs bare (per round)", "p50:", "p99:", "not acknowledged", "server CPU per ping:",
		"PostgreSQL CPU per ping:", "machine busy:", "other:", "server peak RSS:")
	rates := map[string]float64{}
	bare := b.byName("bare")
	for _, t := range b.targets {
		all := session.Pool(t.rounds, 0)
		var srv, pg time.Duration
		var busy, other float64
		for _, o := range t.rounds {
			n := float64(len(t.rounds))
			srv, pg, busy, other = srv+o.CPU.ServerTime, pg+o.CPU.PostgresTime, busy+o.CPU.Busy/n, other+o.CPU.Other/n
		}
		rates[t.name] = session.Median(session.Rates(t.rounds))
		ratio := "–"
		if bare != nil && t != bare {
			ratio = fmt.Sprintf("**%.2f** (%s)", rates[t.name]/rates["bare"], session.Join(session.Ratios(t.rounds, bare.rounds), 2))
		}
		w.Printf("| %s | **%.0f** | %s | %s | %s | %s | %s | %s | %.0f%% | %.0f%% | %s |\n", t.name, rates[t.name], ratio, session.Dur(all.P(0.5)),
			session.Dur(all.P(0.99)), all.FailedString(), session.Dur(all.PerOK(srv)), session.Dur(all.PerOK(pg)), busy, other, session.MiB(t.peak, 0))
	}
	if b.c.rate > 0 {
		w.Printf("\n## Open loop\n\nPings sent on schedule over up to %d connections, answered or not; latencies from when each was due. "+
			"A target keeps up when it acknowledges every ping with a p99 within %s.\n", b.c.rateConns, session.Dur(keepUpP99))
		w.Table("target", "offered/s:", "pings:", "acknowledged:", "not acknowledged", "acknowledged/s:", "p50:", "p99:", "kept up",
			"server CPU per ping:", "PostgreSQL CPU per ping:")
		for _, t := range b.targets {
			r, kept := t.offered, "yes"
			if !r.keepsUp() {
				kept = "**no**"
			}
			w.Printf("| %s | %.0f | %d | **%d** | %s | %.0f | %s | %s | %s | %s | %s |\n", t.name, b.c.rate, r.sent, r.OK, r.FailedString(), r.Rate(),
				session.Dur(r.P(0.5)), session.Dur(r.P(0.99)), kept, session.Dur(r.PerOK(r.CPU.ServerTime)), session.Dur(r.PerOK(r.CPU.PostgresTime)))
		}
	}
	if b.c.burst > 0 {
		w.Printf("\n## Burst\n\n%d pings over %d connections opened beforehand, released together.\n", b.c.burst, b.c.burstConns)
		w.Table("target", "acknowledged:", "not acknowledged", "all answered in:", "p99:")
		for _, t := range b.targets {
			w.Printf("| %s | **%d** | %s | %s | %s |\n", t.name, t.burst.OK, t.burst.FailedString(), session.Dur(t.burst.Elapsed), session.Dur(t.burst.P(0.99)))
		}
	}
	w.Targets()
	if r, ok := rates["sqlite"]; ok && bare != nil {
		w.Target("SQLite against the bare handler", fmt.Sprintf("≥ %.2f", sqliteVsBare),
			fmt.Sprintf("%.2f (%.0f vs %.0f/s)", r/rates["bare"], r, rates["bare"]), r/rates["bare"] >= sqliteVsBare)
	}
	if r, ok := rates["postgres"]; ok {
		w.Target(fmt.Sprintf("PostgreSQL, acknowledged pings/s, closed loop of %d clients", b.c.clients), fmt.Sprintf("≥ %d", postgresRate),
			fmt.Sprintf("%.0f", r), r >= postgresRate)
		if o := b.byName("postgres").offered; b.c.rate >= postgresRate {
			w.Target(fmt.Sprintf("PostgreSQL keeps up with %.0f pings/s offered", b.c.rate), "every ping acknowledged, p99 ≤ "+session.Dur(keepUpP99),
				fmt.Sprintf("%d of %d, p99 %s", o.OK, o.sent, session.Dur(o.P(0.99))), o.keepsUp())
		}
	}
	for _, t := range b.targets {
		if t.dbURL == "" {
			continue
		}
		if b.c.burst > 0 {
			w.Target(t.name+": a burst is queued and answered, none dropped", fmt.Sprintf("%d of %d acknowledged", b.c.burst, b.c.burst),
				fmt.Sprint(t.burst.OK), t.burst.OK == b.c.burst)
		}
		w.Target(t.name+": every acknowledged ping stored", fmt.Sprint(t.acked), fmt.Sprintf("%d stored", t.stored), t.stored >= int64(t.acked))
	}
}

func (b *bench) byName(name string) *target {
	for _, t := range b.targets {
		if t.name == name {
			return t
		}
	}
	return nil
}
