package heartbeat

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// Signal is what a ping says.
type Signal int

const (
	SignalSuccess Signal = iota + 1 // plain ping, or exit code 0
	SignalStart                     // /start
	SignalFail                      // /fail, or a non-zero exit code
)

func (s Signal) String() string {
	switch s {
	case SignalSuccess:
		return "success"
	case SignalStart:
		return "start"
	case SignalFail:
		return "fail"
	}
	return fmt.Sprintf("Signal(%d)", int(s))
}

// ParseSignal is the inverse of String, for reading stored rows.
func ParseSignal(s string) (Signal, bool) {
	for _, sig := range []Signal{SignalSuccess, SignalStart, SignalFail} {
		if sig.String() == s {
			return sig, true
		}
	}
	return 0, false
}

// ParsePingSuffix reads the part of a ping's path after the token: "" is
// success, "start" and "fail" say so, and an exit code from "0" to "255"
// (decimal, no sign, no leading zeros) is success for 0 and fail otherwise.
// exitCode is -1 when no code was given. Anything else is not a ping.
func ParsePingSuffix(suffix string) (sig Signal, exitCode int, ok bool) {
	switch suffix {
	case "":
		return SignalSuccess, -1, true
	case "start":
		return SignalStart, -1, true
	case "fail":
		return SignalFail, -1, true
	}
	code, ok := parseExitCode(suffix)
	switch {
	case !ok:
		return 0, 0, false
	case code == 0:
		return SignalSuccess, 0, true
	default:
		return SignalFail, code, true
	}
}

func parseExitCode(s string) (int, bool) {
	if s == "" || len(s) > 3 || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= 255
}

// NewToken returns a new secret ping token: 32 bytes from crypto/rand in
// base64.RawURLEncoding, 43 URL-safe characters.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails: it would crash the program instead
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashToken is what the database stores and looks a token up by: its
// SHA-256.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
