package recur

import (
	"testing"
	"time"
	_ "time/tzdata" // real zones even where /usr/share/zoneinfo is missing
)

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("LoadLocation(%q): %v", name, err)
	}
	return loc
}

func utc(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("time.Parse(%q): %v", s, err)
	}
	return v
}

// localDay is the half-open span of instants of one local calendar day,
// which is 23 or 25 hours long on DST nights.
func localDay(loc *time.Location, y int, m time.Month, d int) (from, to time.Time) {
	return time.Date(y, m, d, 0, 0, 0, 0, loc), time.Date(y, m, d+1, 0, 0, 0, 0, loc)
}

// occurrences lists r's occurrences in [from, to), by walking Next.
func occurrences(t testing.TB, r Rule, from, to time.Time) []time.Time {
	t.Helper()
	var out []time.Time
	at := from.Add(-time.Nanosecond)
	for range 10_000 {
		n, ok := r.Next(at)
		if !ok || !n.Before(to) {
			return out
		}
		if !n.After(at) {
			t.Fatalf("Next(%v) = %v, not after", at, n)
		}
		out = append(out, n)
		at = n
	}
	t.Fatal("too many occurrences")
	return nil
}

func mustCron(t testing.TB, expr string, loc *time.Location) Rule {
	t.Helper()
	r, err := ParseCron(expr, loc)
	if err != nil {
		t.Fatalf("ParseCron(%q): %v", expr, err)
	}
	return r
}

func mustRRule(t testing.TB, rule string, dtstart time.Time, loc *time.Location) Rule {
	t.Helper()
	r, err := ParseRRule(rule, dtstart, loc)
	if err != nil {
		t.Fatalf("ParseRRule(%q): %v", rule, err)
	}
	return r
}

func utcStrings(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, v := range ts {
		out[i] = v.UTC().Format(time.RFC3339)
	}
	return out
}
