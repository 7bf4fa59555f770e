package console_test

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/web/console"
)

// svgParts parses an SVG and returns its elements in order; it fails on
// anything that is not well-formed or breaks the rules every chart keeps:
// an image with a label, no style, no script, numbers that are numbers
// and coordinates inside the view box.
type svgElem struct {
	name  string
	attrs map[string]string
	text  string
}

func svgParts(t *testing.T, svg string) []svgElem {
	t.Helper()
	for _, bad := range []string{"NaN", "Inf", "style", "script", "<!--"} {
		if strings.Contains(svg, bad) {
			t.Errorf("SVG contains %q: %s", bad, svg)
		}
	}
	if regexp.MustCompile(`[0-9]e[+-]?[0-9]`).MatchString(svg) {
		t.Errorf("SVG writes a number with an exponent: %s", svg)
	}
	d := xml.NewDecoder(strings.NewReader(svg))
	d.Strict = true
	var out []svgElem
	var open []int
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v: %s", err, svg)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			e := svgElem{name: v.Name.Local, attrs: map[string]string{}}
			for _, a := range v.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			open = append(open, len(out)-1)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				out[open[len(open)-1]].text += string(v)
			}
		}
	}
	if len(out) == 0 || out[0].name != "svg" || out[0].attrs["role"] != "img" || strings.TrimSpace(out[0].attrs["aria-label"]) == "" {
		t.Fatalf("not an SVG image with a label: %s", svg)
	}
	var w, h float64
	if f := strings.Fields(out[0].attrs["viewBox"]); len(f) == 4 {
		w, _ = strconv.ParseFloat(f[2], 64)
		h, _ = strconv.ParseFloat(f[3], 64)
	}
	if w <= 0 || h <= 0 {
		t.Fatalf("view box %q", out[0].attrs["viewBox"])
	}
	numRE := regexp.MustCompile(`-?[0-9.]+`)
	for _, e := range out[1:] {
		for k, v := range e.attrs {
			var horizontal bool
			switch k {
			case "x", "x1", "x2", "cx", "width":
				horizontal = true
			case "y", "y1", "y2", "cy", "height":
			case "d":
				for i, n := range numRE.FindAllString(v, -1) {
					f, err := strconv.ParseFloat(n, 64)
					lim := map[bool]float64{true: w, false: h}[i%2 == 0]
					if err != nil || f < 0 || f > lim {
						t.Errorf("path coordinate %q outside the view box in %q", n, v)
					}
				}
				continue
			default:
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			lim := map[bool]float64{true: w, false: h}[horizontal]
			if err != nil || f < 0 || f > lim {
				t.Errorf("<%s %s=%q> outside the view box %vx%v", e.name, k, v, w, h)
			}
		}
	}
	return out
}

func count(parts []svgElem, name, class string) int {
	n := 0
	for _, e := range parts {
		if e.name == name && (class == "" || e.attrs["class"] == class) {
			n++
		}
	}
	return n
}

func hours(vals ...float64) []console.LatencyPoint {
	var out []console.LatencyPoint
	for i, v := range vals {
		start := at(-1, 10, 0).Add(time.Duration(i) * time.Hour)
		p := console.LatencyPoint{Start: start, End: start.Add(time.Hour)}
		if !math.IsNaN(v) || i%2 == 1 { // even NaN: no bucket figures; odd NaN: a NaN figure
			p.P50, p.P95 = f64(v), f64(v*2)
		}
		out = append(out, p)
	}
	return out
}

func TestLatencyChart(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name          string
		points        []console.LatencyPoint
		paths, dots   int
		label, absent string
	}{
		{"nil", nil, 0, 0, "no checks", ""},
		{"empty", []console.LatencyPoint{}, 0, 0, "no checks", ""},
		{"all gaps", hours(nan, nan, nan), 0, 0, "no checks", ""},
		{"one point", hours(42), 0, 2, "median between 42 ms and 42 ms", ""},
		{"a line", hours(40, 50, 60), 2, 0, "at most 120 ms", "no checks in"},
		{"gaps", hours(40, nan, 50, 55, nan, nan, 60), 2, 4, "no checks in 3 of 7 hours", ""},
		{"negative", hours(-5, 10, -1), 2, 0, "median between 0 ms and 10 ms", ""},
		{"infinite", hours(math.Inf(1), 10, 20), 2, 0, "median between 10 ms and 20 ms", ""},
		{"huge", hours(1e300, 10, 20), 2, 0, "median between 10 ms and 36000.0 s", ""},
		{"tiny", hours(0, 0, 0.001), 2, 0, "median between 0 ms and 0 ms", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			svg := string(console.LatencyChart(c.points))
			parts := svgParts(t, svg)
			label := parts[0].attrs["aria-label"]
			if !strings.Contains(strings.ToLower(label), strings.ToLower(c.label)) || (c.absent != "" && strings.Contains(label, c.absent)) {
				t.Errorf("label %q, want %q", label, c.label)
			}
			if n := count(parts, "path", ""); n != c.paths {
				t.Errorf("%d lines, want %d: %s", n, c.paths, svg)
			}
			if n := count(parts, "circle", ""); n != c.dots {
				t.Errorf("%d dots, want %d: %s", n, c.dots, svg)
			}
		})
	}
	// A gap breaks a line into pieces, each starting with a move.
	parts := svgParts(t, string(console.LatencyChart(hours(40, 41, nan, 50, 55))))
	for _, e := range parts {
		if e.name == "path" && strings.Count(e.attrs["d"], "M") != 2 {
			t.Errorf("a line across a gap: %q", e.attrs["d"])
		}
	}
	// The y axis is a round number at or above the highest value, and the
	// highest value is drawn below it.
	svg := string(console.LatencyChart(hours(120, 130, 340)))
	if !strings.Contains(svg, ">500 ms</text>") || !strings.Contains(svg, ">0 ms</text>") {
		t.Errorf("axis: %s", svg)
	}
}

