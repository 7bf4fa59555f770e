package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/tocsin/tocsin/internal/monitor"
)

// typeCAA is not among dnsmessage's types; its records are parsed here.
const typeCAA dnsmessage.Type = 257

var dnsTypes = map[string]dnsmessage.Type{
	"A": dnsmessage.TypeA, "AAAA": dnsmessage.TypeAAAA, "CNAME": dnsmessage.TypeCNAME,
	"MX": dnsmessage.TypeMX, "NS": dnsmessage.TypeNS, "TXT": dnsmessage.TypeTXT,
	"SRV": dnsmessage.TypeSRV, "CAA": typeCAA, "PTR": dnsmessage.TypePTR, "SOA": dnsmessage.TypeSOA,
}

// ednsSize is the UDP payload size we advertise (the DNS flag day value).
const ednsSize = 1232

// systemNameservers lists the system resolvers ("host:port"); tests
// replace it.
var systemNameservers = func() []string {
	data, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		return parseResolvConf(nil)
	}
	return parseResolvConf(data)
}

// parseResolvConf returns the nameservers of a resolv.conf, each with port
// 53; like the Go resolver, the local host when there are none.
func parseResolvConf(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "nameserver" {
			if ip, err := netip.ParseAddr(f[1]); err == nil {
				out = append(out, netip.AddrPortFrom(ip, 53).String())
			}
		}
	}
	if len(out) == 0 {
		out = []string{"127.0.0.1:53", "[::1]:53"}
	}
	return out
}

// resolverAddr adds the default port 53 to a resolver given as a host.
func resolverAddr(s string) string {
	if _, _, err := net.SplitHostPort(s); err == nil {
		return s
	}
	return net.JoinHostPort(strings.Trim(s, "[]"), "53")
}

// dns queries RecordName for RecordType at the monitor's resolver (through
// the policy) or at the system's (outside it: the operator's, like the
// canaries). NXDOMAIN, SERVFAIL, or no record of the type is down; a
// resolver that does not answer is down unless the canaries fail too.
//
// With ExpectedValues, the check passes when every expected value is among
// the answers of the queried type. Values compare case-insensitively, with
// surrounding space ignored; a trailing dot on a name is ignored (so
// "mail.example.com" matches "mail.example.com."); IP addresses compare as
// addresses ("2001:db8::1" matches "2001:0db8::0001"). An answer matches
// in its full presentation form or by its main part alone:
//
//	A, AAAA         192.0.2.1
//	CNAME, NS, PTR  target.example.com
//	MX              "10 mail.example.com" or "mail.example.com"
//	SRV             "10 5 5060 sip.example.com" or "sip.example.com"
//	TXT             the record's strings joined without separators
//	CAA             `0 issue "ca.example"` or "ca.example"
//	SOA             "ns1.example.com hostmaster.example.com 1 7200 3600 1209600 300" or "ns1.example.com"
func (c *checkRun) dns(ctx context.Context) *failure {
	qtype, ok := dnsTypes[strings.ToUpper(c.cfg.RecordType)]
	if c.cfg.RecordType == "" {
		qtype, ok = dnsmessage.TypeA, true
	}
	if !ok {
		return unknown(fmt.Sprintf("invalid check configuration: record type %q", c.cfg.RecordType))
	}
	fqdn := c.cfg.RecordName
	if !strings.HasSuffix(fqdn, ".") {
		fqdn += "."
	}
	name, err := dnsmessage.NewName(fqdn)
	if err != nil {
		return unknown("invalid check configuration: record name is not a domain name")
	}
	q := dnsmessage.Question{Name: name, Type: qtype, Class: dnsmessage.ClassINET}

	servers, dialer := []string{resolverAddr(c.cfg.Resolver)}, c.p.dialer
	label := func(server string) string { return "DNS resolver " + server }
	if c.cfg.Resolver == "" {
		servers, dialer = systemNameservers(), &net.Dialer{KeepAlive: -1}
		// The probe's own resolvers are its network's, not the
		// workspace's: a reason does not name their addresses.
		label = func(string) string { return "the probe's DNS resolver" }
	}
	t0 := time.Now()
	var (
		msg []byte
		f   *failure
	)
	for i, server := range servers {
		// Each resolver gets a fair share of what time is left.
		sctx, cancel := ctx, context.CancelFunc(func() {})
		if d, ok := ctx.Deadline(); ok && i < len(servers)-1 {
			sctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(d)/time.Duration(len(servers)-i)))
		}
		msg, err = exchange(sctx, dialer, server, q)
		cancel()
		if err == nil {
			break
		}
		f = c.resolverFailure(ctx, label(server), time.Since(t0), err)
		if f.result == monitor.ResultUnknown || ctx.Err() != nil {
			break
		}
	}
	c.obs.Phases.DNS = time.Since(t0)
	c.obs.Latency = time.Since(c.start)
	if err != nil {
		return f
	}
	return judgeAnswer(msg, q, c.cfg.RecordName, c.cfg.ExpectedValues)
}

