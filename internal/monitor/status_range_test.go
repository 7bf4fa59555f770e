package monitor

import (
	"strings"
	"testing"
)

func TestParseStatusRange(t *testing.T) {
	for _, c := range []struct {
		text    string
		want    StatusRange
		suggest string // in the message; "" when text parses
	}{
		{"204", StatusRange{204, 204}, ""},
		{"200-299", StatusRange{200, 299}, ""},
		{"2xx", StatusRange{}, `"200-299"`},
		{"5XX", StatusRange{}, `"500-599"`},
		{"abc", StatusRange{}, `"200-299"`},
		{"", StatusRange{}, "204"},
		{"200-", StatusRange{}, "204"},
	} {
		got, msg := ParseStatusRange(c.text)
		if got != c.want || (c.suggest == "") != (msg == "") || !strings.Contains(msg, c.suggest) {
			t.Errorf("%q: %v %q", c.text, got, msg)
		}
	}
}
