package heartbeat

import (
	"testing"
	"time"
)

// at reads a wall time with its explicit UTC offset, "2026-03-29 03:00 +02:00".
func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse("2006-01-02 15:04 -07:00", s)
	if err != nil {
		t.Fatalf("bad time %q: %v", s, err)
	}
	return v
}

func mustPlan(t *testing.T, s Schedule) Plan {
	t.Helper()
	p, err := s.Compile()
	if err != nil {
		t.Fatalf("Compile(%+v): %v", s, err)
	}
	return p
}

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("LoadLocation(%q): %v", name, err)
	}
	return loc
}

// nextCase is one call of Plan.Next and what it must answer.
type nextCase struct {
	name               string
	s                  Schedule
	from               string
	expected, deadline string
	pingBeforeDeadline string // optional: a plausible late run, still in time
}

func checkNext(t *testing.T, c nextCase) {
	t.Helper()
	p := mustPlan(t, c.s)
	e, ok := p.Next(at(t, c.from))
	if !ok {
		t.Fatalf("Next(%s) = none", c.from)
	}
	loc := time.UTC
	if c.s.Timezone != "" {
		loc = mustLoad(t, c.s.Timezone)
	}
	show := func(v time.Time) string { return v.In(loc).Format("2006-01-02 15:04 -07:00") }
	if want := at(t, c.expected); !e.Expected.Equal(want) {
		t.Errorf("Next(%s).Expected = %s, want %s", c.from, show(e.Expected), c.expected)
	}
	if want := at(t, c.deadline); !e.Deadline.Equal(want) {
		t.Errorf("Next(%s).Deadline = %s, want %s", c.from, show(e.Deadline), c.deadline)
	}
	if c.pingBeforeDeadline != "" {
		if ping := at(t, c.pingBeforeDeadline); !ping.Before(e.Deadline) || ping.Before(e.Expected) {
			t.Errorf("a ping at %s is not between Expected %s and Deadline %s", c.pingBeforeDeadline, show(e.Expected), show(e.Deadline))
		}
	}
}

func TestNextPeriod(t *testing.T) {
	for _, c := range []nextCase{
		{name: "hourly", s: Schedule{PeriodSeconds: 3600, GraceSeconds: 300},
			from: "2026-01-10 10:00 +00:00", expected: "2026-01-10 11:00 +00:00", deadline: "2026-01-10 11:05 +00:00"},
		{name: "no grace", s: Schedule{PeriodSeconds: 60},
			from: "2026-01-10 10:00 +00:00", expected: "2026-01-10 10:01 +00:00", deadline: "2026-01-10 10:01 +00:00"},
		// A period is elapsed time: 24 hours after noon CET on the eve of
		// Berlin's spring-forward night is 13:00 CEST.
		{name: "daily across a DST night", s: Schedule{PeriodSeconds: 86400, GraceSeconds: 300},
			from: "2026-03-28 12:00 +01:00", expected: "2026-03-29 13:00 +02:00", deadline: "2026-03-29 13:05 +02:00"},
	} {
		t.Run(c.name, func(t *testing.T) { checkNext(t, c) })
	}
}

func TestNextCron(t *testing.T) {
	for _, c := range []nextCase{
		{name: "every 15 minutes", s: Schedule{Cron: "*/15 * * * *", GraceSeconds: 300},
			from: "2026-01-10 10:07 +00:00", expected: "2026-01-10 10:15 +00:00", deadline: "2026-01-10 10:20 +00:00"},
		{name: "strictly after", s: Schedule{Cron: "*/15 * * * *", GraceSeconds: 300},
			from: "2026-01-10 10:15 +00:00", expected: "2026-01-10 10:30 +00:00", deadline: "2026-01-10 10:35 +00:00"},
		// Friday 2026-01-09 09:00 CET: the next weekday run is Monday.
		{name: "weekdays in Berlin", s: Schedule{Cron: "0 9 * * 1-5", Timezone: "Europe/Berlin", GraceSeconds: 3600},
			from: "2026-01-09 09:00 +01:00", expected: "2026-01-12 09:00 +01:00", deadline: "2026-01-12 10:00 +01:00"},
		{name: "half-hour zone without DST", s: Schedule{Cron: "@daily", Timezone: "Asia/Kolkata", GraceSeconds: 0},
			from: "2026-03-29 00:00 +05:30", expected: "2026-03-30 00:00 +05:30", deadline: "2026-03-30 00:00 +05:30"},
	} {
		t.Run(c.name, func(t *testing.T) { checkNext(t, c) })
	}
}

