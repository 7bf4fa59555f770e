package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const (
	hexA = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	hexB = "f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f"
)

func mustParse(t testing.TB, spec string) *Keyring {
	t.Helper()
	kr, err := ParseKeyring(spec)
	if err != nil {
		t.Fatalf("ParseKeyring: %v", err)
	}
	return kr
}

func TestSealOpenRoundTrip(t *testing.T) {
	kr := mustParse(t, "k1:"+hexA)
	aad := []byte("monitor:m_1:auth")
	for _, pt := range [][]byte{nil, []byte("hunter2"), bytes.Repeat([]byte{0xff}, 4096)} {
		ct, err := kr.Seal(pt, aad)
		if err != nil {
			t.Fatalf("Seal: %v", err)
		}
		if len(pt) > 0 && bytes.Contains(ct, pt) {
			t.Errorf("ciphertext contains the plaintext")
		}
		got, err := kr.Open(ct, aad)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if !bytes.Equal(got, pt) {
			t.Errorf("Open = %q, want %q", got, pt)
		}
		if id, err := kr.KeyID(ct); err != nil || id != "k1" {
			t.Errorf("KeyID = %q, %v; want k1", id, err)
		}
	}
}

func TestSealUsesFreshNonces(t *testing.T) {
	kr := mustParse(t, "k1:"+hexA)
	a, _ := kr.Seal([]byte("same"), nil)
	b, _ := kr.Seal([]byte("same"), nil)
	if bytes.Equal(a, b) {
		t.Error("two seals of the same plaintext are identical")
	}
}

func TestOpenFailures(t *testing.T) {
	kr := mustParse(t, "k1:"+hexA)
	aad := []byte("monitor:m_1:auth")
	ct, err := kr.Seal([]byte("hunter2"), aad)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		c := bytes.Clone(ct)
		c[i] ^= 0x01
		return c
	}
	other := mustParse(t, "k9:"+hexB)
	fromOther, _ := other.Seal([]byte("hunter2"), aad)
	sameIDOtherKey := mustParse(t, "k1:"+hexB)
	fromImpostor, _ := sameIDOtherKey.Seal([]byte("hunter2"), aad)

	tests := []struct {
		name string
		ct   []byte
		aad  []byte
	}{
		{"wrong aad", ct, []byte("monitor:m_2:auth")},
		{"missing aad", ct, nil},
		{"flipped last byte", flip(len(ct) - 1), aad},
		{"flipped nonce byte", flip(5), aad},
		{"flipped key id", flip(2), aad},
		{"flipped version", flip(0), aad},
		{"truncated", ct[:len(ct)-1], aad},
		{"header only", ct[:4], aad},
		{"empty", nil, aad},
		{"appended byte", append(bytes.Clone(ct), 0), aad},
		{"unknown key id", fromOther, aad},
		{"same id, different key", fromImpostor, aad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt, err := kr.Open(tt.ct, tt.aad)
			if err == nil {
				t.Fatalf("Open succeeded with %q", pt)
			}
			if !errors.Is(err, ErrUndecryptable) {
				t.Errorf("error %v does not wrap ErrUndecryptable", err)
			}
		})
	}
}

func TestUnknownKeyIDNamedInError(t *testing.T) {
	old := mustParse(t, "k0:"+hexB)
	ct, _ := old.Seal([]byte("x"), nil)
	_, err := mustParse(t, "k1:"+hexA).Open(ct, nil)
	if err == nil || !strings.Contains(err.Error(), `"k0"`) {
		t.Errorf("Open error = %v; want it to name key k0", err)
	}
}

func TestRotation(t *testing.T) {
	oldRing := mustParse(t, "k1:"+hexA)
	aad := []byte("channel:c_1:secret")
	oldCT, err := oldRing.Seal([]byte("webhook-secret"), aad)
	if err != nil {
		t.Fatal(err)
	}
	if oldRing.NeedsReseal(oldCT) {
		t.Error("NeedsReseal true under the ring that sealed it")
	}

	newRing := mustParse(t, "k2:"+hexB+", k1:"+hexA)
	if got := newRing.PrimaryID(); got != "k2" {
		t.Errorf("PrimaryID = %q, want k2", got)
	}
	if got := fmt.Sprint(newRing.IDs()); got != "[k2 k1]" {
		t.Errorf("IDs = %s, want [k2 k1]", got)
	}
	pt, err := newRing.Open(oldCT, aad)
	if err != nil || string(pt) != "webhook-secret" {
		t.Fatalf("Open old ciphertext under rotated ring = %q, %v", pt, err)
	}
	if !newRing.NeedsReseal(oldCT) {
		t.Error("NeedsReseal false for a ciphertext under the old key")
	}

	newCT, err := newRing.Seal(pt, aad)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := newRing.KeyID(newCT); id != "k2" {
		t.Errorf("new seal under %q, want k2", id)
	}
	if newRing.NeedsReseal(newCT) {
		t.Error("NeedsReseal true for a fresh seal")
	}
	if _, err := oldRing.Open(newCT, aad); !errors.Is(err, ErrUndecryptable) {
		t.Errorf("old ring opened a k2 ciphertext: %v", err)
	}
	if !newRing.NeedsReseal([]byte("garbage")) {
		t.Error("NeedsReseal false for a malformed ciphertext")
	}
}

