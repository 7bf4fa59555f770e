package recur

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestWindowActive(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	ny := zone(t, "America/New_York")
	nightly := mustCron(t, "0 23 * * *", berlin)
	nyOne := mustCron(t, "0 1 * * *", ny)
	springGap := mustCron(t, "30 2 * * *", berlin)
	weekly := mustRRule(t, "FREQ=WEEKLY;BYDAY=SA", time.Date(2025, 1, 4, 22, 0, 0, 0, berlin), berlin)

	cases := []struct {
		name    string
		w       Window
		at      string
		active  bool
		wantEnd string
	}{
		{"one-off before", Window{Start: utc(t, "2025-05-01T10:00:00Z"), End: utc(t, "2025-05-01T12:00:00Z")}, "2025-05-01T09:59:59Z", false, ""},
		{"one-off at start", Window{Start: utc(t, "2025-05-01T10:00:00Z"), End: utc(t, "2025-05-01T12:00:00Z")}, "2025-05-01T10:00:00Z", true, "2025-05-01T12:00:00Z"},
		{"one-off inside", Window{Start: utc(t, "2025-05-01T10:00:00Z"), End: utc(t, "2025-05-01T12:00:00Z")}, "2025-05-01T11:59:59Z", true, "2025-05-01T12:00:00Z"},
		{"one-off at end", Window{Start: utc(t, "2025-05-01T10:00:00Z"), End: utc(t, "2025-05-01T12:00:00Z")}, "2025-05-01T12:00:00Z", false, ""},

		// 23:00-01:00 Berlin (CEST in May: 21:00Z-23:00Z)
		{"nightly before start", Window{Rule: &nightly, Duration: 2 * time.Hour}, "2025-05-01T20:59:59Z", false, ""},
		{"nightly at start", Window{Rule: &nightly, Duration: 2 * time.Hour}, "2025-05-01T21:00:00Z", true, "2025-05-01T23:00:00Z"},
		{"nightly across midnight", Window{Rule: &nightly, Duration: 2 * time.Hour}, "2025-05-01T22:30:00Z", true, "2025-05-01T23:00:00Z"},
		{"nightly at end", Window{Rule: &nightly, Duration: 2 * time.Hour}, "2025-05-01T23:00:00Z", false, ""},
		{"nightly at midday", Window{Rule: &nightly, Duration: 2 * time.Hour}, "2025-05-02T10:00:00Z", false, ""},

		// 01:00 New York on the fall-back night: the first 01:00 (EDT,
		// 05:00Z); two real hours later is 02:00 EST (07:00Z).
		{"fall-back window at second 01:30", Window{Rule: &nyOne, Duration: 2 * time.Hour}, "2025-11-02T06:30:00Z", true, "2025-11-02T07:00:00Z"},
		{"fall-back window end is elapsed time", Window{Rule: &nyOne, Duration: 2 * time.Hour}, "2025-11-02T07:00:00Z", false, ""},
		// The second 01:00 (06:00Z) starts nothing new.
		{"fall-back second 01:00, short window", Window{Rule: &nyOne, Duration: 30 * time.Minute}, "2025-11-02T06:00:00Z", false, ""},

		// 02:30 Berlin on the spring-forward night opens at 03:00 CEST (01:00Z).
		{"spring gap, just before", Window{Rule: &springGap, Duration: time.Hour}, "2025-03-30T00:59:59Z", false, ""},
		{"spring gap, at 03:00", Window{Rule: &springGap, Duration: time.Hour}, "2025-03-30T01:00:00Z", true, "2025-03-30T02:00:00Z"},
		{"spring gap, next day at 02:30", Window{Rule: &springGap, Duration: time.Hour}, "2025-03-31T00:30:00Z", true, "2025-03-31T01:30:00Z"},

		// Saturday 22:00 for 36 hours, across a DST change: 2025-03-29 22:00
		// CET (21:00Z) + 36h = 2025-03-31 09:00Z (11:00 CEST).
		{"weekend across DST", Window{Rule: &weekly, Duration: 36 * time.Hour}, "2025-03-31T08:59:00Z", true, "2025-03-31T09:00:00Z"},
		{"weekend across DST, ended", Window{Rule: &weekly, Duration: 36 * time.Hour}, "2025-03-31T09:00:00Z", false, ""},

		// Start and Until bound which occurrences count.
		{"until excludes later", Window{Rule: &nightly, Duration: 2 * time.Hour, Until: utc(t, "2025-05-01T00:00:00Z")}, "2025-05-01T21:30:00Z", false, ""},
		{"until includes its own start", Window{Rule: &nightly, Duration: 2 * time.Hour, Until: utc(t, "2025-05-01T21:00:00Z")}, "2025-05-01T22:30:00Z", true, "2025-05-01T23:00:00Z"},
		{"start excludes earlier", Window{Rule: &nightly, Duration: 2 * time.Hour, Start: utc(t, "2025-05-01T21:00:01Z")}, "2025-05-01T21:30:00Z", false, ""},
		{"start includes itself", Window{Rule: &nightly, Duration: 2 * time.Hour, Start: utc(t, "2025-05-01T21:00:00Z")}, "2025-05-01T21:30:00Z", true, "2025-05-01T23:00:00Z"},
	}
	for _, c := range cases {
		active, end := c.w.Active(utc(t, c.at))
		if active != c.active {
			t.Errorf("%s: Active(%s) = %v, want %v", c.name, c.at, active, c.active)
			continue
		}
		if active && !end.Equal(utc(t, c.wantEnd)) {
			t.Errorf("%s: end = %v, want %s", c.name, end.UTC(), c.wantEnd)
		}
	}
}

