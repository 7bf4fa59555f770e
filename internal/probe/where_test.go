package probe

import "testing"

// A reason names the endpoint as the monitor does, with the address it
// dialled when that differs.
func TestEndpointAndTimeoutWording(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{endpoint("127.0.0.1:9", "127.0.0.1:9"), "127.0.0.1:9"},
		{endpoint("example.com:443", "93.184.216.34:443"), "example.com:443 (93.184.216.34)"},
		{endpoint("[::1]:8080", "[::1]:8080"), "[::1]:8080"},
		{endpoint("localhost:8080", "[::1]:8080"), "localhost:8080 (::1)"},
		{endpoint("example.com:443", ""), "example.com:443"},
		{endpoint("", "10.0.0.1:80"), "10.0.0.1:80"},
		{timedOut("after 10s", stageConnect, "example.com:443 (93.184.216.34)"), "timed out after 10s connecting to example.com:443 (93.184.216.34)"},
		{timedOut("after 5s", stageHeaders, "127.0.0.1:8080"), "timed out after 5s waiting for the response headers from 127.0.0.1:8080"},
		{timedOut("after 5s", stageTLS, "example.com:443"), "timed out after 5s in the TLS handshake with example.com:443"},
		{timedOut("after 5s", stageQuery, ""), "timed out after 5s waiting for the DNS answer"},
		{timedOut("", stageStart, "example.com:443"), "timed out starting"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