func TestUptimeBar(t *testing.T) {
	if parts := svgParts(t, string(console.UptimeBar(nil))); count(parts, "rect", "") != 0 {
		t.Error("an empty bar has rects")
	}
	days := []console.UptimeDay{
		{Day: at(-5, 0, 0)},
		{Day: at(-4, 0, 0), Availability: f64(1)},
		{Day: at(-3, 0, 0), Availability: f64(0.9995)},
		{Day: at(-2, 0, 0), Availability: f64(0.995)},
		{Day: at(-1, 0, 0), Availability: f64(0.5)},
		{Day: at(0, 0, 0), Availability: f64(math.NaN())},
		{Day: at(1, 0, 0), Availability: f64(-3)},
		{Day: at(2, 0, 0), Availability: f64(7)},
		{Day: at(3, 0, 0), Availability: f64(math.Inf(-1))},
	}
	parts := svgParts(t, string(console.UptimeBar(days)))
	var classes, titles []string
	for _, e := range parts {
		switch e.name {
		case "rect":
			classes = append(classes, e.attrs["class"])
		case "title":
			titles = append(titles, e.text)
		}
	}
	want := []string{"u-none", "u-good", "u-good", "u-fair", "u-bad", "u-none", "u-bad", "u-good", "u-none"}
	if strings.Join(classes, " ") != strings.Join(want, " ") {
		t.Errorf("classes %v, want %v", classes, want)
	}
	wantTitles := []string{"2026-11-21: no data", "2026-11-22: 100 % available", "2026-11-23: 99.95 % available", "2026-11-24: 99.50 % available",
		"2026-11-25: 50.00 % available", "2026-11-26: no data", "2026-11-27: 0.00 % available", "2026-11-28: 100 % available", "2026-11-29: no data"}
	if strings.Join(titles, "|") != strings.Join(wantTitles, "|") {
		t.Errorf("titles %q", titles)
	}
	label := parts[0].attrs["aria-label"]
	for _, w := range []string{"2026-11-21 to 2026-11-29", "6 of 9 days with data", "3 below 99.90 %", "lowest 0.00 % on 2026-11-27"} {
		if !strings.Contains(label, w) {
			t.Errorf("label %q lacks %q", label, w)
		}
	}
	if l := svgParts(t, string(console.UptimeBar(days[:1])))[0].attrs["aria-label"]; !strings.Contains(l, "no data on any day") {
		t.Errorf("label of a bar without data: %q", l)
	}
	if l := svgParts(t, string(console.UptimeBar(days[1:3])))[0].attrs["aria-label"]; !strings.Contains(l, "all at or above 99.90 %") {
		t.Errorf("label of a good bar: %q", l)
	}
}

func TestMonitorFigures(t *testing.T) {
	for v, want := range map[float64]string{1: "100 %", 0.99999: "99.99 %", 0.9999: "99.99 %", 0.999: "99.90 %", 0.5: "50.00 %", 0: "0.00 %",
		-1: "0.00 %", 2: "100 %", math.NaN(): "no data", math.Inf(1): "no data"} {
		if got := console.PercentText(&v); got != want {
			t.Errorf("PercentText(%v) = %q, want %q", v, got, want)
		}
	}
	if got := console.PercentText(nil); got != "no data" {
		t.Errorf("PercentText(nil) = %q", got)
	}
	for d, want := range map[time.Duration]string{0: "—", 10 * time.Second: "10 s", time.Minute: "1 min", 90 * time.Second: "90 s",
		5 * time.Minute: "5 min", time.Hour: "1 h", 24 * time.Hour: "24 h"} {
		if got := console.IntervalText(d); got != want {
			t.Errorf("IntervalText(%v) = %q, want %q", d, got, want)
		}
	}
	for d, want := range map[time.Duration]string{-time.Second: "0 ms", 0: "0 ms", 1499 * time.Microsecond: "1 ms", 42 * time.Millisecond: "42 ms",
		9999 * time.Millisecond: "9999 ms", 12345 * time.Millisecond: "12.3 s"} {
		if got := console.LatencyText(d); got != want {
			t.Errorf("LatencyText(%v) = %q, want %q", d, got, want)
		}
	}
	if console.StateText("") != "unknown" || console.StateText("DEGRADED") != "degraded" {
		t.Error("StateText")
	}
}

// TestStateHistoryShowsConfirmation: a change dated back to the first
// failed check shows when it began and, beside it, when it was confirmed;
// one confirmed at once shows one time.
func TestStateHistoryShowsConfirmation(t *testing.T) {
	d := monitorDetail()
	d.States = []console.StateRow{
		{At: at(0, 8, 52), ConfirmedAt: at(0, 8, 54), From: "UP", To: "DOWN", Cause: "refused (after 3 consecutive failed checks)"},
		{At: at(-1, 8, 0), From: "PENDING", To: "UP", Cause: "the check passed"},
	}
	b, err := console.Render(d)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	began := `<time datetime="` + console.TimeISO(at(0, 8, 52)) + `">`
	confirmed := `<span class="muted confirmed">confirmed <time datetime="` + console.TimeISO(at(0, 8, 54)) + `">`
	if i := strings.Index(page, began); i < 0 || !strings.Contains(page[i:], confirmed) {
		t.Errorf("the DOWN row lacks its start or its confirmation:\n%s", page)
	}
	if n := strings.Count(page, `class="muted confirmed"`); n != 1 {
		t.Errorf("%d confirmation times, want 1 (the change confirmed at once has none)", n)
	}
}
