package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/secrets"
)

// bench owns the work directory, the servers and the databases of a run.
type bench struct {
	c       config
	log     io.Writer
	dir     string
	self    string // this binary, re-executed for every server
	targets []*target
	drops   []func()
	rev     string // git describe of the checkout at the start
}

// target is one server under test and what was measured of it.
type target struct {
	name   string // bare, sqlite, postgres
	srv    *child
	tokens []string
	raw    *rawDB // nil for bare
	url    string // the database's, "" for bare
	setup  time.Duration

	rounds []*phase // the measured windows, in round order
	burst  *burstResult
	// acked counts every acknowledgement of every phase (warm-ups too),
	// to compare with the pings stored.
	acked  int
	stored int64 // pings in the database at the end; -1 for bare
	peak   int64 // the server's peak RSS (VmHWM), bytes
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func (b *bench) close() {
	for _, t := range b.targets {
		if t.srv != nil {
			t.srv.stop(30 * time.Second)
		}
		if t.raw != nil {
			t.raw.Close()
		}
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

func (b *bench) run(ctx context.Context) ([]*target, error) {
	b.rev = gitDescribe(ctx)
	var err error
	if b.dir, err = os.MkdirTemp("", "pingbench-"); err != nil {
		return nil, err
	}
	if b.self, err = os.Executable(); err != nil {
		return nil, err
	}
	if err := b.start(ctx); err != nil {
		return nil, err
	}

	for r := range b.c.rounds {
		for i := range b.targets {
			t := b.targets[(i+r)%len(b.targets)] // a rotating order
			b.logf("round %d, %s: %d clients, warm-up %s, measuring %s", r+1, t.name, b.c.clients, b.c.warmup, b.c.duration)
			p, err := sustained(ctx, t, b.c.clients, b.c.warmup, b.c.duration)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.name, err)
			}
			p.round = r + 1
			t.rounds = append(t.rounds, p)
			b.logf("round %d, %s: %.0f acknowledged/s, p50 %s, p99 %s, %d not acknowledged",
				r+1, t.name, p.rate(), dur(p.percentile(0.5)), dur(p.percentile(0.99)), p.failures())
		}
	}
	if b.c.burst > 0 {
		for _, t := range b.targets {
			b.logf("%s: burst of %d pings over %d connections", t.name, b.c.burst, b.c.burstConns)
			br, err := burst(ctx, t, b.c.burst, b.c.burstConns)
			if err != nil {
				return nil, fmt.Errorf("%s: burst: %w", t.name, err)
			}
			t.burst = br
			b.logf("%s: %d of %d answered 200 in %s", t.name, br.ok, br.sent, dur(br.all))
		}
	}
	for _, t := range b.targets {
		t.peak = peakRSS(t.srv.cmd.Process.Pid)
		t.stored = -1
		if t.raw == nil {
			continue
		}
		// Every acknowledged ping was durable before its answer: kill
		// the server with SIGKILL, and count them as the next process
		// finds them (on SQLite, after replaying the journal).
		t.srv.kill()
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
		if t.srv, err = b.startChild(ctx, "bare", nil, "-bare-serve"); err != nil {
			return err
		}
		b.targets = append(b.targets, t)
	}
	for _, e := range b.c.engines {
		t := &target{name: e}
		b.targets = append(b.targets, t)
		dbURL, drop, err := b.freshDatabase(ctx, e)
		if err != nil {
			return err
		}
		b.drops = append(b.drops, drop)
		keys, err := secrets.GenerateKeySpec("k1")
		if err != nil {
			return err
		}
		b.logf("%s: creating %d heartbeats", e, b.c.heartbeats)
		begin := time.Now()
		if t.tokens, err = createHeartbeats(ctx, dbURL, keys, b.c.heartbeats); err != nil {
			return fmt.Errorf("%s: creating heartbeats: %w", e, err)
		}
		t.setup = time.Since(begin)
		t.url = dbURL
		if t.raw, err = openRaw(e, dbURL); err != nil {
			return err
		}
		if t.srv, err = b.startChild(ctx, e, []string{keysEnv + "=" + keys}, "-serve", dbURL); err != nil {
			return err
		}
	}
	return nil
}

// child is this binary re-executed as a server.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	base  string // its URL
	log   string
	done  chan error
	// profiling: it writes a CPU profile (-cpuprofile)
	profiling bool
}

func (b *bench) startChild(ctx context.Context, name string, env []string, args ...string) (*child, error) {
	logPath := filepath.Join(b.dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(b.self, args...)
	cmd.Env = append(os.Environ(), env...)
	if b.c.profileDir != "" {
		if err := os.MkdirAll(b.c.profileDir, 0o755); err != nil {
			f.Close()
			return nil, err
		}
		cmd.Env = append(cmd.Env, profileEnv+"="+filepath.Join(b.c.profileDir, name+".pprof"))
	}
	cmd.Stderr = f
	stdin, err := cmd.StdinPipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	c := &child{name: name, cmd: cmd, stdin: stdin, log: logPath, done: make(chan error, 1), profiling: b.c.profileDir != ""}
	first := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			select {
			case first <- s.Text():
			default:
			}
		}
		close(first)
		c.done <- cmd.Wait()
		f.Close()
	}()
	select {
	case l, ok := <-first:
		if ok && strings.HasPrefix(l, "http://") {
			c.base = l
			b.logf("%s: serving at %s (pid %d)", name, l, cmd.Process.Pid)
			return c, nil
		}
		c.stop(5 * time.Second)
		return nil, fmt.Errorf("%s did not start: %q (log: %s)", name, l, logPath)
	case <-time.After(60 * time.Second):
		c.stop(5 * time.Second)
		return nil, fmt.Errorf("%s did not start within a minute (log: %s)", name, logPath)
	case <-ctx.Done():
		c.stop(5 * time.Second)
		return nil, ctx.Err()
	}
}

// stop closes the child's stdin, which stops it, and kills it if it has
// not exited within limit.
// kill ends the child with SIGKILL, as a crash would (after SIGUSR1, on
// which a profiling child writes its profile out).
func (c *child) kill() {
	if c.profiling {
		_ = c.cmd.Process.Signal(syscall.SIGUSR1)
		time.Sleep(time.Second)
	}
	_ = c.cmd.Process.Kill()
	<-c.done
	c.done <- nil // for a later stop
}

func (c *child) stop(limit time.Duration) {
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(limit):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	c.done <- nil // for a second stop
}

// peakRSS is a process's VmHWM in bytes; 0 if unknown.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		var kb int64
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil {
			return kb << 10
		}
	}
	return 0
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
