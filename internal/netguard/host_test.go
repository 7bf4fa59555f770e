package netguard

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/idna"
)

// TestHostAddr: each spelling reads as the address inet_aton(3) and the URL
// standard give it, and what no parser reads as an address is a name.
func TestHostAddr(t *testing.T) {
	addrs := map[string]string{
		"2130706433":          "127.0.0.1",
		"0x7f000001":          "127.0.0.1",
		"0X7F000001":          "127.0.0.1",
		"017700000001":        "127.0.0.1",
		"127.1":               "127.0.0.1",
		"127.0.1":             "127.0.0.1",
		"0177.0.0.1":          "127.0.0.1",
		"0x7f.1":              "127.0.0.1",
		"0177.1":              "127.0.0.1",
		"0x7f.0x0.0.01":       "127.0.0.1",
		"127.000.000.001":     "127.0.0.1",
		"0000000177.0.0.1":    "127.0.0.1",
		"0x000000007f.1":      "127.0.0.1",
		"2852039166":          "169.254.169.254",
		"0xa9fea9fe":          "169.254.169.254",
		"169.254.43518":       "169.254.169.254",
		"0251.0376.0251.0376": "169.254.169.254",
		"167772161":           "10.0.0.1",
		"10.1":                "10.0.0.1",
		"0":                   "0.0.0.0",
		"0x":                  "0.0.0.0",
		"0.0":                 "0.0.0.0",
		"134744072":           "8.8.8.8",
		"0x8080808":           "8.8.8.8",
		"8.8.2056":            "8.8.8.8",
		"010.010.010.010":     "8.8.8.8",
		"0127.0.0.1":          "87.0.0.1", // octal 127
		"4294967295":          "255.255.255.255",
		"1.2.3.4":             "1.2.3.4",
		"::1":                 "::1",
		"::ffff:127.0.0.1":    "::ffff:127.0.0.1",
		"fe80::1%eth0":        "fe80::1%eth0",
	}
	for s, want := range addrs {
		got, ok := hostAddr(s)
		if !ok || got != netip.MustParseAddr(want) {
			t.Errorf("hostAddr(%q) = %v, %v; want %s", s, got, ok, want)
		}
	}
	for _, s := range []string{"4294967296", "256.0.0.1", "1.2.3.256", "1.2.65536", "1.16777216", "08.0.0.1", "0x1g",
		"1.2.3.4.5", "1..2", ".1", "", "+1", "-1", "1_0", "0o17", "example.com", "1.2.3.4 ", "127.0.0.1x", "0x0x1"} {
		if got, ok := hostAddr(s); ok {
			t.Errorf("hostAddr(%q) = %v, want a name", s, got)
		}
	}
}

// privateHosts are spellings of loopback, private, link-local and other
// special-purpose targets; publicHosts of public ones and of names.
var (
	privateHosts = []string{
		"127.0.0.1", "2130706433", "0x7f000001", "0X7F000001", "127.1", "127.0.1", "0177.0.0.1", "0x7f.1", "0177.1",
		"0x7f.0x0.0.01", "127.000.000.001", "0000000177.0.0.1", "2852039166", "0xa9fea9fe", "169.254.43518",
		"169.254.169.254", "167772161", "10.1", "10.1.2.3", "192.168.1.1", "172.16.0.1", "100.64.1.1",
		"0", "0x", "0.0", "0.0.0.0",
		"１２７．０．０．１", "127。0。0。1", "127｡0｡0｡1", "１２７．１", "２１３０７０６４３３", "０ｘ７ｆ０００００１", "１６９．２５４．１６９．２５４",
		"127.0.0.1.", "2130706433.", "127.1..",
		"localhost", "LOCALHOST.", "LocalHost", "db.localhost", "API.LOCALHOST.", "ｌｏｃａｌｈｏｓｔ",
		"::1", "[::1]", "[0:0:0:0:0:0:0:1]", "::", "::ffff:127.0.0.1", "[::ffff:127.0.0.1]", "::FFFF:7F00:1",
		"::ffff:169.254.169.254", "::127.0.0.1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::",
		"2001:0:4136:e378:8000:63bf:3fff:fdd2", "fe80::1%eth0", "[fe80::1%eth0]", "fd00::1",
	}
	publicHosts = []string{
		"134744072", "0x8080808", "8.8.2056", "010.010.010.010", "0127.0.0.1", "1.1.1.1", "8.8.8.8.",
		"example.com", "ｅｘａｍｐｌｅ．ｃｏｍ", "internal.example", "localhost.example", "notlocalhost", "1.2.3.4.5",
		"[2606:4700:4700::1111]", "2606:4700:4700::1111", "::ffff:8.8.8.8",
	}
)

