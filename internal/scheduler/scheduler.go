// The check scheduler: it claims due checks from the database with a
// lease, runs each at its slot with bounded concurrency, and hands the
// observations to one batching writer, which stores them and moves each
// monitor's state machine. Checking and storing are kept apart, so a slow
// disk never holds a check slot.

package scheduler

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/probe"
)

// App is what the scheduler needs of app: it claims due checks, records
// them and marks stale monitors unknown.
type App interface {
	ClaimDue(ctx context.Context, owner string, now, horizon time.Time, lease time.Duration, limit int) ([]monitor.DueCheck, error)
	RecordChecks(ctx context.Context, owner string, batch []monitor.Completed) ([]monitor.StateChange, error)
	ReleaseLeases(ctx context.Context, owner string, seqs []int64) error
	SweepStale(ctx context.Context, now time.Time) ([]monitor.StateChange, error)
}

// Checker runs one check; probe.Prober is the real one.
type Checker interface {
	Check(ctx context.Context, m monitor.Monitor) monitor.Observation
}

// Options configure a Scheduler; zero values take the defaults shown.
type Options struct {
	Node    string // lease owner and probe name; unique per process
	Region  string
	App     App
	Checker Checker
	// OpenAuth decrypts a monitor's sealed credential, in memory, just
	// before its check runs.
	OpenAuth func(monitorID string, sealed []byte) (*monitor.Auth, error)
	// OpenHeaders does the same for its request headers' values.
	OpenHeaders func(monitorID string, sealed []byte) (map[string]string, error)
	Now         func() time.Time
	Log         *slog.Logger
	Metrics     *Metrics

	Concurrency int           // checks in flight at once; 512
	Lookahead   time.Duration // claim checks due this far ahead; 2s
	Poll        time.Duration // claim this often; 250ms
	ClaimBatch  int           // at most this many per claim; 1000
	// Lease is how long past its due time a claimed check stays with this
	// node; a node that dies leaves it to another after that. It must
	// cover the lookahead, the longest timeout and the writer's delay; 2m.
	Lease time.Duration
	// Sweep is how often monitors with no known result for two intervals
	// are marked UNKNOWN; 5s.
	Sweep time.Duration
	// Backlog is how many observations may wait for the writer before the
	// scheduler stops claiming more; 20000.
	Backlog int
	// WriteLinger is how long the writer waits, after the first observation
	// of a batch, for more to join it; 100ms. Negative: no wait.
	WriteLinger time.Duration
}

func (o *Options) defaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 512
	}
	if o.Lookahead <= 0 {
		o.Lookahead = 2 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.ClaimBatch <= 0 {
		o.ClaimBatch = 1000
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	if o.Sweep <= 0 {
		o.Sweep = 5 * time.Second
	}
	if o.Backlog <= 0 {
		o.Backlog = 20000
	}
	if o.WriteLinger == 0 {
		o.WriteLinger = 100 * time.Millisecond
	}
}

// Scheduler is one node's check scheduler and its writer.
type Scheduler struct {
	o Options
	// owner holds this process's leases: the node name and a random part,
	// so two processes given one name never share leases.
	owner  string
	writer *writer
	sem    chan struct{}

	mu   sync.Mutex
	held map[int64]*time.Timer // claimed checks not yet handed to the writer
	// checks counts goroutines of started checks, to wait for at Stop.
	checks sync.WaitGroup
}

// New makes a check scheduler; Run starts it.
func New(o Options) *Scheduler {
	o.defaults()
	e := &Scheduler{o: o, owner: o.Node + "/" + rand.Text()[:10], sem: make(chan struct{}, o.Concurrency), held: map[int64]*time.Timer{}}
	e.writer = newWriter(o.App, e.owner, o.Log, o.Metrics, o.WriteLinger)
	return e
}

// Run schedules checks until ctx ends, then stops: no new check starts,
// checks in flight are cancelled (and recorded as unknown, never down),
// every observation is written, and the leases of checks that never
// started are released for other nodes. It returns when all that is done;
// the error is for the errgroup that owns it (nil: stopped as asked).
func (e *Scheduler) Run(ctx context.Context) error {
	checkCtx, cancelChecks := context.WithCancelCause(context.WithoutCancel(ctx))
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		e.writer.run()
	}()

	claim := time.NewTimer(0)
	sweep := time.NewTicker(e.o.Sweep)
	defer claim.Stop()
	defer sweep.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-claim.C:
			n := e.claim(ctx, checkCtx)
			wait := e.o.Poll
			if n >= e.o.ClaimBatch {
				wait = 0 // more are due: claim again at once
			}
			claim.Reset(wait)
		case <-sweep.C:
			e.sweep(ctx)
		}
	}

	// Stop: checks not yet started go back to the pool.
	e.mu.Lock()
	var release []int64
	for seq, t := range e.held {
		if t != nil && t.Stop() {
			release = append(release, seq)
			delete(e.held, seq)
			e.checks.Done() // its start will never run
		}
	}
	e.mu.Unlock()
	cancelChecks(probe.ErrShuttingDown)
	e.checks.Wait()
	e.writer.close()
	<-writerDone
	if len(release) > 0 {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := e.o.App.ReleaseLeases(rctx, e.owner, release); err != nil {
			e.o.Log.Warn("releasing leases at shutdown", "err", err, "checks", len(release))
		}
	}
	return nil
}

