//go:build unix

package probe

import (
	"net"
	"strconv"
	"syscall"
	"testing"
)

// closedPort returns a loopback address that refuses connections for the
// rest of the test: a socket bound to it, never listening, keeps any
// other test's listener off the port (one merely closed again could be
// handed to the next listener on :0, and answer).
func closedPort(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}
