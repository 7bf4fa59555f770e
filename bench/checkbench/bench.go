package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/child"
	"github.com/tocsin/tocsin/bench/internal/host"
)

// bench owns the work directory, the target and the children of one run.
type bench struct {
	c       config
	log     io.Writer
	dir     string
	self    string // this binary, re-executed for every child
	target  *child.Process
	base    string // the target's URL
	targets []benchTarget
	drops   []func()
	// bareRuns counts the bare loop's runs, to name their profiles.
	bareRuns int
	rev      string // git describe of the checkout at the start
}

// result is one measured run: the bare loop or the engine on one database.
type result struct {
	Name    string // bare, sqlite, postgres
	Order   int    // 1-based position in the run
	Child   childReport
	Window  *windowStats
	CPU     cpuShare
	Before  sizeSample // engines: the observations table at both ends
	After   sizeSample
	DBSize  int64         // engines: the whole database at the end
	Setup   time.Duration // engines: creating the monitors
	Profile *profileSplit
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func (b *bench) close() {
	if b.target != nil {
		b.target.Stop(5 * time.Second)
	}
	for _, d := range b.drops {
		d()
	}
	if b.dir != "" {
		if b.c.keep {
			b.logf("kept work directory %s", b.dir)
		} else {
			os.RemoveAll(b.dir)
		}
	}
}

func (b *bench) run(ctx context.Context) ([]*result, error) {
	b.rev = host.GitDescribe(ctx)
	var err error
	if b.dir, err = os.MkdirTemp("", "checkbench-"); err != nil {
		return nil, err
	}
	if b.self, err = os.Executable(); err != nil {
		return nil, err
	}
	if b.target, err = b.startChild("target", "-target-serve"); err != nil {
		return nil, err
	}
	if b.base, err = b.target.Line(10 * time.Second); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	b.logf("target at %s", b.base)
	b.targets = newTargets(b.c.monitors, b.base)
	targetsFile := filepath.Join(b.dir, "targets.txt")
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
	b.logf("bare loop: %d targets every %s", len(b.targets), b.c.interval)
	args := []string{"-bare-loop", targetsFile, "-interval", b.c.interval.String(),
		"-concurrency", strconv.Itoa(b.c.concurrency), "-timeout", strconv.Itoa(b.c.timeout)}
	profile, err := b.profilePath(fmt.Sprintf("bare-%d", b.bareRuns))
	if err != nil {
		return nil, err
	}
	b.bareRuns++
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
	}
	ch, err := b.startChild("bare", args...)
	if err != nil {
		return nil, err
	}
	defer ch.Stop(30 * time.Second)
	r := &result{Name: "bare"}
	if err := b.measure(ctx, ch, r, nil); err != nil {
		return nil, err
	}
	r.Window = r.Child.Bare
	if profile != "" {
		if r.Profile, err = splitProfile(ctx, profile); err != nil {
			b.logf("bare: %v", err)
		}
	}
	return r, nil
}

func (b *bench) runEngine(ctx context.Context, engine string) (*result, error) {
	dbURL, drop, err := b.freshDatabase(ctx, engine)
	if err != nil {
		return nil, err
	}
	b.drops = append(b.drops, drop)
	r := &result{Name: engine}
	b.logf("%s: creating %d monitors", engine, len(b.targets))
	begin := time.Now()
	if err := b.createMonitors(ctx, dbURL, b.targets); err != nil {
		return nil, err
	}
	r.Setup = time.Since(begin)
	b.logf("%s: monitors created in %s", engine, r.Setup.Round(time.Millisecond))
	raw, err := openRaw(engine, dbURL)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	if err := raw.rebase(ctx, b.targets, b.c.interval, time.Now().Add(time.Second)); err != nil {
		return nil, fmt.Errorf("moving the first slots: %w", err)
	}

	args := []string{"-engine-serve", dbURL, "-concurrency", strconv.Itoa(b.c.concurrency), "-writer-pace", b.c.writerPace.String(),
		"-claim-delay", b.c.claimDelay.String()}
	profile, err := b.profilePath("engine-" + engine)
	if err != nil {
		return nil, err
	}
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
	}
	ch, err := b.startChild("engine-"+engine, args...)
	if err != nil {
		return nil, err
	}
	defer ch.Stop(60 * time.Second)
	if err := b.measure(ctx, ch, r, raw); err != nil {
		return nil, err
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	if r.Window, err = raw.analyzeWindow(actx, b.targets, b.c.interval, r.Child.Start.At, r.Child.End.At); err != nil {
		return nil, fmt.Errorf("reading the observations: %w", err)
	}
	if r.DBSize, err = raw.databaseSize(actx); err != nil {
		return nil, fmt.Errorf("database size: %w", err)
	}
	if profile != "" {
		if r.Profile, err = splitProfile(actx, profile); err != nil {
			b.logf("%s: %v", engine, err)
		}
	}
	return r, nil
}

// profilePath names a child's profile file, or "" without -cpuprofile.
func (b *bench) profilePath(name string) (string, error) {
	if b.c.profileDir == "" {
		return "", nil
	}
	if err := os.MkdirAll(b.c.profileDir, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(b.c.profileDir, name+".pprof"), nil
}

// measure waits for the child, lets it warm up, opens the window, closes
// it after the duration, and, after the grace time, stops the child and
// reads its report. raw, when given, is sampled at both ends.
func (b *bench) measure(ctx context.Context, ch *child.Process, r *result, raw *rawDB) error {
	if l, err := ch.Line(60 * time.Second); err != nil || !strings.Contains(l, `"ready"`) {
		return fmt.Errorf("%s did not start: %q, %v (log: %s)", ch.Name, l, err, ch.Log)
	}
	b.logf("%s: running; warm-up %s", ch.Name, b.c.warmup)
	if err := sleep(ctx, b.c.warmup); err != nil {
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
	c0 := sampleCPU()
	if err := ch.Send("start"); err != nil {
		return err
	}
	b.logf("%s: measuring for %s", ch.Name, b.c.duration)
	if err := sleep(ctx, b.c.duration); err != nil {
		return err
	}
	if err := ch.Send("end"); err != nil {
		return err
	}
	c1 := sampleCPU()
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
	r.CPU = c0.share(c1, ch.Pid(), b.target.Pid(), pg)
	b.logf("%s: window closed; %s for the last checks", ch.Name, b.c.grace)
	if err := sleep(ctx, b.c.grace); err != nil {
		return err
	}
	if raw != nil {
		if r.After, err = raw.size(ctx); err != nil {
			return fmt.Errorf("table size: %w", err)
		}
	}
	if err := ch.Send("stop"); err != nil {
		return err
	}
	l, err := ch.Line(2 * time.Minute)
	if err != nil {
		return fmt.Errorf("%s: no report: %w (log: %s)", ch.Name, err, ch.Log)
	}
	if err := json.Unmarshal([]byte(l), &r.Child); err != nil {
		return fmt.Errorf("%s: report %q: %w", ch.Name, l, err)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// child is this binary re-executed in one of its internal modes.
// startChild runs this binary again as name, with its log in the work
// directory.
func (b *bench) startChild(name string, args ...string) (*child.Process, error) {
	return child.Spawn(b.self, b.dir, name, nil, args...)
}
