// The processes a run starts: the servers under test (`tocsin serve`,
// ready once /healthz answers) and this binary re-executed in one of an
// area's child modes, which prints its URL first, stops when its standard
// input closes or on SIGTERM, and may take commands on its standard input
// and answer in lines on its standard output.

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
	"syscall"
	"time"
)

// Process is a running child.
type Process struct {
	Name, Base string // Base: its URL
	Log        string // the file its standard error goes to
	Cmd        *exec.Cmd
	Stdin      io.WriteCloser // closing it stops the child
	lines      chan string    // its standard output, line by line
	done       chan struct{}  // closed once it has exited
}

// Spawn runs exe with args and env added to this process's environment,
// its standard error in dir/<name>.log, and with quiet its standard
// output too; otherwise Line reads it (a line not read within 64 is lost).
func Spawn(exe, dir, name string, env []string, quiet bool, args ...string) (*Process, error) {
	p := &Process{Name: name, Log: filepath.Join(dir, name+".log"), lines: make(chan string, 64), done: make(chan struct{})}
	f, err := os.Create(p.Log)
	if err != nil {
		return nil, err
	}
	p.Cmd = exec.Command(exe, args...)
	p.Cmd.Env, p.Cmd.Stderr = append(os.Environ(), env...), f
	var stdout io.Reader = strings.NewReader("")
	if quiet {
		p.Cmd.Stdout = f
	} else if stdout, err = p.Cmd.StdoutPipe(); err != nil {
		f.Close()
		return nil, err
	}
	if p.Stdin, err = p.Cmd.StdinPipe(); err == nil {
		err = p.Cmd.Start()
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	go func() {
		s := bufio.NewScanner(stdout)
		s.Buffer(make([]byte, 64<<10), 16<<20) // a report may be one long line
		for s.Scan() {
			select {
			case p.lines <- s.Text():
			default: // nobody reads
			}
		}
		close(p.lines)
		_ = p.Cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// StartChild is Spawn for a child that prints its URL first, and waits up
// to a minute for it.
func StartChild(ctx context.Context, exe, dir, name string, env []string, args ...string) (*Process, error) {
	p, err := Spawn(exe, dir, name, env, false, args...)
	if err != nil {
		return nil, err
	}
	if p.Base, err = p.Line(time.Minute); err == nil && !strings.HasPrefix(p.Base, "http://") {
		err = fmt.Errorf("printed %q", p.Base)
	}
	if err = errors.Join(err, ctx.Err()); err != nil {
		p.Stop(5 * time.Second)
		return nil, fmt.Errorf("%s did not start: %w (log: %s)", name, err, p.Log)
	}
	return p, nil
}

// Serve runs a server told by args to listen on addr, with its output in
// dir/<name>.log, and waits up to a minute for http://addr/healthz to
// answer 200.
func Serve(ctx context.Context, exe, dir, name, addr string, env []string, args ...string) (*Process, error) {
	p, err := Spawn(exe, dir, name, env, true, args...)
	if err != nil {
		return nil, err
	}
	p.Base = "http://" + addr
	client := &http.Client{Timeout: time.Second}
	err = Poll(ctx, 50*time.Millisecond, time.Minute, func() (bool, error) {
		select {
		case <-p.done:
			return false, fmt.Errorf("%s exited (log: %s)", name, p.Log)
		default:
		}
		resp, err := client.Get(p.Base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		p.Stop(5 * time.Second)
		return nil, fmt.Errorf("%s: no healthy /healthz: %w (log: %s)", name, err, p.Log)
	}
	return p, nil
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

// Line is the child's next line of output, waiting up to timeout for it.
func (p *Process) Line(timeout time.Duration) (string, error) {
	select {
	case l, ok := <-p.lines:
		if !ok {
			return "", errors.New("exited")
		}
		return l, nil
	case <-time.After(timeout):
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
	p.Stdin.Close()
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(limit):
		p.Kill()
	}
}

// Kill ends the child with SIGKILL, as a crash would.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.done
}
