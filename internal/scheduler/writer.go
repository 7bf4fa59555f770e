package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/monitor"
)

// writer is the one path from finished checks to the database: it takes
// whatever has queued up since its last write and stores it as one batch
// (group commit). A batch is written once its oldest observation has waited
// the linger (100 ms), or at once when it is full or the writer closes, so
// a steady stream of checks is written in tens per transaction rather than
// one by one. Checks hand over their observation
// and go; only the writer waits on the disk.
type writer struct {
	app     App
	owner   string
	log     *slog.Logger
	metrics *Metrics
	max     int           // observations per batch
	linger  time.Duration // wait after the first of a batch arrives

	mu     sync.Mutex
	queue  []monitor.Completed
	since  time.Time // when the oldest queued observation arrived
	closed bool
	wake   chan struct{} // something queued (capacity 1)
	done   chan struct{} // closed by close
	// lingering, when a test sets it, hears the seq of the oldest queued
	// observation whenever the writer waits for its batch to fill.
	lingering func(oldest int64)
}

func newWriter(app App, owner string, log *slog.Logger, m *Metrics, linger time.Duration) *writer {
	return &writer{app: app, owner: owner, log: log, metrics: m, max: 1000, linger: linger, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// submit queues one finished check. It never blocks: the scheduler stops
// claiming when the backlog is long, which bounds the queue.
func (w *writer) submit(c monitor.Completed) {
	w.mu.Lock()
	if len(w.queue) == 0 {
		w.since = time.Now()
	}
	w.queue = append(w.queue, c)
	n := len(w.queue)
	w.mu.Unlock()
	w.metrics.backlog.Set(float64(n))
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *writer) backlog() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue)
}

// close makes run return once everything queued is written.
func (w *writer) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.done)
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *writer) run() {
	for {
		w.mu.Lock()
		n := min(len(w.queue), w.max)
		closed := w.closed
		// Let the batch fill: one transaction per check cost as much CPU as
		// the check itself (docs/benchmarks.md). The wait counts from the
		// oldest observation's arrival, so no batch waits more than the
		// linger, and one that filled during the previous write goes at once.
		if wait := w.linger - time.Since(w.since); n > 0 && n < w.max && !closed && wait > 0 {
			oldest := w.queue[0].Seq
			w.mu.Unlock()
			if w.lingering != nil {
				w.lingering(oldest)
			}
			w.sleep(wait)
			continue
		}
		batch := w.queue[:n:n]
		w.queue = w.queue[n:]
		if len(w.queue) > 0 {
			w.since = time.Now()
		}
		left := len(w.queue)
		w.mu.Unlock()
		w.metrics.backlog.Set(float64(left))
		if n == 0 {
			if closed {
				return
			}
			<-w.wake
			continue
		}
		w.write(batch, closed)
	}
}

// sleep waits for d, or less when the writer is closed or an observation
// arrives meanwhile (the batch may be full now: run looks again).
func (w *writer) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.done:
	case <-w.wake:
	}
}

// write stores one batch. While the database fails it retries:
// observations are not dropped, and at shutdown it gives up after a
// bounded time. When the database refuses a row for what it carries, the
// rows are isolated instead (see isolate): retrying would fail the same
// way for ever, and every other workspace's checks would wait behind it.
func (w *writer) write(batch []monitor.Completed, closing bool) {
	deadline := time.Now().Add(30 * time.Second)
	if err := w.apply(batch, closing, deadline); app.IsDataError(err) {
		w.isolate(batch, err, closing, deadline)
	}
}

// apply stores batch in one transaction, retrying while the failure is the
// database's rather than the rows' (connection lost, serialization failure,
// timeout, busy). It returns nil once stored, the error when the database
// refused the rows (app.IsDataError), or errLost when it gave up at
// shutdown.
func (w *writer) apply(batch []monitor.Completed, closing bool, deadline time.Time) error {
	backoff := 100 * time.Millisecond
	for {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		changes, err := w.app.RecordChecks(ctx, w.owner, batch)
		cancel()
		if err == nil {
			w.metrics.batchSeconds.Observe(time.Since(start).Seconds())
			w.metrics.written.Add(float64(len(batch)))
			for _, c := range changes {
				w.log.Info("monitor state changed", "monitor", c.SubjectID, "from", c.From, "to", c.To, "cause", c.Cause)
			}
			return nil
		}
		w.metrics.writeErrors.Inc()
		if app.IsDataError(err) {
			return err
		}
		if closing && time.Now().After(deadline) {
			w.log.Error("observations lost at shutdown: the database would not take them", "err", err, "observations", len(batch))
			return errLost
		}
		w.log.Warn("writing observations; will retry", "err", err, "observations", len(batch), "retry_in", backoff)
		time.Sleep(backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

var errLost = errors.New("observations lost at shutdown")

// isolate stores a batch the database refused, err, without the rows it
// refuses: it halves the batch until each refused observation stands
// alone, so one bad row among n costs about 2·log2(n) more transactions
// and the others are stored as they are. A refused observation is stored
// as unknown (the check happened; what it found could not be kept), and
// one refused even so is dropped: its lease lapses and the monitor's next
// slot is claimed again then.
func (w *writer) isolate(batch []monitor.Completed, err error, closing bool, deadline time.Time) {
	if len(batch) > 1 {
		for _, half := range halves(batch) {
			if err := w.apply(half, closing, deadline); app.IsDataError(err) {
				w.isolate(half, err, closing, deadline)
			}
		}
		return
	}
	c := batch[0]
	w.metrics.refused.Inc()
	w.log.Warn("the database refused an observation; storing it as unknown", "monitor", c.Observation.MonitorID, "err", err)
	if err := w.apply([]monitor.Completed{unstorable(c)}, closing, deadline); app.IsDataError(err) {
		w.metrics.dropped.Inc()
		w.log.Error("observation dropped: the database refused it, also as unknown", "monitor", c.Observation.MonitorID, "err", err)
	}
}

// halves splits a batch of two or more in two, keeping the order (a
// monitor's checks stay in the order they finished).
func halves(batch []monitor.Completed) [2][]monitor.Completed {
	mid := len(batch) / 2
	return [2][]monitor.Completed{batch[:mid:mid], batch[mid:]}
}

// ReasonUnstorable is the reason of an observation stored in place of one
// the database refused. It names no byte of what was refused: the server's
// log has the database's error.
const ReasonUnstorable = "the check's result could not be stored: the database refused it"

// unstorable is what is stored of a check whose observation the database
// refused: that it ran, when and where, as unknown — never up or down, as
// nobody can tell what it found. Only numbers and cleaned names are kept.
func unstorable(c monitor.Completed) monitor.Completed {
	o := c.Observation
	c.Observation = monitor.Observation{MonitorID: o.MonitorID, StartedAt: o.StartedAt, Due: o.Due,
		Result: monitor.ResultUnknown, Reason: ReasonUnstorable, Latency: o.Latency,
		Probe: clean.Text(o.Probe, maxProbeName), Region: clean.Text(o.Region, maxProbeName)}
	return c
}

// maxProbeName bounds a probe's name and region in an unstorable
// observation (config allows 100 bytes).
const maxProbeName = 100
