package recur

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// dstNight is one local day with a DST change, and what a daily job at a
// given wall time must do on it.
type dstNight struct {
	name       string
	zone       string
	y, d       int
	m          time.Month
	hour, min  int    // the job's wall time
	want       string // its one instant that day, UTC
	wantReason string
}

var dstNights = []dstNight{
	{"Berlin spring forward", "Europe/Berlin", 2025, 30, time.March, 2, 30, "2025-03-30T01:00:00Z", "02:30 does not exist: 03:00 CEST, right after the gap"},
	{"Berlin fall back", "Europe/Berlin", 2025, 26, time.October, 2, 30, "2025-10-26T00:30:00Z", "02:30 happens twice: the first, CEST"},
	{"New York spring forward", "America/New_York", 2025, 9, time.March, 2, 30, "2025-03-09T07:00:00Z", "02:30 does not exist: 03:00 EDT"},
	{"New York fall back", "America/New_York", 2025, 2, time.November, 1, 30, "2025-11-02T05:30:00Z", "01:30 happens twice: the first, EDT"},
	{"New York fall back, after the fold", "America/New_York", 2025, 2, time.November, 2, 30, "2025-11-02T07:30:00Z", "02:30 happens once, EST"},
	{"Sydney spring forward", "Australia/Sydney", 2025, 5, time.October, 2, 30, "2025-10-04T16:00:00Z", "02:30 does not exist: 03:00 AEDT"},
	{"Sydney fall back", "Australia/Sydney", 2025, 6, time.April, 2, 30, "2025-04-05T15:30:00Z", "02:30 happens twice: the first, AEDT"},
	{"Lord Howe half-hour spring forward", "Australia/Lord_Howe", 2025, 5, time.October, 2, 15, "2025-10-04T15:30:00Z", "02:15 does not exist: 02:30 +11, right after the 30-minute gap"},
	{"Kolkata, no DST", "Asia/Kolkata", 2025, 30, time.March, 2, 30, "2025-03-29T21:00:00Z", "plain 02:30 +05:30"},
}

// Each daily rule fires exactly once on each DST night, at the instant the
// package comment promises — cron and RRULE alike.
func TestDailyJobOnDSTNights(t *testing.T) {
	for _, n := range dstNights {
		loc := zone(t, n.zone)
		from, to := localDay(loc, n.y, n.m, n.d)
		wd := time.Date(n.y, n.m, n.d, 12, 0, 0, 0, time.UTC).Weekday()
		rules := []struct {
			kind   string
			rule   Rule
			period int // days between occurrences
		}{
			{"cron", mustCron(t, timeCron(n.hour, n.min, "* * *"), loc), 1},
			{"cron on that weekday", mustCron(t, timeCron(n.hour, n.min, "* * "+wd.String()[:3]), loc), 7},
			{"rrule daily", mustRRule(t, "FREQ=DAILY", time.Date(2024, 1, 10, n.hour, n.min, 0, 0, loc), loc), 1},
			{"rrule weekly", mustRRule(t, "RRULE:FREQ=WEEKLY;BYDAY="+weekdayCode(wd)+";BYHOUR="+itoa(n.hour)+";BYMINUTE="+itoa(n.min),
				time.Date(2024, 1, 1, 0, 0, 0, 0, loc), loc), 7},
		}
		for _, rc := range rules {
			t.Run(n.name+"/"+rc.kind, func(t *testing.T) {
				got := utcStrings(occurrences(t, rc.rule, from, to))
				if !slices.Equal(got, []string{n.want}) {
					t.Errorf("occurrences on %d-%02d-%02d = %v, want [%s] (%s)", n.y, n.m, n.d, got, n.want, n.wantReason)
				}
				// The occurrences before and after: at the plain wall time.
				for _, dd := range []int{-rc.period, rc.period} {
					f, e := localDay(loc, n.y, n.m, n.d+dd)
					occ := occurrences(t, rc.rule, f, e)
					if len(occ) != 1 || occ[0].Hour() != n.hour || occ[0].Minute() != n.min {
						t.Errorf("day %+d: %v, want one at %02d:%02d", dd, occ, n.hour, n.min)
					}
				}
			})
		}
	}
}

// Several wall times inside one gap become one instant, fired once.
func TestGapCollapsesToOneInstant(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	from, to := localDay(loc, 2025, time.March, 30)
	cases := []struct {
		rule Rule
		want []string
	}{
		{mustCron(t, "0,15,30,45 2 * * *", loc), []string{"2025-03-30T01:00:00Z"}},
		// 02:00 and 02:30 become 03:00, which is also 03:00 itself: once.
		{mustCron(t, "0,30 2-3 * * *", loc), []string{"2025-03-30T01:00:00Z", "2025-03-30T01:30:00Z"}},
		{mustRRule(t, "FREQ=DAILY;BYHOUR=2,3;BYMINUTE=0,30", time.Date(2025, 1, 1, 0, 0, 0, 0, loc), loc),
			[]string{"2025-03-30T01:00:00Z", "2025-03-30T01:30:00Z"}},
	}
	for _, c := range cases {
		if got := utcStrings(occurrences(t, c.rule, from, to)); !slices.Equal(got, c.want) {
			t.Errorf("%s%s: %v, want %v", c.rule.Cron, c.rule.RRule, got, c.want)
		}
	}
}

