package recur

import (
	"testing"
	"time"
)

func BenchmarkNext(b *testing.B) {
	loc := zone(b, "Europe/Berlin")
	rules := []struct {
		name string
		rule Rule
	}{
		{"cron fixed time", mustCron(b, "30 2 * * 1-5", loc)},
		{"cron every 5 minutes", mustCron(b, "*/5 * * * *", loc)},
		{"cron February 29th", mustCron(b, "0 0 29 2 *", loc)},
		{"rrule weekly", mustRRule(b, "FREQ=WEEKLY;BYDAY=SA;BYHOUR=2;BYMINUTE=30", time.Date(2020, 1, 4, 0, 0, 0, 0, loc), loc)},
		{"rrule monthly, last Sunday", mustRRule(b, "FREQ=MONTHLY;BYDAY=-1SU", time.Date(2020, 1, 26, 2, 0, 0, 0, loc), loc)},
	}
	from := time.Date(2025, 3, 29, 12, 0, 0, 0, loc)
	for _, r := range rules {
		b.Run(r.name, func(b *testing.B) {
			at := from
			for b.Loop() {
				next, ok := r.rule.Next(at)
				if !ok {
					b.Fatal("no occurrence")
				}
				if at = next; at.Year() > 2200 {
					at = from
				}
			}
		})
	}
}

func BenchmarkWindowActive(b *testing.B) {
	loc := zone(b, "America/New_York")
	r := mustCron(b, "0 1 * * *", loc)
	w := Window{Rule: &r, Duration: 2 * time.Hour}
	at := time.Date(2025, 11, 2, 1, 30, 0, 0, loc)
	for b.Loop() {
		w.Active(at)
	}
}
