package clean

import (
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"ok", 0, "ok"},
		{"ok\x00\xff", 0, "ok\uFFFD\uFFFD"},
		{"\xc3\x28", 0, "\uFFFD("},
		{"héllo", 2, "h"},
		{"héllo", 3, "hé"},
		{"\x00", 1, ""},
		{"abc", -1, "abc"},
	} {
		got := Text(tc.in, tc.max)
		if got != tc.want {
			t.Errorf("Text(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
		if !Valid(got) {
			t.Errorf("Text(%q, %d) = %q is not valid", tc.in, tc.max, got)
		}
	}
}

func TestValid(t *testing.T) {
	for in, want := range map[string]bool{"": true, "a": true, "é": true, "a\x00": false, "\xff": false, "\xc3": false} {
		if Valid(in) != want {
			t.Errorf("Valid(%q) = %v", in, !want)
		}
	}
}

func TestShorten(t *testing.T) {
	if got := Shorten("abcdef", 5); got != "ab…" {
		t.Fatalf("Shorten = %q", got)
	}
	if got := Shorten("abc", 5); got != "abc" {
		t.Fatalf("Shorten = %q", got)
	}
}

func FuzzText(f *testing.F) {
	f.Add("ok\x00\xff", 5)
	f.Fuzz(func(t *testing.T, s string, max int) {
		got := Text(s, max)
		if !Valid(got) || !utf8.ValidString(got) {
			t.Fatalf("Text(%q, %d) = %q", s, max, got)
		}
		if max > 0 && len(got) > max {
			t.Fatalf("Text(%q, %d) = %q is too long", s, max, got)
		}
	})
}
