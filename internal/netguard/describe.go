package netguard

import (
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
)

// What a failed outbound connection tells the people whose target it was:
// what went wrong, in plain words, never an address of this server's own
// network (its resolver, its local address and port) nor a URL (its query
// may carry a token). Go's errors carry all of these: a lookup's says
// "lookup x on 10.0.0.2:53: no such host", a dial's
// "dial tcp 10.0.0.5:41234->192.0.2.1:443: connect: connection refused".

// Problem is what went wrong in err, without any address or URL:
// "no such host", "connection refused", "connection closed", "x509:
// certificate signed by unknown authority"…
func Problem(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		return LookupProblem(dnsErr)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	}
	return innermost(err)
}

// LookupProblem is what went wrong with a lookup, without the resolver's
// address (which the error's own message names).
func LookupProblem(e *net.DNSError) string {
	switch {
	case e.IsNotFound:
		return "no such host"
	case e.IsTimeout:
		return "the resolver did not answer in time"
	}
	// Err may quote the exchange with the resolver ("read udp
	// 10.0.0.5:41234->10.0.0.2:53: read: connection refused"): only its
	// last part says what happened.
	msg := e.Err
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	if msg == "" || strings.ContainsAny(msg, ":>[") {
		return "the lookup failed"
	}
	return "the lookup failed: " + msg
}

// innermost is the message of the deepest wrapped error: the outer layers
// add the URL and the addresses.
func innermost(err error) string {
	for {
		var next error
		switch e := err.(type) {
		case *url.Error:
			next = e.Err
		case *net.OpError:
			next = e.Err
		case *os.SyscallError:
			next = e.Err
		case interface{ Unwrap() error }:
			next = e.Unwrap()
		}
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
