// Package deliveries measures webhook deliveries a second from an outbox
// filled while no server ran, next to a bare sender, and the time from a
// monitor's DOWN to its webhook; docs/benchmarks.md ("Deliveries") tells
// the method.
package deliveries

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
)

// latencyTarget: a monitor's DOWN reaches its webhook within this, p99.
const latencyTarget = 2 * time.Second

// interval is the monitors' check interval: the shortest a monitor may have.
const interval = monitor.MinIntervalSeconds * time.Second

type config struct {
	deliveries, channels, concurrency int
	monitors, confirmations, latency  int
	bare                              bool
	timeout                           time.Duration
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var c config
	var receive bool
	fs.IntVar(&c.deliveries, "deliveries", 20000, "manual incidents written before the notifier starts, one webhook delivery each")
	fs.IntVar(&c.channels, "channels", 0, "webhook channels (each in a workspace of its own) the deliveries are spread over; "+
		"0: as few as keep every channel within its rate bound of events a minute")
	fs.IntVar(&c.concurrency, "concurrency", 32, "the bare sender's deliveries in flight (the notifier's bound in tocsin serve)")
	fs.BoolVar(&c.bare, "bare", true, "measure the bare sender too, as the baseline")
	fs.IntVar(&c.monitors, "monitors", 300, "HTTP monitors that go DOWN together in the latency measurement; 0: none")
	fs.IntVar(&c.confirmations, "confirmations", monitor.DefaultConfirmations, "consecutive down results before DOWN")
	fs.IntVar(&c.latency, "latency-rounds", 1, "latency measurements per engine, each on a fresh database; their samples are pooled")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "the longest one measured phase may take before the run fails")
	fs.BoolVar(&receive, "receive", false, "internal: run the webhook receiver")
	return func(ctx context.Context, e session.Env) error {
		if receive {
			return serveReceiver(ctx, e)
		}
		switch {
		case c.channels < 0 || c.channels > c.deliveries || c.monitors < 0:
			return errors.New("-channels must be from 0 to -deliveries, -monitors not negative")
		case c.confirmations < 1 || c.confirmations > monitor.MaxConfirmations:
			return fmt.Errorf("-confirmations must be from 1 to %d", monitor.MaxConfirmations)
		}
		if err := session.AtLeast1("-deliveries, -rounds, -concurrency and -latency-rounds", c.deliveries, e.Rounds, c.concurrency, c.latency); err != nil {
			return err
		}
		if c.channels == 0 {
			c.channels = autoChannels(c.deliveries)
		}
		title := fmt.Sprintf("Deliveries: %d events to %d webhook channels; %d monitors going DOWN", c.deliveries, c.channels, c.monitors)
		return session.Measure(ctx, "deliveries", e, c.bare, title, func(s *session.Session) session.Bench {
			return &bench{Session: s, c: c, throughput: map[string][]*round{}, latency: map[string]*latency{}}
		})
	}
}

// autoChannels is the fewest webhook channels that take n deliveries
// without holding one back: a channel takes notify.RateBound events a
// minute and holds the rest for a summary.
func autoChannels(n int) int {
	bound := notify.RateBound(notify.Webhook)
	return max(1, (n+bound-1)/bound)
}

type bench struct {
	*session.Session
	c          config
	recv       session.Client // the receiver child's
	targets    []string
	throughput map[string][]*round
	latency    map[string]*latency
}

// round is one target's delivery of -deliveries events.
type round struct {
	elapsed time.Duration // from the first attempt until all were handled
	recv    stats
	store   map[notify.Status]int // engines: deliveries by status at the end
	cpu     session.Share
}

func (r *round) rate() float64 { return float64(r.recv.Unique) / r.elapsed.Seconds() }

// latency pools an engine's DOWN deliveries: arrival − data.confirmedAt.
type latency struct {
	down  int
	total []time.Duration
}

