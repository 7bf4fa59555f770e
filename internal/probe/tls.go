package probe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// Expiry thresholds when a TLS monitor sets none (as Normalize fills them).
const (
	defaultDegradedExpiryDays = 14
	defaultDownExpiryDays     = 3
)

// tls connects to host:port (default 443), completes a fully verified
// handshake for ServerName (default host), and judges the days left until
// the leaf certificate's NotAfter: at most DownExpiryDays is down, at most
// DegradedExpiryDays degraded. Days are whole days, rounded down.
func (c *checkRun) tls(ctx context.Context) *failure {
	t := newTracker(c.start)
	port := c.cfg.Port
	if port == 0 {
		port = 443
	}
	addr := net.JoinHostPort(c.cfg.Host, strconv.Itoa(port))
	conn, closeConn, err := c.dial(ctx, t, addr)
	if err != nil {
		return c.classify(ctx, err, t.Stage(), t.Where(addr))
	}
	defer closeConn()

	name := c.cfg.ServerName
	if name == "" {
		name = c.cfg.Host
	}
	tc := tls.Client(conn, &tls.Config{ServerName: name, RootCAs: c.p.opts.RootCAs, MinVersion: tls.VersionTLS12})
	t.tlsStart()
	err = tc.HandshakeContext(ctx)
	t.tlsDone()
	c.obs.Phases = t.Phases()
	c.obs.Latency = time.Since(c.start)
	if err != nil {
		return c.classify(ctx, err, stageTLS, t.Where(addr))
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return down("TLS: the target sent no certificate")
	}
	leaf := certs[0]
	c.obs.CertExpiry = leaf.NotAfter.UTC().Truncate(time.Microsecond)
	downDays, degradedDays := c.cfg.DownExpiryDays, c.cfg.DegradedExpiryDays
	if downDays == 0 && degradedDays == 0 {
		downDays, degradedDays = defaultDownExpiryDays, defaultDegradedExpiryDays
	}
	days := int(time.Until(leaf.NotAfter) / (24 * time.Hour))
	when := fmt.Sprintf("TLS certificate expires in %d %s (%s)", days, plural(days, "day", "days"), leaf.NotAfter.UTC().Format("2006-01-02 15:04 MST"))
	switch {
	case days <= downDays:
		return down(when)
	case days <= degradedDays:
		return &failure{result: monitor.ResultDegraded, reason: when}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
