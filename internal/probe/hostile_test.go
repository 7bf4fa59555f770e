package probe

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/monitor"
)

// A tenant's own target may send any bytes, and reasons quote what targets
// send. Whatever it sent, every text of an observation leaves the probe
// valid UTF-8 without NUL and bounded: PostgreSQL refuses anything else in
// a text column, and one refused row must never reach the writer.

// wantClean fails unless every text of obs is valid and bounded.
func wantClean(t *testing.T, obs monitor.Observation) {
	t.Helper()
	texts := []string{obs.Reason, obs.Probe, obs.Region}
	for _, a := range obs.Assertions {
		texts = append(texts, a.Reason)
	}
	for _, s := range texts {
		if !clean.Valid(s) || len(s) > maxReasonLen {
			t.Fatalf("observation carries %q (%d bytes): not valid UTF-8 without NUL within %d bytes", s, len(s), maxReasonLen)
		}
	}
}

// DNS answers of every type are quoted in an expected-value mismatch; the
// resolver a monitor names is the tenant's.
func TestHostileDNSAnswersComeOutClean(t *testing.T) {
	t.Parallel()
	srv := newDNSServer(t)
	p := New(Options{})
	for _, c := range []struct{ name, typ, expected, quoted string }{
		{"hostile.tocsin.test", "TXT", "ok", "(got ok\uFFFD\uFFFD)"},
		{"hostile.tocsin.test", "CNAME", "tocsin.test", "(got ev\uFFFD\uFFFDil.tocsin.test.)"},
		// Three strings of 255 bytes: the reason is cut, on a rune boundary.
		{"long.tocsin.test", "TXT", "short", "(got é\uFFFDééé"},
	} {
		obs := check(t, p, dnsMon(srv.addr, c.name, c.typ, c.expected))
		want(t, obs, monitor.ResultDown, c.quoted)
		wantClean(t, obs)
	}
}

// A JSON assertion quotes the value it selected from the body; a long
// non-ASCII value is cut without splitting a character.
func TestHostileJSONValuesComeOutClean(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// "x" first, so a cut at a fixed byte count falls inside an "é".
		_, _ = w.Write([]byte(`{"v": "x` + strings.Repeat("é", 100) + `", "n": "a\u0000b"}`))
	}))
	defer srv.Close()
	p := New(Options{})
	for path, quoted := range map[string]string{
		"$.v": `$.v is "xé`,
		"$.n": `$.n is "a\u0000b", expected "y"`, // JSON-escaped, as the body had it
	} {
		obs := check(t, p, httpMon(srv.URL, func(c *monitor.Config) {
			c.JSONAssertions = []monitor.JSONAssertion{{Path: path, Operator: monitor.OpEquals, Value: json.RawMessage(`"y"`)}}
		}))
		want(t, obs, monitor.ResultDown, quoted)
		wantClean(t, obs)
		if len(obs.Assertions) != 2 || obs.Assertions[1].Passed || !strings.Contains(obs.Assertions[1].Reason, quoted) {
			t.Fatalf("assertions: %+v", obs.Assertions)
		}
	}
}

// A certificate's names reach a reason when a name constraint refuses
// them; a target's certificate may carry names as long as it likes. (Go's
// x509 quotes them, so only the bound is the probe's to keep.)
func TestHostileCertificateNamesComeOutBounded(t *testing.T) {
	t.Parallel()
	ca := newCA(t)
	// An intermediate allowed to sign only for allowed.test issues a leaf
	// whose long name lies outside it.
	ikey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	itmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "Constrained CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
		PermittedDNSDomains: []string{"allowed.test"},
	}
	ider, err := x509.CreateCertificate(rand.Reader, itmpl, ca.cert, &ikey.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	icert, err := x509.ParseCertificate(ider)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat(strings.Repeat("n", 60)+".", 4) + "tocsin.test"
	lkey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	lder, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "evil\x00name"},
		DNSNames:  []string{long},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, icert, &lkey.PublicKey, ikey)
	if err != nil {
		t.Fatal(err)
	}
	addr := tlsServer(t, tls.Certificate{Certificate: [][]byte{lder, ider}, PrivateKey: lkey})
	host, port := splitAddr(t, addr)
	p := New(Options{RootCAs: ca.pool})
	obs := check(t, p, monitor.Monitor{ID: "mon_tls", Type: monitor.TypeTLS,
		Config: monitor.Config{Host: host, Port: port, ServerName: long, TimeoutSeconds: 5}})
	want(t, obs, monitor.ResultDown, `TLS: invalid certificate: x509: a root or intermediate certificate is not authorized to sign for this name: DNS name "nnn`)
	if !strings.HasSuffix(obs.Reason, "…") {
		t.Fatalf("reason not cut: %q", obs.Reason)
	}
	wantClean(t, obs)
}

// Whatever text a check of any type ends with — here a panic's, the one
// path every type shares — leaves through the same exit.
func TestHostileTextOfEveryTypeComesOutClean(t *testing.T) {
	// Not parallel: it sets a package hook.
	testHookBeforeProbe = func() { panic("bad\x00\xff" + strings.Repeat("é", 300)) }
	defer func() { testHookBeforeProbe = nil }()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for _, m := range []monitor.Monitor{
		httpMon(srv.URL, nil),
		tcpMon(t, srv.Listener.Addr().String(), "", ""),
		dnsMon("127.0.0.1:53", "tocsin.test", "A"),
		{ID: "mon_tls", Type: monitor.TypeTLS, Config: monitor.Config{Host: "127.0.0.1", Port: 1}},
	} {
		obs := check(t, New(Options{}), m)
		want(t, obs, monitor.ResultUnknown, monitor.ReasonProbeInternal+": panic: bad\uFFFD\uFFFDé")
		wantClean(t, obs)
	}
}