func (b *bench) Run(ctx context.Context) error {
	ch, err := b.Child(ctx, "receiver", "http://", nil, "-receive")
	if err != nil {
		return err
	}
	b.recv = session.Client{Base: ch.Base}
	if b.c.bare {
		b.targets = append(b.targets, "bare")
	}
	b.targets = append(b.targets, b.Engines...)
	err = b.Rotate(len(b.targets), func(r, i int) error {
		t, measure := b.targets[i], b.tocsinRound
		if t == "bare" {
			measure = b.bareRound
		}
		rd, err := measure(ctx, t)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		b.throughput[t] = append(b.throughput[t], rd)
		b.Logf("round %d, %s: %d delivered in %s, %.0f/s", r+1, t, rd.recv.Unique, session.Dur(rd.elapsed), rd.rate())
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range b.Engines {
		b.latency[e] = &latency{}
		for range b.c.latency * min(b.c.monitors, 1) {
			if err := b.latencyRound(ctx, e); err != nil {
				return fmt.Errorf("latency, %s: %w", e, err)
			}
		}
	}
	return nil
}

// hookURL is where channel i's deliveries go.
func (b *bench) hookURL(i int) string { return fmt.Sprintf("%s/hook/%d", b.recv.Base, i) }

// stats reads the receiver's counts since its last reset, which gives it
// the channels' secrets.
func (b *bench) stats(ctx context.Context) (s stats, err error) {
	err = b.recv.Do(ctx, http.MethodGet, "/stats", nil, &s)
	return s, err
}

// tocsinRound writes the incidents on a fresh database of engine, then
// starts `tocsin serve` and times its notifier.
func (b *bench) tocsinRound(ctx context.Context, engine string) (*round, error) {
	dbURL, keys, err := b.FreshDB(ctx, engine)
	if err != nil {
		return nil, err
	}
	b.Logf("%s: writing %d incidents over %d workspaces, no server running", engine, b.c.deliveries, b.c.channels)
	secrets, err := seed.Incidents(ctx, dbURL, keys, b.c.channels, b.c.deliveries, b.hookURL, b.Logf)
	if err != nil {
		return nil, err
	}
	if err := b.recv.Post(ctx, "/reset", secrets, nil); err != nil {
		return nil, err
	}
	raw, err := seed.OpenRaw(dbURL)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	r := &round{}
	c0 := session.TakeSample()
	launched := time.Now()
	srv, err := b.Serve(ctx, "tocsin-"+engine, dbURL)
	if err != nil {
		return nil, err
	}
	// One held back by its channel's rate bound never arrives: the
	// store says when none is pending.
	var lastStore time.Time
	r.recv, err = b.await(ctx, b.c.timeout-time.Since(launched), func(s stats) (done bool, err error) {
		if s.Unique >= b.c.deliveries || time.Since(lastStore) >= time.Second {
			lastStore = time.Now()
			r.store, err = statuses(ctx, raw)
			done = r.store[notify.Pending] == 0 && s.Unique >= r.store[notify.Succeeded]
		}
		return done, err
	})
	end := time.Now()
	r.cpu = session.Split(c0, session.TakeSample(), srv.Pid(), b.Postgres(ctx, dbURL)) // while the server's backends live
	srv.Stop(30 * time.Second)
	if err != nil {
		return nil, err
	}
	var first int64 // the first attempt's start, µs
	if err := raw.QueryRowContext(ctx, `SELECT MIN(started_at) FROM delivery_attempts`).Scan(&first); err != nil {
		return nil, err
	}
	r.elapsed = end.Sub(time.UnixMicro(first))
	if r.recv, err = b.stats(ctx); err != nil {
		return nil, err
	}
	r.store, err = statuses(ctx, raw)
	return r, err
}

// bareRound is the baseline: this process POSTs as many signed bodies of
// the same size to the same receiver, over as many channels, with the
// same concurrency; no database, no leases.
func (b *bench) bareRound(ctx context.Context, _ string) (*round, error) {
	s := newBareSender(b.c.channels, b.hookURL)
	if err := b.recv.Post(ctx, "/reset", s.secrets, nil); err != nil {
		return nil, err
	}
	r := &round{}
	sent := make(chan struct{})
	c0 := session.TakeSample()
	start := time.Now()
	go func() {
		defer close(sent)
		s.send(ctx, b.c.concurrency, b.c.deliveries)
	}()
	last := -1
	var err error
	r.recv, err = b.await(ctx, b.c.timeout, func(s stats) (bool, error) {
		all := s.Unique >= b.c.deliveries
		select {
		case <-sent: // the sender is done: so is the receiver once its count stands
			all, last = all || s.Unique == last, s.Unique
		default:
		}
		return all, nil
	})
	end := time.Now()
	r.cpu = session.Split(c0, session.TakeSample(), os.Getpid(), nil)
	<-sent
	if err != nil {
		return nil, err
	}
	r.elapsed = end.Sub(start)
	r.recv, err = b.stats(ctx)
	return r, err
}

// await polls the receiver every 10 ms until cond holds of its counts,
// or limit has passed.
func (b *bench) await(ctx context.Context, limit time.Duration, cond func(stats) (bool, error)) (s stats, err error) {
	err = session.Poll(ctx, 10*time.Millisecond, limit, func() (bool, error) {
		if s, err = b.stats(ctx); err != nil {
			return false, err
		}
		return cond(s)
	})
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w: the receiver has %d deliveries (%d duplicates, %d bad signatures; by state %v)", err, s.Unique, s.Duplicates, s.BadSignatures, s.States)
	}
	return s, err
}

// latencyRound runs `tocsin serve` on a fresh database, makes a webhook
// channel that hears state changes and the monitors of a local target
// through the API, waits until every monitor is UP, makes the target
// answer 500, and collects the DOWN changes the receiver records.
func (b *bench) latencyRound(ctx context.Context, engine string) error {
	dbURL, _, target, err := seed.Fresh(ctx, b.Session, engine)
	if err != nil {
		return err
	}
	srv, err := b.Serve(ctx, "tocsin-"+engine+"-latency", dbURL, "--rate-limit", "1000000")
	if err != nil {
		return err
	}
	defer srv.Stop(30 * time.Second)
	api, err := b.OwnerAPI(ctx, srv, dbURL, "--monitors", b.c.monitors)
	if err != nil {
		return err
	}
	var ch struct{ SigningSecret string }
	if err := api.Post(ctx, "/notification-channels", map[string]any{"name": "receiver", "kind": "webhook",
		"config": map[string]string{"url": b.hookURL(0)}, "events": []string{"monitor.state_changed"}}, &ch); err != nil {
		return err
	}
	if err := b.recv.Post(ctx, "/reset", []string{ch.SigningSecret}, nil); err != nil {
		return err
	}
	err = seed.Many(ctx, b.c.monitors, b.Logf, func(i int) error {
		return api.Post(ctx, "/monitors", map[string]any{"type": "http", "name": fmt.Sprintf("bench %d", i), "intervalSeconds": int(interval / time.Second),
			"config": map[string]any{"url": fmt.Sprintf("%s/%d", target.URL, i), "confirmations": b.c.confirmations}}, nil)
	})
	if err != nil {
		return err
	}
	b.Logf("latency, %s: %d monitors every %s; waiting until all are UP", engine, b.c.monitors, interval)
	// every monitor has changed to state
	all := func(state monitor.State) func(stats) (bool, error) {
		return func(s stats) (bool, error) { return s.States[string(state)] >= b.c.monitors, nil }
	}
	s, err := b.await(ctx, 2*interval+30*time.Second, all(monitor.StateUp))
	if err != nil {
		return err
	}
	// The UP changes count against the channel's rate bound too: when they
	// and the DOWN ones would not fit in one window, let it end.
	if 2*b.c.monitors > notify.RateBound(notify.Webhook) {
		wait := time.Until(time.Unix(0, s.First).Add(notify.RateWindow + time.Second))
		b.Logf("latency, %s: waiting %s for the channel's rate window to end", engine, session.Dur(wait))
		if err := session.Sleep(ctx, wait); err != nil {
			return err
		}
	}
	target.Set(http.StatusInternalServerError)
	limit := time.Duration(b.c.confirmations+1)*interval + 30*time.Second
	if s, err = b.await(ctx, limit, all(monitor.StateDown)); ctx.Err() != nil {
		return err
	}
	l := b.latency[engine]
	l.down += b.c.monitors
	for _, d := range s.Down {
		l.total = append(l.total, time.Duration(d.Arrived-d.At))
	}
	slices.Sort(l.total)
	b.Logf("latency, %s: %d of %d DOWN changes delivered", engine, len(s.Down), b.c.monitors)
	return nil
}

func (b *bench) Report(w *session.Report) {
	w.Printf("Throughput: per target and round, %d incident.opened deliveries over %d webhook channels (each takes %d events a minute) "+
		"to the receiver, which verifies every signature and answers 204. Engines: the incidents written first with no server "+
		"running, the clock from the first attempt the store records until every delivery is handled and none is pending. "+
		"Bare: this process POSTs as many signed bodies, %d in flight. %d round(s), rotating order, each engine round on a fresh database.\n",
		b.c.deliveries, b.c.channels, notify.RateBound(notify.Webhook), b.c.concurrency, b.Rounds)
	w.Table("target", "deliveries/s:", "vs bare:", "per round", "delivered:", "duplicates:", "bad signatures:", "held:",
		"sender CPU per delivery:", "PostgreSQL CPU per delivery:", "other processes:")
	medians := map[string]float64{}
	for _, t := range b.targets {
		var rates, other []float64
		var delivered, dups, bad, held int
		var srv, pg time.Duration
		for _, r := range b.throughput[t] {
			rates, other = append(rates, r.rate()), append(other, r.cpu.Other)
			delivered, dups, bad, held = delivered+r.recv.Unique, dups+r.recv.Duplicates, bad+r.recv.BadSignatures+r.recv.Refused, held+r.store[notify.Held]
			srv, pg = srv+r.cpu.ServerTime, pg+r.cpu.PostgresTime
		}
		medians[t] = session.Median(rates)
		ratio := "–"
		if m := medians["bare"]; m > 0 {
			ratio = fmt.Sprintf("**%.2f**", medians[t]/m)
		}
		n := time.Duration(max(delivered, 1))
		w.Printf("| %s | **%.0f** | %s | %s | %d | %d | %d | %d | %s | %s | %.0f%% |\n", t, medians[t], ratio, session.Join(rates, 0),
			delivered, dups, bad, held, session.Dur(srv/n), session.Dur(pg/n), session.Median(other))
	}
	if b.c.monitors > 0 && len(b.Engines) > 0 {
		w.Printf("\n## From DOWN to the webhook\n\n%d HTTP monitors checked every %s, %d consecutive down results make DOWN; "+
			"each DOWN change timed from the confirming check (the event's data.confirmedAt) to its arrival at the receiver.\n", b.c.monitors, interval, b.c.confirmations)
		w.Table("engine", "DOWN changes:", "delivered:", "p50:", "p99:", "max:")
		for _, e := range b.Engines {
			l := b.latency[e]
			w.Printf("| %s | %d | %d | %s | **%s** | %s |\n", e, l.down, len(l.total), session.P(l.total, 0.5), session.P(l.total, 0.99), session.P(l.total, 1))
		}
	}
	w.Targets()
	for _, e := range b.Engines {
		if l := b.latency[e]; l.down > 0 {
			p99 := session.Percentile(l.total, 0.99)
			w.Target(e+": every DOWN change delivered", fmt.Sprint(l.down), fmt.Sprint(len(l.total)), len(l.total) == l.down)
			w.Target(e+": from the confirming check to the webhook, p99", "< "+session.Dur(latencyTarget), session.Dur(p99),
				len(l.total) == l.down && p99 < latencyTarget)
		}
		for i, r := range b.throughput[e] {
			if r.recv.Unique != r.store[notify.Succeeded] || r.store[notify.Succeeded]+r.store[notify.Held] != b.c.deliveries {
				w.Target(fmt.Sprintf("%s, round %d: every delivery made once", e, i+1), fmt.Sprint(b.c.deliveries),
					fmt.Sprintf("%d handled, store %v", r.recv.Unique, r.store), false)
			}
		}
	}
}
