package recur

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/teambition/rrule-go"
)

func TestParseRRuleRejects(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	ds := time.Date(2025, 1, 6, 9, 0, 0, 0, loc)
	cases := []struct {
		rule, want string
		never      bool
	}{
		{"", "empty", false},
		{"INTERVAL=2", "FREQ is required", false},
		{"FREQ=HOURLY", "FREQ=HOURLY is not supported", false},
		{"FREQ=MINUTELY;INTERVAL=5", "FREQ=MINUTELY is not supported", false},
		{"FREQ=FORTNIGHTLY", "FORTNIGHTLY", false},
		{"FREQ=DAILY;BYSECOND=0", "BYSECOND is not supported", false},
		{"FREQ=DAILY;X-NAME=1", "X-NAME is not supported", false},
		{"FREQ=DAILY;FREQ=WEEKLY", "FREQ appears twice", false},
		{"FREQ=DAILY;COUNT=0", "COUNT must be from 1", false},
		{"FREQ=DAILY;COUNT=100001", "COUNT must be from 1", false},
		{"FREQ=DAILY;INTERVAL=0", "INTERVAL must be from 1", false},
		{"FREQ=DAILY;COUNT=2;UNTIL=20300101T000000Z", "COUNT and UNTIL", false},
		{"DTSTART=20250101T000000;FREQ=DAILY", "DTSTART", false},
		{"DTSTART:20250101T000000Z\nRRULE:FREQ=DAILY", "single RRULE line", false},
		{"FREQ=DAILY;BYHOUR=24", "byhour", false},
		{"FREQ=DAILY;BYDAY=XX", "weekday", false},
		{"FREQ=DAILY;INTERVAL", "not NAME=VALUE", false},
		{"FREQ=DAILY;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11;BYMINUTE=0,5,10,15,20,25,30,35,40,45", "at most 96 times a day", false},
		{"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "never fires", true},
		{"FREQ=MONTHLY;BYMONTH=4,6;BYMONTHDAY=31", "never fires", true},
		{"FREQ=DAILY;INTERVAL=7;BYDAY=TU", "never fires", true}, // every 7 days from a Monday
		{"FREQ=DAILY;UNTIL=20240101T000000Z", "never fires", true},
	}
	for _, c := range cases {
		_, err := ParseRRule(c.rule, ds, loc)
		if err == nil {
			t.Errorf("ParseRRule(%q) accepted", c.rule)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseRRule(%q) = %q, want it to mention %q", c.rule, err, c.want)
		}
		if errors.Is(err, ErrNeverFires) != c.never {
			t.Errorf("ParseRRule(%q): errors.Is(ErrNeverFires) = %v", c.rule, !c.never)
		}
	}
	if _, err := ParseRRule("FREQ=DAILY", time.Time{}, loc); err == nil {
		t.Error("ParseRRule without DTSTART accepted")
	}
	if _, err := ParseRRule("FREQ=DAILY", ds, nil); err == nil {
		t.Error("ParseRRule without a location accepted")
	}
}

func TestParseRRuleForms(t *testing.T) {
	loc := zone(t, "America/New_York")
	ds := time.Date(2025, 1, 6, 9, 0, 0, 0, loc) // a Monday
	for _, s := range []string{"FREQ=WEEKLY;BYDAY=WE", "RRULE:FREQ=WEEKLY;BYDAY=WE", " rrule:freq=weekly;byday=we "} {
		r := mustRRule(t, s, ds, loc)
		if r.RRule != "FREQ=WEEKLY;BYDAY=WE" {
			t.Errorf("%q stored as %q", s, r.RRule)
		}
		next, ok := r.Next(ds)
		if !ok || next.Format(time.DateTime) != "2025-01-08 09:00:00" {
			t.Errorf("%q: Next = %v, %v", s, next, ok)
		}
	}
	// DTSTART given in another zone is read as that instant in loc.
	r := mustRRule(t, "FREQ=DAILY", ds.UTC(), loc)
	if !r.DTStart.Equal(ds) || r.DTStart.Location() != loc {
		t.Errorf("DTStart = %v, want %v", r.DTStart, ds)
	}
	if next, _ := r.Next(ds); next.Format(time.DateTime) != "2025-01-07 09:00:00" {
		t.Errorf("Next = %v", next)
	}
}

func TestRRuleCountAndUntil(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	ds := time.Date(2025, 1, 1, 2, 30, 0, 0, loc) // 01:30Z
	cases := []struct {
		rule string
		want int // occurrences, from Jan 1st on
	}{
		{"FREQ=DAILY;COUNT=3", 3},
		{"FREQ=DAILY;UNTIL=20250105T013000Z", 5}, // the instant of the fifth
		{"FREQ=DAILY;UNTIL=20250105T012959Z", 4},
		{"FREQ=DAILY;UNTIL=20250105T023000", 5}, // a wall time in loc
		{"FREQ=DAILY;UNTIL=20250105", 5},        // the whole day
		{"FREQ=DAILY;UNTIL=20250105T000000", 4},
		{"FREQ=WEEKLY;BYDAY=MO,FR;COUNT=4", 4},
		{"FREQ=MONTHLY;BYMONTHDAY=31;COUNT=3", 3}, // Jan, Mar, May
	}
	for _, c := range cases {
		r := mustRRule(t, c.rule, ds, loc)
		occ := occurrences(t, r, ds.Add(-time.Hour), ds.AddDate(2, 0, 0))
		if len(occ) != c.want {
			t.Errorf("%s: %d occurrences %v, want %d", c.rule, len(occ), utcStrings(occ), c.want)
			continue
		}
		last := occ[len(occ)-1]
		if v, ok := r.Next(last); ok {
			t.Errorf("%s: Next after the last = %v", c.rule, v)
		}
		if v, ok := r.Prev(last.AddDate(50, 0, 0)); !ok || !v.Equal(last) {
			t.Errorf("%s: Prev long after = %v, %v; want %v", c.rule, v, ok, last)
		}
		if v, ok := r.Prev(occ[0].Add(-time.Second)); ok {
			t.Errorf("%s: Prev before the first = %v", c.rule, v)
		}
	}
	r := mustRRule(t, "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=3", ds, loc)
	if got := utcStrings(occurrences(t, r, ds, ds.AddDate(1, 0, 0))); !slices.Equal(got,
		[]string{"2025-01-31T01:30:00Z", "2025-03-31T00:30:00Z", "2025-05-31T00:30:00Z"}) {
		t.Errorf("BYMONTHDAY=31: %v", got)
	}
}

// Restarting a rule at a later period (to avoid walking from DTSTART on
// every call) must not change its occurrences: compare with rrule-go run
// from DTSTART.
func TestRRuleRestartKeepsOccurrences(t *testing.T) {
	rules := []string{
		"FREQ=DAILY", "FREQ=DAILY;INTERVAL=3", "FREQ=DAILY;INTERVAL=10;BYHOUR=1,13;BYMINUTE=5",
		"FREQ=WEEKLY", "FREQ=WEEKLY;INTERVAL=2", "FREQ=WEEKLY;INTERVAL=3;BYDAY=MO,SU;WKST=SU",
		"FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH,SA;WKST=WE",
		"FREQ=MONTHLY", "FREQ=MONTHLY;INTERVAL=5;BYMONTHDAY=-1,15", "FREQ=MONTHLY;BYDAY=2TU,-1FR",
		"FREQ=MONTHLY;INTERVAL=2;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
		"FREQ=YEARLY", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
		"FREQ=YEARLY;BYYEARDAY=100,-1", "FREQ=YEARLY;INTERVAL=2;BYMONTH=3,10;BYDAY=-1SU;BYHOUR=2;BYMINUTE=30",
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, text := range rules {
		for _, ds := range []time.Time{
			time.Date(2019, 5, 17, 10, 45, 0, 0, time.UTC),
			time.Date(2020, 2, 29, 23, 59, 0, 0, time.UTC),
			time.Date(2021, 1, 3, 0, 0, 0, 0, time.UTC),
		} {
			seq, err := compileRRule(text, ds, time.UTC)
			if err != nil {
				t.Fatalf("%s: %v", text, err)
			}
			ref, err := rrule.NewRRule(seq.opt)
			if err != nil {
				t.Fatal(err)
			}
			for range 25 {
				w := ds.Add(time.Duration(rnd.Int64N(int64(8 * 365 * 24 * time.Hour)))).Truncate(time.Minute)
				want := ref.After(w, false)
				got, ok := seq.after(w)
				if ok != !want.IsZero() || (ok && !got.Equal(want)) {
					t.Fatalf("%s from %v: after(%v) = %v, %v; rrule-go says %v", text, ds, w, got, ok, want)
				}
				want = ref.Before(w, true)
				got, ok = seq.atOrBefore(w)
				if ok != !want.IsZero() || (ok && !got.Equal(want)) {
					t.Fatalf("%s from %v: atOrBefore(%v) = %v, %v; rrule-go says %v", text, ds, w, got, ok, want)
				}
			}
		}
	}
}