func TestWindowNextStart(t *testing.T) {
	loc := zone(t, "America/New_York")
	r := mustCron(t, "30 1 * * *", loc)
	oneOff := Window{Start: utc(t, "2025-05-01T10:00:00Z"), End: utc(t, "2025-05-01T12:00:00Z")}
	rec := Window{Rule: &r, Duration: time.Hour, Start: utc(t, "2025-11-01T05:30:00Z"), Until: utc(t, "2025-11-03T06:30:00Z")}
	cases := []struct {
		name  string
		w     Window
		after string
		want  string // "" for none
	}{
		{"one-off ahead", oneOff, "2025-05-01T09:00:00Z", "2025-05-01T10:00:00Z"},
		{"one-off at start", oneOff, "2025-05-01T10:00:00Z", ""},
		{"recurring before start", rec, "2025-01-01T00:00:00Z", "2025-11-01T05:30:00Z"},
		{"recurring fall back", rec, "2025-11-01T05:30:00Z", "2025-11-02T05:30:00Z"}, // 01:30 EDT, once
		{"recurring, second 01:30 is no start", rec, "2025-11-02T05:30:00Z", "2025-11-03T06:30:00Z"},
		{"recurring after until", rec, "2025-11-03T06:30:00Z", ""},
	}
	for _, c := range cases {
		got, ok := c.w.NextStart(utc(t, c.after))
		if c.want == "" {
			if ok {
				t.Errorf("%s: NextStart = %v, want none", c.name, got)
			}
			continue
		}
		if !ok || !got.Equal(utc(t, c.want)) {
			t.Errorf("%s: NextStart = %v, %v; want %s", c.name, got.UTC(), ok, c.want)
		}
	}
}

func TestWindowValidate(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	good := mustCron(t, "0 2 * * *", loc)
	never := Rule{Cron: "0 0 30 2 *", Location: loc}
	noZone := Rule{Cron: "0 2 * * *"}
	rrNoStart := Rule{RRule: "FREQ=DAILY", Location: loc}
	t0 := utc(t, "2025-05-01T10:00:00Z")
	cases := []struct {
		name string
		w    Window
		want []string // failing fields
	}{
		{"one-off ok", Window{Start: t0, End: t0.Add(time.Hour)}, nil},
		{"recurring ok", Window{Rule: &good, Duration: 2 * time.Hour}, nil},
		{"recurring ok, bounded", Window{Rule: &good, Duration: MaxRecurringDuration, Start: t0, Until: t0.AddDate(0, 1, 0)}, nil},
		{"one-off without start", Window{End: t0}, []string{"start"}},
		{"one-off without end", Window{Start: t0}, []string{"end"}},
		{"one-off end before start", Window{Start: t0, End: t0}, []string{"end"}},
		{"one-off with duration and until", Window{Start: t0, End: t0.Add(time.Hour), Duration: time.Hour, Until: t0}, []string{"duration", "until"}},
		{"recurring without duration", Window{Rule: &good}, []string{"duration"}},
		{"recurring too long", Window{Rule: &good, Duration: MaxRecurringDuration + time.Minute}, []string{"duration"}},
		{"recurring with end", Window{Rule: &good, Duration: time.Hour, End: t0}, []string{"end"}},
		{"recurring until before start", Window{Rule: &good, Duration: time.Hour, Start: t0, Until: t0}, []string{"until"}},
		{"rule never fires", Window{Rule: &never, Duration: time.Hour}, []string{"rule.cron"}},
		{"rule without zone", Window{Rule: &noZone, Duration: time.Hour}, []string{"rule.location"}},
		{"rrule without dtstart", Window{Rule: &rrNoStart, Duration: -time.Hour}, []string{"rule.dtstart", "duration"}},
	}
	for _, c := range cases {
		err := c.w.Validate()
		var fes FieldErrors
		if err != nil && !errors.As(err, &fes) {
			t.Fatalf("%s: %T is not FieldErrors", c.name, err)
		}
		var got []string
		for _, fe := range fes {
			got = append(got, fe.Field)
			if fe.Message == "" {
				t.Errorf("%s: %s has no message", c.name, fe.Field)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: failing fields %v (%v), want %v", c.name, got, err, c.want)
		}
	}
}
