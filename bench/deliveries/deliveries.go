// Package deliveries measures how Tocsin's notifier moves events from the
// outbox to webhook receivers:
//
//  1. deliveries per second: -deliveries manual incidents are written
//     while no server runs (one incident.opened delivery each, over
//     -channels webhook channels), then `tocsin serve` starts and the
//     clock runs from its first attempt until the receiver has handled
//     every delivery and the store holds none pending. The bare sender,
//     this process, POSTs as many signed bodies of the same size to the
//     same receiver with the same concurrency, as the baseline;
//  2. from DOWN to the webhook: `tocsin serve` checks -monitors HTTP
//     monitors (made through the API) of a local target that the benchmark
//     turns from 200 to 500 once every monitor is UP; the receiver records
//     each monitor.state_changed to DOWN, its arrival minus the event's
//     data.at (the confirming check's time).
//
// The receiver is a child process (this binary with -receive): it
// verifies every signature with its channel's secret, which the parent
// writes to its standard input, dedupes on X-Service-Delivery and answers
// 204.
package deliveries

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
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
	fs.IntVar(&c.confirmations, "confirmations", 0, "consecutive down results before DOWN; 0: the default (2)")
	fs.IntVar(&c.latency, "latency-rounds", 1, "latency measurements per engine, each on a fresh database; their samples are pooled")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "the longest one measured phase may take before the run fails")
	fs.BoolVar(&receive, "receive", false, "internal: run the webhook receiver")
	return func(ctx context.Context, e session.Env) error {
		if receive {
			return serveReceiver(ctx, e.Stdin, e.Stdout)
		}
		switch {
		case len(e.Engines) == 0 && !c.bare:
			return errors.New("nothing to measure")
		case c.deliveries < 1 || e.Rounds < 1 || c.concurrency < 1 || c.latency < 1:
			return errors.New("-deliveries, -rounds, -concurrency and -latency-rounds must be at least 1")
		case c.channels < 0 || c.channels > c.deliveries || c.monitors < 0:
			return errors.New("-channels must be from 0 to -deliveries, -monitors not negative")
		case c.confirmations < 0 || c.confirmations > monitor.MaxConfirmations:
			return fmt.Errorf("-confirmations must be from 0 to %d", monitor.MaxConfirmations)
		}
		if c.channels == 0 {
			c.channels = autoChannels(c.deliveries)
		}
		if c.confirmations == 0 {
			c.confirmations = monitor.DefaultConfirmations
		}
		return session.Measure(ctx, "deliveries", e, len(e.Engines) == 0, fmt.Sprintf("Deliveries: %d events to %d webhook channels; %d monitors going DOWN", c.deliveries, c.channels, c.monitors), func(s *session.Session) (func(io.Writer), error) {
			b := &bench{Session: s, c: c}
			return b.report, b.run(ctx)
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
	recv       *receiverClient
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
	failed  map[string]int // bare: answers other than 204, by kind
}

func (r *round) rate() float64 { return float64(r.recv.Unique) / r.elapsed.Seconds() }

// latency pools an engine's DOWN deliveries: arrival − data.at, and its
// parts: to the first attempt's start (the check, the writer, the
// outbox), and from there to the arrival (rendering, signing, sending).
type latency struct {
	down                   int
	total, outbox, sending []time.Duration
}

func (b *bench) run(ctx context.Context) error {
	ch, err := b.Child(ctx, "receiver", "-receive")
	if err != nil {
		return err
	}
	b.recv = &receiverClient{child: ch, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}, Timeout: 10 * time.Second}}
	b.throughput, b.latency = map[string][]*round{}, map[string]*latency{}
	if b.c.bare {
		b.targets = append(b.targets, "bare")
	}
	b.targets = append(b.targets, b.Engines...)
	for r := range b.Rounds {
		for i := range b.targets {
			t := b.targets[(i+r)%len(b.targets)] // a rotating order
			var rd *round
			if t == "bare" {
				rd, err = b.bareRound(ctx)
			} else {
				rd, err = b.tocsinRound(ctx, t)
			}
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, t, err)
			}
			b.throughput[t] = append(b.throughput[t], rd)
			b.Logf("round %d, %s: %d delivered in %s, %.0f/s", r+1, t, rd.recv.Unique, session.Dur(rd.elapsed), rd.rate())
		}
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

