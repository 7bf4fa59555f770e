package checks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/child"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/bench/internal/session"
)

// bench owns the work directory, the target and the children of one run.
type bench struct {
	c   config
	log io.Writer
	*session.Session
	target  *child.Process
	base    string // the target's URL
	targets []benchTarget
}

// result is one measured run: the bare loop or tocsin serve on one database.
type result struct {
	Name   string // bare, sqlite, postgres
	Order  int    // 1-based position in the run
	Window *windowStats
	CPU    cpuShare
	// Peak is the process's peak resident set (warm-up included), RSS its
	// resident set at the end of the window; bytes.
	Peak, RSS int64
	Engine    *engineFigures // tocsin serve's own figures; nil for bare
	Before    sizeSample     // engines: the observations table at both ends
	After     sizeSample
	DBSize    int64         // engines: the whole database at the end
	Setup     time.Duration // engines: creating the monitors
}

func (b *bench) close() {
	if b.target != nil {
		b.target.Stop(5 * time.Second)
	}
	if b.Session != nil {
		b.Session.Close()
	}
}

func (b *bench) run(ctx context.Context) ([]*result, error) {
	var err error
	b.Session, err = session.Open(ctx, session.Options{Name: "checks", Log: b.log, Tocsin: b.c.tocsin,
		NoTocsin: len(b.c.engines) == 0, Keep: b.c.keep})
	if err != nil {
		return nil, err
	}
	if b.target, err = b.startChild("target", "-target-serve"); err != nil {
		return nil, err
	}
	if b.base, err = b.target.Line(10 * time.Second); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	b.Logf("target at %s", b.base)
	b.targets = newTargets(b.c.monitors, b.base)
	targetsFile := filepath.Join(b.Dir, "targets.txt")
	if err := writeTargets(targetsFile, b.targets); err != nil {
		return nil, err
	}

	var res []*result
	add := func(r *result, err error) error {
		if err != nil {
			return err
		}
		r.Order = len(res) + 1
		res = append(res, r)
		return nil
	}
	if b.c.bare == "before" || b.c.bare == "both" {
		if err := add(b.runBare(ctx, targetsFile)); err != nil {
			return nil, fmt.Errorf("bare loop: %w", err)
		}
	}
	for _, e := range b.c.engines {
		if err := add(b.runEngine(ctx, e)); err != nil {
			return nil, fmt.Errorf("engine on %s: %w", e, err)
		}
	}
	if b.c.bare == "after" || b.c.bare == "both" {
		if err := add(b.runBare(ctx, targetsFile)); err != nil {
			return nil, fmt.Errorf("bare loop: %w", err)
		}
	}
	return res, nil
}

func (b *bench) runBare(ctx context.Context, targetsFile string) (*result, error) {
	b.Logf("bare loop: %d targets every %s", len(b.targets), b.c.interval)
	ch, err := b.startChild("bare", "-bare-loop", targetsFile, "-interval", b.c.interval.String(),
		"-concurrency", strconv.Itoa(b.c.concurrency), "-timeout", strconv.Itoa(b.c.timeout))
	if err != nil {
		return nil, err
	}
	defer ch.Stop(30 * time.Second)
	if l, err := ch.Line(60 * time.Second); err != nil || !strings.Contains(l, `"ready"`) {
		return nil, fmt.Errorf("bare loop did not start: %q, %v (log: %s)", l, err, ch.Log)
	}
	r := &result{Name: "bare"}
	err = b.measure(ctx, ch.Name, ch.Pid(), r, nil,
		func() error { return ch.Send("start") },
		func() error { return ch.Send("end") })
	if err != nil {
		return nil, err
	}
	if err := ch.Send("stop"); err != nil {
		return nil, err
	}
	l, err := ch.Line(2 * time.Minute)
	if err != nil {
		return nil, fmt.Errorf("bare loop: no report: %w (log: %s)", err, ch.Log)
	}
	if err := json.Unmarshal([]byte(l), &r.Window); err != nil {
		return nil, fmt.Errorf("bare loop: report %q: %w", l, err)
	}
	return r, nil
}

