package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Webhook delivery headers (DESIGN §6).
const (
	HeaderSignature = "X-Service-Signature"
	HeaderTimestamp = "X-Service-Timestamp"
	HeaderDelivery  = "X-Service-Delivery"
	HeaderEvent     = "X-Service-Event"
)

// DefaultTolerance is how far a signature's time may be from a receiver's
// clock before Verify refuses it (a replayed request).
const DefaultTolerance = 5 * time.Minute

// Sign returns the X-Service-Signature value of body sent at t: t=<unix
// seconds>, then v1=<hex HMAC-SHA256 of "<t>.<body>"> for each secret (the
// current one first; during a rotation the previous one too). The key is
// the secret as shown, whsec_ and all.
func Sign(t time.Time, body []byte, secrets []string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(ts)
	for _, s := range secrets {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(mac(s, ts, body)))
	}
	return b.String()
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Errors of Verify.
var (
	ErrNoSignature = errors.New("no valid signature")
	ErrTimestamp   = errors.New("signature timestamp outside the tolerance")
)

// Verify checks an X-Service-Signature header against the raw body with
// the receiver's secret: one v1= must match, and t must be within
// tolerance of now. It is what docs/webhooks.md shows receivers.
func Verify(header string, body []byte, secret string, now time.Time, tolerance time.Duration) error {
	var (
		ts   string
		sigs [][]byte
	)
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrNoSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return ErrNoSignature
}
