// The processes a run starts: the servers under test (`tocsin serve`,
// ready once /healthz answers) and this binary re-executed in one of an
// area's child modes, which prints a first line (its URL) and stops when
// its standard input closes or on SIGTERM. One of them is the bare
// handler, the baseline a run measures Tocsin against: a child answering
// every request with the bytes and headers Tocsin sent.

package session

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a running child.
type Process struct {
	Base  string // its URL
	Log   string // the file its standard error goes to
	cmd   *exec.Cmd
	stdin io.WriteCloser // closing it stops the child
	lines chan string    // its standard output, line by line
	done  chan struct{}  // closed once it has exited
}

// spawn runs exe with args and env added to this process's environment,
// its standard error in dir/<name>.log, and with quiet its standard
// output too; otherwise Line reads it (a line not read within 64 is lost).
func spawn(exe, dir, name string, env []string, quiet bool, args ...string) (*Process, error) {
	p := &Process{Log: filepath.Join(dir, name+".log"), lines: make(chan string, 64), done: make(chan struct{})}
	f, err := os.Create(p.Log)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(exe, args...)
	p.cmd.Env, p.cmd.Stderr = append(os.Environ(), env...), f
	var stdout io.Reader = strings.NewReader("")
	if quiet {
		p.cmd.Stdout = f
	} else {
		stdout, err = p.cmd.StdoutPipe()
	}
	if err == nil {
		if p.stdin, err = p.cmd.StdinPipe(); err == nil {
			err = p.cmd.Start()
		}
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
		_ = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Child runs this binary again in one of the area's child modes (args),
// writes it input (nil: none) as a line of JSON, and waits up to a minute
// for its first line, which starts with want (its URL: "http://"); Close
// stops it.
func (s *Session) Child(ctx context.Context, name, want string, input any, args ...string) (*Process, error) {
	p, err := spawn(s.Self, s.Dir, name, nil, false, append([]string{s.Area}, args...)...)
	if err != nil {
		return nil, err
	}
	s.Undo(func() { p.Stop(30 * time.Second) })
	if input != nil {
		err = json.NewEncoder(p.stdin).Encode(input)
	}
	if err == nil {
		p.Base, err = p.Line(time.Minute)
	}
	if err == nil && !strings.HasPrefix(p.Base, want) {
		err = fmt.Errorf("printed %q", p.Base)
	}
	if err = errors.Join(err, ctx.Err()); err != nil {
		return nil, fmt.Errorf("%s did not start: %w (log: %s)", name, err, p.Log)
	}
	return p, nil
}

// Serve starts `tocsin serve` on a free loopback port and the database at
// dbURL, as an operator runs it (the run's keyring in the environment,
// the database on the command line), with args; it waits up to a minute
// for /healthz to answer 200. Close stops it.
func (s *Session) Serve(ctx context.Context, name, dbURL string, args ...string) (*Process, error) {
	keys, err := s.Keyring(ctx)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	args = append([]string{"serve", "--listen", addr, "--base-url", "http://" + addr,
		"--data-dir", filepath.Join(s.Dir, name), "--database-url", dbURL}, args...)
	p, err := spawn(s.Bin.Path, s.Dir, name, []string{"TOCSIN_SECRET_KEYS=" + keys}, true, args...)
	if err != nil {
		return nil, err
	}
	s.Undo(func() { p.Stop(60 * time.Second) })
	p.Base = "http://" + addr
	client := &http.Client{Timeout: time.Second}
	err = Poll(ctx, 50*time.Millisecond, time.Minute, func() (bool, error) {
		select {
		case <-p.done:
			return false, errors.New("exited")
		default:
		}
		resp, err := client.Get(p.Base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: no healthy /healthz: %w (log: %s)", name, err, p.Log)
	}
	s.Logf("%s: tocsin serve at %s (pid %d)", name, p.Base, p.Pid())
	return p, nil
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

// Pid is the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop closes the child's standard input and sends it SIGTERM, either of
// which stops it (`tocsin serve` drains its requests and checks), and
// kills it if it has not exited within limit. Stopping again does nothing.
func (p *Process) Stop(limit time.Duration) {
	p.stdin.Close()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(limit):
		p.Kill()
	}
}

// Kill ends the child with SIGKILL, as a crash would.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// captured is a response as Tocsin sent it, what the bare handler answers.
type captured struct {
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// BareHeader is what of Tocsin's headers the bare handler sends: all but
// those net/http writes itself.
func BareHeader(h http.Header) http.Header {
	out := h.Clone()
	out.Del("Date")
	out.Del("Content-Length")
	return out
}

// BareChild starts a bare handler, a child answering every request with
// body and header (BareHeader's); Close stops it.
func (s *Session) BareChild(ctx context.Context, name string, header http.Header, body []byte) (*Process, error) {
	return s.Child(ctx, name, "http://", captured{Header: header, Body: body}, "-bare-serve")
}

// serveBare is the bare handler, with the settings of `tocsin serve`'s
// server and nothing else: it reads each request's body (at most 10 KiB,
// as the ping handler) and answers the page it read on stdin.
func serveBare(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	var pg captured
	if err := json.NewDecoder(stdin).Decode(&pg); err != nil {
		return err
	}
	header, length := BareHeader(pg.Header), strconv.Itoa(len(pg.Body))
	return ServeChild(ctx, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 10<<10+1))
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", length)
		_, _ = w.Write(pg.Body)
	}), stdin, stdout)
}

// ServeChild is a served child's side: it serves h on a free loopback
// port with the settings of `tocsin serve`'s server, prints its URL as
// its first line, and shuts down, draining requests, at EOF on stdin (the
// parent closed it, or died) or when ctx ends.
func ServeChild(ctx context.Context, h http.Handler, stdin io.Reader, stdout io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if _, err := fmt.Fprintln(stdout, "http://"+ln.Addr().String()); err != nil {
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