// tocsinRound writes the incidents on a fresh database of engine, then
// starts `tocsin serve` and times its notifier.
func (b *bench) tocsinRound(ctx context.Context, engine string) (*round, error) {
	dbURL, keys, err := b.FreshDB(ctx, engine)
	if err != nil {
		return nil, err
	}
	b.Logf("%s: writing %d incidents over %d workspaces, no server running", engine, b.c.deliveries, b.c.channels)
	secrets, err := seed.Incidents(ctx, dbURL, keys, b.c.channels, b.c.deliveries, b.recv.hookURL, b.Logf)
	if err != nil {
		return nil, err
	}
	if err := b.recv.reset(ctx, secrets); err != nil {
		return nil, err
	}
	raw, err := openRaw(dbURL)
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
	end, err := b.waitDelivered(ctx, launched, raw, nil)
	pg := b.Postgres(ctx, dbURL) // while the server's backends live
	r.cpu = session.Split(c0, session.TakeSample(), srv.Pid(), pg)
	srv.Stop(30 * time.Second)
	if err != nil {
		return nil, err
	}
	first, err := firstAttempts(ctx, raw)
	if err != nil {
		return nil, err
	}
	start := end
	for _, at := range first {
		if at.Before(start) {
			start = at
		}
	}
	r.elapsed = end.Sub(start)
	if r.recv, err = b.recv.stats(ctx); err != nil {
		return nil, err
	}
	r.store, err = statuses(ctx, raw)
	return r, err
}

// bareRound is the baseline: this process POSTs as many signed bodies of
// the same size to the same receiver, over as many channels, with the
// same concurrency; no database, no leases.
func (b *bench) bareRound(ctx context.Context) (*round, error) {
	s := newBareSender(b.c.concurrency, b.c.channels, b.recv.hookURL)
	if err := b.recv.reset(ctx, s.secrets); err != nil {
		return nil, err
	}
	r := &round{}
	sent := make(chan struct{})
	c0 := session.TakeSample()
	start := time.Now()
	go func() {
		defer close(sent)
		r.failed = s.send(ctx, b.c.deliveries)
	}()
	end, err := b.waitDelivered(ctx, start, nil, sent)
	r.cpu = session.Split(c0, session.TakeSample(), os.Getpid(), nil)
	<-sent
	if err != nil {
		return nil, err
	}
	r.elapsed = end.Sub(start)
	r.recv, err = b.recv.stats(ctx)
	return r, err
}

// waitDelivered polls the receiver every 10 ms until it has handled every
// delivery and, with raw, the store holds none pending and as many
// succeeded as the receiver handled (a delivery held back by its channel's
// rate bound never arrives); or, with gaveUp, until gaveUp is closed and
// the receiver's count stands. It returns when it saw that.
func (b *bench) waitDelivered(ctx context.Context, start time.Time, raw *rawDB, gaveUp <-chan struct{}) (time.Time, error) {
	var lastStore time.Time
	var st map[notify.Status]int
	for {
		s, err := b.recv.stats(ctx)
		if err != nil {
			return time.Time{}, err
		}
		now := time.Now()
		switch {
		case raw == nil && s.Unique >= b.c.deliveries:
			return now, nil
		case raw == nil:
			select {
			case <-gaveUp:
				if s2, err := b.recv.stats(ctx); err == nil && s2.Unique == s.Unique {
					return now, nil
				}
			default:
			}
		case s.Unique >= b.c.deliveries || now.Sub(lastStore) >= time.Second:
			lastStore = now
			if st, err = statuses(ctx, raw); err != nil {
				return time.Time{}, err
			}
			if st[notify.Pending] == 0 && s.Unique >= st[notify.Succeeded] {
				return time.Now(), nil
			}
		}
		if now.Sub(start) > b.c.timeout {
			return time.Time{}, fmt.Errorf("not delivered within %s: the receiver has %d of %d (%d duplicates, %d bad signatures), the store %v",
				b.c.timeout, s.Unique, b.c.deliveries, s.Duplicates, s.BadSignatures, st)
		}
		if err := session.Sleep(ctx, 10*time.Millisecond); err != nil {
			return time.Time{}, err
		}
	}
}

