package probe

import (
	"context"
	"net"
	"sync"
	"time"
)

// canaries judge whether the probe's own network works: TCP targets it
// should always reach. A verdict is cached for ttl, and concurrent callers
// share one run, so a burst of failing checks costs one round of dials.
type canaries struct {
	targets []string
	ttl     time.Duration
	timeout time.Duration
	dialer  *net.Dialer
	now     func() time.Time // when a verdict is found and how old it is

	mu      sync.Mutex
	ok      bool
	at      time.Time     // when ok was found; zero before the first run
	running chan struct{} // closed when the run in flight ends; nil when none
}

func newCanaries(targets []string, ttl, timeout time.Duration) *canaries {
	return &canaries{
		targets: append([]string(nil), targets...),
		ttl:     ttl,
		timeout: timeout,
		// The operator's own targets, dialled like the system resolver:
		// outside the policy, which governs destinations users choose.
		dialer: &net.Dialer{KeepAlive: -1},
		now:    time.Now,
	}
}

// reachable reports whether at least one canary accepts a TCP connection.
// A caller that gives up (ctx done) waits no longer, and counts the
// canaries as reachable: without a verdict, the target failure stands.
func (c *canaries) reachable(ctx context.Context) bool {
	c.mu.Lock()
	if !c.at.IsZero() && c.now().Sub(c.at) < c.ttl {
		ok := c.ok
		c.mu.Unlock()
		return ok
	}
	ch := c.running
	if ch == nil {
		ch = make(chan struct{})
		c.running = ch
		// The run belongs to every caller, so no one caller's cancellation
		// ends it.
		go c.run(context.WithoutCancel(ctx), ch)
	}
	c.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ok
}

func (c *canaries) run(ctx context.Context, done chan struct{}) {
	ok := false
	defer func() {
		c.mu.Lock()
		c.ok, c.at, c.running = ok, c.now(), nil
		c.mu.Unlock()
		close(done)
	}()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	results := make(chan bool, len(c.targets))
	for _, addr := range c.targets {
		go func() {
			conn, err := c.dialer.DialContext(ctx, "tcp", addr)
			if err == nil {
				conn.Close()
			}
			results <- err == nil
		}()
	}
	for range c.targets {
		if <-results {
			ok = true
			return // the rest end with cancel; results is buffered
		}
	}
}
