package deliveries

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store"
)

// latency is one measurement of the time from monitors going DOWN to
// their webhooks arriving, on one engine.
type latency struct {
	engine   string
	round    int
	monitors int
	upIn     time.Duration // from the server's start until every UP change was delivered
	window   time.Duration // waited before the flip for the channel's rate window to end
	downIn   time.Duration // from the flip until every DOWN change was delivered (or the deadline)
	// Per DOWN delivery: arrival − data.at, and its two parts: data.at to
	// the start of the delivery's first attempt (the check, the writer,
	// the outbox), and that start to the arrival (rendering, signing,
	// sending).
	total, outbox, sending []time.Duration
	recv                   stats
	store                  map[notify.Status]int
}

// latencyRound runs `tocsin serve` on a fresh database of engine with
// -monitors HTTP monitors of an in-process target, waits until every
// monitor is UP, makes the target answer 500, and collects the DOWN
// changes the receiver records.
func (b *bench) latencyRound(ctx context.Context, engineName string, round int) (*latency, error) {
	l := &latency{engine: engineName, round: round, monitors: b.c.monitors}
	dbURL, drop, err := b.freshDatabase(ctx, engineName)
	if err != nil {
		return nil, err
	}
	defer drop()
	var failing atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "failing", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	}))
	defer target.Close()
	ids, err := b.createMonitors(ctx, dbURL, target.URL)
	if err != nil {
		return nil, err
	}
	if err := b.hurry(ctx, dbURL, ids); err != nil {
		return nil, err
	}
	srv, err := b.serve(ctx, fmt.Sprintf("tocsin-%s-latency%d", engineName, round), dbURL)
	if err != nil {
		return nil, err
	}
	defer srv.Stop(30 * time.Second)

	b.Logf("latency %d, %s: %d monitors every %s; waiting until all are UP", round, engineName, b.c.monitors, interval)
	start := time.Now()
	s, err := b.waitStates(ctx, monitor.StateUp, b.c.monitors, 2*interval+30*time.Second)
	if err != nil {
		return nil, err
	}
	l.upIn = time.Since(start)
	// The UP changes count against the channel's rate bound too: when
	// they and the DOWN ones would not fit in one window, let it end.
	if bound := notify.RateBound(notify.Webhook); 2*b.c.monitors > bound {
		until := time.Unix(0, s.First).Add(notify.RateWindow + time.Second)
		l.window = max(time.Until(until), 0)
		b.Logf("latency %d, %s: waiting %s for the channel's rate window to end", round, engineName, figure.Dur(l.window))
		if err := session.Sleep(ctx, l.window); err != nil {
			return nil, err
		}
	}

	b.Logf("latency %d, %s: all UP in %s; the target now answers 500", round, engineName, figure.Dur(l.upIn))
	failing.Store(true)
	flip := time.Now()
	if err := b.hurry(ctx, dbURL, ids); err != nil {
		return nil, err
	}
	limit := time.Duration(b.c.confirmationsOrDefault()+1)*interval + 30*time.Second
	if _, err := b.waitStates(ctx, monitor.StateDown, b.c.monitors, limit); err != nil && !errors.Is(err, errNotYet) {
		return nil, err
	}
	l.downIn = time.Since(flip)
	if l.recv, err = b.recv.stats(ctx, true); err != nil {
		return nil, err
	}
	b.Logf("latency %d, %s: %d of %d DOWN changes delivered %s after the flip", round, engineName,
		len(l.recv.Down), b.c.monitors, figure.Dur(l.downIn))
	srv.Stop(30 * time.Second)

	raw, err := openRaw(engineName, dbURL)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	attempts, err := raw.firstAttempts(ctx)
	if err != nil {
		return nil, err
	}
	if l.store, err = raw.statuses(ctx); err != nil {
		return nil, err
	}
	for _, d := range l.recv.Down {
		at, arrived := time.Unix(0, d.At), time.Unix(0, d.Arrived)
		l.total = append(l.total, arrived.Sub(at))
		if started, ok := attempts[d.Delivery]; ok {
			l.outbox = append(l.outbox, started.Sub(at))
			l.sending = append(l.sending, arrived.Sub(started))
		}
	}
	for _, xs := range [][]time.Duration{l.total, l.outbox, l.sending} {
		slices.Sort(xs)
	}
	return l, nil
}

// createMonitors makes the owner, the webhook channel that hears state
// changes, and the monitors of target, through the app in this process;
// it returns the monitors' ids.
func (b *bench) createMonitors(ctx context.Context, dbURL, target string) ([]string, error) {
	db, a, err := openApp(ctx, dbURL, b.keys, app.Config{DefaultMaxMonitors: max(1000, b.c.monitors)})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ts, err := createTenants(ctx, a, 1, b.recv.hookURL, []string{incident.MonitorStateChanged})
	if err != nil {
		return nil, fmt.Errorf("creating the owner and channel: %w", err)
	}
	if err := b.recv.reset(ctx, secretsOf(ts)); err != nil {
		return nil, err
	}
	ids := make([]string, b.c.monitors)
	err = parallel(ctx, b.c.monitors, 8, func(i int) error {
		m, err := a.CreateMonitor(ctx, ts[0].actor, monitor.Draft{Type: monitor.TypeHTTP, Name: fmt.Sprintf("notifybench %d", i),
			Config:          monitor.Config{URL: fmt.Sprintf("%s/%d", target, i), Confirmations: b.c.confirmations},
			IntervalSeconds: int(interval / time.Second)})
		ids[i] = m.ID
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("creating monitors: %w", err)
	}
	return ids, nil
}

// hurry makes every monitor due now (-hurry only), through the store
// beside the server.
func (b *bench) hurry(ctx context.Context, dbURL string, ids []string) error {
	if !b.c.hurry {
		return nil
	}
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, id := range ids {
		if err := db.SetNextDueForTest(ctx, id, time.Now()); err != nil {
			return err
		}
	}
	return nil
}

// errNotYet: the receiver had not seen every change by the deadline.
var errNotYet = errors.New("not every state change arrived in time")

// waitStates polls the receiver every 20 ms until it has handled n
// monitor.state_changed deliveries to state, or limit has passed.
func (b *bench) waitStates(ctx context.Context, state monitor.State, n int, limit time.Duration) (stats, error) {
	deadline := time.Now().Add(limit)
	for {
		s, err := b.recv.stats(ctx, false)
		if err != nil {
			return s, err
		}
		if s.States[string(state)] >= n {
			return s, nil
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("%w: %d of %d changes to %s within %s (receiver: %d bad signatures, %d refused)",
				errNotYet, s.States[string(state)], n, state, limit, s.BadSignatures, s.Refused)
		}
		if err := session.Sleep(ctx, 20*time.Millisecond); err != nil {
			return s, err
		}
	}
}
