// Package probe runs one check of a monitor and classifies what it found
// (DESIGN §4): down when the target answered wrongly or not at all, degraded
// when it answered well but slowly (or its certificate is close to expiry),
// and unknown when the probe itself could not tell — it was cancelled, it
// panicked, it ran out of file descriptors, or its own network is broken.
// An unknown is never up and never down.
package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/netguard"
)

// ErrShuttingDown is the cause the scheduler gives when it cancels in-flight
// checks at shutdown (context.WithCancelCause(ctx, probe.ErrShuttingDown)).
var ErrShuttingDown = errors.New("shutting down")

// ReasonCancelled is the reason of a check that its caller cancelled for a
// cause other than shutdown.
const ReasonCancelled = "the check was cancelled before it finished"

// ReasonProbeNetwork begins the reason of a check whose target could not
// be reached while the probe's canaries could not be reached either.
const ReasonProbeNetwork = "probe network broken: its canary targets are unreachable too"

// UserAgent is sent with every HTTP check unless the monitor sets its own.
const UserAgent = "Tocsin-Monitor/1 (+https://github.com/tocsin/tocsin)"

// maxReasonLen bounds a reason (and an assertion's), so none carries a
// page of text.
const maxReasonLen = 200

// Options configure a Prober.
type Options struct {
	// Policy is the one outbound policy: every connection to a target or to
	// a resolver a monitor chose dials through it.
	Policy netguard.Policy
	// ProbeID and Region are copied into each observation.
	ProbeID string
	Region  string
	// RootCAs verifies TLS targets; nil means the system roots.
	RootCAs *x509.CertPool
	// Canaries are "host:port" TCP targets this probe should always reach.
	// When a check fails at the network level and every canary fails too,
	// the probe's own network is broken and the result is unknown. Empty
	// turns the judgement off. They are the operator's, not a user's, so
	// they are dialled outside the policy (like the system resolver).
	Canaries []string
	// CanaryTTL is how long a canary verdict is reused (default 15s).
	CanaryTTL time.Duration
	// CanaryTimeout bounds one canary run (default 3s).
	CanaryTimeout time.Duration
}

// Prober runs checks. It is safe for concurrent use.
type Prober struct {
	opts Options
	// dialer is the policy's: it refuses blocked destinations after DNS.
	dialer *net.Dialer
	// transport is shared by all HTTP checks; keep-alives are off, so each
	// check opens (and times) its own connection.
	transport *http.Transport
	canaries  *canaries
}

// New returns a Prober.
func New(o Options) *Prober {
	if o.CanaryTTL <= 0 {
		o.CanaryTTL = 15 * time.Second
	}
	if o.CanaryTimeout <= 0 {
		o.CanaryTimeout = 3 * time.Second
	}
	// No dialer timeout: each check's context deadline bounds it.
	d := o.Policy.Dialer(0)
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would connect out of the policy's sight
		DialContext:            d.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 64 << 10,
	}
	p := &Prober{opts: o, dialer: d, transport: tr}
	if len(o.Canaries) > 0 {
		p.canaries = newCanaries(o.Canaries, o.CanaryTTL, o.CanaryTimeout)
	}
	return p
}

// testHookBeforeProbe, when set by a test, runs inside the recovered region
// just before the type-specific probe.
var testHookBeforeProbe func()

// errCheckTimeout is the cause of a check's own deadline, which tells it
// apart from a caller's cancellation.
var errCheckTimeout = errors.New("check timed out")

// failure is why a check did not come out up.
type failure struct {
	result monitor.Result
	reason string
	// network marks a failure to reach the target at all (timeout, refused,
	// unreachable, resolver failure): the canaries judge whether the probe
	// or the target is to blame.
	network bool
}

func down(reason string) *failure { return &failure{result: monitor.ResultDown, reason: reason} }

func unknown(reason string) *failure { return &failure{result: monitor.ResultUnknown, reason: reason} }

// Check runs one check of m. m.Config holds the decrypted credentials, if
// any; they never appear in a reason. The check's own timeout
// (m.Config.TimeoutSeconds, default monitor.DefaultTimeout) is a deadline on
// top of ctx. Check never panics.
func (p *Prober) Check(ctx context.Context, m monitor.Monitor) (obs monitor.Observation) {
	start := time.Now()
	obs = monitor.Observation{
		MonitorID: m.ID,
		StartedAt: start,
		Probe:     p.opts.ProbeID,
		Region:    p.opts.Region,
	}
	defer func() {
		// A panic anywhere in the check is the probe's bug, not the
		// target's failure: unknown, and never a crash.
		if r := recover(); r != nil {
			obs.Result, obs.Reason = monitor.ResultUnknown, panicReason(r)
			obs.Latency = time.Since(start)
		}
		tidy(&obs, m.Config)
	}()

	timeout := time.Duration(m.Config.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = monitor.DefaultTimeout * time.Second
	}
	cctx, cancel := context.WithTimeoutCause(ctx, timeout, errCheckTimeout)
	defer cancel()

	f := p.run(cctx, m, &obs, start, timeout)
	if obs.Latency == 0 {
		obs.Latency = time.Since(start)
	}
	// Correct but slow, whatever the type: degraded.
	if ms := m.Config.DegradedLatencyMs; f == nil && ms > 0 && obs.Latency > time.Duration(ms)*time.Millisecond {
		f = &failure{result: monitor.ResultDegraded,
			reason: fmt.Sprintf("slow: %d ms, above the degraded threshold of %d ms", obs.Latency.Milliseconds(), ms)}
	}
	f = p.judge(ctx, f)
	if f == nil {
		obs.Result, obs.Reason = monitor.ResultUp, ""
		return obs
	}
	obs.Result, obs.Reason = f.result, f.reason
	return obs
}

