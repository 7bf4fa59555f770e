package netguard

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// The save-time check: a target written as an address the policy blocks is
// refused before it is stored, in every spelling a resolver or dialer would
// read as that address ("2130706433", "0x7f.1", "１２７。０。０。１",
// "[::ffff:127.0.0.1]"). It gives a user a clear error early; the dialer,
// which judges the address actually dialled after DNS, stays the authority.

// CheckHost refuses a host (a bare name or address, IPv6 with or without
// brackets) that is written as an address the policy blocks, or that is a
// loopback name. Other names are judged when dialled. The error never
// repeats the host.
func (p Policy) CheckHost(host string) error {
	if !p.BlockPrivate || host == "" {
		return nil
	}
	for _, h := range spellings(host) {
		if err := judge(h); err != nil {
			return err
		}
	}
	return nil
}

// CheckURL applies CheckHost to a URL's host, whatever its userinfo and
// port. A URL that does not parse is left to the field's own validation.
func (p Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if raw == "" || err != nil {
		return nil
	}
	return p.CheckHost(u.Hostname())
}

// CheckHostPort applies CheckHost to the host of host:port, or to the whole
// when there is no port (a resolver written without one).
func (p Policy) CheckHostPort(s string) error {
	if host, _, err := net.SplitHostPort(s); err == nil {
		return p.CheckHost(host)
	}
	return p.CheckHost(s)
}

// judge refuses one spelling of a host.
func judge(h string) error {
	if loopbackName(h) {
		return fmt.Errorf("%w: a loopback name", ErrBlocked)
	}
	addr, ok := hostAddr(h)
	if !ok {
		return nil // a name: checked when dialled
	}
	// The dialer sees an IPv4-mapped address as the IPv4 one.
	if err := guard.SafeAddr(addr.Unmap().WithZone("")); err != nil {
		return fmt.Errorf("%w: a private or special-purpose address", ErrBlocked)
	}
	return nil
}

// mapping is UTS #46 mapping as a resolver applies it before a lookup
// (fullwidth digits and letters, ideographic full stops, case), without
// the STD3 rules, so that an IPv6 literal passes through as written.
var mapping = idna.New(idna.MapForLookup(), idna.StrictDomainName(false))

// spellings are the ways a host is read: as written, and as IDNA maps it;
// each lower-case, without brackets and trailing dots.
func spellings(host string) []string {
	h := bare(host)
	out := []string{h}
	// On an error the mapping still returns what it could map, which is
	// what a lenient resolver would look up.
	if m, _ := mapping.ToASCII(h); m != "" && bare(m) != h {
		out = append(out, bare(m))
	}
	return out
}

func bare(h string) string {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return strings.ToLower(strings.TrimRight(h, "."))
}

// loopbackName: "localhost" and every name under it (RFC 6761 §6.3).
func loopbackName(h string) bool {
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// hostAddr reads h as the address a dialer would connect to: an IP literal
// (IPv6 with its zone, IPv4-mapped and other embedded forms as written),
// or an IPv4 address in any form inet_aton(3) and URL parsers accept.
// ok is false for a name.
func hostAddr(h string) (addr netip.Addr, ok bool) {
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true
	}
	return inetAton(h)
}

// inetAton reads an IPv4 address as inet_aton(3) and the WHATWG URL
// standard do: one to four parts, each decimal, octal (a leading 0) or hex
// (0x); all but the last are one byte each, and the last fills the bytes
// left ("127.1" is 127.0.0.1, "2130706433" is too).
func inetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint32
	for i, p := range parts {
		n, ok := atonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 0xff {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if left := 8 * (5 - len(parts)); left < 32 && n >= 1<<left {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// atonPart reads one part of an inet_aton address: "0x" and hex digits,
// "0" and octal digits, or decimal digits; "0x" alone is 0, as in both
// inet_aton and the URL standard.
func atonPart(p string) (uint32, bool) {
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	// ParseUint with an explicit base takes no sign, prefix or underscore.
	n, err := strconv.ParseUint(p, base, 32)
	return uint32(n), err == nil
}
