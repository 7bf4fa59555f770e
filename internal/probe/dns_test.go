package probe

import (
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/netguard"
)

// dnsServer is an authoritative server for tocsin.test, in process, on a
// local UDP port and the same TCP port. Names starting with "big." are
// truncated over UDP, so the client must retry over TCP.
type dnsServer struct {
	addr    string
	udpSeen atomic.Int32
	tcpSeen atomic.Int32
}

func mustName(s string) dnsmessage.Name { return dnsmessage.MustNewName(s) }

// zone answers a question: rcode and the answer bodies.
func zone(q dnsmessage.Question) (dnsmessage.RCode, []dnsmessage.ResourceBody) {
	name := strings.ToLower(strings.TrimPrefix(q.Name.String(), "big."))
	switch name {
	case "servfail.tocsin.test.":
		return dnsmessage.RCodeServerFailure, nil
	case "www.tocsin.test.":
		if q.Type == dnsmessage.TypeCNAME {
			return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{&dnsmessage.CNAMEResource{CNAME: mustName("tocsin.test.")}}
		}
		return dnsmessage.RCodeSuccess, nil
	case "1.2.0.192.in-addr.arpa.":
		if q.Type == dnsmessage.TypePTR {
			return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{&dnsmessage.PTRResource{PTR: mustName("tocsin.test.")}}
		}
		return dnsmessage.RCodeSuccess, nil
	case "_sip._tcp.tocsin.test.":
		if q.Type == dnsmessage.TypeSRV {
			return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{&dnsmessage.SRVResource{Priority: 10, Weight: 5, Port: 5060, Target: mustName("sip.tocsin.test.")}}
		}
		return dnsmessage.RCodeSuccess, nil
	case "hostile.tocsin.test.":
		// A tenant's own resolver may answer any bytes.
		switch q.Type {
		case dnsmessage.TypeTXT:
			return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{&dnsmessage.TXTResource{TXT: []string{"ok\x00\xff"}}}
		case dnsmessage.TypeCNAME:
			return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{&dnsmessage.CNAMEResource{CNAME: mustName("ev\x00\xffil.tocsin.test.")}}
		}
		return dnsmessage.RCodeSuccess, nil
	case "long.tocsin.test.":
		if q.Type == dnsmessage.TypeTXT {
			s := "é\xff" + strings.Repeat("é", 126) // 255 bytes, a stray byte up front
			return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{&dnsmessage.TXTResource{TXT: []string{s, s, s}}}
		}
		return dnsmessage.RCodeSuccess, nil
	case "tocsin.test.":
	default:
		return dnsmessage.RCodeNameError, nil
	}
	switch q.Type {
	case dnsmessage.TypeA:
		return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{
			&dnsmessage.AResource{A: [4]byte{192, 0, 2, 1}},
			&dnsmessage.AResource{A: [4]byte{192, 0, 2, 2}},
		}
	case dnsmessage.TypeAAAA:
		return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{&dnsmessage.AAAAResource{AAAA: netip.MustParseAddr("2001:db8::1").As16()}}
	case dnsmessage.TypeMX:
		return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{
			&dnsmessage.MXResource{Pref: 10, MX: mustName("mail.tocsin.test.")},
			&dnsmessage.MXResource{Pref: 20, MX: mustName("backup.tocsin.test.")},
		}
	case dnsmessage.TypeTXT:
		return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{&dnsmessage.TXTResource{TXT: []string{"v=spf1 ", "-all"}}}
	case dnsmessage.TypeNS:
		return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{&dnsmessage.NSResource{NS: mustName("ns1.tocsin.test.")}}
	case dnsmessage.TypeSOA:
		return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{&dnsmessage.SOAResource{
			NS: mustName("ns1.tocsin.test."), MBox: mustName("hostmaster.tocsin.test."),
			Serial: 2026010101, Refresh: 7200, Retry: 3600, Expire: 1209600, MinTTL: 300,
		}}
	case typeCAA:
		return dnsmessage.RCodeSuccess, []dnsmessage.ResourceBody{&dnsmessage.UnknownResource{
			Type: typeCAA, Data: append([]byte{0, 5}, "issueletsencrypt.org"...),
		}}
	}
	return dnsmessage.RCodeSuccess, nil
}

