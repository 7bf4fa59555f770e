package heartbeat

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/clean"
)

// What a ping carries is outside text, and a ping is never refused for its
// bytes: a success refused would turn into a false "late" alert. So every
// text of an arrival is made storable on either engine before it is
// queued (Arrival.Clean), and ?key= and ?rid=, which are compared, keep
// their identity through it (Label).

// Bounds on what a ping carries.
const (
	// MaxLabel bounds ?key= and ?rid= as sent; the ping URL refuses
	// longer ones (400), which a client sees at its first try.
	MaxLabel = 128
	// MaxUserAgent is how much of the User-Agent header is kept.
	MaxUserAgent = 256
	// maxMethod and maxClient bound what the server itself fills in.
	maxMethod = 16
	maxClient = 128
)

// labelDigest starts the stored form of a key or run id that cannot be
// kept as it is.
const labelDigest = "sha512:"

// Label is a ping's ?key= or ?rid= as it is stored and compared: as sent
// when that is valid UTF-8 without NUL and at most MaxLabel bytes, which
// is what every ordinary client sends; otherwise "sha512:" and the hex
// SHA-512 of its bytes, 135 characters. A label kept as sent has at most
// MaxLabel bytes, so it never takes a digest's form, and two different
// raw values never share a label: a retry is replayed only when it
// carries the very key of the first ping, and two runs are paired only by
// the very same id. (Cleaning by replacement would make %ff and %fe one
// key, and the second ping would be dropped as a retry of the first.) A
// label is its own label, so cleaning twice changes nothing.
func Label(raw string) string {
	if len(raw) <= MaxLabel && clean.Valid(raw) || isDigest(raw) {
		return raw
	}
	sum := sha512.Sum512([]byte(raw))
	return labelDigest + hex.EncodeToString(sum[:])
}

// isDigest reports whether s has the form of a digest label. No key a
// ping may carry has it: it is longer than MaxLabel.
func isDigest(s string) bool {
	hexPart, ok := strings.CutPrefix(s, labelDigest)
	if !ok || len(hexPart) != 2*sha512.Size {
		return false
	}
	for i := 0; i < len(hexPart); i++ {
		if c := hexPart[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Clean returns the arrival with every text it carries storable: key and
// run id as their Label, the user agent, method and client valid UTF-8
// without NUL and bounded, and the body valid UTF-8 without NUL within
// MaxPingBody (Truncated if that cut it further). A clean arrival is
// returned as it is, without copying its body.
func (in Arrival) Clean() Arrival {
	in.Key, in.Ping.RunID = Label(in.Key), Label(in.Ping.RunID)
	in.UserAgent = clean.Text(in.UserAgent, MaxUserAgent)
	in.Method, in.Client = clean.Text(in.Method, maxMethod), clean.Text(in.Client, maxClient)
	if in.Body != nil && (len(in.Body) > MaxPingBody || !validBytes(in.Body)) {
		text := clean.Text(string(in.Body), 0)
		if len(text) > MaxPingBody {
			text, in.Truncated = clean.Truncate(text, MaxPingBody), true
		}
		in.Body = []byte(text)
	}
	return in
}

// validBytes is clean.Valid for a body, without copying it into a string.
func validBytes(b []byte) bool {
	return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0
}