// latencyRound runs `tocsin serve` on a fresh database, makes a webhook
// channel that hears state changes and the monitors of a local target
// through the API, waits until every monitor is UP, makes the target
// answer 500, and collects the DOWN changes the receiver records.
func (b *bench) latencyRound(ctx context.Context, engine string) error {
	var failing atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "failing", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	}))
	defer target.Close()
	dbURL, _, err := b.FreshDB(ctx, engine)
	if err != nil {
		return err
	}
	srv, err := b.Serve(ctx, "tocsin-"+engine+"-latency", dbURL, "--rate-limit", "1000000")
	if err != nil {
		return err
	}
	defer srv.Stop(30 * time.Second)
	key, err := b.OwnerKey(ctx, dbURL, "--monitors", strconv.Itoa(b.c.monitors))
	if err != nil {
		return err
	}
	api := seed.API{Base: srv.Base + "/api/v1", Key: key}
	var ch struct{ SigningSecret string }
	if err := api.Post(ctx, "/notification-channels", map[string]any{"name": "receiver", "kind": "webhook",
		"config": map[string]string{"url": b.recv.hookURL(0)}, "events": []string{"monitor.state_changed"}}, &ch); err != nil {
		return err
	}
	if err := b.recv.reset(ctx, []string{ch.SigningSecret}); err != nil {
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
	s, err := b.waitStates(ctx, monitor.StateUp, 2*interval+30*time.Second)
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
	failing.Store(true)
	limit := time.Duration(b.c.confirmations+1)*interval + 30*time.Second
	if _, err := b.waitStates(ctx, monitor.StateDown, limit); err != nil && ctx.Err() != nil {
		return err
	}
	if s, err = b.recv.stats(ctx); err != nil {
		return err
	}
	srv.Stop(30 * time.Second)
	raw, err := openRaw(dbURL)
	if err != nil {
		return err
	}
	defer raw.Close()
	attempts, err := firstAttempts(ctx, raw)
	if err != nil {
		return err
	}
	l := b.latency[engine]
	l.down += b.c.monitors
	for _, d := range s.Down {
		at, arrived := time.Unix(0, d.At), time.Unix(0, d.Arrived)
		l.total = append(l.total, arrived.Sub(at))
		if started, ok := attempts[d.Delivery]; ok {
			l.outbox, l.sending = append(l.outbox, started.Sub(at)), append(l.sending, arrived.Sub(started))
		}
	}
	for _, xs := range [][]time.Duration{l.total, l.outbox, l.sending} {
		slices.Sort(xs)
	}
	b.Logf("latency, %s: %d of %d DOWN changes delivered", engine, len(s.Down), b.c.monitors)
	return nil
}

// waitStates polls the receiver until it has handled a state change to
// state of every monitor, or limit has passed.
func (b *bench) waitStates(ctx context.Context, state monitor.State, limit time.Duration) (stats, error) {
	deadline := time.Now().Add(limit)
	for {
		s, err := b.recv.stats(ctx)
		switch {
		case err != nil:
			return s, err
		case s.States[string(state)] >= b.c.monitors:
			return s, nil
		case time.Now().After(deadline):
			return s, fmt.Errorf("%d of %d changes to %s within %s (receiver: %d bad signatures)",
				s.States[string(state)], b.c.monitors, state, limit, s.BadSignatures)
		}
		if err := session.Sleep(ctx, 20*time.Millisecond); err != nil {
			return s, err
		}
	}
}