// respond builds the answer to a query; truncated answers carry no records.
func respond(query []byte, truncate bool) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	rcode, bodies := zone(q)
	tc := truncate && strings.HasPrefix(q.Name.String(), "big.")
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RCode: rcode, Truncated: tc})
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	if !tc {
		for _, body := range bodies {
			rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
			switch r := body.(type) {
			case *dnsmessage.AResource:
				_ = b.AResource(rh, *r)
			case *dnsmessage.AAAAResource:
				_ = b.AAAAResource(rh, *r)
			case *dnsmessage.CNAMEResource:
				_ = b.CNAMEResource(rh, *r)
			case *dnsmessage.MXResource:
				_ = b.MXResource(rh, *r)
			case *dnsmessage.TXTResource:
				_ = b.TXTResource(rh, *r)
			case *dnsmessage.NSResource:
				_ = b.NSResource(rh, *r)
			case *dnsmessage.PTRResource:
				_ = b.PTRResource(rh, *r)
			case *dnsmessage.SRVResource:
				_ = b.SRVResource(rh, *r)
			case *dnsmessage.SOAResource:
				_ = b.SOAResource(rh, *r)
			case *dnsmessage.UnknownResource:
				_ = b.UnknownResource(rh, *r)
			}
		}
	}
	out, _ := b.Finish()
	return out
}

func newDNSServer(t *testing.T) *dnsServer {
	t.Helper()
	var (
		pc  net.PacketConn
		l   net.Listener
		err error
	)
	for range 20 { // the TCP port must be the UDP port's number
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if l, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close(); l.Close() })
	s := &dnsServer{addr: pc.LocalAddr().String()}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			s.udpSeen.Add(1)
			if out := respond(buf[:n], true); out != nil {
				_, _ = pc.WriteTo(out, from)
			}
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.tcpSeen.Add(1)
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				var n [2]byte
				if _, err := io.ReadFull(c, n[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(n[:]))
				if _, err := io.ReadFull(c, q); err != nil {
					return
				}
				out := respond(q, false)
				_, _ = c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(out))), out...))
			}()
		}
	}()
	return s
}

// silentResolver reads queries and never answers.
func silentResolver(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	return pc.LocalAddr().String()
}

func dnsMon(resolver, name, typ string, expected ...string) monitor.Monitor {
	return monitor.Monitor{ID: "mon_dns", Type: monitor.TypeDNS, Config: monitor.Config{
		RecordName: name, RecordType: typ, ExpectedValues: expected, Resolver: resolver, TimeoutSeconds: 2,
	}}
}

func TestDNS(t *testing.T) {
	t.Parallel()
	srv := newDNSServer(t)
	p := New(Options{})
	cases := []struct {
		name, typ string
		expected  []string
		result    monitor.Result
		reason    string
	}{
		{"tocsin.test", "A", nil, monitor.ResultUp, ""},
		{"tocsin.test", "A", []string{"192.0.2.2", "192.0.2.1"}, monitor.ResultUp, ""},
		{"tocsin.test", "A", []string{"192.0.2.1", "192.0.2.9"}, monitor.ResultDown, `DNS: expected A value "192.0.2.9" not among the answers (got 192.0.2.1, 192.0.2.2)`},
		{"TOCSIN.test.", "a", []string{"192.0.2.1"}, monitor.ResultUp, ""},
		{"tocsin.test", "AAAA", []string{"2001:0DB8::0001"}, monitor.ResultUp, ""},
		{"tocsin.test", "MX", []string{"Mail.Tocsin.Test", "20 backup.tocsin.test."}, monitor.ResultUp, ""},
		{"tocsin.test", "MX", []string{"30 backup.tocsin.test"}, monitor.ResultDown, "not among the answers"},
		{"tocsin.test", "TXT", []string{"v=spf1 -all"}, monitor.ResultUp, ""},
		{"tocsin.test", "TXT", []string{"v=spf1 +all"}, monitor.ResultDown, "not among the answers"},
		{"www.tocsin.test", "CNAME", []string{"tocsin.test"}, monitor.ResultUp, ""},
		{"tocsin.test", "NS", []string{"ns1.tocsin.test."}, monitor.ResultUp, ""},
		{"_sip._tcp.tocsin.test", "SRV", []string{"sip.tocsin.test", "10 5 5060 sip.tocsin.test"}, monitor.ResultUp, ""},
		{"tocsin.test", "CAA", []string{"letsencrypt.org", `0 issue "letsencrypt.org"`}, monitor.ResultUp, ""},
		{"1.2.0.192.in-addr.arpa", "PTR", []string{"tocsin.test"}, monitor.ResultUp, ""},
		{"tocsin.test", "SOA", []string{"ns1.tocsin.test"}, monitor.ResultUp, ""},
		{"tocsin.test", "SOA", []string{"ns1.tocsin.test. hostmaster.tocsin.test. 2026010101 7200 3600 1209600 300"}, monitor.ResultUp, ""},
		{"big.tocsin.test", "A", []string{"192.0.2.1"}, monitor.ResultUp, ""}, // truncated over UDP, retried over TCP
		{"nope.tocsin.test", "A", nil, monitor.ResultDown, "DNS: NXDOMAIN, nope.tocsin.test does not exist"},
		{"servfail.tocsin.test", "A", nil, monitor.ResultDown, "DNS: SERVFAIL"},
		{"www.tocsin.test", "A", nil, monitor.ResultDown, "DNS: no A records for www.tocsin.test"},
		{"tocsin.test", "PTR", nil, monitor.ResultDown, "DNS: no PTR records"},
	}
	for _, c := range cases {
		obs := check(t, p, dnsMon(srv.addr, c.name, c.typ, c.expected...))
		if obs.Result != c.result || !strings.Contains(obs.Reason, c.reason) {
			t.Errorf("%s %s %q: got %s %q, want %s %q", c.typ, c.name, c.expected, obs.Result, obs.Reason, c.result, c.reason)
		}
		if obs.Phases.DNS <= 0 {
			t.Errorf("%s %s: no DNS phase", c.typ, c.name)
		}
	}
	if srv.tcpSeen.Load() != 1 {
		t.Errorf("%d TCP queries, want 1 (the truncated answer)", srv.tcpSeen.Load())
	}
}

