// Package clean makes text from outside safe to store and show: valid
// UTF-8, no NUL, bounded. Every string that enters from a request, a probe
// answer or a receiver passes through it once, where it enters, so the
// database never sees bytes it would refuse (PostgreSQL rejects NUL and
// invalid UTF-8 in text columns; SQLite stores them and hands them back).
package clean

import (
	"strings"
	"unicode/utf8"
)

// Replacement stands in for every byte that is not valid UTF-8 and for NUL.
const Replacement = "\uFFFD"

// Valid reports whether s is valid UTF-8 without NUL: what a text column
// on either engine takes as it is.
func Valid(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// Text returns s as valid UTF-8 without NUL (each invalid sequence and each
// NUL becomes U+FFFD), cut to at most max bytes on a rune boundary; max ≤ 0
// means no bound. Valid input within the bound is returned as it is, without
// allocating.
func Text(s string, max int) string {
	if !Valid(s) {
		s = strings.ReplaceAll(strings.ToValidUTF8(s, Replacement), "\x00", Replacement)
	}
	return Truncate(s, max)
}

// Truncate cuts valid UTF-8 to at most max bytes without splitting a rune;
// max ≤ 0 means no bound.
func Truncate(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}

// Shorten is Text that marks a cut with "…" (within max bytes).
func Shorten(s string, max int) string {
	s = Text(s, 0)
	if max <= 0 || len(s) <= max {
		return s
	}
	return Truncate(s, max-len("…")) + "…"
}
