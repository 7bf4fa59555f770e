package pings

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/tocsin/tocsin/bench/internal/child"
	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/secrets"
)

// bench owns the work directory, the servers and the databases of a run.
type bench struct {
	c   config
	log io.Writer
	*session.Session
	targets []*target
}

// target is one server under test and what was measured of it.
type target struct {
	name   string // bare, sqlite, postgres
	srv    *child.Process
	tokens []string
	raw    *rawDB // nil for bare
	url    string // the database's, "" for bare
	setup  time.Duration

	rounds  []*phase         // the measured windows, in round order
	offered []*offeredResult // by -rate, in its order
	burst   *burstResult
	// acked counts every acknowledgement of every phase (warm-ups too),
	// to compare with the pings stored.
	acked  int
	stored int64 // pings in the database at the end; -1 for bare
	peak   int64 // the server's peak RSS (VmHWM), bytes
}

func (b *bench) close() {
	for _, t := range b.targets {
		if t.srv != nil {
			t.srv.Stop(30 * time.Second)
		}
		if t.raw != nil {
			t.raw.Close()
		}
	}
	if b.Session != nil {
		b.Session.Close()
	}
}

func (b *bench) run(ctx context.Context) ([]*target, error) {
	var err error
	b.Session, err = session.Open(ctx, session.Options{Name: "pings", Log: b.log, Tocsin: b.c.tocsin,
		NoTocsin: len(b.c.engines) == 0, Keep: b.c.keep})
	if err != nil {
		return nil, err
	}
	if err := b.start(ctx); err != nil {
		return nil, err
	}

	for r := range b.c.rounds {
		for i := range b.targets {
			t := b.targets[(i+r)%len(b.targets)] // a rotating order
			b.Logf("round %d, %s: %d clients, warm-up %s, measuring %s", r+1, t.name, b.c.clients, b.c.warmup, b.c.duration)
			p, err := sustained(ctx, t, b.c.clients, b.c.warmup, b.c.duration)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.name, err)
			}
			p.round = r + 1
			t.rounds = append(t.rounds, p)
			b.Logf("round %d, %s: %.0f acknowledged/s, p50 %s, p99 %s, %d not acknowledged",
				r+1, t.name, p.rate(), figure.Dur(p.percentile(0.5)), figure.Dur(p.percentile(0.99)), p.failures())
		}
	}
	for _, rate := range b.c.rates {
		for _, t := range b.targets {
			b.Logf("%s: %.0f pings/s offered over up to %d connections, warm-up %s, measuring %s", t.name, rate, b.c.rateConns, b.c.warmup, b.c.duration)
			r, err := offered(ctx, t, rate, b.c.rateConns, b.c.warmup, b.c.duration)
			if err != nil {
				return nil, fmt.Errorf("%s: open loop: %w", t.name, err)
			}
			t.offered = append(t.offered, r)
			b.Logf("%s: %d of %d acknowledged, p50 %s, p99 %s, machine %.0f%% busy", t.name, r.ok, r.sent,
				figure.Dur(r.percentile(0.5)), figure.Dur(r.percentile(0.99)), r.cpu.Busy)
		}
	}
	if b.c.burst > 0 {
		for _, t := range b.targets {
			b.Logf("%s: burst of %d pings over %d connections", t.name, b.c.burst, b.c.burstConns)
			br, err := burst(ctx, t, b.c.burst, b.c.burstConns)
			if err != nil {
				return nil, fmt.Errorf("%s: burst: %w", t.name, err)
			}
			t.burst = br
			b.Logf("%s: %d of %d answered 200 in %s", t.name, br.ok, br.sent, figure.Dur(br.all))
		}
	}
	for _, t := range b.targets {
		t.peak = host.PeakRSS(t.srv.Pid())
		t.stored = -1
		if t.raw == nil {
			continue
		}
		// Every acknowledged ping was durable before its answer: kill
		// the server with SIGKILL, and count them as the next process
		// finds them (on SQLite, after replaying the journal).
		t.srv.Kill()
		if t.stored, err = countPings(ctx, t.url); err != nil {
			return nil, fmt.Errorf("%s: counting the stored pings: %w", t.name, err)
		}
	}
	return b.targets, nil
}

// start prepares the databases and starts every server.
func (b *bench) start(ctx context.Context) error {
	if b.c.bare {
		t := &target{name: "bare", tokens: make([]string, b.c.heartbeats)}
		for i := range t.tokens {
			t.tokens[i] = heartbeat.NewToken() // URLs of the same length
		}
		var err error
		if t.srv, err = child.Start(ctx, b.Self, b.Dir, "bare", nil, b.Area, "-bare-serve"); err != nil {
			return err
		}
		b.Logf("bare: serving at %s (pid %d)", t.srv.Base, t.srv.Pid())
		b.targets = append(b.targets, t)
	}
	for _, e := range b.c.engines {
		t := &target{name: e}
		b.targets = append(b.targets, t)
		dbURL, drop, err := b.freshDatabase(ctx, e)
		if err != nil {
			return err
		}
		b.Undo(drop)
		keys, err := secrets.GenerateKeySpec("k1")
		if err != nil {
			return err
		}
		b.Logf("%s: creating %d heartbeats", e, b.c.heartbeats)
		begin := time.Now()
		if t.tokens, err = createHeartbeats(ctx, dbURL, keys, b.c.heartbeats); err != nil {
			return fmt.Errorf("%s: creating heartbeats: %w", e, err)
		}
		t.setup = time.Since(begin)
		t.url = dbURL
		if t.raw, err = openRaw(e, dbURL); err != nil {
			return err
		}
		// As an operator runs it: the keyring in the environment, the
		// database on the command line.
		t.srv, err = b.Bin.Serve(ctx, b.Dir, e, []string{"TOCSIN_SECRET_KEYS=" + keys},
			"--data-dir", filepath.Join(b.Dir, e), "--database-url", dbURL)
		if err != nil {
			return err
		}
		b.Logf("%s: tocsin serve at %s (pid %d)", e, t.srv.Base, t.srv.Pid())
	}
	return nil
}
