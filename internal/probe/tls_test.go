package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

func TestTLSExpiry(t *testing.T) {
	t.Parallel()
	ca := newCA(t)
	now := time.Now()
	const name = "service.tocsin.test"
	cases := []struct {
		name      string
		certName  string
		notBefore time.Time
		notAfter  time.Time
		result    monitor.Result
		reason    string
	}{
		{"two days left", name, now.Add(-time.Hour), now.Add(48 * time.Hour), monitor.ResultDown, "TLS certificate expires in 1 day"},
		{"three days left, at the down edge", name, now.Add(-time.Hour), now.Add(3*24*time.Hour + time.Hour), monitor.ResultDown, "TLS certificate expires in 3 days"},
		{"four days left", name, now.Add(-time.Hour), now.Add(4*24*time.Hour + time.Hour), monitor.ResultDegraded, "TLS certificate expires in 4 days"},
		{"fourteen days left, at the degraded edge", name, now.Add(-time.Hour), now.Add(14*24*time.Hour + time.Hour), monitor.ResultDegraded, "TLS certificate expires in 14 days"},
		{"fifteen days left", name, now.Add(-time.Hour), now.Add(15*24*time.Hour + time.Hour), monitor.ResultUp, ""},
		{"ten days left", name, now.Add(-time.Hour), now.Add(10 * 24 * time.Hour), monitor.ResultDegraded, "TLS certificate expires in 9 days"},
		{"sixty days left", name, now.Add(-time.Hour), now.Add(60 * 24 * time.Hour), monitor.ResultUp, ""},
		{"expired", name, now.Add(-30 * 24 * time.Hour), now.Add(-24 * time.Hour), monitor.ResultDown, "TLS: certificate has expired"},
		{"not yet valid", name, now.Add(24 * time.Hour), now.Add(90 * 24 * time.Hour), monitor.ResultDown, "TLS: certificate is not valid yet"},
		{"wrong name", "other.tocsin.test", now.Add(-time.Hour), now.Add(60 * 24 * time.Hour), monitor.ResultDown, "TLS: certificate is not valid for " + name},
	}
	p := New(Options{RootCAs: ca.pool})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			host, port := splitAddr(t, tlsServer(t, ca.leaf(t, c.certName, c.notBefore, c.notAfter)))
			obs := check(t, p, monitor.Monitor{ID: "mon_tls", Type: monitor.TypeTLS, Config: monitor.Config{
				Host: host, Port: port, ServerName: name, DownExpiryDays: 3, DegradedExpiryDays: 14, TimeoutSeconds: 2,
			}})
			want(t, obs, c.result, c.reason)
			if obs.Phases.Connect <= 0 || obs.Phases.TLS <= 0 {
				t.Fatalf("phases %+v", obs.Phases)
			}
			// The expiry is kept when the handshake completed, to the
			// second a certificate states it.
			wantExpiry := c.notAfter.UTC().Truncate(time.Second)
			if strings.HasPrefix(c.reason, "TLS: ") {
				wantExpiry = time.Time{}
			}
			if !obs.CertExpiry.Equal(wantExpiry) {
				t.Errorf("CertExpiry %v, want %v", obs.CertExpiry, wantExpiry)
			}
		})
	}
}

func TestTLSUntrusted(t *testing.T) {
	t.Parallel()
	ca := newCA(t)
	host, port := splitAddr(t, tlsServer(t, ca.leaf(t, "a.tocsin.test", time.Now().Add(-time.Hour), time.Now().Add(90*24*time.Hour))))
	m := monitor.Monitor{ID: "mon_tls", Type: monitor.TypeTLS, Config: monitor.Config{Host: host, Port: port, ServerName: "a.tocsin.test"}}
	want(t, check(t, New(Options{}), m), monitor.ResultDown, "TLS: certificate signed by an unknown authority")
	want(t, check(t, New(Options{RootCAs: ca.pool}), m), monitor.ResultUp, "")
}

// TestTLSNotTLS: a plain TCP service on a TLS monitor's port.
func TestTLSNotTLS(t *testing.T) {
	t.Parallel()
	host, port := splitAddr(t, lineServer(t, "220 plain text service\r\n"))
	m := monitor.Monitor{ID: "mon_tls", Type: monitor.TypeTLS, Config: monitor.Config{Host: host, Port: port, ServerName: "x.tocsin.test", TimeoutSeconds: 2}}
	obs := check(t, New(Options{}), m)
	want(t, obs, monitor.ResultDown, "TLS")
}
