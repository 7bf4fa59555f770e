// Package ids makes prefixed, sortable identifiers such as mon_01JD…: a
// 48-bit millisecond timestamp and 80 random bits in Crockford base32, so ids
// sort by creation time and never collide across nodes.
package ids

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"sync"
	"time"
)

// Prefixes of every resource id (DESIGN §2).
const (
	Monitor             = "mon"
	Heartbeat           = "hb"
	Incident            = "inc"
	StatusPage          = "sp"
	StatusPageComponent = "spc"
	Channel             = "nch"
	Event               = "evt"
	Delivery            = "dlv"
	Key                 = "key"
	Workspace           = "ws"
	User                = "usr"
	Request             = "req"
	Maintenance         = "mw"
	Observation         = "obs"
	Session             = "ses"
	Invite              = "inv"
	encodedBytes        = 26
)

const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var (
	mu       sync.Mutex
	lastMS   uint64
	lastRand [10]byte
)

// New returns prefix_ followed by 26 characters. Within one process, ids made
// in the same millisecond still increase (the random part is incremented).
func New(prefix string, now time.Time) string {
	var b [16]byte
	// Clamp to the 48 bits an id holds: a zero or absurd time must not push
	// every later id of the process out of order.
	ms := uint64(min(max(now.UnixMilli(), 0), 1<<48-1))
	mu.Lock()
	if ms <= lastMS {
		ms = lastMS
		increment(&lastRand)
	} else {
		lastMS = ms
		_, _ = rand.Read(lastRand[:])
	}
	copy(b[6:], lastRand[:])
	mu.Unlock()
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], ms)
	copy(b[:6], t[2:])
	return prefix + "_" + encode(b)
}

func increment(r *[10]byte) {
	for i := len(r) - 1; i >= 0; i-- {
		r[i]++
		if r[i] != 0 {
			return
		}
	}
}

// encode writes 128 bits as 26 base32 characters, most significant first.
func encode(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [encodedBytes]byte
	for i := encodedBytes - 1; i >= 0; i-- {
		out[i] = alphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// Valid reports whether s looks like an id with the given prefix.
func Valid(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix+"_")
	if !ok || len(rest) != encodedBytes || rest[0] > '7' { // 26 chars hold 130 bits; ids use 128
		return false
	}
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(alphabet, rest[i]) < 0 {
			return false
		}
	}
	return true
}
