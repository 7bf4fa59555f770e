package secrets

import (
	"regexp"
	"strings"
	"testing"
)

var phcPattern = regexp.MustCompile(`^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`)

func TestHashAndVerifyPassword(t *testing.T) {
	hash, err := HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if !phcPattern.MatchString(hash) {
		t.Errorf("hash %q is not the expected PHC form", hash)
	}
	if ok, err := VerifyPassword(hash, "correct horse battery staple"); err != nil || !ok {
		t.Errorf("right password: %v, %v", ok, err)
	}
	for _, wrong := range []string{"correct horse battery stapl", "Correct horse battery staple", ""} {
		if ok, err := VerifyPassword(hash, wrong); err != nil || ok {
			t.Errorf("wrong password %q: %v, %v", wrong, ok, err)
		}
	}
	other, _ := HashPassword("correct horse battery staple")
	if other == hash {
		t.Error("two hashes of one password are equal; salt not random")
	}
	if _, err := HashPassword(""); err == nil {
		t.Error("HashPassword accepted an empty password")
	}
}

// Vectors from the reference C implementation (libargon2's
// argon2id_hash_encoded), so this checks interoperability and PHC parsing,
// not just our own round trip. The second has stronger parameters than ours,
// as a future default might.
func TestVerifyPasswordReferenceVectors(t *testing.T) {
	const pw = "correct horse battery staple"
	for _, hash := range []string{
		"$argon2id$v=19$m=19456,t=2,p=1$dG9jc2luLXNhbHQtMDAwMQ$2YV7o/FENF233lc21fYEjlV8X1iLUqEYcJQODG+e6Ns",
		"$argon2id$v=19$m=32768,t=3,p=2$dG9jc2luLXNhbHQtMDAwMQ$yvU/AMfWodL/ahm8cBk8Cfu2s0CluSPTMy4oWR016D8",
	} {
		if ok, err := VerifyPassword(hash, pw); err != nil || !ok {
			t.Errorf("VerifyPassword(%.32s..., right) = %v, %v", hash, ok, err)
		}
		if ok, err := VerifyPassword(hash, pw+"!"); err != nil || ok {
			t.Errorf("VerifyPassword(%.32s..., wrong) = %v, %v", hash, ok, err)
		}
	}
}

func TestVerifyPasswordMalformed(t *testing.T) {
	good, _ := HashPassword("pw")
	parts := strings.Split(good, "$")
	with := func(i int, v string) string {
		p := append([]string(nil), parts...)
		p[i] = v
		return strings.Join(p, "$")
	}
	for name, hash := range map[string]string{
		"empty":            "",
		"plain text":       "pw",
		"bcrypt":           "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy",
		"argon2i":          with(1, "argon2i"),
		"old version":      with(2, "v=16"),
		"version suffix":   with(2, "v=19x"),
		"params reordered": with(3, "t=2,m=19456,p=1"),
		"zero time":        with(3, "m=19456,t=0,p=1"),
		"zero lanes":       with(3, "m=19456,t=2,p=0"),
		"too many lanes":   with(3, "m=19456,t=2,p=256"),
		"memory too small": with(3, "m=4,t=2,p=1"),
		"memory too large": with(3, "m=4194304,t=2,p=1"),
		"time too large":   with(3, "m=19456,t=1000,p=1"),
		"bad salt":         with(4, "!!!!"),
		"short salt":       with(4, "AAAA"),
		"padded hash":      with(5, parts[5]+"="),
		"short hash":       with(5, "AAAA"),
		"extra field":      good + "$x",
		"missing field":    strings.Join(parts[:5], "$"),
	} {
		t.Run(name, func(t *testing.T) {
			ok, err := VerifyPassword(hash, "pw")
			if err == nil {
				t.Fatalf("VerifyPassword = %v, nil; want an error", ok)
			}
			if ok {
				t.Error("malformed hash verified")
			}
			if len(hash) > 20 && strings.Contains(err.Error(), hash) {
				t.Errorf("error quotes the hash: %v", err)
			}
		})
	}
}

func TestGeneratePassword(t *testing.T) {
	shape := regexp.MustCompile(`^[` + passwordAlphabet + `]{5}(-[` + passwordAlphabet + `]{5}){3}$`)
	seen := make(map[string]bool)
	counts := make(map[rune]int)
	for range 2000 {
		pw := GeneratePassword()
		if !shape.MatchString(pw) {
			t.Fatalf("GeneratePassword = %q, want 4 dash-separated groups of 5 from %q", pw, passwordAlphabet)
		}
		if seen[pw] {
			t.Fatalf("GeneratePassword repeated %q", pw)
		}
		seen[pw] = true
		for _, r := range strings.ReplaceAll(pw, "-", "") {
			counts[r]++
		}
	}
	// 40,000 draws over 31 symbols: each expected ~1290 times. A symbol far
	// off that means a biased or truncated alphabet.
	if len(counts) != len(passwordAlphabet) {
		t.Errorf("saw %d distinct characters, want %d", len(counts), len(passwordAlphabet))
	}
	for r, n := range counts {
		if n < 1000 || n > 1600 {
			t.Errorf("character %q drawn %d times, want about 1290", r, n)
		}
	}
	if strings.ContainsAny(passwordAlphabet, "01ilo") {
		t.Error("alphabet holds ambiguous characters")
	}
}