func TestCheckHostForms(t *testing.T) {
	blocked := Policy{BlockPrivate: true}
	for _, h := range privateHosts {
		if err := blocked.CheckHost(h); !Blocked(err) {
			t.Errorf("%q: %v, want blocked", h, err)
		}
		if err := (Policy{}).CheckHost(h); err != nil {
			t.Errorf("%q with the default policy: %v", h, err)
		}
	}
	for _, h := range publicHosts {
		if err := blocked.CheckHost(h); err != nil {
			t.Errorf("%q: %v, want allowed", h, err)
		}
	}
}

// TestCheckURLAndHostPort: a URL's host is judged whatever its userinfo
// and port, and a resolver's host with or without a port.
func TestCheckURLAndHostPort(t *testing.T) {
	blocked := Policy{BlockPrivate: true}
	for _, u := range []string{"http://2130706433/", "http://x@2130706433:8080/a?b", "https://user:pw@0x7f.1/",
		"http://[::ffff:127.0.0.1]:80/", "http://[fe80::1%25eth0]/", "http://１２７．０．０．１/", "http://LOCALHOST./",
		"http://%EF%BC%91%EF%BC%92%EF%BC%97.0.0.1/"} {
		if err := blocked.CheckURL(u); !Blocked(err) {
			t.Errorf("%s: %v, want blocked", u, err)
		}
	}
	for _, u := range []string{"http://134744072/", "https://x@example.com:8443/", "", "::not a url", "http://%zz/"} {
		if err := blocked.CheckURL(u); err != nil {
			t.Errorf("%q: %v", u, err)
		}
	}
	for _, r := range []string{"127.1:53", "[::1]:53", "2130706433:53", "2130706433", "[fe80::1%eth0]:53", "localhost:5353", "::1"} {
		if err := blocked.CheckHostPort(r); !Blocked(err) {
			t.Errorf("resolver %s: %v, want blocked", r, err)
		}
	}
	for _, r := range []string{"134744072:53", "1.1.1.1:53", "1.1.1.1", "dns.example:53", ""} {
		if err := blocked.CheckHostPort(r); err != nil {
			t.Errorf("resolver %q: %v", r, err)
		}
	}
	if err := blocked.CheckURL("http://x@2130706433/"); err == nil || strings.Contains(err.Error(), "2130706433") {
		t.Errorf("the refusal repeats the host: %v", err)
	}
}

// TestSpellingsAgreeWithHTTP: the mapped spelling is the one net/http
// dials (it maps a URL's host with the IDNA Lookup profile).
func TestSpellingsAgreeWithHTTP(t *testing.T) {
	for _, h := range []string{"１２７．０．０．１", "127。0。0。1", "２１３０７０６４３３", "ｌｏｃａｌｈｏｓｔ", "ｅｘａｍｐｌｅ．ｃｏｍ"} {
		dialled, err := idna.Lookup.ToASCII(h)
		if err != nil {
			t.Fatalf("%q: %v", h, err)
		}
		if !slices.Contains(spellings(h), bare(dialled)) {
			t.Errorf("%q: net/http dials %q, not among %q", h, dialled, spellings(h))
		}
	}
}

// TestRefusalAgreesWithDialer: every spelling the check reads as a local
// address is refused by the dialer too when that address is dialled (only
// local ones are dialled: the test connects nowhere else).
func TestRefusalAgreesWithDialer(t *testing.T) {
	blocked := Policy{BlockPrivate: true}
	dialled := 0
	for _, h := range privateHosts {
		sp := spellings(h)
		addr, ok := hostAddr(sp[len(sp)-1])
		if !ok || !(addr.Unmap().IsLoopback() || addr.Unmap().IsUnspecified()) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := blocked.DialContext(ctx, "tcp", netip.AddrPortFrom(addr.WithZone(""), 9).String(), time.Second)
		cancel()
		if !Blocked(err) {
			t.Errorf("%q (%s): the dialer says %v, want a policy refusal", h, addr, err)
		}
		dialled++
	}
	if dialled < 20 {
		t.Fatalf("only %d spellings dialled; the test proves little", dialled)
	}
}
