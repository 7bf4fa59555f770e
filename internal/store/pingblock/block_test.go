package pingblock

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/heartbeat"
)

// The hand-written encoder of a block's pings agrees with encoding/json:
// what it writes is valid JSON, and reads back as the ping it was.
func TestPingJSONRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 25, 3, 4, 5, 678901000, time.UTC)
	for _, p := range []heartbeat.PingRecord{
		{ID: 1, At: at, Signal: heartbeat.SignalSuccess, ExitCode: -1, Duration: -1, Method: "GET", Client: "127.0.0.1"},
		{ID: 1 << 40, At: at, Signal: heartbeat.SignalFail, ExitCode: 255, RunID: "run \"7\"\\", Duration: 1500 * time.Millisecond,
			Method: "POST", Client: "::1", UserAgent: "curl/8 \u00e9\u4e16\U0001F600", Key: "k\x00\x1f\t\n\r", Body: []byte("line 1\nline 2\t\"ok\"\n"),
			Truncated: true, Ignored: true},
		{ID: 7, At: at, Signal: heartbeat.SignalStart, ExitCode: 0, Duration: 0, Method: "GET", Client: "10.0.0.1",
			Body: []byte{0xff, 0xfe, 0x00, 'a'}},
		{ID: 8, At: at, Signal: heartbeat.SignalSuccess, ExitCode: -1, Duration: -1, Method: "GET", Client: "c", Body: []byte{}},
	} {
		b := appendPing(nil, &p)
		if !json.Valid(b) {
			t.Fatalf("invalid JSON for %+v: %s", p, b)
		}
		got, err := Decode("[" + string(b) + "]")
		if err != nil {
			t.Fatal(err)
		}
		want := p
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("round trip of %+v\n gave %+v\n from %s", want, got, b)
		}
	}
}

// Invalid UTF-8 in a string field becomes U+FFFD, as encoding/json makes
// it; everything else is kept exactly.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\", "\x00\x1f\x7f", "\xff\xfe", "é世😀", "a\xe2\x82"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q encoded as %s: %v", s, b, err)
		}
		want, _ := json.Marshal(s)
		var std string
		_ = json.Unmarshal(want, &std)
		if got != std {
			t.Fatalf("%q: got %q, encoding/json gives %q", s, got, std)
		}
		if utf8.ValidString(s) && got != s {
			t.Fatalf("valid %q came back as %q", s, got)
		}
	})
}