// resolverFailure names a failed exchange with a resolver, which label
// names ("DNS resolver 192.0.2.53:53").
func (c *checkRun) resolverFailure(ctx context.Context, label string, spent time.Duration, err error) *failure {
	if isDeadline(ctx, err) {
		return netDown(fmt.Sprintf("%s did not answer within %s", label, fmtDuration(spent.Round(100*time.Millisecond))))
	}
	f := c.classify(ctx, err, stageQuery, "")
	if f.result == monitor.ResultDown && f.reason != ReasonBlocked {
		f.reason = label + ": " + f.reason
	}
	return f
}

// judgeAnswer applies the rcode, the presence of records, and the
// expected values to a response.
func judgeAnswer(msg []byte, q dnsmessage.Question, name string, expected []string) *failure {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return down("DNS: malformed response")
	}
	switch h.RCode {
	case dnsmessage.RCodeSuccess:
	case dnsmessage.RCodeNameError:
		return down("DNS: NXDOMAIN, " + name + " does not exist")
	case dnsmessage.RCodeServerFailure:
		return down("DNS: SERVFAIL, the resolver could not resolve " + name)
	case dnsmessage.RCodeRefused:
		return down("DNS: REFUSED, the resolver refused to answer for " + name)
	default:
		return down(fmt.Sprintf("DNS: error response (%s) for %s", strings.TrimPrefix(h.RCode.String(), "RCode"), name))
	}
	if err := p.SkipAllQuestions(); err != nil {
		return down("DNS: malformed response")
	}
	answers, err := collect(&p, q.Type)
	if err != nil {
		return down("DNS: malformed response: " + innermost(err))
	}
	typ := typeName(q.Type)
	if len(answers) == 0 {
		return down(fmt.Sprintf("DNS: no %s records for %s", typ, name))
	}
	for _, want := range expected {
		if !matchesAny(q.Type, want, answers) {
			got := make([]string, 0, len(answers))
			for _, a := range answers {
				got = append(got, a[0])
			}
			return down(fmt.Sprintf("DNS: expected %s value %q not among the answers (got %s)", typ, want, strings.Join(got, ", ")))
		}
	}
	return nil
}

func typeName(t dnsmessage.Type) string {
	for k, v := range dnsTypes {
		if v == t {
			return k
		}
	}
	return strconv.Itoa(int(t))
}

// collect returns the answers of type t, each as its forms (full first).
func collect(p *dnsmessage.Parser, t dnsmessage.Type) ([][]string, error) {
	var out [][]string
	for {
		h, err := p.AnswerHeader()
		if errors.Is(err, dnsmessage.ErrSectionDone) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Type != t || h.Class != dnsmessage.ClassINET {
			if err := p.SkipAnswer(); err != nil {
				return nil, err
			}
			continue
		}
		forms, err := parseRecord(p, t)
		if err != nil {
			return nil, err
		}
		out = append(out, forms)
	}
}

func parseRecord(p *dnsmessage.Parser, t dnsmessage.Type) ([]string, error) {
	switch t {
	case dnsmessage.TypeA:
		r, err := p.AResource()
		return []string{netip.AddrFrom4(r.A).String()}, err
	case dnsmessage.TypeAAAA:
		r, err := p.AAAAResource()
		return []string{netip.AddrFrom16(r.AAAA).String()}, err
	case dnsmessage.TypeCNAME:
		r, err := p.CNAMEResource()
		return []string{r.CNAME.String()}, err
	case dnsmessage.TypeNS:
		r, err := p.NSResource()
		return []string{r.NS.String()}, err
	case dnsmessage.TypePTR:
		r, err := p.PTRResource()
		return []string{r.PTR.String()}, err
	case dnsmessage.TypeMX:
		r, err := p.MXResource()
		return []string{fmt.Sprintf("%d %s", r.Pref, r.MX), r.MX.String()}, err
	case dnsmessage.TypeSRV:
		r, err := p.SRVResource()
		return []string{fmt.Sprintf("%d %d %d %s", r.Priority, r.Weight, r.Port, r.Target), r.Target.String()}, err
	case dnsmessage.TypeTXT:
		r, err := p.TXTResource()
		return []string{strings.Join(r.TXT, "")}, err
	case dnsmessage.TypeSOA:
		r, err := p.SOAResource()
		return []string{fmt.Sprintf("%s %s %d %d %d %d %d", r.NS, r.MBox, r.Serial, r.Refresh, r.Retry, r.Expire, r.MinTTL), r.NS.String()}, err
	case typeCAA:
		r, err := p.UnknownResource()
		if err != nil {
			return nil, err
		}
		return parseCAA(r.Data)
	}
	return nil, fmt.Errorf("unsupported record type %d", t)
}

