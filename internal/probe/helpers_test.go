package probe

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

func check(t *testing.T, p *Prober, m monitor.Monitor) monitor.Observation {
	t.Helper()
	if m.ID == "" {
		m.ID = "mon_test"
	}
	obs := p.Check(context.Background(), m)
	if obs.MonitorID != m.ID || obs.StartedAt.IsZero() {
		t.Errorf("observation lacks its monitor or start: %+v", obs)
	}
	if len(obs.Reason) > maxReasonLen {
		t.Errorf("reason longer than %d bytes: %q", maxReasonLen, obs.Reason)
	}
	return obs
}

// want fails unless obs has the result and its reason contains reason.
func want(t *testing.T, obs monitor.Observation, result monitor.Result, reason string) {
	t.Helper()
	if obs.Result != result || !strings.Contains(obs.Reason, reason) {
		t.Fatalf("got %s %q, want %s with reason containing %q", obs.Result, obs.Reason, result, reason)
	}
	if result == monitor.ResultUp && obs.Reason != "" {
		t.Fatalf("up with a reason: %q", obs.Reason)
	}
}

func httpMon(url string, edit func(*monitor.Config)) monitor.Monitor {
	c := monitor.Config{URL: url, TimeoutSeconds: 5}
	if edit != nil {
		edit(&c)
	}
	return monitor.Monitor{ID: "mon_http", Type: monitor.TypeHTTP, Config: c}
}

func splitAddr(t *testing.T, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return h, n
}

// testCA is a certificate authority made for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Tocsin Test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// leaf issues a server certificate for name, valid from notBefore to notAfter.
func (ca *testCA) leaf(t *testing.T, name string, notBefore, notAfter time.Time) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// tlsServer accepts connections on a local port and completes handshakes
// with cert until the test ends. It returns the address.
func tlsServer(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				_ = c.(*tls.Conn).Handshake()
				_, _ = c.Read(make([]byte, 1)) // until the client hangs up
			}()
		}
	}()
	return l.Addr().String()
}
