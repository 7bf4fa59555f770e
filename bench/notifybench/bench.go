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
	"time"
)

// bench owns the work directory, the receiver and the databases of a run.
type bench struct {
	c    config
	log  io.Writer
	dir  string
	self string // this binary, re-executed as the receiver
	recv *receiverClient
	rev  string // git describe of the checkout at the start
	seq  int    // databases made so far, to name the next
}

// results is everything a run measured.
type results struct {
	targets    []string      // bare first (if measured), then the engines
	throughput []*throughput // every target's every round, in the order run
	latency    []*latency    // every engine's every latency round
	recvPeak   int64         // the receiver's peak RSS, bytes
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func (b *bench) close() {
	if b.recv != nil {
		b.recv.child.stop(10 * time.Second)
	}
	if b.dir != "" {
		if b.c.keep {
			b.logf("kept work directory %s", b.dir)
		} else {
			os.RemoveAll(b.dir)
		}
	}
}

func (b *bench) run(ctx context.Context) (*results, error) {
	b.rev = gitDescribe(ctx)
	var err error
	if b.dir, err = os.MkdirTemp("", "notifybench-"); err != nil {
		return nil, err
	}
	if b.self, err = os.Executable(); err != nil {
		return nil, err
	}
	ch, err := b.startChild(ctx, "receiver", "-receive")
	if err != nil {
		return nil, err
	}
	b.recv = newReceiverClient(ch)

	res := &results{}
	if b.c.bare {
		res.targets = append(res.targets, "bare")
	}
	res.targets = append(res.targets, b.c.engines...)
	for r := range b.c.rounds {
		for i := range res.targets {
			t := res.targets[(i+r)%len(res.targets)] // a rotating order
			var (
				tp  *throughput
				err error
			)
			if t == "bare" {
				tp, err = b.bareRound(ctx, r+1)
			} else {
				tp, err = b.tocsinRound(ctx, t, r+1)
			}
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", r+1, t, err)
			}
			res.throughput = append(res.throughput, tp)
			b.logf("round %d, %s: %d delivered in %s, %.0f/s", r+1, t, tp.recv.Unique, dur(tp.elapsed), tp.rate())
		}
	}
	if b.c.monitors > 0 {
		for _, e := range b.c.engines {
			for r := range b.c.latencyRounds {
				l, err := b.latencyRound(ctx, e, r+1)
				if err != nil {
					return nil, fmt.Errorf("latency, %s: %w", e, err)
				}
				res.latency = append(res.latency, l)
			}
		}
	}
	res.recvPeak = peakRSS(b.recv.child.cmd.Process.Pid)
	return res, nil
}

// child is this binary re-executed as the receiver.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	base  string // its URL
	log   string
	done  chan error
}

func (b *bench) startChild(ctx context.Context, name string, args ...string) (*child, error) {
	logPath := filepath.Join(b.dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(b.self, args...)
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
	c := &child{name: name, cmd: cmd, stdin: stdin, log: logPath, done: make(chan error, 1)}
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
			b.logf("%s: listening at %s (pid %d)", name, l, cmd.Process.Pid)
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
