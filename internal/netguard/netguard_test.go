package netguard

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func get(t *testing.T, p Policy, url string) (int, error) {
	t.Helper()
	c := &http.Client{Transport: p.Transport(), Timeout: 5 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, nil
}

func TestPolicy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	// Self-hosted default: private targets are fine.
	if code, err := get(t, Policy{}, srv.URL); err != nil || code != 204 {
		t.Fatalf("default policy: %d %v", code, err)
	}
	// Blocking: by address, and by a name that resolves to one (the check
	// runs after DNS, on the address actually dialled).
	blocked := Policy{BlockPrivate: true}
	for _, u := range []string{srv.URL, "http://localhost:" + port} {
		_, err := get(t, blocked, u)
		if err == nil || !Blocked(err) {
			t.Errorf("%s with private targets blocked: %v", u, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:9", "[::1]:9", "10.0.0.1:80", "192.168.1.1:80", "172.16.0.1:80",
		"169.254.169.254:80", "100.64.0.1:80", "[fe80::1]:80", "[fc00::1]:80", "0.0.0.0:80"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := blocked.DialContext(ctx, "tcp", addr, time.Second)
		cancel()
		if !Blocked(err) {
			t.Errorf("%s: %v, want a policy refusal", addr, err)
		}
	}
	// A refusal is not a target failure: a closed port still fails plainly.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := (Policy{}).DialContext(ctx, "tcp", "127.0.0.1:1", time.Second); err == nil || Blocked(err) {
		t.Errorf("closed port: %v", err)
	}
}

// TestProxyIgnored: an environment proxy cannot carry requests around the
// policy, because the transport never consults it. (The standard library
// would not proxy loopback anyway, so the check is on the transport.)
func TestProxyIgnored(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://proxy.invalid:3128")
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
	if tr := (Policy{BlockPrivate: true}).Transport(); tr.Proxy != nil {
		t.Fatal("the guarded transport has a proxy function")
	}
}

func TestCheckHost(t *testing.T) {
	blocked := Policy{BlockPrivate: true}
	for _, h := range []string{"127.0.0.1", "[::1]", "::1", "localhost", "LOCALHOST.", "db.localhost", "10.1.2.3", "169.254.169.254", "::ffff:127.0.0.1", "100.64.1.1", "fd00::1"} {
		if err := blocked.CheckHost(h); !Blocked(err) {
			t.Errorf("%s: %v, want blocked", h, err)
		}
		if err := (Policy{}).CheckHost(h); err != nil {
			t.Errorf("%s with the default policy: %v", h, err)
		}
	}
	for _, h := range []string{"example.com", "1.1.1.1", "[2606:4700:4700::1111]", "internal.example"} {
		if err := blocked.CheckHost(h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
}
