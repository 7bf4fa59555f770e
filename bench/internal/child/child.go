// Package child runs a benchmark's servers as child processes: the
// benchmark binary re-executed in a serving mode, which prints its URL as
// its first line of output and stops when its standard input closes.
package child

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

// Process is a running child.
type Process struct {
	Name string
	Cmd  *exec.Cmd
	Base string // its URL, from its first line of output
	Log  string // the file its standard error goes to
	// Stdin is its standard input: closing it stops the child, and a
	// child may read commands from it.
	Stdin io.WriteCloser
	done  chan error
}

// Start runs exe with args, env added to this process's environment, and
// its standard error in dir/<name>.log, and waits up to a minute for its
// URL.
func Start(ctx context.Context, exe, dir, name string, env []string, args ...string) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
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
	p := &Process{Name: name, Cmd: cmd, Stdin: stdin, Log: logPath, done: make(chan error, 1)}
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
		p.done <- cmd.Wait()
		f.Close()
	}()
	select {
	case l, ok := <-first:
		if ok && strings.HasPrefix(l, "http://") {
			p.Base = l
			return p, nil
		}
		p.Stop(5 * time.Second)
		return nil, fmt.Errorf("%s did not start: %q (log: %s)", name, l, logPath)
	case <-time.After(60 * time.Second):
		p.Stop(5 * time.Second)
		return nil, fmt.Errorf("%s did not start within a minute (log: %s)", name, logPath)
	case <-ctx.Done():
		p.Stop(5 * time.Second)
		return nil, ctx.Err()
	}
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Stop closes the child's standard input, which stops it, and kills it if
// it has not exited within limit. Stopping again does nothing.
func (p *Process) Stop(limit time.Duration) {
	p.Stdin.Close()
	select {
	case <-p.done:
	case <-time.After(limit):
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
	p.done <- nil // for a later Stop or Kill
}

// Kill ends the child with SIGKILL, as a crash would.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.done
	p.done <- nil // for a later Stop
}
