// Package netguard is the one way Tocsin connects out (checks, webhooks):
// a dialer that applies the SSRF policy at connect time, after DNS, so a
// name that resolves — or rebinds — to a blocked address is refused. The
// same policy vets targets when they are saved (CheckHost, CheckURL).
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// ErrBlocked is wrapped by every refusal of the policy.
var ErrBlocked = errors.New("destination blocked by the outbound policy")

// Policy says where outbound connections may go.
type Policy struct {
	// BlockPrivate refuses loopback, private, link-local (cloud metadata),
	// CGNAT, and the other special-purpose ranges of IPv4 and IPv6. Off by
	// default: a self-hosted monitor usually watches private services.
	BlockPrivate bool
}

// guard holds the blocked ranges; it is read-only, so one serves everyone.
var guard = ssrf.New(ssrf.WithAnyPort(), ssrf.WithNetworks("tcp4", "tcp6", "udp4", "udp6"))

// control is the dialer's Control hook: it sees the resolved address.
func (p Policy) control() func(network, address string, c syscall.RawConn) error {
	if !p.BlockPrivate {
		return nil
	}
	return func(network, address string, c syscall.RawConn) error {
		if err := guard.Safe(network, address, c); err != nil {
			return fmt.Errorf("%w: %v", ErrBlocked, err)
		}
		return nil
	}
}

// Dialer returns a dialer that enforces the policy.
func (p Policy) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, KeepAlive: -1, Control: p.control()}
}

// Transport returns an HTTP transport whose every connection goes through
// the policy. Proxy settings from the environment are ignored: a proxy
// would connect on our behalf, out of the policy's sight.
func (p Policy) Transport() *http.Transport {
	d := p.Dialer(30 * time.Second)
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Blocked reports whether err is a refusal of the policy (as opposed to the
// target failing), so callers can say so plainly.
func Blocked(err error) bool { return errors.Is(err, ErrBlocked) }

// DialContext dials through the policy.
func (p Policy) DialContext(ctx context.Context, network, address string, timeout time.Duration) (net.Conn, error) {
	return p.Dialer(timeout).DialContext(ctx, network, address)
}
