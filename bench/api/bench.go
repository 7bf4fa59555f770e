package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tocsin/tocsin/bench/internal/child"
	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/pgfresh"
	"github.com/tocsin/tocsin/bench/internal/session"
)

// bench owns the servers, databases and work directory of one run.
type bench struct {
	c   config
	log io.Writer
	*session.Session
	tr    *http.Transport
	procs []*child.Process
	pg    bool // a target runs on PostgreSQL
}

// engine is one tocsin server and how to run its admin commands.
type engine struct {
	name   string
	p      *child.Process
	dbArgs []string // --data-dir or --database-url, for `tocsin key create` and friends
}

// target is one row of the table.
type target struct {
	name    string
	wl      workload
	creates *creates // POST targets only
	engine  *engine
	server  *child.Process
	rate    float64 // expected req/s, for sizing the POST targets' workspaces
	phases  []phase
}

func newBench(c config, log io.Writer) *bench {
	return &bench{c: c, log: log, tr: newTransport(c.concurrency)}
}

func (b *bench) close() {
	for _, p := range b.procs {
		p.Stop(15 * time.Second)
	}
	b.tr.CloseIdleConnections()
	if b.Session != nil {
		b.Session.Close()
	}
}

func (b *bench) run(ctx context.Context) ([]*target, error) {
	var err error
	b.Session, err = session.Open(ctx, session.Options{Name: "api", Log: b.log, Tocsin: b.c.tocsin, Keep: b.c.keepWork})
	if err != nil {
		return nil, err
	}
	targets, err := b.setup(ctx)
	if err != nil {
		return nil, err
	}
	for r := range b.c.rounds {
		// Rotate the order so no target always runs first or last.
		for i := range targets {
			t := targets[(i+r)%len(targets)]
			if err := b.measure(ctx, t, r); err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", t.name, r+1, err)
			}
		}
	}
	return targets, nil
}