// run calls the type's probe (inside Check's recovered region).
func (p *Prober) run(ctx context.Context, m monitor.Monitor, obs *monitor.Observation, start time.Time, timeout time.Duration) *failure {
	if err := ctx.Err(); err != nil {
		return down(err.Error()) // judged as a cancellation by judge
	}
	if h := testHookBeforeProbe; h != nil {
		h()
	}
	c := checkRun{p: p, cfg: m.Config, obs: obs, start: start, timeout: timeout}
	switch m.Type {
	case monitor.TypeHTTP:
		return c.http(ctx)
	case monitor.TypeTCP:
		return c.tcp(ctx)
	case monitor.TypeDNS:
		return c.dns(ctx)
	case monitor.TypeTLS:
		return c.tls(ctx)
	}
	return unknown(fmt.Sprintf("invalid check configuration: unknown monitor type %q", m.Type))
}

// judge turns a failure into the honest result: a check its caller
// cancelled is unknown, never down; a network failure while the probe's
// canaries fail too is unknown.
func (p *Prober) judge(parent context.Context, f *failure) *failure {
	if f == nil {
		return nil
	}
	if f.network && f.result == monitor.ResultDown && p.canaries != nil && parent.Err() == nil && !p.canaries.reachable(parent) {
		f = unknown(ReasonProbeNetwork + " (target: " + f.reason + ")")
	}
	if parent.Err() != nil && f.result != monitor.ResultUnknown {
		// Whatever failed, the cancellation may have caused it.
		if cause := context.Cause(parent); !errors.Is(cause, ErrShuttingDown) {
			return unknown(ReasonCancelled + " (" + cause.Error() + ")")
		}
		return unknown(monitor.ReasonShuttingDown)
	}
	return f
}

// checkRun is the state of one check, shared by the type-specific probes.
type checkRun struct {
	p       *Prober
	cfg     monitor.Config
	obs     *monitor.Observation
	start   time.Time
	timeout time.Duration
}

// MissedStart is the observation of a check that could not start before its
// deadline: unknown, never down. Late by more than an interval, no node
// was running the monitor's checks (stopped, crashed, or far behind): the
// reason says so, with the span, rather than blaming a scheduler that was
// not running.
func MissedStart(m monitor.Monitor, due, now time.Time, probeID, region string) monitor.Observation {
	reason := monitor.ReasonMissedStart
	if interval := time.Duration(m.IntervalSeconds) * time.Second; interval > 0 && now.Sub(due) > interval {
		reason = monitor.GapCause(due, now)
	}
	return monitor.Observation{
		MonitorID: m.ID,
		StartedAt: now,
		Due:       due,
		Result:    monitor.ResultUnknown,
		Reason:    reason,
		Probe:     probeID,
		Region:    region,
	}
}

func panicReason(r any) string {
	return monitor.ReasonProbeInternal + ": panic: " + clean.Shorten(fmt.Sprint(r), 100)
}

// redact removes any credential of the check, and any header value (which
// may be one), from a reason. Reasons are built without them; this is the
// second line of defence.
func redact(reason string, c monitor.Config) string {
	secrets := make([]string, 0, 3+len(c.Headers))
	if a := c.Auth; a != nil {
		secrets = append(secrets, a.Password, a.Token, a.Value)
	}
	for _, v := range c.Headers {
		secrets = append(secrets, v)
	}
	for _, s := range secrets {
		if len(s) >= 4 {
			reason = strings.ReplaceAll(reason, s, "[redacted]")
		}
	}
	return reason
}

// tidy is the one exit of every text a check reports (its reason, each
// assertion's), on every path: reasons quote what the target sent — DNS
// answers, server errors, values from the body — and a tenant's own target
// may send any bytes, which PostgreSQL refuses in a text column. So they
// leave here without credentials, as valid UTF-8 without NUL, and bounded.
func tidy(obs *monitor.Observation, c monitor.Config) {
	obs.Reason = clean.Shorten(redact(obs.Reason, c), maxReasonLen)
	for i := range obs.Assertions {
		obs.Assertions[i].Reason = clean.Shorten(redact(obs.Assertions[i].Reason, c), maxReasonLen)
	}
}
