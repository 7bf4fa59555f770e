package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSpan(t *testing.T) {
	now := time.Date(2026, 11, 26, 3, 0, 0, 123456789, time.FixedZone("X", 3600))
	nowUTC := time.Date(2026, 11, 26, 2, 0, 0, 123456000, time.UTC)
	p := func(t time.Time) *time.Time { return &t }

	for name, w := range Windows {
		f, to, err := Span(name, nil, nil, now)
		if err != nil || !to.Equal(nowUTC) || to.Sub(f) != w || to.Location() != time.UTC || f.Location() != time.UTC {
			t.Errorf("window %s: %v %v %v", name, f, to, err)
		}
	}

	from := nowUTC.Add(-48 * time.Hour)
	f, to, err := Span("", p(from.Add(999)), p(nowUTC.Add(-time.Hour)), now)
	if err != nil || !f.Equal(from) || !to.Equal(nowUTC.Add(-time.Hour)) {
		t.Errorf("from/to: %v %v %v", f, to, err)
	}
	// A to in the future is clamped to now.
	f, to, err = Span("", p(from), p(nowUTC.Add(time.Hour)), now)
	if err != nil || !f.Equal(from) || !to.Equal(nowUTC) {
		t.Errorf("clamp: %v %v %v", f, to, err)
	}
	// Exactly MaxSpan is accepted.
	if _, _, err := Span("", p(nowUTC.Add(-MaxSpan)), p(nowUTC), now); err != nil {
		t.Errorf("MaxSpan: %v", err)
	}

	for _, c := range []struct {
		name     string
		window   string
		from, to *time.Time
		field    string
		says     string
	}{
		{"nothing", "", nil, nil, "window", "1h, 24h"},
		{"unknown window", "2d", nil, nil, "window", "365d"},
		{"window and from", "24h", p(from), nil, "window", "not both"},
		{"window and to", "24h", nil, p(from), "window", "not both"},
		{"from alone", "", p(from), nil, "to", "required"},
		{"to alone", "", nil, p(from), "from", "required"},
		{"equal", "", p(from), p(from), "to", "after from"},
		{"inverted", "", p(from), p(from.Add(-time.Hour)), "to", "after from"},
		{"equal after truncation", "", p(from.Add(1)), p(from.Add(999)), "to", "after from"},
		{"from in the future", "", p(nowUTC.Add(time.Hour)), p(nowUTC.Add(2 * time.Hour)), "from", "before now"},
		{"from at now", "", p(nowUTC), p(nowUTC.Add(2 * time.Hour)), "from", "before now"},
		{"too long", "", p(nowUTC.Add(-MaxSpan - time.Microsecond)), p(nowUTC), "from", "400 days"},
	} {
		_, _, err := Span(c.window, c.from, c.to, now)
		var se *SpanError
		if !errors.As(err, &se) || se.Field != c.field || !strings.Contains(se.Message, c.says) {
			t.Errorf("%s: got %v, want a SpanError on %s saying %q", c.name, err, c.field, c.says)
		}
	}
}
