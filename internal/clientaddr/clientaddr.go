// Package clientaddr tells who sent a request: the one answer every
// per-address limit uses (API requests without a valid key, pings to
// unknown URLs, and the web app's sign-in and the status pages).
//
// The direct peer is the client unless it is one of the operator's
// trusted proxies. Only then are Forwarded (RFC 7239, its for= parameters)
// and X-Forwarded-For believed, read from the right, each hop appended by
// a proxy that is itself trusted: the client is the right-most address that
// is not a trusted proxy. Everything left of it was written by the client
// and could be anything.
package clientaddr

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Resolver finds a request's client address. The zero value trusts no
// proxy: the peer is always the client.
type Resolver struct {
	trusted []netip.Prefix
}

// Parse reads a comma-separated list of CIDR prefixes (a bare address
// means just that address); empty trusts no proxy.
func Parse(s string) (Resolver, error) {
	var r Resolver
	var bad []error
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			a, aerr := netip.ParseAddr(part)
			if aerr != nil || a.Zone() != "" {
				bad = append(bad, fmt.Errorf("%q is not a CIDR prefix such as 10.0.0.0/8 or fd00::/8", part))
				continue
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		r.trusted = append(r.trusted, p.Masked())
	}
	return r, errors.Join(bad...)
}

// Trusted reports whether a is one of the trusted proxies.
func (r Resolver) Trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// String lists the trusted prefixes, for the configuration log.
func (r Resolver) String() string {
	if len(r.trusted) == 0 {
		return "(none)"
	}
	s := make([]string, len(r.trusted))
	for i, p := range r.trusted {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// Client returns the client address of req as text (no port).
func (r Resolver) Client(req *http.Request) string {
	peer, ok := peerAddr(req.RemoteAddr)
	if !ok {
		return req.RemoteAddr // not an IP (a test, a unix socket): the best name there is
	}
	if len(r.trusted) == 0 || !r.Trusted(peer) {
		return peer.String()
	}
	// X-Forwarded-For first: it is what most proxies append. A proxy
	// that appends only Forwarded must remove X-Forwarded-For.
	hops := xForwardedFor(req.Header)
	if hops == nil {
		hops = forwardedFor(req.Header)
	}
	// From the right: each hop was appended by the proxy to its right,
	// which is trusted as long as we have not passed an untrusted one.
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a := hops[i]
		if !a.IsValid() {
			break // not an address (garbage, "unknown", an obfuscated name): trust stops here
		}
		client = a
		if !r.Trusted(a) {
			break
		}
	}
	return client.String()
}

// forwardedFor returns the for= addresses of every Forwarded header, in
// order, or nil when there is none. A value that is not an IP address is
// the zero Addr.
func forwardedFor(h http.Header) []netip.Addr {
	var out []netip.Addr
	for _, line := range h.Values("Forwarded") {
		for elem := range strings.SplitSeq(line, ",") {
			found := false
			for pair := range strings.SplitSeq(elem, ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(pair), "=")
				if !strings.EqualFold(strings.TrimSpace(k), "for") {
					continue
				}
				found = true
				out = append(out, parseNode(strings.Trim(strings.TrimSpace(v), `"`)))
			}
			if !found {
				out = append(out, netip.Addr{}) // a hop that does not say who: trust stops there
			}
		}
	}
	return out
}

// parseNode reads an RFC 7239 node: 192.0.2.1, 192.0.2.1:80, [2001:db8::1],
// [2001:db8::1]:80.
func parseNode(v string) netip.Addr {
	if ap, err := netip.ParseAddrPort(v); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	a, err := netip.ParseAddr(v)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

// xForwardedFor returns the addresses of every X-Forwarded-For header, in
// order.
func xForwardedFor(h http.Header) []netip.Addr {
	var out []netip.Addr
	for _, line := range h.Values("X-Forwarded-For") {
		for v := range strings.SplitSeq(line, ",") {
			out = append(out, parseNode(strings.TrimSpace(v)))
		}
	}
	return out
}

func peerAddr(remote string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}