// parseCAA reads RFC 8659 RDATA: flags, tag length, tag, value.
func parseCAA(d []byte) ([]string, error) {
	if len(d) < 2 || len(d) < 2+int(d[1]) {
		return nil, errors.New("short CAA record")
	}
	flags, tag, value := d[0], string(d[2:2+int(d[1])]), string(d[2+int(d[1]):])
	return []string{fmt.Sprintf("%d %s %q", flags, tag, value), value}, nil
}

func matchesAny(t dnsmessage.Type, want string, answers [][]string) bool {
	w := normalizeValue(t, want)
	for _, forms := range answers {
		for _, f := range forms {
			if normalizeValue(t, f) == w {
				return true
			}
		}
	}
	return false
}

// normalizeValue applies the comparison rule documented on dns.
func normalizeValue(t dnsmessage.Type, s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch t {
	case dnsmessage.TypeTXT:
		return s
	case dnsmessage.TypeA, dnsmessage.TypeAAAA:
		if ip, err := netip.ParseAddr(s); err == nil {
			return ip.Unmap().String()
		}
		return s
	}
	f := strings.Fields(s)
	for i := range f {
		f[i] = strings.TrimSuffix(f[i], ".")
	}
	return strings.Join(f, " ")
}

// exchange sends q to server over UDP, resending with a growing wait until
// the context ends, and retries over TCP when the answer is truncated.
func exchange(ctx context.Context, d *net.Dialer, server string, q dnsmessage.Question) ([]byte, error) {
	id := uint16(rand.Uint32())
	query, err := buildQuery(id, q)
	if err != nil {
		return nil, err
	}
	msg, err := exchangeUDP(ctx, d, server, query, id, q)
	if err != nil {
		return nil, err
	}
	var h dnsmessage.Header
	var p dnsmessage.Parser
	if h, err = p.Start(msg); err == nil && h.Truncated {
		return exchangeTCP(ctx, d, server, query, id, q)
	}
	return msg, nil
}

func buildQuery(id uint16, q dnsmessage.Question) ([]byte, error) {
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), dnsmessage.Header{ID: id, RecursionDesired: true})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAdditionals(); err != nil {
		return nil, err
	}
	var rh dnsmessage.ResourceHeader
	if err := rh.SetEDNS0(ednsSize, dnsmessage.RCodeSuccess, false); err != nil {
		return nil, err
	}
	if err := b.OPTResource(rh, dnsmessage.OPTResource{}); err != nil {
		return nil, err
	}
	return b.Finish()
}

// closeOnDone closes conn when ctx ends, so a cancellation interrupts any
// read at once.
func closeOnDone(ctx context.Context, conn net.Conn) func() bool {
	return context.AfterFunc(ctx, func() { conn.Close() })
}

func exchangeUDP(ctx context.Context, d *net.Dialer, server string, query []byte, id uint16, q dnsmessage.Question) ([]byte, error) {
	conn, err := d.DialContext(ctx, "udp", server)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	defer closeOnDone(ctx, conn)()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	buf := make([]byte, 4096)
	for wait := time.Second; ; wait *= 2 {
		if _, err := conn.Write(query); err != nil {
			return nil, ctxErr(ctx, err)
		}
		next := time.Now().Add(wait)
		if next.After(deadline) {
			next = deadline
		}
		_ = conn.SetReadDeadline(next)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(deadline) && ctx.Err() == nil {
					break // resend: UDP may have lost either packet
				}
				return nil, ctxErr(ctx, err)
			}
			if isAnswerTo(buf[:n], id, q) {
				return append([]byte(nil), buf[:n]...), nil
			}
			// Not ours (late, spoofed or mangled): keep listening.
		}
	}
}

func exchangeTCP(ctx context.Context, d *net.Dialer, server string, query []byte, id uint16, q dnsmessage.Question) ([]byte, error) {
	conn, err := d.DialContext(ctx, "tcp", server)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	defer closeOnDone(ctx, conn)()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	framed := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(query)), uint16(len(query)))
	if _, err := conn.Write(append(framed, query...)); err != nil {
		return nil, ctxErr(ctx, err)
	}
	var l [2]byte
	if _, err := io.ReadFull(conn, l[:]); err != nil {
		return nil, ctxErr(ctx, err)
	}
	msg := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(conn, msg); err != nil {
		return nil, ctxErr(ctx, err)
	}
	if !isAnswerTo(msg, id, q) {
		return nil, errors.New("the resolver answered another question")
	}
	return msg, nil
}

// ctxErr prefers the context's error to the one a closed connection gave.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", context.Cause(ctx), err)
	}
	return err
}

func isAnswerTo(msg []byte, id uint16, q dnsmessage.Question) bool {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil || h.ID != id || !h.Response {
		return false
	}
	got, err := p.Question()
	return err == nil && got.Type == q.Type && got.Class == q.Class && strings.EqualFold(got.Name.String(), q.Name.String())
}