func (b *bench) setup(ctx context.Context) ([]*target, error) {
	engines := map[string]*engine{}
	var targets []*target
	for _, name := range b.c.targets {
		if name == "bare" {
			addr, err := child.FreeAddr()
			if err != nil {
				return nil, err
			}
			p, err := child.Serve(ctx, b.Self, b.Dir, "bare", addr, nil, b.Area, "-bare-serve", addr)
			if err != nil {
				return nil, err
			}
			b.procs = append(b.procs, p)
			wl, err := newFixed(b.c.concurrency, http.MethodGet, p.Base+"/api/v1/monitors/mon_01M7ZZ0000000000000000000", "tsk_bare")
			if err != nil {
				return nil, err
			}
			targets = append(targets, &target{name: name, wl: wl, server: p})
			continue
		}
		engName, op, _ := strings.Cut(name, "-")
		e := engines[engName]
		if e == nil {
			var err error
			if e, err = b.startEngine(ctx, engName); err != nil {
				return nil, err
			}
			engines[engName] = e
		}
		t := &target{name: name, engine: e, server: e.p, rate: b.c.postGuess}
		switch op {
		case "get":
			id, keys, err := b.seedGet(ctx, e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if t.wl, err = newFixed(b.c.concurrency, http.MethodGet, e.p.Base+"/api/v1/monitors/"+id, keys...); err != nil {
				return nil, err
			}
		case "post":
			t.creates = newCreates(b.c.concurrency, e.p.Base)
			t.wl = t.creates
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// startEngine starts `tocsin serve` on a fresh SQLite data dir or
// PostgreSQL database.
func (b *bench) startEngine(ctx context.Context, name string) (*engine, error) {
	dataDir := filepath.Join(b.Dir, name)
	args := []string{"--data-dir", dataDir, "--rate-limit", strconv.Itoa(b.c.rateLimit)}
	e := &engine{name: name, dbArgs: []string{"--data-dir", dataDir}}
	if name == "postgres" {
		dbURL, drop, err := pgfresh.Create(ctx, b.c.pgURL, pgfresh.Name("tocsin_apibench", 0), b.c.keepWork, b.Logf)
		if err != nil {
			return nil, err
		}
		b.Undo(drop)
		b.pg = true
		keys, err := b.Bin.Run(ctx, "secret-key")
		if err != nil {
			return nil, err
		}
		args = append(args, "--database-url", dbURL, "--secret-keys", keys)
		e.dbArgs = []string{"--database-url", dbURL}
	}
	var err error
	if e.p, err = b.Bin.Serve(ctx, b.Dir, "tocsin-"+name, nil, args...); err != nil {
		return nil, err
	}
	b.Logf("%s: tocsin serve at %s (pid %d)", name, e.p.Base, e.p.Pid())
	b.procs = append(b.procs, e.p)
	return e, nil
}

// seedGet makes keys for the bootstrap owner and one monitor to read.
// With several keys, client w uses key w mod len(keys): many API clients,
// each well within its own rate limit, as in production, where one key can
// never send more than 600 requests a minute.
func (b *bench) seedGet(ctx context.Context, e *engine) (id string, keys []string, err error) {
	for i := range max(1, b.c.keys) {
		key, err := b.tocsin(ctx, e, "key", "create", "--email", "owner@localhost", "--workspace", "default",
			"--scope", "monitors:read", "--scope", "monitors:write", "--name", fmt.Sprintf("apibench-get-%d", i))
		if err != nil {
			return "", nil, err
		}
		keys = append(keys, key)
	}
	key := keys[0]
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.p.Base+"/api/v1/monitors",
		strings.NewReader(`{"type":"http","name":"apibench read target","config":{"url":"http://127.0.0.1:9/health"}}`))
	if err != nil {
		return "", nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.tr.RoundTrip(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	var m struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != http.StatusCreated || m.ID == "" {
		return "", nil, fmt.Errorf("creating the monitor to read: %s (%v)", resp.Status, err)
	}
	return m.ID, keys, nil
}

func (b *bench) tocsin(ctx context.Context, e *engine, args ...string) (string, error) {
	return b.Bin.Run(ctx, append(args, e.dbArgs...)...)
}

// provision adds workspaces until the POST target can take need more creates.
func (b *bench) provision(ctx context.Context, t *target, need int) error {
	missing := (need - t.creates.capacity() + monitorQuota - 1) / monitorQuota
	if missing <= 0 {
		return nil
	}
	b.Logf("%s: adding %d workspaces for %d more creates", t.name, missing, need)
	start := len(t.creates.wss)
	var wg sync.WaitGroup
	errs := make([]error, missing)
	keys := make([]string, missing)
	sem := make(chan struct{}, 4)
	for i := range missing {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			slug := fmt.Sprintf("bench-post-%d", start+i+1)
			email := slug + "@localhost"
			if _, err := b.tocsin(ctx, t.engine, "user", "create", "--email", email, "--workspace", slug, "--role", "owner"); err != nil {
				errs[i] = err
				return
			}
			keys[i], errs[i] = b.tocsin(ctx, t.engine, "key", "create", "--email", email, "--workspace", slug,
				"--scope", "monitors:read", "--scope", "monitors:write", "--name", "apibench-post")
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, k := range keys {
		t.creates.add(k)
	}
	return nil
}

// need is how many creates a phase of d may make, generously.
func (b *bench) need(t *target, d time.Duration) int {
	return int(t.rate*d.Seconds()*1.5) + 4*b.c.concurrency
}

// measure warms a target up, then records one round.
func (b *bench) measure(ctx context.Context, t *target, round int) error {
	if t.creates != nil {
		if err := b.provision(ctx, t, b.need(t, b.c.warmup+b.c.duration)); err != nil {
			return err
		}
	}
	if b.c.warmup > 0 {
		w := load(ctx, b.tr, t.wl, b.c.concurrency, b.c.warmup)
		t.rate = max(t.rate, w.rate())
		if t.creates != nil {
			// The warm-up knows the real rate better than the guess did.
			t.rate = w.rate()
			if err := b.provision(ctx, t, b.need(t, b.c.duration)); err != nil {
				return err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	before, cpuOK := sampleCPU()
	p := load(ctx, b.tr, t.wl, b.c.concurrency, b.c.duration)
	if err := ctx.Err(); err != nil {
		return err
	}
	if after, ok := sampleCPU(); ok && cpuOK {
		p.cpu = before.share(after, t.server.Pid())
	}
	t.phases = append(t.phases, p)
	t.rate = max(t.rate, p.rate())
	sorted := sortedLatencies(p.latencies)
	b.Logf("%-14s round %d: %8.0f req/s  p50 %-9s p99 %-9s errors %d  CPU%%: busy %.0f, apibench %.0f, server %.0f, postgres %.0f, others %.0f%s",
		t.name, round+1, p.rate(), fmtDur(figure.Percentile(sorted, 0.50)), fmtDur(figure.Percentile(sorted, 0.99)), p.errors,
		p.cpu.busy, p.cpu.self, p.cpu.server, p.cpu.pg, p.cpu.other, exhaustedNote(p))
	time.Sleep(500 * time.Millisecond) // let the last round's background work settle
	return nil
}

func exhaustedNote(p phase) string {
	if p.exhausted {
		return "  (ran out of workspace quota before the end: the rate covers a shorter run)"
	}
	return ""
}
