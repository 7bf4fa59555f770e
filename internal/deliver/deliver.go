// Package deliver sends events to notification channels: it claims due
// deliveries with a lease, renders each for its channel (internal/notify),
// sends it through the guarded dialer or the SMTP server, and reports every
// attempt, so that the app can retry, fail, or disable the channel.
package deliver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/mailer"
	"github.com/tocsin/tocsin/internal/netguard"
	"github.com/tocsin/tocsin/internal/notify"
)

// Mailer sends an e-mail; id is stable across retries (its Message-ID).
type Mailer interface {
	Send(ctx context.Context, m *notify.Mail, id string) error
}

// SMTP sends e-mail channels' messages through m.
func SMTP(m *mailer.Mailer) Mailer { return smtpMailer{m} }

type smtpMailer struct{ m *mailer.Mailer }

func (s smtpMailer) Send(ctx context.Context, m *notify.Mail, id string) error {
	return s.m.Send(ctx, mailer.Message{To: m.To, Subject: m.Subject, Text: m.Text, HTML: m.HTML, ID: id})
}

// App is what the sender needs of app: due deliveries claimed with a
// lease, and the attempts recorded, on the app's clock.
type App interface {
	Now() time.Time
	ReleaseDeliveries(ctx context.Context, owner string) (int64, error)
	ClaimDeliveries(ctx context.Context, owner string, lease time.Duration, limit int) ([]app.DeliveryJob, error)
	FinishDeliveries(ctx context.Context, owner string, done []app.Attempted) ([]bool, error)
}

// Options configure a Sender; zero values take the defaults.
type Options struct {
	App  App
	Node string // names this node's leases and attempts
	// Policy is the outbound policy every request goes through.
	Policy netguard.Policy
	// Mailer sends e-mail channels' messages; nil when no SMTP server is
	// configured.
	Mailer    Mailer
	Endpoints notify.Endpoints
	// TLS, when set, configures HTTPS to receivers (tests trust their own
	// certificate authority with it).
	TLS *tls.Config
	// Concurrency bounds the deliveries in flight (default 32): a slow
	// receiver holds one slot, not the others.
	Concurrency int
	// Poll is how often the node looks for due deliveries (default 200 ms).
	Poll time.Duration
	// Lease is how long a claimed delivery is this node's (default 2 min);
	// a dead node's deliveries are taken over after it.
	Lease   time.Duration
	Log     *slog.Logger
	Metrics *Metrics
}

// Sender is one node's sender.
type Sender struct {
	o      Options
	client *http.Client
}

