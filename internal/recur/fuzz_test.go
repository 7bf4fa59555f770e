package recur

import (
	"testing"
	"time"
)

var fuzzZones = []string{"UTC", "Europe/Berlin", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe", "Asia/Kolkata", "America/Santiago", "Pacific/Apia"}

// FuzzCronNext: whatever the expression and the instant, parsing and Next
// never panic, Next strictly increases, Prev agrees with it, and each call
// returns in bounded time.
func FuzzCronNext(f *testing.F) {
	for _, s := range []struct {
		expr string
		at   int64
		zone uint8
	}{
		{"30 2 * * *", 1743296400, 1}, // the Berlin spring-forward night
		{"30 1 * * *", 1762058000, 2}, // the New York fall-back night
		{"*/15 * * * *", 1761436800, 1},
		{"0 0 29 2 */7", 1900000000, 3},
		{"0 0 * 2 1#5", 1500000000, 4},
		{"0 0 L * 5L", 0, 5},
		{"5-55/10 1-3 15W * *", 2000000000, 6},
		{"@hourly", 1300000000, 7},
		{"0 0 30 2 *", 1, 0},
		{"*/0 * * * *", 1, 0},
		{"0 0 1 1 * 2030", 1, 0},
	} {
		f.Add(s.expr, s.at, s.zone)
	}
	locs := make([]*time.Location, len(fuzzZones))
	for i, z := range fuzzZones {
		locs[i] = zone(f, z)
	}
	f.Fuzz(func(t *testing.T, expr string, at int64, zi uint8) {
		loc := locs[int(zi)%len(locs)]
		r, err := ParseCron(expr, loc)
		if err != nil {
			return
		}
		// Instants from 1900 to 2200.
		const span = 300 * 365 * 24 * 3600
		if at %= span; at < 0 {
			at += span
		}
		now := time.Unix(at-2208988800, 0) // 1900-01-01 + at seconds
		for range 4 {
			began := time.Now()
			next, ok := r.Next(now)
			if d := time.Since(began); d > 2*time.Second {
				t.Fatalf("%q: Next(%v) took %v", expr, now, d)
			}
			if !ok {
				t.Fatalf("%q parsed but has no occurrence after %v", expr, now)
			}
			if !next.After(now) {
				t.Fatalf("%q: Next(%v) = %v, not after", expr, now, next)
			}
			if prev, ok := r.Prev(next); !ok || !prev.Equal(next) {
				t.Fatalf("%q: Prev(%v) = %v, %v", expr, next, prev, ok)
			}
			now = next
		}
	})
}
