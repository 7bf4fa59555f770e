package heartbeat

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"testing"
)

func TestParsePingSuffix(t *testing.T) {
	valid := []struct {
		suffix string
		sig    Signal
		code   int
	}{
		{"", SignalSuccess, -1},
		{"start", SignalStart, -1},
		{"fail", SignalFail, -1},
		{"0", SignalSuccess, 0},
		{"1", SignalFail, 1},
		{"9", SignalFail, 9},
		{"10", SignalFail, 10},
		{"127", SignalFail, 127},
		{"255", SignalFail, 255},
	}
	for _, c := range valid {
		sig, code, ok := ParsePingSuffix(c.suffix)
		if !ok || sig != c.sig || code != c.code {
			t.Errorf("ParsePingSuffix(%q) = %v, %d, %v; want %v, %d, true", c.suffix, sig, code, ok, c.sig, c.code)
		}
	}
	invalid := []string{
		"256", "999", "1000", "-1", "+1", "-0", "00", "01", "007",
		"abc", "start/x", "fail/", "/start", "Start", "FAIL", "success",
		" 1", "1 ", "1.0", "0x1", "1e2", "١", // an Arabic-Indic digit one
	}
	for _, s := range invalid {
		if sig, code, ok := ParsePingSuffix(s); ok {
			t.Errorf("ParsePingSuffix(%q) = %v, %d, true; want not ok", s, sig, code)
		}
	}
}

func TestSignalNames(t *testing.T) {
	for sig, name := range map[Signal]string{SignalSuccess: "success", SignalStart: "start", SignalFail: "fail"} {
		if got := sig.String(); got != name {
			t.Errorf("Signal(%d).String() = %q, want %q", int(sig), got, name)
		}
		if got, ok := ParseSignal(name); !ok || got != sig {
			t.Errorf("ParseSignal(%q) = %v, %v; want %v, true", name, got, ok, sig)
		}
	}
	if got := Signal(0).String(); got != "Signal(0)" {
		t.Errorf("Signal(0).String() = %q", got)
	}
	for _, s := range []string{"", "Signal(0)", "Success", "ok", "exit"} {
		if sig, ok := ParseSignal(s); ok {
			t.Errorf("ParseSignal(%q) = %v, true; want not ok", s, sig)
		}
	}
}

func TestNewToken(t *testing.T) {
	urlSafe := regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)
	seen := make(map[string]bool)
	for range 100 {
		tok := NewToken()
		if !urlSafe.MatchString(tok) {
			t.Fatalf("NewToken() = %q, want 43 URL-safe base64 characters", tok)
		}
		if b, err := base64.RawURLEncoding.DecodeString(tok); err != nil || len(b) != 32 {
			t.Fatalf("NewToken() = %q decodes to %d bytes (%v), want 32", tok, len(b), err)
		}
		if seen[tok] {
			t.Fatalf("NewToken() repeated %q", tok)
		}
		seen[tok] = true
	}
}

func TestHashToken(t *testing.T) {
	// FIPS 180-2's test vector for SHA-256.
	want, _ := hex.DecodeString("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
	if got := HashToken("abc"); !bytes.Equal(got, want) {
		t.Errorf("HashToken(%q) = %x, want %x", "abc", got, want)
	}
	tok := NewToken()
	h1, h2 := HashToken(tok), HashToken(tok)
	if len(h1) != 32 || !bytes.Equal(h1, h2) {
		t.Errorf("HashToken is %d bytes, deterministic %v; want 32, true", len(h1), bytes.Equal(h1, h2))
	}
	if bytes.Equal(h1, HashToken(NewToken())) {
		t.Error("two tokens hash alike")
	}
}