// New makes a sender; Run starts it.
func New(o Options) *Sender {
	if o.Concurrency <= 0 {
		o.Concurrency = 32
	}
	if o.Poll <= 0 {
		o.Poll = 200 * time.Millisecond
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	tr := o.Policy.Transport()
	tr.MaxIdleConnsPerHost = o.Concurrency // every slot may be talking to one receiver
	if o.TLS != nil {
		tr.TLSClientConfig = o.TLS
	}
	return &Sender{o: o, client: &http.Client{
		Transport: tr,
		Timeout:   notify.AttemptTimeout,
		// A receiver that redirects is answering wrongly: following it
		// would send the signed event somewhere nobody configured.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Run sends due deliveries until ctx ends, then waits for the attempts in
// flight (each bounded by its own timeout) so that every one is recorded.
// Failures are logged and retried, so it returns nil.
func (n *Sender) Run(ctx context.Context) error {
	var (
		wg    sync.WaitGroup
		slots = make(chan struct{}, n.o.Concurrency)
		freed = make(chan struct{}, 1)
		// Attempts go to one recorder, which writes those that finished
		// meanwhile in one transaction; a slot frees once its attempt is
		// recorded, so the next delivery in its order sees it done.
		done     = make(chan app.Attempted, n.o.Concurrency)
		recorded = make(chan struct{})
	)
	go func() {
		defer close(recorded)
		n.record(context.WithoutCancel(ctx), done, func() {
			<-slots
			select {
			case freed <- struct{}{}:
			default:
			}
		})
	}()
	defer func() {
		wg.Wait()
		close(done)
		<-recorded
	}()
	if released, err := n.o.App.ReleaseDeliveries(ctx, n.o.Node); err != nil {
		n.o.Log.Warn("releasing this node's earlier leases", "err", err)
	} else if released > 0 {
		n.o.Log.Info("deliveries claimed by this node's previous process go again", "deliveries", released)
	}
	t := time.NewTimer(0)
	defer t.Stop()
	backlog := false // the last claim filled every free slot: more may be due
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-freed:
			if !backlog {
				continue // nothing waits for the slot; the next poll will do
			}
		}
		free := n.o.Concurrency - len(slots)
		backlog = free == 0 // every slot busy: look again when one frees
		if free > 0 {
			jobs, err := n.o.App.ClaimDeliveries(ctx, n.o.Node, n.o.Lease, free)
			if err != nil && ctx.Err() == nil {
				n.o.Log.Warn("claiming deliveries", "err", err)
			}
			backlog = len(jobs) == free
			for _, j := range jobs {
				slots <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					done <- n.deliver(context.WithoutCancel(ctx), j)
				}()
			}
		}
		// Look again after Poll, or, with a backlog, as soon as a slot frees.
		t.Reset(n.o.Poll)
	}
}

// maxRecordBatch bounds the attempts recorded in one transaction.
const maxRecordBatch = 64

// record writes finished attempts until done closes: each batch is what
// finished while the previous one was being written, so a quiet node
// writes each at once and a busy one shares transactions. release frees
// an attempt's slot.
func (n *Sender) record(ctx context.Context, done <-chan app.Attempted, release func()) {
	for first := range done {
		batch := []app.Attempted{first}
	gather:
		for len(batch) < maxRecordBatch {
			select {
			case a, ok := <-done:
				if !ok {
					break gather
				}
				batch = append(batch, a)
			default:
				break gather
			}
		}
		held, err := n.o.App.FinishDeliveries(ctx, n.o.Node, batch)
		for i, a := range batch {
			switch {
			case err != nil:
				// The lease runs out and another attempt is made: the
				// receiver may see this delivery id twice, which it dedupes.
				n.o.Log.Error("recording a delivery attempt", "delivery", a.Job.ID, "err", err)
			case !held[i]:
				n.o.Log.Warn("a delivery's lease ran out during its attempt; another node took it over", "delivery", a.Job.ID)
			case a.Attempt.Error != "":
				n.o.Log.Info("delivery attempt failed", "delivery", a.Job.ID, "channel", a.Job.ChannelID,
					"attempt", a.Job.Attempts+1, "err", a.Attempt.Error)
			}
			release()
		}
	}
}

// deliver makes one attempt at a job.
func (n *Sender) deliver(ctx context.Context, j app.DeliveryJob) app.Attempted {
	start, began := n.o.App.Now(), time.Now() // the app's clock, and a monotonic one for the duration
	code, err := n.attempt(ctx, j, start)
	at := notify.Attempt{Node: n.o.Node, StartedAt: start, Duration: time.Since(began).Truncate(time.Microsecond), StatusCode: code}
	result := "succeeded"
	if err != nil {
		// It quotes receivers and mail servers: made storable here, once,
		// and without a secret a receiver might echo.
		at.Error = clean.Shorten(j.Secrets.Redact(err.Error()), notify.MaxAttemptError)
		result = "failed"
	}
	n.o.Metrics.attempts.WithLabelValues(string(j.Channel.Kind), result).Inc()
	n.o.Metrics.seconds.Observe(at.Duration.Seconds())
	return app.Attempted{Job: j, Attempt: at}
}

// attempt sends a job once: the HTTP status code (0 without one) and an
// error unless it was delivered. Errors never carry a URL: hook URLs and
// bot tokens are secrets.
func (n *Sender) attempt(ctx context.Context, j app.DeliveryJob, now time.Time) (int, error) {
	out, err := notify.Render(&j.Channel, j.Secrets, j.Payload, j.ID, now, n.o.Endpoints)
	if err != nil {
		return 0, fmt.Errorf("cannot render the event for this channel: %v", err)
	}
	switch {
	case out.Skip != "":
		return 0, nil
	case out.Mail != nil:
		if n.o.Mailer == nil {
			return 0, errors.New("no SMTP server is configured on this node")
		}
		mctx, cancel := context.WithTimeout(ctx, 3*notify.AttemptTimeout)
		defer cancel()
		return 0, mailError(n.o.Mailer.Send(mctx, out.Mail, j.ID))
	}
	hctx, cancel := context.WithTimeout(ctx, notify.AttemptTimeout)
	defer cancel()
	var reached progress
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(hctx, reached.trace()), out.Method, out.URL,
		strings.NewReader(string(out.Body)))
	if err != nil {
		return 0, errors.New("the channel's URL cannot be requested")
	}
	for k, v := range out.Header {
		req.Header.Set(k, v)
	}
	res, err := n.client.Do(req)
	if err != nil {
		return 0, transportError(err, hctx, target(req.URL), reached.phase())
	}
	defer res.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // lets the connection be reused
	if notify.Success(res.StatusCode) {
		return res.StatusCode, nil
	}
	msg := fmt.Sprintf("the receiver answered %d", res.StatusCode)
	if s := printable(snippet); s != "" {
		msg += ": " + s
	}
	return res.StatusCode, errors.New(msg)
}