func TestNextNone(t *testing.T) {
	p := mustPlan(t, Schedule{Cron: "0 0 * * *"})
	if e, ok := p.Next(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Errorf("Next past the end of the calendar = %+v, want none", e)
	}
	if e, ok := (Plan{}).Next(time.Now()); ok {
		t.Errorf("zero Plan: Next = %+v, want none", e)
	}
}

// TestNextOnDSTNights checks a daily job the day before, on, and the day
// after each daylight-saving change of 2026, with 5 minutes of grace.
func TestNextOnDSTNights(t *testing.T) {
	in := func(zone string) func(cron string) Schedule {
		return func(cron string) Schedule { return Schedule{Cron: cron, Timezone: zone, GraceSeconds: 300} }
	}
	berlin, newYork, sydney, lordHowe := in("Europe/Berlin"), in("America/New_York"), in("Australia/Sydney"), in("Australia/Lord_Howe")
	for _, c := range []nextCase{
		// Berlin, spring forward on 2026-03-29: 02:00 CET (+01:00) becomes
		// 03:00 CEST (+02:00), so 02:30 does not exist that night.
		{name: "Berlin spring/day before", s: berlin("30 2 * * *"),
			from: "2026-03-28 00:00 +01:00", expected: "2026-03-28 02:30 +01:00", deadline: "2026-03-28 02:35 +01:00"},
		// Expected at 03:00 CEST, the first instant after the gap; a daemon
		// may run it at 03:30 CEST (02:30 read as CET); any wall time of the
		// gap read as CET is before 04:00 CEST, plus grace: 04:05 CEST.
		{name: "Berlin spring/night", s: berlin("30 2 * * *"),
			from: "2026-03-29 00:00 +01:00", expected: "2026-03-29 03:00 +02:00", deadline: "2026-03-29 04:05 +02:00",
			pingBeforeDeadline: "2026-03-29 03:30 +02:00"},
		{name: "Berlin spring/day after", s: berlin("30 2 * * *"),
			from: "2026-03-30 00:00 +02:00", expected: "2026-03-30 02:30 +02:00", deadline: "2026-03-30 02:35 +02:00"},
		// A job really at 03:00 that night gets the same allowance.
		{name: "Berlin spring/03:00 job", s: berlin("0 3 * * *"),
			from: "2026-03-29 00:00 +01:00", expected: "2026-03-29 03:00 +02:00", deadline: "2026-03-29 04:05 +02:00"},

		// Berlin, fall back on 2026-10-25: 03:00 CEST (+02:00) becomes
		// 02:00 CET (+01:00), so 02:30 happens twice.
		{name: "Berlin fall/day before", s: berlin("30 2 * * *"),
			from: "2026-10-24 00:00 +02:00", expected: "2026-10-24 02:30 +02:00", deadline: "2026-10-24 02:35 +02:00"},
		// Expected at the first 02:30 (CEST); a daemon may run it at the
		// second (02:30 CET, an hour later), plus grace: 02:35 CET.
		{name: "Berlin fall/night", s: berlin("30 2 * * *"),
			from: "2026-10-25 00:00 +02:00", expected: "2026-10-25 02:30 +02:00", deadline: "2026-10-25 02:35 +01:00",
			pingBeforeDeadline: "2026-10-25 02:30 +01:00"},
		{name: "Berlin fall/day after", s: berlin("30 2 * * *"),
			from: "2026-10-26 00:00 +01:00", expected: "2026-10-26 02:30 +01:00", deadline: "2026-10-26 02:35 +01:00"},

		// New York, spring forward on 2026-03-08: 02:00 EST (-05:00)
		// becomes 03:00 EDT (-04:00), so 02:30 does not exist that night.
		{name: "New York spring/day before", s: newYork("30 2 * * *"),
			from: "2026-03-07 00:00 -05:00", expected: "2026-03-07 02:30 -05:00", deadline: "2026-03-07 02:35 -05:00"},
		// Expected at 03:00 EDT; maybe run at 03:30 EDT (02:30 read as EST);
		// deadline 04:00 EDT plus grace.
		{name: "New York spring/night", s: newYork("30 2 * * *"),
			from: "2026-03-08 00:00 -05:00", expected: "2026-03-08 03:00 -04:00", deadline: "2026-03-08 04:05 -04:00",
			pingBeforeDeadline: "2026-03-08 03:30 -04:00"},
		{name: "New York spring/day after", s: newYork("30 2 * * *"),
			from: "2026-03-09 00:00 -04:00", expected: "2026-03-09 02:30 -04:00", deadline: "2026-03-09 02:35 -04:00"},
		// 01:30 is before the gap: an ordinary night for it.
		{name: "New York spring/01:30 job", s: newYork("30 1 * * *"),
			from: "2026-03-08 00:00 -05:00", expected: "2026-03-08 01:30 -05:00", deadline: "2026-03-08 01:35 -05:00"},

		// New York, fall back on 2026-11-01: 02:00 EDT (-04:00) becomes
		// 01:00 EST (-05:00), so 01:30 happens twice and 02:30 once.
		{name: "New York fall/day before", s: newYork("30 1 * * *"),
			from: "2026-10-31 00:00 -04:00", expected: "2026-10-31 01:30 -04:00", deadline: "2026-10-31 01:35 -04:00"},
		// Expected at the first 01:30 (EDT); maybe run at the second (01:30
		// EST, an hour later), plus grace: 01:35 EST.
		{name: "New York fall/night", s: newYork("30 1 * * *"),
			from: "2026-11-01 00:00 -04:00", expected: "2026-11-01 01:30 -04:00", deadline: "2026-11-01 01:35 -05:00",
			pingBeforeDeadline: "2026-11-01 01:30 -05:00"},
		{name: "New York fall/day after", s: newYork("30 1 * * *"),
			from: "2026-11-02 00:00 -05:00", expected: "2026-11-02 01:30 -05:00", deadline: "2026-11-02 01:35 -05:00"},
		// 02:30 comes once, in EST: no allowance.
		{name: "New York fall/02:30 job", s: newYork("30 2 * * *"),
			from: "2026-11-01 00:00 -04:00", expected: "2026-11-01 02:30 -05:00", deadline: "2026-11-01 02:35 -05:00"},

		// Sydney, fall back on 2026-04-05: 03:00 AEDT (+11:00) becomes
		// 02:00 AEST (+10:00), so 02:30 happens twice.
		{name: "Sydney fall/day before", s: sydney("30 2 * * *"),
			from: "2026-04-04 00:00 +11:00", expected: "2026-04-04 02:30 +11:00", deadline: "2026-04-04 02:35 +11:00"},
		{name: "Sydney fall/night", s: sydney("30 2 * * *"),
			from: "2026-04-05 00:00 +11:00", expected: "2026-04-05 02:30 +11:00", deadline: "2026-04-05 02:35 +10:00",
			pingBeforeDeadline: "2026-04-05 02:30 +10:00"},
		{name: "Sydney fall/day after", s: sydney("30 2 * * *"),
			from: "2026-04-06 00:00 +10:00", expected: "2026-04-06 02:30 +10:00", deadline: "2026-04-06 02:35 +10:00"},

		// Sydney, spring forward on 2026-10-04: 02:00 AEST (+10:00) becomes
		// 03:00 AEDT (+11:00).
		{name: "Sydney spring/day before", s: sydney("30 2 * * *"),
			from: "2026-10-03 00:00 +10:00", expected: "2026-10-03 02:30 +10:00", deadline: "2026-10-03 02:35 +10:00"},
		{name: "Sydney spring/night", s: sydney("30 2 * * *"),
			from: "2026-10-04 00:00 +10:00", expected: "2026-10-04 03:00 +11:00", deadline: "2026-10-04 04:05 +11:00",
			pingBeforeDeadline: "2026-10-04 03:30 +11:00"},
		{name: "Sydney spring/day after", s: sydney("30 2 * * *"),
			from: "2026-10-05 00:00 +11:00", expected: "2026-10-05 02:30 +11:00", deadline: "2026-10-05 02:35 +11:00"},

		// Lord Howe Island moves by 30 minutes. Fall back on 2026-04-05:
		// 02:00 (+11:00) becomes 01:30 (+10:30), so 01:45 happens twice,
		// thirty minutes apart.
		{name: "Lord Howe fall/day before", s: lordHowe("45 1 * * *"),
			from: "2026-04-04 00:00 +11:00", expected: "2026-04-04 01:45 +11:00", deadline: "2026-04-04 01:50 +11:00"},
		{name: "Lord Howe fall/night", s: lordHowe("45 1 * * *"),
			from: "2026-04-05 00:00 +11:00", expected: "2026-04-05 01:45 +11:00", deadline: "2026-04-05 01:50 +10:30",
			pingBeforeDeadline: "2026-04-05 01:45 +10:30"},
		{name: "Lord Howe fall/day after", s: lordHowe("45 1 * * *"),
			from: "2026-04-06 00:00 +10:30", expected: "2026-04-06 01:45 +10:30", deadline: "2026-04-06 01:50 +10:30"},

		// Spring forward on 2026-10-04: 02:00 (+10:30) becomes 02:30
		// (+11:00), so 02:15 does not exist; expected at 02:30 (+11:00),
		// maybe run at 02:45 (+11:00, 02:15 read as +10:30), deadline 03:00
		// (+11:00) plus grace.
		{name: "Lord Howe spring/day before", s: lordHowe("15 2 * * *"),
			from: "2026-10-03 00:00 +10:30", expected: "2026-10-03 02:15 +10:30", deadline: "2026-10-03 02:20 +10:30"},
		{name: "Lord Howe spring/night", s: lordHowe("15 2 * * *"),
			from: "2026-10-04 00:00 +10:30", expected: "2026-10-04 02:30 +11:00", deadline: "2026-10-04 03:05 +11:00",
			pingBeforeDeadline: "2026-10-04 02:45 +11:00"},
		{name: "Lord Howe spring/day after", s: lordHowe("15 2 * * *"),
			from: "2026-10-05 00:00 +11:00", expected: "2026-10-05 02:15 +11:00", deadline: "2026-10-05 02:20 +11:00"},
	} {
		t.Run(c.name, func(t *testing.T) { checkNext(t, c) })
	}
}

