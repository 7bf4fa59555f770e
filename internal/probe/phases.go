package probe

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// Stages a check goes through, named for the reason of a timeout.
const (
	stageStart    = "starting"
	stageDNS      = "resolving the name"
	stageConnect  = "connecting"
	stageTLS      = "in the TLS handshake"
	stageSend     = "sending the request"
	stageHeaders  = "waiting for the response headers"
	stageBody     = "reading the body"
	stageExchange = "waiting for the expected text"
	stageQuery    = "waiting for the DNS answer"
)

// tracker records the phases of a check from httptrace hooks, which the
// transport calls from its own goroutines; and the stage it is in, for a
// timeout's reason. With redirects, the phases of every hop add up.
type tracker struct {
	start time.Time

	mu                   sync.Mutex
	stage                string
	dnsAt, connAt, tlsAt time.Time
	// hostPort is the host and port the current request names (HTTP's
	// GetConn); dialed the address of the last connection attempt.
	hostPort, dialed string
	phases           monitor.Phases
}

func newTracker(start time.Time) *tracker { return &tracker{start: start, stage: stageStart} }

func (t *tracker) set(stage string) {
	t.mu.Lock()
	t.stage = stage
	t.mu.Unlock()
}

// Stage is where the check is now.
func (t *tracker) Stage() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stage
}

// Where names the endpoint the check was talking to, for a reason:
// the host and port as the monitor names them (named, or the current
// request's, which follows redirects), with the address dialled when that
// differs ("example.com:443 (93.184.216.34)", "127.0.0.1:9").
func (t *tracker) Where(named string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hostPort != "" {
		named = t.hostPort
	}
	return endpoint(named, t.dialed)
}

func endpoint(named, dialed string) string {
	switch {
	case dialed == "":
		return named
	case named == "":
		return dialed
	}
	host, _, err := net.SplitHostPort(named)
	ip, _, err2 := net.SplitHostPort(dialed)
	if err != nil || err2 != nil || strings.EqualFold(strings.Trim(host, "[]"), ip) {
		return named
	}
	return named + " (" + ip + ")"
}

// Phases is a copy of the phases recorded so far.
func (t *tracker) Phases() monitor.Phases {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.phases
}

// trace returns ctx with hooks that feed t. The DNS and connect hooks also
// fire for a plain net.Dialer given that context, so TCP and TLS checks use
// them too.
func (t *tracker) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		DNSStart: func(httptrace.DNSStartInfo) {
			t.mu.Lock()
			t.stage, t.dnsAt = stageDNS, time.Now()
			t.mu.Unlock()
		},
		DNSDone: func(httptrace.DNSDoneInfo) {
			t.mu.Lock()
			if !t.dnsAt.IsZero() {
				t.phases.DNS += time.Since(t.dnsAt)
				t.dnsAt = time.Time{}
			}
			t.mu.Unlock()
		},
		GetConn: func(hostPort string) {
			t.mu.Lock()
			t.hostPort, t.dialed = hostPort, ""
			t.mu.Unlock()
		},
		ConnectStart: func(_, addr string) {
			t.mu.Lock()
			t.stage, t.dialed = stageConnect, addr
			if t.connAt.IsZero() { // parallel attempts (happy eyeballs) count once
				t.connAt = time.Now()
			}
			t.mu.Unlock()
		},
		ConnectDone: func(_, _ string, err error) {
			t.mu.Lock()
			if err == nil && !t.connAt.IsZero() {
				t.phases.Connect += time.Since(t.connAt)
				t.connAt = time.Time{}
			}
			t.mu.Unlock()
		},
		TLSHandshakeStart: func() { t.tlsStart() },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { t.tlsDone() },
		GotConn: func(httptrace.GotConnInfo) {
			t.set(stageSend)
		},
		WroteRequest: func(httptrace.WroteRequestInfo) {
			t.set(stageHeaders)
		},
		GotFirstResponseByte: func() {
			t.mu.Lock()
			t.phases.FirstByte = time.Since(t.start)
			t.mu.Unlock()
		},
	})
}

func (t *tracker) tlsStart() {
	t.mu.Lock()
	t.stage, t.tlsAt = stageTLS, time.Now()
	t.mu.Unlock()
}

func (t *tracker) tlsDone() {
	t.mu.Lock()
	if !t.tlsAt.IsZero() {
		t.phases.TLS += time.Since(t.tlsAt)
		t.tlsAt = time.Time{}
	}
	t.mu.Unlock()
}