// runEngine measures `tocsin serve` on a fresh database of engine, where
// the benchmark created the monitors beforehand.
func (b *bench) runEngine(ctx context.Context, engine string) (*result, error) {
	dbURL, drop, err := b.freshDatabase(ctx, engine)
	if err != nil {
		return nil, err
	}
	b.Undo(drop)
	r := &result{Name: engine}
	b.Logf("%s: creating %d monitors", engine, len(b.targets))
	begin := time.Now()
	if err := b.createMonitors(ctx, dbURL, b.targets); err != nil {
		return nil, err
	}
	r.Setup = time.Since(begin)
	b.Logf("%s: monitors created in %s", engine, r.Setup.Round(time.Millisecond))
	raw, err := openRaw(engine, dbURL)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	if err := raw.rebase(ctx, b.targets, b.c.interval, time.Now().Add(2*time.Second)); err != nil {
		return nil, fmt.Errorf("moving the first slots: %w", err)
	}
	keys, err := b.Bin.Run(ctx, "secret-key")
	if err != nil {
		return nil, err
	}
	srv, err := b.Bin.Serve(ctx, b.Dir, "tocsin-"+engine, []string{"TOCSIN_SECRET_KEYS=" + keys},
		"--data-dir", filepath.Join(b.Dir, engine), "--database-url", dbURL, "--check-concurrency", strconv.Itoa(b.c.concurrency))
	if err != nil {
		return nil, err
	}
	defer srv.Stop(60 * time.Second)
	b.Logf("%s: tocsin serve at %s (pid %d)", engine, srv.Base, srv.Pid())
	var (
		m0, m1     metrics
		stopGauges func() (float64, float64)
	)
	err = b.measure(ctx, srv.Name, srv.Pid(), r, raw,
		func() (err error) {
			stopGauges = gauges(ctx, srv.Base)
			m0, err = scrape(ctx, srv.Base)
			return err
		},
		func() (err error) {
			q, f := stopGauges()
			if m1, err = scrape(ctx, srv.Base); err != nil {
				return err
			}
			r.Engine = figuresOf(m0, m1, q, f)
			return nil
		})
	if err != nil {
		return nil, err
	}
	srv.Stop(60 * time.Second)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	if r.Window, err = raw.analyzeWindow(actx, b.targets, b.c.interval, r.Window.From, r.Window.To); err != nil {
		return nil, fmt.Errorf("reading the observations: %w", err)
	}
	if r.DBSize, err = raw.databaseSize(actx); err != nil {
		return nil, fmt.Errorf("database size: %w", err)
	}
	return r, nil
}

// measure lets the process pid warm up, opens the window (calling open),
// closes it after the duration (calling end), and waits the grace time.
// It samples the CPU at both ends and the process's memory at the end,
// and raw, when given, at both ends. r.Window holds the window's ends.
func (b *bench) measure(ctx context.Context, name string, pid int, r *result, raw *rawDB, open, end func() error) error {
	b.Logf("%s: running; warm-up %s", name, b.c.warmup)
	if err := session.Sleep(ctx, b.c.warmup); err != nil {
		return err
	}
	var (
		err error
		pg  map[int]bool
	)
	if raw != nil {
		if r.Before, err = raw.size(ctx); err != nil {
			return fmt.Errorf("table size: %w", err)
		}
		if pg, err = raw.pgProcesses(ctx); err != nil {
			return fmt.Errorf("PostgreSQL processes: %w", err)
		}
	}
	if err := open(); err != nil {
		return err
	}
	c0 := sampleCPU()
	r.Window = &windowStats{From: time.Now()}
	b.Logf("%s: measuring for %s", name, b.c.duration)
	if err := session.Sleep(ctx, b.c.duration); err != nil {
		return err
	}
	r.Window.To = time.Now()
	c1 := sampleCPU()
	r.Peak, r.RSS = host.Memory(pid)
	if err := end(); err != nil {
		return err
	}
	if raw != nil {
		// Backends that connected during the window count too.
		more, err := raw.pgProcesses(ctx)
		if err != nil {
			return fmt.Errorf("PostgreSQL processes: %w", err)
		}
		for pid := range more {
			pg[pid] = true
		}
	}
	r.CPU = share(c0, c1, pid, b.target.Pid(), pg)
	b.Logf("%s: window closed; %s for the last checks", name, b.c.grace)
	if err := session.Sleep(ctx, b.c.grace); err != nil {
		return err
	}
	if raw != nil {
		if r.After, err = raw.size(ctx); err != nil {
			return fmt.Errorf("table size: %w", err)
		}
	}
	return nil
}

// startChild runs this binary again as name (the target or the bare
// loop), with its log in the work directory.
func (b *bench) startChild(name string, args ...string) (*child.Process, error) {
	return child.Spawn(b.Self, b.Dir, name, nil, append([]string{b.Area}, args...)...)
}
