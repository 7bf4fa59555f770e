package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// bareBody is the bare handler's answer: about the size and shape of a
// monitor, so the baseline moves as many bytes as a GET of one.
var bareBody = []byte(`{"id":"mon_01M7ZZ0000000000000000000","type":"http","name":"bare baseline",` +
	`"config":{"url":"https://example.com/health","method":"GET","timeoutSeconds":10,"followRedirects":true,` +
	`"expectedStatusCodes":["200-399"],"headers":{"Accept":"application/json"}},"intervalSeconds":60,` +
	`"state":"PENDING","stateSince":"2026-01-01T00:00:00.000000Z","paused":false,` +
	`"createdAt":"2026-01-01T00:00:00.000000Z","updatedAt":"2026-01-01T00:00:00.000000Z",` +
	`"padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}` + "\n")

// serveBare is the -bare-serve mode: the baseline server, in its own
// process like tocsin, with the same server timeouts.
func serveBare(ctx context.Context, addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	length := strconv.Itoa(len(bareBody))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", length)
		_, _ = w.Write(bareBody)
	})
	srv := &http.Server{
		Addr:              addr,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// proc is a server running as a subprocess.
type proc struct {
	name string
	base string // http://host:port
	cmd  *exec.Cmd
	log  string // file holding its stdout and stderr
	done chan error
}

// startProc starts a server listening on addr and waits until /healthz
// answers 200.
func startProc(ctx context.Context, name, logDir, addr string, argv ...string) (*proc, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &proc{name: name, base: "http://" + addr, cmd: cmd, log: logPath, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); f.Close() }()
	if err := p.waitHealthy(ctx, 30*time.Second); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s: %w (log: %s)", name, err, logPath)
	}
	return p, nil
}

func (p *proc) waitHealthy(ctx context.Context, limit time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("exited before it was healthy: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := client.Get(p.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return errors.New("no healthy /healthz within " + limit.String())
}

// stop asks the server to drain and exit, and kills it if it takes too long.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// command runs a one-shot command and returns its trimmed stdout.
func command(ctx context.Context, argv ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", filepath.Base(argv[0]), strings.Join(argv[1:2], " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// buildTocsin builds ./cmd/tocsin of the module holding the current
// directory into dir, and says which commit it built (GOFLAGS may keep go
// build from recording it in the binary).
func buildTocsin(ctx context.Context, dir string) (bin, rev string, err error) {
	gomod, err := command(ctx, "go", "env", "GOMOD")
	if err != nil {
		return "", "", err
	}
	if gomod == "" || gomod == os.DevNull {
		return "", "", errors.New("not inside a Go module; run from the tocsin module root or pass -tocsin")
	}
	root := filepath.Dir(gomod)
	rev, err = command(ctx, "git", "-C", root, "describe", "--always", "--dirty")
	if err != nil {
		rev = "unknown commit"
	}
	bin = filepath.Join(dir, "tocsin")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/tocsin")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build ./cmd/tocsin: %w\n%s", err, out)
	}
	return bin, rev, nil
}