// claim leases the checks due soon and sets a timer for each; it returns
// how many it claimed.
func (e *Scheduler) claim(ctx, checkCtx context.Context) int {
	if backlog := e.writer.backlog(); backlog >= e.o.Backlog {
		e.o.Log.Warn("observation writer behind; not claiming checks", "backlog", backlog)
		return 0
	}
	now := e.o.Now()
	limit := e.o.ClaimBatch
	due, err := e.o.App.ClaimDue(ctx, e.owner, now, now.Add(e.o.Lookahead), e.o.Lease, limit)
	if err != nil {
		if ctx.Err() == nil {
			e.o.Log.Warn("claiming due checks", "err", err)
		}
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range due {
		if _, dup := e.held[d.Seq]; dup {
			continue // our own check whose lease lapsed while it ran; it is ours still
		}
		d := d
		e.checks.Add(1)
		// From the time after the claim returned, not before it was made:
		// otherwise every check would start late by the claim's duration.
		e.held[d.Seq] = time.AfterFunc(max(d.Due.Sub(e.o.Now()), 0), func() { e.start(checkCtx, d) })
	}
	return len(due)
}

// start runs one claimed check in its own goroutine (the timer's).
func (e *Scheduler) start(ctx context.Context, d monitor.DueCheck) {
	defer e.checks.Done()
	obs := e.run(ctx, d)
	e.mu.Lock()
	delete(e.held, d.Seq)
	e.mu.Unlock()
	e.writer.submit(monitor.Completed{Seq: d.Seq, Observation: obs, Thresholds: thresholds(d.Monitor)})
}

func thresholds(m monitor.Monitor) monitor.Thresholds {
	return monitor.Thresholds{Confirmations: m.Config.Confirmations, Recoveries: m.Config.Recoveries}
}

// run waits for a check slot and runs the check, or records that it could
// not start before its deadline.
func (e *Scheduler) run(ctx context.Context, d monitor.DueCheck) (obs monitor.Observation) {
	m := d.Monitor
	timeout := time.Duration(m.Config.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = monitor.DefaultTimeout * time.Second
	}
	deadline := d.Due.Add(timeout)
	missed := func() monitor.Observation {
		e.o.Metrics.missed.Inc()
		return probe.MissedStart(m, d.Due, e.o.Now(), e.o.Node, e.o.Region)
	}
	if !e.o.Now().Before(deadline) {
		return missed()
	}
	wait, cancel := context.WithDeadline(ctx, deadline)
	select {
	case e.sem <- struct{}{}:
		cancel()
	case <-wait.Done():
		cancel()
		if ctx.Err() != nil {
			return shuttingDown(m, d.Due, e.o.Now(), e.o.Node, e.o.Region)
		}
		return missed()
	}
	defer func() { <-e.sem }()
	if !e.o.Now().Before(deadline) {
		return missed() // the slot came free too late
	}
	e.o.Metrics.inflight.Inc()
	defer e.o.Metrics.inflight.Dec()

	start := e.o.Now()
	e.o.Metrics.lag.Observe(max(start.Sub(d.Due), 0).Seconds())
	if err := e.openSecrets(&m, d); err != nil {
		e.o.Log.Error("opening a monitor's credential", "monitor", m.ID, "err", err)
		return monitor.Observation{MonitorID: m.ID, StartedAt: start, Due: d.Due, Result: monitor.ResultUnknown,
			Reason: monitor.ReasonProbeInternal + ": the check's credential could not be opened", Probe: e.o.Node, Region: e.o.Region}
	}
	obs = e.o.Checker.Check(ctx, m)
	obs.Due = d.Due
	e.o.Metrics.checks.WithLabelValues(string(obs.Result)).Inc()
	return obs
}

// openSecrets puts a due check's credential and header values, opened in
// memory, into its monitor's config: both came with the claim, so a check
// costs no extra query.
func (e *Scheduler) openSecrets(m *monitor.Monitor, d monitor.DueCheck) error {
	if d.SealedAuth != nil {
		auth, err := e.o.OpenAuth(m.ID, d.SealedAuth)
		if err != nil {
			return err
		}
		m.Config.Auth = auth
	}
	if d.SealedHeaders != nil {
		if e.o.OpenHeaders == nil {
			return errors.New("scheduler: no OpenHeaders for sealed headers")
		}
		headers, err := e.o.OpenHeaders(m.ID, d.SealedHeaders)
		if err != nil {
			return err
		}
		m.Config.Headers = headers
	}
	return nil
}

func shuttingDown(m monitor.Monitor, due, now time.Time, node, region string) monitor.Observation {
	return monitor.Observation{MonitorID: m.ID, StartedAt: now, Due: due, Result: monitor.ResultUnknown,
		Reason: monitor.ReasonShuttingDown, Probe: node, Region: region}
}

// sweep marks UNKNOWN the monitors with no known result for two intervals,
// in one transaction over all of them. Unlike the writer's batches, it has
// no row for the database to refuse: it writes states, ids and causes the
// state machine words itself, and runtime, incident and event text read
// back in the same transaction from the database that took it once
// (PostgreSQL's text columns hand back neither NUL nor invalid UTF-8), so
// no tenant's bytes enter it. A failure is the database's: logged, and
// the next tick tries again.
func (e *Scheduler) sweep(ctx context.Context) {
	changes, err := e.o.App.SweepStale(ctx, e.o.Now())
	if err != nil && !errors.Is(err, context.Canceled) {
		e.o.Log.Warn("marking stale monitors unknown", "err", err)
	}
	for _, c := range changes {
		e.o.Log.Info("monitor state changed", "monitor", c.SubjectID, "from", c.From, "to", c.To, "cause", c.Cause)
	}
}
