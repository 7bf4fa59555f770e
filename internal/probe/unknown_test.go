package probe

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/wait"
)

// The tests here force each way a probe cannot tell, and hold that the
// result is unknown — never down.

func TestCancelledCheckIsUnknown(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done() // blocks until the client gives up
	}))
	defer srv.Close()
	p := New(Options{Canaries: []string{closedPort(t)}})
	m := httpMon(srv.URL, func(c *monitor.Config) { c.TimeoutSeconds = 10 })

	for _, c := range []struct {
		cause  error
		reason string
	}{
		{ErrShuttingDown, monitor.ReasonShuttingDown},
		{errors.New("test run abandoned"), ReasonCancelled + " (test run abandoned)"},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		go func() {
			<-arrived
			cancel(c.cause)
		}()
		start := time.Now()
		obs := p.Check(ctx, m)
		if obs.Result != monitor.ResultUnknown || obs.Reason != c.reason {
			t.Fatalf("cancelled mid-request (%v): got %s %q, want unknown %q", c.cause, obs.Result, obs.Reason, c.reason)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("the cancelled check ran on for %s", d)
		}
	}

	// Cancelled before it began.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrShuttingDown)
	want(t, p.Check(ctx, m), monitor.ResultUnknown, monitor.ReasonShuttingDown)
}

// TestCancelledTCPExchangeIsUnknown: a read waiting for Expect is cut by
// the cancellation, not by the check's deadline.
func TestCancelledTCPExchangeIsUnknown(t *testing.T) {
	t.Parallel()
	addr := lineServer(t, "")
	m := tcpMon(t, addr, "quiet\n", "never")
	m.Config.TimeoutSeconds = 10
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(200*time.Millisecond, func() { cancel(ErrShuttingDown) })
	start := time.Now()
	obs := New(Options{}).Check(ctx, m)
	want(t, obs, monitor.ResultUnknown, monitor.ReasonShuttingDown)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the cancelled check ran on for %s", d)
	}
}

func TestPanicIsUnknown(t *testing.T) {
	// Not parallel: it sets a package hook.
	testHookBeforeProbe = func() { panic("probe bug") }
	defer func() { testHookBeforeProbe = nil }()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for _, m := range []monitor.Monitor{
		httpMon(srv.URL, nil),
		tcpMon(t, srv.Listener.Addr().String(), "", ""),
		dnsMon("127.0.0.1:53", "tocsin.test", "A"),
		{ID: "mon_tls", Type: monitor.TypeTLS, Config: monitor.Config{Host: "127.0.0.1", Port: 1}},
	} {
		obs := check(t, New(Options{}), m)
		want(t, obs, monitor.ResultUnknown, monitor.ReasonProbeInternal+": panic: probe bug")
	}
}

// TestFileDescriptorsExhaustedIsUnknown lowers the process's descriptor
// limit and fills it, so the check's socket cannot be opened.
func TestFileDescriptorsExhaustedIsUnknown(t *testing.T) {
	// Not parallel: it changes a process-wide limit.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	var open atomic.Int64 // the server's side of connections, closed asynchronously
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	defer srv.Close()
	p := New(Options{Canaries: []string{srv.Listener.Addr().String()}})
	m := httpMon(srv.URL, nil)
	want(t, check(t, p, m), monitor.ResultUp, "") // the same check works with descriptors to spare
	// A descriptor the server frees after the limit is filled would let
	// the check connect and the server fail to accept: wait for them all.
	wait.For(t, 10*time.Second, "the server to close the first check's connections", func() bool { return open.Load() == 0 })

	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list open descriptors: %v", err)
	}
	highest := 0
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			highest = max(highest, n)
		}
	}
	lim := old
	lim.Cur = uint64(highest + 1)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot lower the descriptor limit: %v", err)
	}
	var files []*os.File
	restore := func() {
		for _, f := range files {
			f.Close()
		}
		files = nil
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
			t.Errorf("restoring the descriptor limit: %v", err)
		}
	}
	defer restore()
	for range 1000 { // fill any holes below the limit
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("filling descriptors: %v", err)
			}
			break
		}
		files = append(files, f)
	}
	obs := p.Check(context.Background(), m)
	restore()
	want(t, obs, monitor.ResultUnknown, "probe out of file descriptors (EMFILE)")
}