// Cron jobs whose minute or hour field starts with "*" follow real elapsed
// time: evenly spaced instants, none twice, across both DST nights.
func TestFrequentCronFollowsElapsedTime(t *testing.T) {
	cases := []struct {
		zone  string
		expr  string
		y, d  int
		m     time.Month
		step  time.Duration
		count int
	}{
		{"America/New_York", "0 * * * *", 2025, 2, time.November, time.Hour, 25},
		{"America/New_York", "0 * * * *", 2025, 9, time.March, time.Hour, 23},
		{"Europe/Berlin", "*/15 * * * *", 2025, 26, time.October, 15 * time.Minute, 25 * 4},
		{"Europe/Berlin", "*/15 * * * *", 2025, 30, time.March, 15 * time.Minute, 23 * 4},
		{"Australia/Sydney", "30 * * * *", 2025, 6, time.April, time.Hour, 25},
		{"Australia/Sydney", "30 * * * *", 2025, 5, time.October, time.Hour, 23},
		{"Europe/Berlin", "*/5 2 * * *", 2025, 26, time.October, 5 * time.Minute, 24}, // both 2 o'clock hours, back to back
	}
	for _, c := range cases {
		t.Run(c.zone+" "+c.expr+" "+c.m.String(), func(t *testing.T) {
			loc := zone(t, c.zone)
			from, to := localDay(loc, c.y, c.m, c.d)
			occ := occurrences(t, mustCron(t, c.expr, loc), from, to)
			if len(occ) != c.count {
				t.Fatalf("%d occurrences, want %d: %v", len(occ), c.count, utcStrings(occ))
			}
			for i := 1; i < len(occ); i++ {
				if gap := occ[i].Sub(occ[i-1]); gap != c.step {
					t.Errorf("gap %v between %v and %v, want %v", gap, occ[i-1], occ[i], c.step)
				}
			}
		})
	}
}

// A fixed hour inside the spring-forward gap with a "*" minute is scheduled
// on real time, like Debian's cron: that hour does not exist that night.
func TestFrequentCronInsideGapHasNoOccurrence(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	from, to := localDay(loc, 2025, time.March, 30)
	if occ := occurrences(t, mustCron(t, "*/15 2 * * *", loc), from, to); len(occ) != 0 {
		t.Errorf("got %v, want none", occ)
	}
}

// Prev and Next agree with each other everywhere, including inside gaps
// and folds: Prev(Next(t)) == Next(t), and nothing lies in (Prev(t), t].
func TestNextPrevConsistency(t *testing.T) {
	// Each zone's 2025 DST changes (UTC), probed every 11 minutes for three
	// hours around them, plus instants scattered over decades.
	zones := map[string][]string{
		"Europe/Berlin":       {"2025-03-30T01:00:00Z", "2025-10-26T01:00:00Z"},
		"America/New_York":    {"2025-03-09T07:00:00Z", "2025-11-02T06:00:00Z"},
		"Australia/Sydney":    {"2025-04-05T16:00:00Z", "2025-10-04T16:00:00Z"},
		"Australia/Lord_Howe": {"2025-04-05T15:00:00Z", "2025-10-04T15:30:00Z"},
		"Asia/Kolkata":        {"2025-03-29T21:00:00Z"},
	}
	var scattered []time.Time
	for i := range 40 {
		scattered = append(scattered, utc(t, "2000-01-01T00:00:00Z").Add(time.Duration(i)*3079*time.Hour+time.Duration(i*i)*time.Second))
	}
	for z, changes := range zones {
		loc := zone(t, z)
		probes := slices.Clone(scattered)
		for _, c := range changes {
			for i := range 3 * 60 / 11 {
				probes = append(probes, utc(t, c).Add(time.Duration(i-8)*11*time.Minute))
			}
		}
		rules := map[string]Rule{}
		for _, e := range []string{"30 2 * * *", "30 1 * * *", "0 * * * *", "*/7 * * * *", "15 2-3 * * 0", "0 0 29 2 *", "*/10 2 * * *", "0 3 L * *"} {
			rules[e] = mustCron(t, e, loc)
		}
		ds := time.Date(2024, 2, 29, 2, 30, 0, 0, loc)
		for _, rr := range []string{"FREQ=DAILY", "FREQ=WEEKLY;INTERVAL=2;BYDAY=SU,WE", "FREQ=MONTHLY;BYDAY=-1SU;BYHOUR=1,2;BYMINUTE=30", "FREQ=YEARLY;COUNT=4", "FREQ=DAILY;UNTIL=20251231T000000Z"} {
			rules[rr] = mustRRule(t, rr, ds, loc)
		}
		for name, r := range rules {
			t.Run(z+" "+name, func(t *testing.T) {
				t.Parallel()
				for _, at := range probes {
					checkNextPrev(t, r, at)
				}
			})
		}
	}
}

func checkNextPrev(t *testing.T, r Rule, at time.Time) {
	t.Helper()
	next, nok := r.Next(at)
	if nok {
		if !next.After(at) {
			t.Fatalf("Next(%v) = %v, not after", at, next)
		}
		if p, ok := r.Prev(next); !ok || !p.Equal(next) {
			t.Fatalf("Prev(Next(%v) = %v) = %v, %v", at, next, p, ok)
		}
	}
	prev, pok := r.Prev(at)
	if !pok {
		return
	}
	if prev.After(at) {
		t.Fatalf("Prev(%v) = %v, after", at, prev)
	}
	if n2, ok := r.Next(prev); ok != nok || (ok && !n2.Equal(next)) {
		t.Fatalf("Next(Prev(%v) = %v) = %v, %v; Next(%v) = %v, %v", at, prev, n2, ok, at, next, nok)
	}
}

func timeCron(h, m int, rest string) string { return itoa(m) + " " + itoa(h) + " " + rest }

func itoa(i int) string { return strconv.Itoa(i) }

func weekdayCode(d time.Weekday) string { return strings.ToUpper(d.String()[:2]) }
