// The figures of a report, the same way in every area, and the report.

package session

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Median is the median of xs; 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// MedianDur is the median of durations held as float64s.
func MedianDur(xs []float64) string { return Dur(time.Duration(Median(xs))) }

// Percentile is the q-quantile (0 < q ≤ 1) of sorted durations, by the
// nearest-rank method; 0 for none.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// P prints the q-quantile of sorted durations.
func P(sorted []time.Duration, q float64) string { return Dur(Percentile(sorted, q)) }

// Dur prints a duration with three significant digits.
func Dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

// MiB prints bytes in MiB with prec decimals.
func MiB(b int64, prec int) string { return fmt.Sprintf("%.*f MiB", prec, float64(b)/(1<<20)) }

// Join prints xs with prec decimals, comma-separated.
func Join(xs []float64, prec int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%.*f", prec, x)
	}
	return strings.Join(s, ", ")
}

// Verdict is a target's cell: met, or not met in bold.
func Verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// Report is an area's markdown report.
type Report struct{ strings.Builder }

// Printf adds formatted text.
func (r *Report) Printf(format string, args ...any) { fmt.Fprintf(&r.Builder, format, args...) }

// Table starts a table with a blank line before: its columns, those
// named with a trailing ":" aligned right.
func (r *Report) Table(cols ...string) {
	var head, rule string
	for _, c := range cols {
		name, right := strings.CutSuffix(c, ":")
		head, rule = head+"| "+name+strings.Repeat(" ", min(len(name), 1)), rule+"|---"
		if right {
			rule += ":"
		}
	}
	r.Printf("\n%s|\n%s|\n", head, rule)
}

// Targets starts the section of the targets; Target adds one.
func (r *Report) Targets() {
	r.Printf("\n## Targets\n")
	r.Table("target", "required", "measured", "")
}

// Target is a row of the targets' table.
func (r *Report) Target(target, required, measured string, ok bool) {
	r.Printf("| %s | %s | %s | %s |\n", target, required, measured, Verdict(ok))
}
