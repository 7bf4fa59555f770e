package console

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"
)

// maxChartMs caps a latency on the chart (ten hours): a wild value draws
// at the top instead of breaking the scale.
const maxChartMs = 36e6

// The latency chart's geometry, in the SVG's user units.
const (
	chartW, chartH             = 600.0, 200.0
	padL, padR, padTop, padBot = 8.0, 8.0, 26.0, 26.0
)

// LatencyChart draws the latency buckets as an inline SVG line chart:
// the median and the 95th percentile over the buckets, oldest first,
// each line broken where a bucket had no check, a lone bucket drawn as a
// dot. NaN, infinite and missing values are gaps; negative values count
// as 0; huge ones are capped. It is an image with an aria-label that sums
// it up; the page lists the numbers in a table beside it.
func LatencyChart(points []LatencyPoint) template.HTML {
	type pt struct {
		p50, p95 float64
		has50    bool
		has95    bool
	}
	clean := func(v *float64) (float64, bool) {
		f, ok := finite(v)
		return min(max(f, 0), maxChartMs), ok
	}
	pts := make([]pt, len(points))
	top, lo50, hi50, hi95, gaps, any95 := 0.0, math.Inf(1), 0.0, 0.0, 0, false
	for i, p := range points {
		var q pt
		q.p50, q.has50 = clean(p.P50)
		q.p95, q.has95 = clean(p.P95)
		if q.has50 {
			top, lo50, hi50 = max(top, q.p50), min(lo50, q.p50), max(hi50, q.p50)
		}
		if q.has95 {
			top, hi95, any95 = max(top, q.p95), max(hi95, q.p95), true
		}
		if !q.has50 && !q.has95 {
			gaps++
		}
		pts[i] = q
	}
	var b strings.Builder
	if len(points) == 0 || gaps == len(points) {
		label := "Response time: no checks in this period."
		fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %s %s" role="img" aria-label="%s">`, num(chartW), num(chartH), esc(label))
		fmt.Fprintf(&b, `<rect class="chart-frame" x="%s" y="%s" width="%s" height="%s"/>`, num(padL), num(padTop), num(chartW-padL-padR), num(chartH-padTop-padBot))
		fmt.Fprintf(&b, `<text class="chart-empty" x="%s" y="%s" text-anchor="middle">No checks in this period</text></svg>`,
			num(padL+(chartW-padL-padR)/2), num(padTop+(chartH-padTop-padBot)/2))
		return template.HTML(b.String())
	}
	yMax := niceCeil(top)
	plotW, plotH := chartW-padL-padR, chartH-padTop-padBot
	x := func(i int) float64 { return padL + (float64(i)+0.5)*plotW/float64(len(pts)) }
	y := func(v float64) float64 { return padTop + plotH - v/yMax*plotH }

	label := fmt.Sprintf("Response time by hour, %s to %s: ", TimeText(points[0].Start), TimeText(points[len(points)-1].End))
	var says []string
	if !math.IsInf(lo50, 1) {
		says = append(says, fmt.Sprintf("median between %s and %s", msText(lo50), msText(hi50)))
	}
	if any95 {
		says = append(says, fmt.Sprintf("95th percentile at most %s", msText(hi95)))
	}
	label += strings.Join(says, ", ")
	if gaps > 0 {
		label += fmt.Sprintf("; no checks in %d of %d hours", gaps, len(points))
	}
	label += "."
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %s %s" role="img" aria-label="%s">`, num(chartW), num(chartH), esc(label))
	for _, f := range []float64{0, 0.5, 1} {
		yy := y(yMax * f)
		fmt.Fprintf(&b, `<line class="chart-grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, num(padL), num(yy), num(chartW-padR), num(yy))
		// The label sits above its line, inside the plot: no margin to
		// guess the width of, at any text size.
		fmt.Fprintf(&b, `<text class="chart-label" x="%s" y="%s">%s</text>`, num(padL), num(yy-5), esc(msText(yMax*f)))
	}
	for _, i := range labelIndexes(len(points)) {
		// Each names the start of its hour, from where that hour begins.
		fmt.Fprintf(&b, `<text class="chart-label" x="%s" y="%s">%s</text>`,
			num(padL+float64(i)*plotW/float64(len(pts))), num(chartH-6), points[i].Start.UTC().Format("15:04"))
	}
	line := func(class string, val func(pt) (float64, bool)) {
		var d strings.Builder
		var dots []int
		for i := range pts {
			v, ok := val(pts[i])
			if !ok {
				continue
			}
			prev := i > 0 && has(val, pts[i-1])
			next := i+1 < len(pts) && has(val, pts[i+1])
			switch {
			case !prev && !next:
				dots = append(dots, i)
			case !prev:
				fmt.Fprintf(&d, "M%s %s", num(x(i)), num(y(v)))
			default:
				fmt.Fprintf(&d, "L%s %s", num(x(i)), num(y(v)))
			}
		}
		if d.Len() > 0 {
			fmt.Fprintf(&b, `<path class="%s" d="%s" fill="none"/>`, class, d.String())
		}
		for _, i := range dots {
			v, _ := val(pts[i])
			fmt.Fprintf(&b, `<circle class="%s-dot" cx="%s" cy="%s" r="3"/>`, class, num(x(i)), num(y(v)))
		}
	}
	line("chart-p95", func(p pt) (float64, bool) { return p.p95, p.has95 })
	line("chart-p50", func(p pt) (float64, bool) { return p.p50, p.has50 })
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func has[T any](val func(T) (float64, bool), p T) bool {
	_, ok := val(p)
	return ok
}

// labelIndexes are the buckets whose start the x axis names: the first,
// about every sixth, and never two too close.
func labelIndexes(n int) []int {
	if n <= 0 {
		return nil
	}
	step := max(1, (n+3)/4)
	var out []int
	for i := 0; i < n; i += step {
		out = append(out, i)
	}
	return out
}

// niceCeil is the least of 1, 2 or 5 × 10ⁿ at or above v (v > 0), the
// chart's top; 1 ms at least.
func niceCeil(v float64) float64 {
	if !(v > 1) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// The uptime bar's geometry: a rect per day, in user units; the SVG
// stretches to its box (preserveAspectRatio="none").
const (
	barDayW, barGap, barH = 6.0, 2.0, 32.0
)

// Availability thresholds of the uptime bar's colours (the title of
// each day says the figure).
const (
	goodAvailability = 0.999
	fairAvailability = 0.99
)

// UptimeBar draws one rect per day, oldest first, coloured by its
// availability (grey for no data), each with a <title> naming the day and
// the figure; an image whose aria-label sums the days up.
func UptimeBar(days []UptimeDay) template.HTML {
	var b strings.Builder
	if len(days) == 0 {
		fmt.Fprintf(&b, `<svg class="uptime" viewBox="0 0 1 %s" preserveAspectRatio="none" role="img" aria-label="No days to show."></svg>`, num(barH))
		return template.HTML(b.String())
	}
	known, below := 0, 0
	worst, worstDay := 2.0, time.Time{}
	for _, d := range days {
		f, ok := finite(d.Availability)
		if !ok {
			continue
		}
		f = min(max(f, 0), 1)
		known++
		if f < goodAvailability {
			below++
		}
		if f < worst {
			worst, worstDay = f, d.Day
		}
	}
	label := fmt.Sprintf("Availability by day, %s to %s: ", dayText(days[0].Day), dayText(days[len(days)-1].Day))
	if known == 0 {
		label += "no data on any day."
	} else {
		label += fmt.Sprintf("%d of %d days with data", known, len(days))
		if below == 0 {
			label += fmt.Sprintf(", all at or above %s.", PercentText(ptr(goodAvailability)))
		} else {
			label += fmt.Sprintf(", %d below %s; lowest %s on %s.", below, PercentText(ptr(goodAvailability)), PercentText(&worst), dayText(worstDay))
		}
	}
	w := float64(len(days))*(barDayW+barGap) - barGap
	fmt.Fprintf(&b, `<svg class="uptime" viewBox="0 0 %s %s" preserveAspectRatio="none" role="img" aria-label="%s">`, num(w), num(barH), esc(label))
	for i, d := range days {
		class, say := "u-none", "no data"
		if f, ok := finite(d.Availability); ok {
			f = min(max(f, 0), 1)
			say = PercentText(&f) + " available"
			switch {
			case f >= goodAvailability:
				class = "u-good"
			case f >= fairAvailability:
				class = "u-fair"
			default:
				class = "u-bad"
			}
		}
		fmt.Fprintf(&b, `<rect class="%s" x="%s" y="0" width="%s" height="%s"><title>%s: %s</title></rect>`,
			class, num(float64(i)*(barDayW+barGap)), num(barDayW), num(barH), dayText(d.Day), esc(say))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func dayText(t time.Time) string { return t.UTC().Format("2006-01-02") }
