package secrets

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// argon2id parameters for new hashes: OWASP's minimum (19 MiB, 2 passes, one
// lane). Verification reads the parameters from each hash, so these can be
// raised without invalidating stored hashes.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonSaltLen   = 16
	argonKeyLen    = 32
)

// Bounds on parameters read from a stored hash, so a corrupt or hostile
// value cannot make a login allocate gigabytes or spin for minutes.
const (
	maxArgonMemoryKiB = 1 << 20 // 1 GiB
	maxArgonTime      = 64
	minArgonSaltLen   = 8
	minArgonKeyLen    = 16
	maxArgonKeyLen    = 1024
)

var b64 = base64.RawStdEncoding // PHC strings use unpadded standard base64

// HashPassword hashes pw with argon2id and a random salt, returning a PHC
// string: $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>.
func HashPassword(pw string) (string, error) {
	if pw == "" {
		return "", errors.New("secrets: refusing to hash an empty password")
	}
	salt := make([]byte, argonSaltLen)
	rand.Read(salt) // never fails since Go 1.24
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// VerifyPassword reports whether pw matches hash, a PHC string from
// HashPassword, using the parameters recorded in hash. A malformed hash is
// an error, not a mismatch.
func VerifyPassword(hash, pw string) (bool, error) {
	p, err := parsePHC(hash)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(pw), p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(got, p.key) == 1, nil
}

type argonHash struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

// parsePHC parses "$argon2id$v=19$m=<kib>,t=<passes>,p=<lanes>$<salt>$<key>".
// Its errors never quote the hash.
func parsePHC(s string) (argonHash, error) {
	var h argonHash
	fail := func(what string) (argonHash, error) {
		return argonHash{}, fmt.Errorf("secrets: malformed password hash: %s", what)
	}
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" {
		return fail("want $argon2id$v=19$m=..,t=..,p=..$salt$hash")
	}
	if parts[1] != "argon2id" {
		return fail("algorithm is not argon2id")
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || parts[2] != fmt.Sprintf("v=%d", version) {
		return fail("bad version field")
	}
	if version != argon2.Version {
		return fail(fmt.Sprintf("unsupported argon2 version %d", version))
	}
	var threads uint32
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.memory, &h.time, &threads); err != nil ||
		parts[3] != fmt.Sprintf("m=%d,t=%d,p=%d", h.memory, h.time, threads) {
		return fail("bad parameter field")
	}
	switch {
	case threads < 1 || threads > 255:
		return fail("parallelism out of range")
	case h.time < 1 || h.time > maxArgonTime:
		return fail("time cost out of range")
	case h.memory < 8*threads || h.memory > maxArgonMemoryKiB:
		return fail("memory cost out of range")
	}
	h.threads = uint8(threads)
	var err error
	if h.salt, err = b64.Strict().DecodeString(parts[4]); err != nil || len(h.salt) < minArgonSaltLen {
		return fail("bad salt")
	}
	if h.key, err = b64.Strict().DecodeString(parts[5]); err != nil || len(h.key) < minArgonKeyLen || len(h.key) > maxArgonKeyLen {
		return fail("bad hash")
	}
	return h, nil
}

// passwordAlphabet leaves out characters easily misread or mistyped:
// 0/o, 1/l/i, and upper case.
const passwordAlphabet = "23456789abcdefghjkmnpqrstuvwxyz"

const (
	passwordGroups    = 4
	passwordGroupSize = 5
)

// GeneratePassword returns a random one-time password such as
// "k7m2q-xw9ht-4ncvr-e8pja": 20 characters from a 31-character alphabet,
// about 99 bits of entropy, in dash-separated groups to ease typing.
func GeneratePassword() string {
	var sb strings.Builder
	buf := make([]byte, 64)
	n := 0
	for n < passwordGroups*passwordGroupSize {
		rand.Read(buf) // never fails since Go 1.24
		for _, b := range buf {
			// Rejection sampling keeps every character equally likely.
			if int(b) >= 256-256%len(passwordAlphabet) {
				continue
			}
			if n > 0 && n%passwordGroupSize == 0 {
				sb.WriteByte('-')
			}
			sb.WriteByte(passwordAlphabet[int(b)%len(passwordAlphabet)])
			n++
			if n == passwordGroups*passwordGroupSize {
				break
			}
		}
	}
	return sb.String()
}
