package netguard_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/tocsin/tocsin/internal/netguard"
)

// Problem says what went wrong as Go's errors tell it, without the
// resolver's address, the local port or the URL they carry.
func TestProblem(t *testing.T) {
	dial := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://h.test/hook?token=secret-1", Err: err}
	}
	local := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 41234}
	remote := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 443}
	for _, c := range []struct {
		err  error
		want string
	}{
		{dial(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "x.test", Server: "10.0.0.2:53", IsNotFound: true}}),
			"no such host"},
		{dial(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "i/o timeout", Name: "x.test", Server: "10.0.0.2:53", IsTimeout: true}}),
			"the resolver did not answer in time"},
		{&net.DNSError{Err: "read udp 10.0.0.5:41234->10.0.0.2:53: read: connection refused", Name: "x.test", Server: "10.0.0.2:53"},
			"the lookup failed: connection refused"},
		{&net.DNSError{Err: "server misbehaving", Name: "x.test", Server: "10.0.0.2:53"}, "the lookup failed: server misbehaving"},
		{&net.DNSError{Err: "dial udp [fd00::53]:53", Name: "x.test", Server: "[fd00::53]:53"}, "the lookup failed"},
		{dial(&net.OpError{Op: "dial", Net: "tcp", Source: local, Addr: remote, Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}),
			"connection refused"},
		{dial(&net.OpError{Op: "read", Net: "tcp", Source: local, Addr: remote, Err: io.EOF}), "connection closed"},
		{dial(fmt.Errorf("wrapped: %w", &net.OpError{Op: "read", Net: "tcp", Source: local, Addr: remote, Err: errors.New("reset")})), "reset"},
	} {
		got := netguard.Problem(c.err)
		if got != c.want {
			t.Errorf("Problem(%v) = %q, want %q", c.err, got, c.want)
		}
		for _, leak := range []string{"10.0.0", "fd00", "41234", "secret-1", ":53"} {
			if strings.Contains(got, leak) {
				t.Errorf("Problem(%v) = %q shows %q", c.err, got, leak)
			}
		}
	}
}