// TestFrequentCronAcrossDSTNights walks jobs that run every hour or half
// hour through each night: runs strictly increase, and every deadline is
// at least grace after its run and at most the zone's DST shift more.
func TestFrequentCronAcrossDSTNights(t *testing.T) {
	const grace = 300 * time.Second
	nights := []struct {
		zone  string
		night string // the local midnight starting the DST night
		shift time.Duration
	}{
		{"Europe/Berlin", "2026-03-29 00:00 +01:00", time.Hour},
		{"Europe/Berlin", "2026-10-25 00:00 +02:00", time.Hour},
		{"America/New_York", "2026-03-08 00:00 -05:00", time.Hour},
		{"America/New_York", "2026-11-01 00:00 -04:00", time.Hour},
		{"Australia/Lord_Howe", "2026-04-05 00:00 +11:00", 30 * time.Minute},
		{"Australia/Lord_Howe", "2026-10-04 00:00 +10:30", 30 * time.Minute},
	}
	for _, n := range nights {
		for _, cron := range []string{"0 * * * *", "*/30 * * * *", "15 */2 * * *"} {
			t.Run(n.zone+"/"+n.night+"/"+cron, func(t *testing.T) {
				p := mustPlan(t, Schedule{Cron: cron, Timezone: n.zone, GraceSeconds: int(grace / time.Second)})
				night := at(t, n.night)
				prev, end := night.Add(-24*time.Hour), night.Add(48*time.Hour)
				allowed := 0
				for runs := 0; prev.Before(end); runs++ {
					e, ok := p.Next(prev)
					if !ok || runs > 200 {
						t.Fatalf("Next(%s) = %+v, %v after %d runs", prev, e, ok, runs)
					}
					if !e.Expected.After(prev) {
						t.Fatalf("Next(%s).Expected = %s, not after", prev, e.Expected)
					}
					extra := e.Deadline.Sub(e.Expected) - grace
					if extra < 0 || extra > n.shift {
						t.Errorf("run at %s: deadline %s is %s after it, want between %s and %s",
							e.Expected, e.Deadline, e.Deadline.Sub(e.Expected), grace, grace+n.shift)
					}
					if extra > 0 {
						allowed++
					}
					prev = e.Expected
				}
				// Every half hour lands on a repeated wall time and on the end
				// of each gap in these zones: some run of the night gets extra
				// time, or the walk missed the night.
				if cron == "*/30 * * * *" && allowed == 0 {
					t.Errorf("no run got a DST allowance; does the walk cross the night?")
				}
			})
		}
	}
}
