// Package secrets seals credentials at rest under a keyring of AES-256-GCM
// keys and hashes user passwords with argon2id.
//
// Every ciphertext names the key that sealed it, so a key is rotated by
// putting a new one first in TOCSIN_SECRET_KEYS: new seals use it, old
// ciphertexts still open under the old key until they are re-sealed.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrUndecryptable is wrapped by every error from Open and KeyID: the
// ciphertext is malformed, names a key the ring lacks, was tampered with, or
// was sealed for other associated data.
var ErrUndecryptable = errors.New("secrets: undecryptable ciphertext")

const (
	keySize     = 32 // AES-256
	maxKeyIDLen = 16

	// Ciphertext layout: version, len(key id), key id, then the output of a
	// random-nonce GCM (nonce ‖ sealed ‖ tag). The header is authenticated
	// too, as a prefix of the associated data.
	formatV1 byte = 1
)

// Keyring holds the keys that seal and open secrets. The first key seals;
// every key opens. A Keyring is safe for concurrent use and never prints
// its key material.
type Keyring struct {
	primary string
	ids     []string // in spec order, primary first
	aeads   map[string]cipher.AEAD
}

// ParseKeyring parses a TOCSIN_SECRET_KEYS value such as
// "k2:<64 hex chars>,k1:<64 hex chars>". Errors never quote key material.
func ParseKeyring(spec string) (*Keyring, error) {
	kr, err := parseKeyring(spec)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	return kr, nil
}

func parseKeyring(spec string) (*Keyring, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, errors.New("key spec is empty; want id:<64 hex chars>[,id:<64 hex chars>...]")
	}
	kr := &Keyring{aeads: make(map[string]cipher.AEAD)}
	for i, entry := range strings.Split(spec, ",") {
		id, aead, err := parseEntry(strings.TrimSpace(entry))
		if err != nil {
			return nil, fmt.Errorf("key spec entry %d: %w", i+1, err)
		}
		if _, dup := kr.aeads[id]; dup {
			return nil, fmt.Errorf("key spec entry %d: duplicate key id %q", i+1, id)
		}
		kr.ids = append(kr.ids, id)
		kr.aeads[id] = aead
	}
	kr.primary = kr.ids[0]
	return kr, nil
}

// parseEntry parses one "id:hex" entry. Its errors quote neither the hex nor
// an invalid id, which may well be key material pasted in the wrong place.
func parseEntry(entry string) (string, cipher.AEAD, error) {
	if entry == "" {
		return "", nil, errors.New("empty entry")
	}
	id, keyHex, ok := strings.Cut(entry, ":")
	if !ok {
		return "", nil, errors.New("missing ':' between key id and key")
	}
	if err := validateKeyID(id); err != nil {
		return "", nil, err
	}
	if len(keyHex) != 2*keySize {
		return "", nil, fmt.Errorf("key %q: want %d hex characters (a 256-bit key), got %d characters", id, 2*keySize, len(keyHex))
	}
	key, err := hex.DecodeString(keyHex)
	if err != nil {
		// hex's error quotes the offending character; ours does not.
		return "", nil, fmt.Errorf("key %q: not valid hexadecimal", id)
	}
	defer clear(key)
	aead, err := newAEAD(key)
	if err != nil {
		return "", nil, fmt.Errorf("key %q: %w", id, err)
	}
	return id, aead, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCMWithRandomNonce(block)
}

// validateKeyID checks that id is 1–16 characters of [a-z0-9_-]. Its error
// does not quote id.
func validateKeyID(id string) error {
	if id == "" || len(id) > maxKeyIDLen {
		return fmt.Errorf("invalid key id of length %d: want 1-%d characters of [a-z0-9_-]", len(id), maxKeyIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("invalid key id: want 1-%d characters of [a-z0-9_-]", maxKeyIDLen)
		}
	}
	return nil
}

// GenerateKeySpec returns a new "id:<64 hex chars>" entry holding a fresh
// random 256-bit key, ready to be put first in TOCSIN_SECRET_KEYS.
func GenerateKeySpec(id string) (string, error) {
	if err := validateKeyID(id); err != nil {
		return "", fmt.Errorf("secrets: %w", err)
	}
	key := make([]byte, keySize)
	rand.Read(key) // never fails since Go 1.24
	defer clear(key)
	return id + ":" + hex.EncodeToString(key), nil
}

