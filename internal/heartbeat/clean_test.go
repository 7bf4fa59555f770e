package heartbeat

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/clean"
)

// Labels: clean keys stay as sent; any other becomes a digest no clean key
// can equal; different raw keys never share a label.
func TestLabel(t *testing.T) {
	long := strings.Repeat("k", MaxLabel)
	for _, raw := range []string{"", "run-42", "backup-2026-01-05", "é", "\uFFFD", long, "sha512:" + strings.Repeat("0", 64)} {
		if got := Label(raw); got != raw {
			t.Errorf("Label(%q) = %q, want it as sent", raw, got)
		}
	}
	raws := []string{"\xff", "\xfe", "\x00", "a\x00", "\xc3\x28", "\xc3", "\uFFFD\xff", long + "k", long + "l", "\xff\xfe", "\xfe\xff"}
	seen := map[string]string{}
	for _, raw := range raws {
		got := Label(raw)
		if !clean.Valid(got) || len(got) <= MaxLabel || !strings.HasPrefix(got, labelDigest) {
			t.Errorf("Label(%q) = %q: want a valid digest longer than %d bytes", raw, got, MaxLabel)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("Label(%q) = Label(%q) = %q", raw, other, got)
		}
		seen[got] = raw
		if Label(raw) != got {
			t.Errorf("Label(%q) is not stable", raw)
		}
		if Label(got) != got {
			t.Errorf("a label is not its own label: %q", got)
		}
	}
}

func TestArrivalClean(t *testing.T) {
	in := Arrival{Ping: Ping{RunID: "r\xff"}, Method: "GET", Client: "127.0.0.1", UserAgent: "curl\x00/8\xff" + strings.Repeat("a", 300),
		Key: "%ff", Body: []byte("ok\x00\xff")}
	out := in.Clean()
	if out.Key != "%ff" || out.Ping.RunID != Label("r\xff") || out.Method != "GET" || out.Client != "127.0.0.1" {
		t.Errorf("cleaned: %+v", out)
	}
	if !clean.Valid(out.UserAgent) || len(out.UserAgent) > MaxUserAgent || !strings.HasPrefix(out.UserAgent, "curl\uFFFD/8\uFFFD") {
		t.Errorf("user agent %q", out.UserAgent)
	}
	if string(out.Body) != "ok\uFFFD\uFFFD" || out.Truncated {
		t.Errorf("body %q, truncated %v", out.Body, out.Truncated)
	}

	// Invalid bytes grow when replaced: the body stays within the bound,
	// and says it was cut.
	body := []byte(strings.Repeat("\xffa", MaxPingBody/2))
	out = Arrival{Body: body}.Clean()
	if !clean.Valid(string(out.Body)) || len(out.Body) > MaxPingBody || !out.Truncated {
		t.Errorf("a body of %d invalid bytes: %d bytes kept, truncated %v", len(body), len(out.Body), out.Truncated)
	}
	// A body cut at the bound in the middle of a rune keeps what is whole.
	body = []byte(strings.Repeat("a", MaxPingBody-1) + "é")[:MaxPingBody]
	out = Arrival{Body: body, Truncated: true}.Clean()
	if len(out.Body) > MaxPingBody || !clean.Valid(string(out.Body)) || !out.Truncated {
		t.Errorf("a body cut in a rune: %d bytes, truncated %v", len(out.Body), out.Truncated)
	}

	// A clean arrival keeps its body, not a copy.
	clean := Arrival{Body: []byte("fine"), UserAgent: "curl/8"}
	if out := clean.Clean(); &out.Body[0] != &clean.Body[0] || out.Truncated {
		t.Error("a clean body was copied")
	}
}

// BenchmarkArrivalClean is what cleaning costs a ping on the path every
// ping takes: a typical clean arrival (checked, not copied), one with a
// 10 KiB log body, and a hostile one that must be rewritten.
func BenchmarkArrivalClean(b *testing.B) {
	typical := Arrival{Method: "POST", Client: "203.0.113.7", UserAgent: "curl/8.5.0", Key: "backup-2026-11-25",
		Ping: Ping{RunID: "5f0c6a3e-8d1b-4c3e-9a51-0d7b7c2e4f11"}, Body: []byte("backup done: 1.2 GiB in 42 s\n")}
	log := typical
	log.Body = bytes.Repeat([]byte("a line of a job's output, in plain ASCII\n"), 10<<10/41)
	hostile := typical
	hostile.Key, hostile.UserAgent, hostile.Body = "k\xff", "ua\x00", []byte("ok\x00\xff")
	for _, c := range []struct {
		name string
		in   Arrival
	}{{"typical", typical}, {"10KiB-body", log}, {"hostile", hostile}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.in.Clean()
			}
		})
	}
}