// Phases of an attempt, in order: how far it got tells where it failed.
const (
	phaseResolve int32 = iota + 1
	phaseConnect
	phaseTLS
	phaseSend
	phaseAnswer
)

// progress is how far an attempt got, as its trace reports it (the
// transport may call the hooks from its own goroutines).
type progress struct{ p atomic.Int32 }

func (p *progress) reach(phase int32) {
	for {
		cur := p.p.Load()
		if cur >= phase || p.p.CompareAndSwap(cur, phase) {
			return
		}
	}
}

func (p *progress) phase() int32 { return p.p.Load() }

func (p *progress) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		DNSStart:          func(httptrace.DNSStartInfo) { p.reach(phaseResolve) },
		ConnectStart:      func(string, string) { p.reach(phaseConnect) },
		TLSHandshakeStart: func() { p.reach(phaseTLS) },
		GotConn:           func(httptrace.GotConnInfo) { p.reach(phaseSend) },
		WroteRequest:      func(httptrace.WroteRequestInfo) { p.reach(phaseAnswer) },
	}
}

// target is the host and port a request goes to, as the channel names
// them: never its path or query, which may carry a token.
func target(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// transportError says why a request got no answer: the phase it failed in
// and the host it went to, never its URL nor the addresses of this
// server's own network (its resolver, its local port).
func transportError(err error, ctx context.Context, hostPort string, reached int32) error {
	if netguard.Blocked(err) {
		return errors.New("refused by this server's outbound policy (private targets are blocked)")
	}
	host, _, _ := net.SplitHostPort(hostPort)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		reached = phaseResolve
	}
	var where string
	switch {
	case reached == phaseResolve:
		where = "resolve " + host
	case reached == phaseTLS:
		where = "TLS handshake with " + hostPort
	case reached == phaseSend:
		where = "send to " + hostPort
	case reached == phaseAnswer:
		where = "wait for the answer from " + hostPort
	default:
		where = "connect " + hostPort
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: no answer within %s", where, notify.AttemptTimeout)
	}
	return fmt.Errorf("%s: %s", where, netguard.Problem(err))
}

// mailError words a failure to reach this server's own mail relay
// without its addresses: they are the operator's, not the workspace's.
func mailError(err error) error {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	if err == nil || !errors.As(err, &dnsErr) && !errors.As(err, &opErr) {
		return err // the relay's answer, or none
	}
	return fmt.Errorf("cannot reach this server's mail relay: %s", netguard.Problem(err))
}

// maxSnippet bounds the part of a receiver's answer quoted in an error.
const maxSnippet = 300

// printable is the start of a response body fit for an error message:
// valid UTF-8 without NUL, on one line, at most maxSnippet bytes.
func printable(b []byte) string {
	s := strings.Join(strings.Fields(clean.Text(string(b), 0)), " ")
	return clean.Shorten(s, maxSnippet)
}

// Metrics are the notifier's figures for the operator's /metrics.
type Metrics struct {
	attempts *prometheus.CounterVec
	seconds  prometheus.Histogram
}

// NewMetrics makes the notifier's metrics and registers them with reg
// (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tocsin_delivery_attempts_total",
			Help: "Delivery attempts, by channel kind and result.",
		}, []string{"kind", "result"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tocsin_delivery_attempt_seconds",
			Help:    "Time a delivery attempt took.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
	}
	if reg != nil {
		reg.MustRegister(m.attempts, m.seconds)
	}
	return m
}
