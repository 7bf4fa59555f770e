package httpapi_test

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// TestDeliveryErrorsNameHostAndPhase: an attempt that gets no answer says
// which phase failed and for which host (resolving a name that does not
// exist, connecting to a closed port, a TLS handshake with a certificate
// nobody vouches for), and nothing of this server's own network: not its
// resolver's address, not its local port, not the URL or its query. The
// delivery as stored and as read shows the same. Both engines.
func TestDeliveryErrorsNameHostAndPhase(t *testing.T) {
	t.Parallel()
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}()
	untrusted := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)
	tlsAddr := strings.TrimPrefix(untrusted.URL, "https://")
	resolvers := systemResolvers(t)
	cases := []struct {
		url  string
		want *regexp.Regexp
	}{
		{"http://no-such-host.invalid/hook?token=query-token-1", regexp.MustCompile(
			`^resolve no-such-host\.invalid: (no such host|the resolver did not answer in time|the lookup failed.*|no answer within 10s)$`)},
		{"http://" + closed + "/hook?token=query-token-2", regexp.MustCompile(`^connect ` + regexp.QuoteMeta(closed) + `: connection refused$`)},
		{untrusted.URL + "/hook?token=query-token-3", regexp.MustCompile(`^TLS handshake with ` + regexp.QuoteMeta(tlsAddr) + `: .*certificate`)},
	}
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newEnvWith(t, eng, fastRetries)
			runNotifier(t, e, "node-1")
			k := e.ownerKey()
			for _, c := range cases {
				r := e.req("POST", "/api/v1/notification-channels", k, map[string]any{"name": "hook", "kind": "webhook",
					"config": map[string]any{"url": c.url}})
				if r.status != http.StatusCreated {
					t.Fatalf("create: %d %s", r.status, r.body)
				}
				id := r.json(t)["id"].(string)
				dlv := e.req("POST", "/api/v1/notification-channels/"+id+"/test", k, nil).json(t)["id"].(string)
				var d map[string]any
				wait.For(t, 20*time.Second, "the attempt", func() bool {
					d = e.req("GET", "/api/v1/deliveries/"+dlv, k, nil).json(t)
					return len(d["attempts"].([]any)) > 0
				})
				msg := d["attempts"].([]any)[0].(map[string]any)["error"].(string)
				if !c.want.MatchString(msg) || d["lastError"] != msg {
					t.Errorf("%s: the error %q, want %v", c.url, msg, c.want)
				}
				for _, leak := range append([]string{"query-token", "/hook", " on ", "->", "dial tcp", "lookup "}, resolvers...) {
					if strings.Contains(msg, leak) {
						t.Errorf("%s: the error %q shows %q", c.url, msg, leak)
					}
				}
			}
		})
	}
}

// systemResolvers are the addresses of this machine's resolvers, which no
// error may show.
func systemResolvers(t *testing.T) []string {
	f, err := os.Open("/etc/resolv.conf")
	if err != nil {
		return []string{"127.0.0.1:53", "[::1]:53"} // what Go asks without one
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) >= 2 && fs[0] == "nameserver" {
			out = append(out, fs[1])
		}
	}
	return append(out, ":53")
}