func TestBrokenProbeNetworkIsUnknown(t *testing.T) {
	t.Parallel()
	target := closedPort(t)
	canary, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer canary.Close()
	// The canary accepts nothing while the checks run: the kernel
	// completes every dial into its backlog, counted once they are done.

	// Every canary fails: unknown, for HTTP and TCP alike.
	broken := New(Options{Canaries: []string{closedPort(t)}})
	obs := check(t, broken, httpMon("http://"+target+"/", nil))
	want(t, obs, monitor.ResultUnknown, "probe network broken: its canary targets are unreachable too (target: connection refused to "+target+")")
	want(t, check(t, broken, tcpMon(t, target, "", "")), monitor.ResultUnknown, "probe network broken")

	// One canary answers: the target is down. Concurrent failures share one
	// canary run, and the verdict is reused within its TTL.
	healthy := New(Options{Canaries: []string{closedPort(t), canary.Addr().String()}, CanaryTTL: time.Minute})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			obs := healthy.Check(context.Background(), tcpMon(t, target, "", ""))
			if obs.Result != monitor.ResultDown || obs.Reason != "connection refused to "+target {
				t.Errorf("got %s %q, want down, connection refused to %s", obs.Result, obs.Reason, target)
			}
		})
	}
	wg.Wait()
	want(t, check(t, healthy, httpMon("http://"+target+"/", nil)), monitor.ResultDown, "connection refused")
	if n := acceptAll(t, canary); n != 1 {
		t.Fatalf("the canary was dialled %d times, want once", n)
	}

	// A target failure that is not about the network is not judged.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer srv.Close()
	want(t, check(t, broken, httpMon(srv.URL, nil)), monitor.ResultDown, "status 503")
}

func TestCanaryVerdictExpires(t *testing.T) {
	t.Parallel()
	canary, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := canary.Addr().String()
	c := newCanaries([]string{addr}, 500*time.Millisecond, time.Second)
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ctx := context.Background()
	if !c.reachable(ctx) {
		t.Fatal("a listening canary is unreachable")
	}
	canary.Close()
	advance(499 * time.Millisecond)
	if !c.reachable(ctx) {
		t.Fatal("the cached verdict was not reused within its TTL")
	}
	advance(101 * time.Millisecond)
	if c.reachable(ctx) {
		t.Fatal("a closed canary is still reachable after the TTL")
	}
}

func TestMissedStart(t *testing.T) {
	t.Parallel()
	due := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := due.Add(90 * time.Second)
	obs := MissedStart(monitor.Monitor{ID: "mon_1", IntervalSeconds: 120}, due, now, "node-a", "eu")
	if obs.Result != monitor.ResultUnknown || obs.Reason != monitor.ReasonMissedStart ||
		obs.MonitorID != "mon_1" || !obs.Due.Equal(due) || !obs.StartedAt.Equal(now) || obs.Probe != "node-a" || obs.Region != "eu" {
		t.Fatalf("%+v", obs)
	}
	// Late by more than an interval: no node was running its checks.
	obs = MissedStart(monitor.Monitor{ID: "mon_1", IntervalSeconds: 60}, due, now, "node-a", "eu")
	if want := "no Tocsin node was checking from 2026-03-01T12:00:00Z to 2026-03-01T12:01:30Z"; obs.Result != monitor.ResultUnknown || obs.Reason != want {
		t.Fatalf("late by an interval and a half: %+v, want reason %q", obs, want)
	}
}

func TestUnknownType(t *testing.T) {
	t.Parallel()
	obs := check(t, New(Options{}), monitor.Monitor{ID: "m", Type: "ftp"})
	want(t, obs, monitor.ResultUnknown, "invalid check configuration")
}

// acceptAll accepts the connections already waiting in l's backlog and
// returns how many there were.
func acceptAll(t *testing.T, l net.Listener) int {
	t.Helper()
	tl := l.(*net.TCPListener)
	n := 0
	for {
		// A dial that returned is in the backlog: accept finds it at once.
		if err := tl.SetDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		c, err := tl.Accept()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		n++
	}
}