func TestDNSSystemResolver(t *testing.T) {
	srv := newDNSServer(t)
	// Not parallel: it replaces the system's list. The first resolver
	// refuses (nothing listens), so the check moves on to the second.
	old := systemNameservers
	systemNameservers = func() []string { return []string{silentUDPPortClosed(t), srv.addr} }
	defer func() { systemNameservers = old }()
	obs := check(t, New(Options{}), dnsMon("", "tocsin.test", "A", "192.0.2.1"))
	want(t, obs, monitor.ResultUp, "")

	// When the probe's own resolvers fail, the reason says so without
	// their addresses: they are the probe's network, not the workspace's.
	a, b := silentUDPPortClosed(t), silentUDPPortClosed(t)
	systemNameservers = func() []string { return []string{a, b} }
	obs = check(t, New(Options{}), dnsMon("", "tocsin.test", "A"))
	want(t, obs, monitor.ResultDown, "the probe's DNS resolver")
	if strings.Contains(obs.Reason, "127.0.0.1") {
		t.Errorf("the reason names the probe's resolver: %q", obs.Reason)
	}
}

// silentUDPPortClosed returns a local UDP address nothing listens on.
func silentUDPPortClosed(t *testing.T) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	return addr
}

func TestParseResolvConf(t *testing.T) {
	got := parseResolvConf([]byte("# comment\nsearch example.com\nnameserver 10.0.0.2\nnameserver 2001:db8::53\noptions ndots:2\nnameserver bogus\n"))
	if strings.Join(got, ",") != "10.0.0.2:53,[2001:db8::53]:53" {
		t.Fatalf("got %q", got)
	}
	if got := parseResolvConf(nil); len(got) != 2 || got[0] != "127.0.0.1:53" {
		t.Fatalf("empty resolv.conf: %q", got)
	}
	for in, out := range map[string]string{"192.0.2.53": "192.0.2.53:53", "192.0.2.53:5353": "192.0.2.53:5353", "2001:db8::53": "[2001:db8::53]:53", "[2001:db8::53]:54": "[2001:db8::53]:54", "dns.example": "dns.example:53"} {
		if got := resolverAddr(in); got != out {
			t.Errorf("resolverAddr(%q) = %q, want %q", in, got, out)
		}
	}
}

func TestDNSResolverUnreachable(t *testing.T) {
	t.Parallel()
	silent := silentResolver(t)
	canary, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer canary.Close()

	// The probe's canaries fail too: the probe's network is to blame.
	broken := New(Options{Canaries: []string{closedPort(t), closedPort(t)}})
	obs := check(t, broken, dnsMon(silent, "tocsin.test", "A"))
	want(t, obs, monitor.ResultUnknown, "probe network broken: its canary targets are unreachable too")
	if !strings.Contains(obs.Reason, "did not answer within") {
		t.Fatalf("the reason should keep the target's failure: %q", obs.Reason)
	}

	// A canary answers: the resolver is to blame.
	healthy := New(Options{Canaries: []string{closedPort(t), canary.Addr().String()}})
	obs = check(t, healthy, dnsMon(silent, "tocsin.test", "A"))
	want(t, obs, monitor.ResultDown, "DNS resolver "+silent+" did not answer within 2s")

	// No canaries: no judgement, the target failure stands.
	want(t, check(t, New(Options{}), dnsMon(silentUDPPortClosed(t), "tocsin.test", "A")), monitor.ResultDown, "DNS resolver")
}

func TestDNSResolverBlockedByPolicy(t *testing.T) {
	t.Parallel()
	srv := newDNSServer(t)
	p := New(Options{Policy: netguard.Policy{BlockPrivate: true}})
	want(t, check(t, p, dnsMon(srv.addr, "tocsin.test", "A")), monitor.ResultDown, ReasonBlocked)
}
