package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/netguard"
)

// ReasonBlocked is the reason of a check the outbound policy refused.
const ReasonBlocked = "destination blocked by the outbound policy (--block-private-targets)"

// exhaustion maps the errors of a probe short of resources to reasons:
// the probe could not tell, so the result is unknown.
var exhaustion = []struct {
	errno  syscall.Errno
	reason string
}{
	{syscall.EMFILE, "probe out of file descriptors (EMFILE)"},
	{syscall.ENFILE, "probe host out of file descriptors (ENFILE)"},
	{syscall.ENOBUFS, "probe out of socket buffers (ENOBUFS)"},
	{syscall.ENOMEM, "probe out of memory (ENOMEM)"},
	{syscall.EADDRNOTAVAIL, "probe has no usable local address or port (EADDRNOTAVAIL)"},
}

// classify turns the error of a check into a failure. stage says what the
// check was doing ("connecting", "waiting for the response headers"), and
// where the endpoint it was talking to ("127.0.0.1:9"; empty when the
// caller names it itself), so a reason tells a person where to look. ctx
// is the check's own context: its cause tells the check's deadline from
// other errors.
func (c *checkRun) classify(ctx context.Context, err error, stage, where string) *failure {
	for _, e := range exhaustion {
		if errors.Is(err, e.errno) {
			return unknown(e.reason)
		}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && strings.Contains(dnsErr.Err, "too many open files") {
		// The resolver keeps only the text of its socket's error.
		return unknown("probe out of file descriptors (EMFILE)")
	}
	if netguard.Blocked(err) {
		return down(ReasonBlocked)
	}
	if isDeadline(ctx, err) {
		return netDown(timedOut("after "+fmtDuration(c.timeout), stage, where))
	}
	if dnsErr != nil {
		return dnsFailure(dnsErr)
	}
	if f := tlsFailure(err); f != nil {
		return f
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return netDown("connection refused" + at(" to ", where))
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.EHOSTDOWN):
		return netDown("host unreachable" + at(": ", where))
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.ENETDOWN):
		return netDown("network unreachable" + at(": ", where))
	case errors.As(err, &ne) && ne.Timeout():
		return netDown(timedOut("", stage, where))
	case errors.Is(err, syscall.ECONNRESET):
		return down("connection reset by the target" + at(" ", where))
	case errors.Is(err, syscall.EPIPE):
		return down("connection closed by the target" + at(" ", where) + " while sending")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return down("connection closed by the target" + at(" ", where) + " before it answered")
	}
	return down(innermost(err))
}

// at is where after sep, or nothing when where is empty.
func at(sep, where string) string {
	if where == "" {
		return ""
	}
	return sep + where
}

// stageTo joins a stage to the endpoint it concerns.
var stageTo = map[string]string{stageDNS: " of ", stageConnect: " to ", stageTLS: " with ", stageSend: " to ",
	stageHeaders: " from ", stageBody: " from ", stageExchange: " from ", stageQuery: " from "}

// timedOut is the reason of a timeout: "timed out after 10s connecting to
// 127.0.0.1:9", "timed out after 5s waiting for the response headers from
// example.com:443 (93.184.216.34)".
func timedOut(after, stage, where string) string {
	s := "timed out"
	if after != "" {
		s += " " + after
	}
	s += " " + stage
	if sep, ok := stageTo[stage]; ok {
		s += at(sep, where)
	}
	return s
}

// isDeadline reports whether err comes from the check's own deadline (or
// from a connection deadline set to it).
func isDeadline(ctx context.Context, err error) bool {
	return errors.Is(context.Cause(ctx), errCheckTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)
}

// netDown is a failure to reach the target, which the canaries judge.
func netDown(reason string) *failure {
	return &failure{result: monitor.ResultDown, reason: reason, network: true}
}

// dnsFailure: a name that does not exist is the target's fault; a resolver
// that does not answer may be the probe's, so the canaries judge it.
func dnsFailure(e *net.DNSError) *failure {
	name := clean.Shorten(e.Name, 100)
	switch {
	case e.IsNotFound:
		return down("DNS: no such host " + name)
	case e.IsTimeout:
		return netDown("DNS: the resolver did not answer for " + name)
	default:
		// Never e.Err itself: it may quote the exchange with the probe's
		// own resolver, addresses and all.
		return netDown("DNS: lookup of " + name + " failed" + strings.TrimPrefix(netguard.LookupProblem(e), "the lookup failed"))
	}
}

// tlsFailure names a TLS handshake or verification error, or returns nil.
func tlsFailure(err error) *failure {
	var (
		inv    x509.CertificateInvalidError
		host   x509.HostnameError
		ua     x509.UnknownAuthorityError
		verify *tls.CertificateVerificationError
		rec    tls.RecordHeaderError
		alert  tls.AlertError
	)
	switch {
	case errors.As(err, &inv):
		switch inv.Reason {
		case x509.Expired:
			if inv.Cert != nil && time.Now().Before(inv.Cert.NotBefore) {
				return down("TLS: certificate is not valid yet")
			}
			return down("TLS: certificate has expired")
		default:
			return down("TLS: invalid certificate: " + inv.Error())
		}
	case errors.As(err, &host):
		return down("TLS: certificate is not valid for " + host.Host)
	case errors.As(err, &ua):
		return down("TLS: certificate signed by an unknown authority")
	case errors.As(err, &verify):
		return down("TLS: certificate verification failed: " + innermost(verify.Err))
	case errors.As(err, &rec):
		return down("TLS: the target did not answer with TLS")
	case errors.As(err, &alert):
		return down("TLS: handshake failed: " + alert.Error())
	case strings.Contains(err.Error(), "remote error: tls: "):
		return down("TLS: the target refused the handshake: " + strings.TrimPrefix(innermost(err), "tls: "))
	case strings.Contains(err.Error(), "tls: "):
		return down("TLS: handshake failed: " + strings.TrimPrefix(innermost(err), "tls: "))
	}
	return nil
}

// innermost is the message of the deepest wrapped error, which leaves out
// the URL and the addresses the outer layers add.
func innermost(err error) string {
	for {
		var next error
		switch e := err.(type) {
		case *net.OpError:
			next = e.Err
		case *os.SyscallError:
			next = e.Err
		case interface{ Unwrap() error }:
			next = e.Unwrap()
		}
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// fmtDuration prints whole seconds as "10s" and shorter times as "500ms".
func fmtDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	return d.Round(time.Millisecond).String()
}