func TestParseKeyringErrors(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{
		{"empty", "", "empty"},
		{"blank", "  \n", "empty"},
		{"empty entry", "k1:" + hexA + ",", "entry 2: empty"},
		{"no colon", hexA, "missing ':'"},
		{"bad hex", "k1:" + strings.Repeat("zz", 32), "not valid hex"},
		{"one bad hex char", "k1:" + hexA[:63] + "g", "not valid hex"},
		{"short key", "k1:" + hexA[:62], "want 64 hex characters"},
		{"long key", "k1:" + hexA + "00", "want 64 hex characters"},
		{"duplicate id", "k1:" + hexA + ",k1:" + hexB, `duplicate key id "k1"`},
		{"empty id", ":" + hexA, "invalid key id"},
		{"upper-case id", "K1:" + hexA, "invalid key id"},
		{"id too long", strings.Repeat("k", 17) + ":" + hexA, "invalid key id"},
		{"key and id swapped", hexA + ":k1", "invalid key id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kr, err := ParseKeyring(tt.spec)
			if err == nil {
				t.Fatalf("ParseKeyring succeeded: %v", kr)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not mention %q", msg, tt.want)
			}
			for _, h := range []string{hexA, hexB, hexA[:16], hexB[:16], "zzzz"} {
				if strings.Contains(msg, h) {
					t.Errorf("error %q leaks key material %q", msg, h)
				}
			}
		})
	}
}

func TestParseKeyringAccepts(t *testing.T) {
	for _, spec := range []string{
		"k1:" + hexA,
		" k2:" + hexB + " , k1:" + strings.ToUpper(hexA) + "\n",
		"2026-01_a:" + hexA,
		"abcdefghijklmnop:" + hexA, // 16 characters
	} {
		if _, err := ParseKeyring(spec); err != nil {
			t.Errorf("ParseKeyring(%.10q...): %v", spec, err)
		}
	}
}

func TestKeyringFormattingHidesKeys(t *testing.T) {
	kr := mustParse(t, "k2:"+hexB+",k1:"+hexA)
	want := "Keyring{primary=k2, keys=[k2 k1]}"
	if got := kr.String(); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	type config struct {
		Keys    *Keyring
		KeysVal Keyring
		keys    *Keyring
		keysVal Keyring
	}
	cfg := config{kr, *kr, kr, *kr}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		for _, arg := range []any{kr, *kr, cfg, &cfg} {
			out := fmt.Sprintf(verb, arg)
			for _, h := range []string{hexA, hexB, hexA[:16], hexB[:16]} {
				if strings.Contains(strings.ToLower(out), h) {
					t.Errorf("Sprintf(%s, %T) leaks key material: %s", verb, arg, out)
				}
			}
		}
	}
	if got := fmt.Sprintf("%+v", kr); got != want {
		t.Errorf("%%+v = %q, want %q", got, want)
	}
	if got := fmt.Sprintf("%#v", kr); got != want {
		t.Errorf("%%#v = %q, want %q", got, want)
	}
}

func TestGenerateKeySpec(t *testing.T) {
	spec, err := GenerateKeySpec("k3")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(spec, "k3:") || len(spec) != 3+64 {
		t.Errorf("GenerateKeySpec = %d chars starting %.3q; want k3:<64 hex>", len(spec), spec)
	}
	kr := mustParse(t, spec+",k1:"+hexA)
	if kr.PrimaryID() != "k3" {
		t.Errorf("PrimaryID = %q", kr.PrimaryID())
	}
	other, _ := GenerateKeySpec("k3")
	if other == spec {
		t.Error("two generated keys are equal")
	}
	if _, err := GenerateKeySpec("Bad Id"); err == nil {
		t.Error("GenerateKeySpec accepted an invalid id")
	}
}

func TestEmptyKeyringSeal(t *testing.T) {
	var kr *Keyring
	if _, err := kr.Seal([]byte("x"), nil); err == nil {
		t.Error("Seal on a nil keyring succeeded")
	}
	if _, err := (&Keyring{}).Seal([]byte("x"), nil); err == nil {
		t.Error("Seal on a zero keyring succeeded")
	}
}

func BenchmarkSeal(b *testing.B) {
	kr := mustParse(b, "k1:"+hexA)
	pt := bytes.Repeat([]byte("s"), 256)
	aad := []byte("monitor:m_1:auth")
	b.SetBytes(int64(len(pt)))
	for b.Loop() {
		if _, err := kr.Seal(pt, aad); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	kr := mustParse(b, "k1:"+hexA)
	pt := bytes.Repeat([]byte("s"), 256)
	aad := []byte("monitor:m_1:auth")
	ct, err := kr.Seal(pt, aad)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(pt)))
	for b.Loop() {
		if _, err := kr.Open(ct, aad); err != nil {
			b.Fatal(err)
		}
	}
}
