//go:build !unix

package probe

import (
	"net"
	"testing"
)

// closedPort returns a loopback address nothing listens on (the port of a
// listener closed again; see closedport_unix_test.go for a sturdier one).
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