// PrimaryID returns the id of the key that seals.
func (kr *Keyring) PrimaryID() string { return kr.primary }

// IDs returns the key ids, primary first.
func (kr *Keyring) IDs() []string { return append([]string(nil), kr.ids...) }

// Seal encrypts plaintext under the primary key. aad binds the ciphertext to
// its context (say, "monitor:<id>:auth"), so it cannot be moved to another
// row; Open must be given the same aad.
func (kr *Keyring) Seal(plaintext, aad []byte) ([]byte, error) {
	if kr == nil || kr.primary == "" {
		return nil, errors.New("secrets: Seal on an empty keyring")
	}
	aead := kr.aeads[kr.primary]
	header := make([]byte, 0, 2+len(kr.primary)+aead.Overhead()+len(plaintext))
	header = append(header, formatV1, byte(len(kr.primary)))
	header = append(header, kr.primary...)
	return aead.Seal(header, nil, plaintext, associatedData(header, aad)), nil
}

// Open decrypts a ciphertext from Seal with the key it names. Every failure
// wraps ErrUndecryptable.
func (kr *Keyring) Open(ciphertext, aad []byte) ([]byte, error) {
	id, body, err := splitHeader(ciphertext)
	if err != nil {
		return nil, err
	}
	var aead cipher.AEAD
	if kr != nil {
		aead = kr.aeads[id]
	}
	if aead == nil {
		return nil, fmt.Errorf("%w: sealed under key %q, which is not in the keyring", ErrUndecryptable, id)
	}
	header := ciphertext[:len(ciphertext)-len(body)]
	plaintext, err := aead.Open(nil, nil, body, associatedData(header, aad))
	if err != nil {
		return nil, fmt.Errorf("%w: authentication failed under key %q (tampered, or sealed for other associated data)", ErrUndecryptable, id)
	}
	return plaintext, nil
}

// KeyID returns the id of the key that sealed ciphertext, without opening it.
func (kr *Keyring) KeyID(ciphertext []byte) (string, error) {
	id, _, err := splitHeader(ciphertext)
	return id, err
}

// NeedsReseal reports whether ciphertext is not sealed under the primary key,
// so a re-encryption pass should Open and Seal it again. A malformed
// ciphertext needs it too; Open then says what is wrong.
func (kr *Keyring) NeedsReseal(ciphertext []byte) bool {
	id, err := kr.KeyID(ciphertext)
	return err != nil || id != kr.PrimaryID()
}

// splitHeader returns the key id named by ciphertext and the GCM output
// after the header.
func splitHeader(ciphertext []byte) (id string, body []byte, err error) {
	if len(ciphertext) < 2 {
		return "", nil, fmt.Errorf("%w: too short", ErrUndecryptable)
	}
	if ciphertext[0] != formatV1 {
		return "", nil, fmt.Errorf("%w: unknown format version %d", ErrUndecryptable, ciphertext[0])
	}
	n := int(ciphertext[1])
	if len(ciphertext) < 2+n {
		return "", nil, fmt.Errorf("%w: truncated key id", ErrUndecryptable)
	}
	id = string(ciphertext[2 : 2+n])
	if err := validateKeyID(id); err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrUndecryptable, err)
	}
	return id, ciphertext[2+n:], nil
}

// associatedData authenticates the header with the caller's aad. The header
// is self-delimiting, so the concatenation is unambiguous.
func associatedData(header, aad []byte) []byte {
	ad := make([]byte, 0, len(header)+len(aad))
	return append(append(ad, header...), aad...)
}

// String, GoString and Format have value receivers so that a Keyring printed
// by value or by pointer, with any verb, shows only its key ids.

// String describes the keyring without key material.
func (kr Keyring) String() string {
	return fmt.Sprintf("Keyring{primary=%s, keys=[%s]}", kr.primary, strings.Join(kr.ids, " "))
}

// GoString is String, so %#v cannot dump the keys either.
func (kr Keyring) GoString() string { return kr.String() }

// Format prints String for every verb, so %x, %+v and friends are safe too.
func (kr Keyring) Format(f fmt.State, _ rune) { fmt.Fprint(f, kr.String()) }
