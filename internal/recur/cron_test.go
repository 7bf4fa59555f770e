package recur

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseCronAccepts(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	from := time.Date(2025, 1, 1, 0, 0, 0, 0, loc) // a Wednesday
	cases := []struct {
		expr string
		want string // first occurrence after from, local
	}{
		{"30 2 * * *", "2025-01-01 02:30"},
		{"  30   2 * *   * ", "2025-01-01 02:30"},
		{"0 9 * * MON-FRI", "2025-01-01 09:00"},
		{"0 9 * * sat,sun", "2025-01-04 09:00"},
		{"0 0 1 jan *", "2026-01-01 00:00"},
		{"0 0 29 2 *", "2028-02-29 00:00"},
		{"0 0 L * *", "2025-01-31 00:00"},
		{"0 0 * * 5L", "2025-01-31 00:00"},  // last Friday
		{"0 0 * * 1#2", "2025-01-13 00:00"}, // second Monday
		{"0 0 15W * *", "2025-01-15 00:00"},
		{"0 0 13 * 5", "2025-01-03 00:00"}, // day 13 or any Friday (Vixie cron's OR)
		{"0 0 * * 7", "2025-01-05 00:00"},  // 7 is Sunday too
		{"*/20 * * * *", "2025-01-01 00:20"},
		{"5-10/5 * * * *", "2025-01-01 00:05"},
		{"@daily", "2025-01-02 00:00"},
		{"@HOURLY", "2025-01-01 01:00"},
		{"@weekly", "2025-01-05 00:00"},
		{"@monthly", "2025-02-01 00:00"},
		{"@yearly", "2026-01-01 00:00"},
	}
	for _, c := range cases {
		r, err := ParseCron(c.expr, loc)
		if err != nil {
			t.Errorf("ParseCron(%q): %v", c.expr, err)
			continue
		}
		next, ok := r.Next(from)
		if got := next.Format("2006-01-02 15:04"); !ok || got != c.want {
			t.Errorf("%q: Next = %s, %v; want %s", c.expr, got, ok, c.want)
		}
		if next.Location() != loc {
			t.Errorf("%q: Next in %v, want %v", c.expr, next.Location(), loc)
		}
	}
}

func TestParseCronRejects(t *testing.T) {
	cases := []struct {
		expr, want string
		never      bool
	}{
		{"", "empty", false},
		{"0 0 30 2 *", "never fires", true},
		{"0 0 31 2,4,6,9,11 *", "never fires", true},
		{"0 0 31 4 *", "never fires", true},
		{"0 0 30 FEB *", "never fires", true},
		{"0 0 * * * *", "seconds and years are not supported", false},
		{"0 0 1 1 * 2030", "seconds and years are not supported", false},
		{"0 0 *", "want 5", false},
		{"@reboot", "@reboot", false},
		{"@everysecond", "unknown macro", false},
		{"60 * * * *", "minute field", false},
		{"* 24 * * *", "hour field", false},
		{"* * 0 * *", "day-of-month field", false},
		{"* * 32 * *", "day-of-month field", false},
		{"* * * 13 *", "month field", false},
		{"* * * * 8", "day-of-week field", false},
		{"*/0 * * * *", "step", false},
		{"10-5 * * * *", "runs backwards", false},
		{"a * * * *", "not a value", false},
		{"-1 * * * *", "not a value", false},
		{"* * * SUN *", "month field", false},
		{"* * * * 1#6", "day-of-week field", false},
		{"1,,2 * * * *", "minute field", false},
		{strings.Repeat("1,", 200) + "1 * * * *", "longer than", false},
	}
	loc := zone(t, "UTC")
	for _, c := range cases {
		_, err := ParseCron(c.expr, loc)
		if err == nil {
			t.Errorf("ParseCron(%q) accepted", c.expr)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseCron(%q) = %q, want it to mention %q", c.expr, err, c.want)
		}
		if errors.Is(err, ErrNeverFires) != c.never {
			t.Errorf("ParseCron(%q): errors.Is(ErrNeverFires) = %v", c.expr, !c.never)
		}
	}
	if _, err := ParseCron("* * * * *", nil); err == nil {
		t.Error("ParseCron without a location accepted")
	}
}

// A rule written by hand that would not parse has no occurrences rather
// than a wrong one.
func TestInvalidRuleHasNoOccurrences(t *testing.T) {
	for _, r := range []Rule{
		{},
		{Cron: "0 0 30 2 *", Location: time.UTC},
		{Cron: "bad", Location: time.UTC},
		{Cron: "* * * * *", RRule: "FREQ=DAILY", Location: time.UTC},
		{RRule: "FREQ=DAILY", Location: time.UTC}, // no DTSTART
	} {
		if v, ok := r.Next(time.Now()); ok {
			t.Errorf("%+v: Next = %v", r, v)
		}
		if v, ok := r.Prev(time.Now()); ok {
			t.Errorf("%+v: Prev = %v", r, v)
		}
		if r.Validate() == nil {
			t.Errorf("%+v: Validate passed", r)
		}
	}
}

// Rare but valid expressions are found however far away they are.
func TestCronFarOccurrences(t *testing.T) {
	loc := zone(t, "Europe/Berlin")
	cases := []struct{ expr, from, want string }{
		{"0 0 29 2 */7", "2033-01-01T00:00:00Z", "2060-02-29"}, // February 29th on a Sunday
		{"0 0 * 2 1#5", "2017-01-01T00:00:00Z", "2044-02-29"},  // a fifth Monday in February
		{"30 2 29 2 *", "2097-01-01T00:00:00Z", "2104-02-29"},  // 2100 is not a leap year
	}
	for _, c := range cases {
		r := mustCron(t, c.expr, loc)
		next, ok := r.Next(utc(t, c.from))
		if !ok || next.Format("2006-01-02") != c.want {
			t.Errorf("%q after %s: %v, %v; want %s", c.expr, c.from, next, ok, c.want)
		}
		if prev, ok := r.Prev(next.Add(365 * 24 * time.Hour)); !ok || !prev.Equal(next) {
			t.Errorf("%q: Prev a year later = %v, %v; want %v", c.expr, prev, ok, next)
		}
	}
}