func (b *bench) report(w io.Writer) {
	fmt.Fprintf(w, "Throughput: per target and round, %d incident.opened deliveries over %d webhook channels (each takes %d events a minute) "+
		"to the receiver, which verifies every signature and answers 204. Engines: the incidents written first with no server "+
		"running, the clock from the first attempt the store records until every delivery is handled and none is pending. "+
		"Bare: this process POSTs as many signed bodies, %d in flight. %d round(s), rotating order, each engine round on a fresh database.\n\n",
		b.c.deliveries, b.c.channels, notify.RateBound(notify.Webhook), b.c.concurrency, b.Rounds)
	fmt.Fprint(w, "| target | deliveries/s | vs bare | per round | delivered | duplicates | bad signatures | held | sender CPU per delivery | PostgreSQL CPU per delivery | other processes |\n")
	fmt.Fprint(w, "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	medians := map[string]float64{}
	for _, t := range b.targets {
		var rates, other []float64
		var per []string
		var delivered, dups, bad, held int
		var srv, pg time.Duration
		for _, r := range b.throughput[t] {
			rates, per, other = append(rates, r.rate()), append(per, fmt.Sprintf("%.0f", r.rate())), append(other, r.cpu.Other)
			delivered, dups, bad, held = delivered+r.recv.Unique, dups+r.recv.Duplicates, bad+r.recv.BadSignatures+r.recv.Refused, held+r.store[notify.Held]
			srv, pg = srv+r.cpu.ServerTime, pg+r.cpu.PostgresTime
		}
		medians[t] = session.Median(rates)
		ratio := "–"
		if m := medians["bare"]; m > 0 {
			ratio = fmt.Sprintf("**%.2f**", medians[t]/m)
		}
		n := time.Duration(max(delivered, 1))
		fmt.Fprintf(w, "| %s | **%.0f** | %s | %s | %d | %d | %d | %d | %s | %s | %.0f%% |\n", t, medians[t], ratio, strings.Join(per, ", "),
			delivered, dups, bad, held, session.Dur(srv/n), session.Dur(pg/n), session.Median(other))
	}
	if b.c.monitors > 0 && len(b.Engines) > 0 {
		fmt.Fprintf(w, "\n## From DOWN to the webhook\n\n%d HTTP monitors checked every %s, %d consecutive down results make DOWN; "+
			"each DOWN change timed from the confirming check (the event's data.at) to its arrival at the receiver.\n\n", b.c.monitors, interval, b.c.confirmations)
		fmt.Fprint(w, "| engine | DOWN changes | delivered | p50 | p99 | max | to the first attempt, p99 | attempt to arrival, p99 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, e := range b.Engines {
			l := b.latency[e]
			fmt.Fprintf(w, "| %s | %d | %d | %s | **%s** | %s | %s | %s |\n", e, l.down, len(l.total), session.Dur(session.Percentile(l.total, 0.5)),
				session.Dur(session.Percentile(l.total, 0.99)), session.Dur(session.Percentile(l.total, 1)),
				session.Dur(session.Percentile(l.outbox, 0.99)), session.Dur(session.Percentile(l.sending, 0.99)))
		}
	}
	fmt.Fprint(w, "\n## Targets\n\n| target | required | measured | |\n|---|---|---|---|\n")
	for _, e := range b.Engines {
		if l := b.latency[e]; l.down > 0 {
			p99 := session.Percentile(l.total, 0.99)
			fmt.Fprintf(w, "| %s: every DOWN change delivered | %d | %d | %s |\n", e, l.down, len(l.total), session.Verdict(len(l.total) == l.down))
			fmt.Fprintf(w, "| %s: from the confirming check to the webhook, p99 | < %s | %s | %s |\n", e, session.Dur(latencyTarget),
				session.Dur(p99), session.Verdict(len(l.total) == l.down && p99 < latencyTarget))
		}
		for i, r := range b.throughput[e] {
			if r.recv.Unique != r.store[notify.Succeeded] || r.store[notify.Succeeded]+r.store[notify.Held] != b.c.deliveries {
				fmt.Fprintf(w, "| %s, round %d: every delivery made once | %d | %d handled, store %v | %s |\n",
					e, i+1, b.c.deliveries, r.recv.Unique, r.store, session.Verdict(false))
			}
		}
	}
}
