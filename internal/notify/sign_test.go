package notify_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/notify"
)

// A signature is t=<unix>,v1=<hex HMAC-SHA256 over "<t>.<body>"> per
// secret; a receiver with either secret accepts it, within the tolerance,
// and refuses a changed body, another secret or an old timestamp.
func TestSignVerify(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"id":"evt_1","type":"incident.opened"}`)
	newS, oldS := notify.NewSigningSecret(), notify.NewSigningSecret()
	h := notify.Sign(at, body, []string{newS, oldS})

	// Worked out by hand, as a receiver in any language would.
	m := hmac.New(sha256.New, []byte(newS))
	m.Write([]byte("1795608000." + string(body)))
	if want := "t=1795608000,v1=" + hex.EncodeToString(m.Sum(nil)) + ","; !strings.HasPrefix(h, want) || strings.Count(h, "v1=") != 2 {
		t.Fatalf("header %s; want it to begin %s and carry two signatures", h, want)
	}
	for _, s := range []string{newS, oldS} {
		if err := notify.Verify(h, body, s, at.Add(time.Minute), notify.DefaultTolerance); err != nil {
			t.Errorf("a receiver's secret: %v", err)
		}
	}
	for name, err := range map[string]error{
		"another secret": notify.Verify(h, body, notify.NewSigningSecret(), at, notify.DefaultTolerance),
		"a changed body": notify.Verify(h, append(body, ' '), newS, at, notify.DefaultTolerance),
		"no signature":   notify.Verify("t=1795608000", body, newS, at, notify.DefaultTolerance),
		"garbage":        notify.Verify("v1=zz", body, newS, at, notify.DefaultTolerance),
	} {
		if !errors.Is(err, notify.ErrNoSignature) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := notify.Verify(h, body, newS, at.Add(6*time.Minute), notify.DefaultTolerance); !errors.Is(err, notify.ErrTimestamp) {
		t.Errorf("six minutes late: %v", err)
	}
	if err := notify.Verify(h, body, newS, at.Add(-6*time.Minute), notify.DefaultTolerance); !errors.Is(err, notify.ErrTimestamp) {
		t.Errorf("six minutes early: %v", err)
	}
}
