// Runs a benchmark's processes: the servers under test
// (`tocsin serve`, started with Serve, ready once /healthz answers) and
// the benchmark binary re-executed in a mode of its own (a baseline, a
// target, a receiver), which stops when its standard input closes or on
// SIGTERM, may take commands on standard input and answers in lines on
// standard output. A child started with Start prints its URL first.

package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a running child.
type Process struct {
	Name string
	Cmd  *exec.Cmd
	Base string // its URL, from its first line of output (Start)
	Log  string // the file its standard error goes to
	// Stdin is its standard input: closing it stops the child, and a
	// child may read commands from it.
	Stdin io.WriteCloser
	lines chan string // its standard output, line by line
	quit  chan struct{}
	once  sync.Once
	done  chan error
}

// Spawn runs exe with args, env added to this process's environment, and
// its standard error in dir/<name>.log. Its output is read with Line; a
// child whose output is not read waits once 16 lines are unread.
func Spawn(exe, dir, name string, env []string, args ...string) (*Process, error) {
	return spawn(exe, dir, name, env, false, args...)
}

// spawn is Spawn; with quiet, the child's standard output goes to its log
// too, and Line has nothing to read.
func spawn(exe, dir, name string, env []string, quiet bool, args ...string) (*Process, error) {
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
	var stdout io.Reader = strings.NewReader("")
	if quiet {
		cmd.Stdout = f
	} else if stdout, err = cmd.StdoutPipe(); err != nil {
		f.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &Process{Name: name, Cmd: cmd, Stdin: stdin, Log: logPath,
		lines: make(chan string, 16), quit: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		s := bufio.NewScanner(stdout)
		s.Buffer(make([]byte, 64<<10), 16<<20) // a report may be one long line
		for s.Scan() {
			select {
			case p.lines <- s.Text():
			case <-p.quit: // stopping: nobody reads any more
			}
		}
		close(p.lines)
		p.done <- cmd.Wait()
		f.Close()
	}()
	return p, nil
}

// Serve runs a server that listens on addr (which args tell it), with its
// standard output and error in dir/<name>.log, and waits up to a minute
// for http://addr/healthz to answer 200.
func Serve(ctx context.Context, exe, dir, name, addr string, env []string, args ...string) (*Process, error) {
	p, err := spawn(exe, dir, name, env, true, args...)
	if err != nil {
		return nil, err
	}
	p.Base = "http://" + addr
	if err := p.waitHealthy(ctx, time.Minute); err != nil {
		p.Stop(5 * time.Second)
		return nil, fmt.Errorf("%s did not start: %w (log: %s)", name, err, p.Log)
	}
	return p, nil
}

func (p *Process) waitHealthy(ctx context.Context, limit time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := client.Get(p.Base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return errors.New("no healthy /healthz within " + limit.String())
}

// FreeAddr is a loopback address whose port is free right now, for a
// server that must be told where to listen.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// StartChild is Spawn for a server, and waits up to a minute for the URL it
// prints first.
func StartChild(ctx context.Context, exe, dir, name string, env []string, args ...string) (*Process, error) {
	p, err := Spawn(exe, dir, name, env, args...)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	l, err := p.line(lctx)
	switch {
	case err == nil && strings.HasPrefix(l, "http://"):
		p.Base = l
		return p, nil
	case ctx.Err() != nil:
		err = ctx.Err()
	case err == nil:
		err = fmt.Errorf("%s did not start: %q (log: %s)", name, l, p.Log)
	default:
		err = fmt.Errorf("%s did not start: %w (log: %s)", name, err, p.Log)
	}
	p.Stop(5 * time.Second)
	return nil, err
}

// Line is the child's next line of output, waiting up to timeout for it.
func (p *Process) Line(timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return p.line(ctx)
}

func (p *Process) line(ctx context.Context) (string, error) {
	select {
	case l, ok := <-p.lines:
		if !ok {
			return "", errors.New("exited")
		}
		return l, nil
	case <-ctx.Done():
		return "", errors.New("timed out")
	}
}

// Send writes a command line to the child's standard input.
func (p *Process) Send(word string) error {
	_, err := io.WriteString(p.Stdin, word+"\n")
	return err
}

// Pid is the child's process id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Stop closes the child's standard input and sends it SIGTERM, either of
// which stops it (`tocsin serve` drains its requests and checks), and
// kills it if it has not exited within limit. Stopping again does nothing.
func (p *Process) Stop(limit time.Duration) {
	p.once.Do(func() { close(p.quit) })
	p.Stdin.Close()
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
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
	p.once.Do(func() { close(p.quit) })
	_ = p.Cmd.Process.Kill()
	<-p.done
	p.done <- nil // for a later Stop
}

// ServeUntilEOF is the child's side of a served mode: it serves srv on ln,
// prints base as its first line, and shuts down, draining requests, at EOF
// on stdin (the parent closed it, or died) or when ctx ends.
func ServeUntilEOF(ctx context.Context, srv *http.Server, ln net.Listener, base string, stdin io.Reader, stdout io.Writer) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if _, err := fmt.Fprintln(stdout, base); err != nil {
		return err
	}
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	case <-eof:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
