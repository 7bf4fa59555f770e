package recur

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/teambition/rrule-go"
)

// Limits on an RRULE: they keep every evaluation bounded.
const (
	MaxRRuleLen      = 512
	MaxRRuleCount    = 10000 // COUNT: a rule with COUNT is walked from DTSTART
	MaxRRuleInterval = 1000
	MaxTimesPerDay   = 96 // BYHOUR × BYMINUTE; denser schedules belong in cron
)

// rruleFreqs are the frequencies a rule may use. Sub-daily ones are left to
// cron, whose real-time rules suit them (see the package comment).
var rruleFreqs = map[string]bool{"DAILY": true, "WEEKLY": true, "MONTHLY": true, "YEARLY": true}

// rruleKeys are the RFC 5545 rule parts accepted; BYSECOND is not (whole
// minutes, as with cron), nor rrule-go's non-standard BYEASTER.
var rruleKeys = map[string]bool{
	"FREQ": true, "INTERVAL": true, "COUNT": true, "UNTIL": true, "WKST": true,
	"BYMONTH": true, "BYMONTHDAY": true, "BYYEARDAY": true, "BYWEEKNO": true,
	"BYDAY": true, "BYHOUR": true, "BYMINUTE": true, "BYSETPOS": true,
}

// ParseRRule parses an RFC 5545 recurrence rule ("FREQ=WEEKLY;BYDAY=MO",
// with or without an "RRULE:" prefix) anchored at dtstart. The anchor is
// dtstart's wall time in loc (dtstart.In(loc)), truncated to the second.
// Note that time.Date moves a wall time inside a spring-forward gap forward
// by the gap's length, so pick an anchor outside the gap.
func ParseRRule(rule string, dtstart time.Time, loc *time.Location) (Rule, error) {
	if loc == nil {
		return Rule{}, errors.New("a time zone is required")
	}
	if dtstart.IsZero() {
		return Rule{}, errors.New("rrule needs a start (DTSTART)")
	}
	r := Rule{RRule: canonicalRRule(rule), Location: loc, DTStart: dtstart.In(loc).Truncate(time.Second)}
	seq, err := compileRRule(r.RRule, r.DTStart, loc)
	if err != nil {
		return Rule{}, err
	}
	if _, ok := seq.after(seq.opt.Dtstart.Add(-time.Second)); !ok {
		return Rule{}, fmt.Errorf("rrule %q %w: no date from its start matches all its parts", r.RRule, ErrNeverFires)
	}
	return r, nil
}

func canonicalRRule(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	return strings.TrimSpace(strings.TrimPrefix(s, "RRULE:"))
}

// rruleSeq is a rule over wall times (see zone.go). opt has every default
// that rrule-go would derive from DTSTART made explicit, so that the rule
// can be restarted at a later period without changing its occurrences.
type rruleSeq struct{ opt rrule.ROption }

func compileRRule(text string, dtstart time.Time, loc *time.Location) (rruleSeq, error) {
	text = canonicalRRule(text)
	if dtstart.IsZero() {
		return rruleSeq{}, errors.New("rrule needs a start (DTSTART)")
	}
	if err := checkRRuleText(text); err != nil {
		return rruleSeq{}, err
	}
	o, err := rrule.StrToROption(text) // local times read as wall times
	if err != nil {
		return rruleSeq{}, fmt.Errorf("rrule %q: %w", text, err)
	}
	ds := dtstart.In(loc)
	y, mo, d := ds.Date()
	h, mi, s := ds.Clock()
	o.Dtstart = time.Date(y, mo, d, h, mi, s, 0, time.UTC)
	if !o.Until.IsZero() {
		o.Until = untilWall(text, o.Until, loc)
	}
	if err := checkRRuleOption(text, o); err != nil {
		return rruleSeq{}, err
	}
	explicitDefaults(o)
	if !someMonthHasDay(o) {
		return rruleSeq{}, fmt.Errorf("rrule %q %w: no month it allows has a day it names", text, ErrNeverFires)
	}
	if _, err := rrule.NewRRule(*o); err != nil {
		return rruleSeq{}, fmt.Errorf("rrule %q: %w", text, err)
	}
	return rruleSeq{opt: *o}, nil
}

// checkRRuleText rejects what rrule-go would accept but we do not:
// DTSTART inside the rule, unknown or repeated parts.
func checkRRuleText(text string) error {
	switch {
	case text == "":
		return errors.New("rrule is empty")
	case len(text) > MaxRRuleLen:
		return fmt.Errorf("rrule is longer than %d characters", MaxRRuleLen)
	case strings.ContainsAny(text, "\r\n"):
		return errors.New("rrule must be a single RRULE line; pass DTSTART separately")
	}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(text, ";") {
		key, _, ok := strings.Cut(part, "=")
		switch {
		case !ok:
			return fmt.Errorf("rrule %q: part %q is not NAME=VALUE", text, part)
		case key == "DTSTART":
			return fmt.Errorf("rrule %q: DTSTART is not part of the rule; pass it separately", text)
		case !rruleKeys[key]:
			return fmt.Errorf("rrule %q: %s is not supported", text, key)
		case seen[key]:
			return fmt.Errorf("rrule %q: %s appears twice", text, key)
		}
		seen[key] = true
	}
	if !seen["FREQ"] {
		return fmt.Errorf("rrule %q: FREQ is required", text)
	}
	if seen["COUNT"] && seen["UNTIL"] {
		return fmt.Errorf("rrule %q: COUNT and UNTIL cannot both be given", text)
	}
	return nil
}

func checkRRuleOption(text string, o *rrule.ROption) error {
	freq := o.Freq.String()
	switch {
	case !rruleFreqs[freq]:
		return fmt.Errorf("rrule %q: FREQ=%s is not supported; use DAILY, WEEKLY, MONTHLY or YEARLY, or a cron expression for schedules within a day", text, freq)
	case strings.Contains(text, "INTERVAL=") && (o.Interval < 1 || o.Interval > MaxRRuleInterval):
		return fmt.Errorf("rrule %q: INTERVAL must be from 1 to %d", text, MaxRRuleInterval)
	case strings.Contains(text, "COUNT=") && (o.Count < 1 || o.Count > MaxRRuleCount):
		return fmt.Errorf("rrule %q: COUNT must be from 1 to %d", text, MaxRRuleCount)
	case max(len(o.Byhour), 1)*max(len(o.Byminute), 1) > MaxTimesPerDay:
		return fmt.Errorf("rrule %q: at most %d times a day (BYHOUR × BYMINUTE); use a cron expression for denser schedules", text, MaxTimesPerDay)
	}
	return nil
}

// untilWall turns a parsed UNTIL into a wall time: with "Z" it is an
// instant, read in loc; a date alone covers its whole day.
func untilWall(text string, until time.Time, loc *time.Location) time.Time {
	var val string
	for part := range strings.SplitSeq(text, ";") {
		if v, ok := strings.CutPrefix(part, "UNTIL="); ok {
			val = v
		}
	}
	switch {
	case strings.HasSuffix(val, "Z"):
		lt := until.In(loc)
		y, mo, d := lt.Date()
		h, mi, s := lt.Clock()
		return time.Date(y, mo, d, h, mi, s, 0, time.UTC)
	case len(val) == len(rrule.DateFormat):
		return until.Add(24*time.Hour - time.Second)
	}
	return until
}

// someMonthHasDay is the quick check for the common rule that never fires,
// such as BYMONTH=2;BYMONTHDAY=30. The probe in ParseRRule catches the rest.
func someMonthHasDay(o *rrule.ROption) bool {
	if len(o.Bymonthday) == 0 {
		return true
	}
	months := o.Bymonth
	if len(months) == 0 {
		months = []int{1}
	}
	for _, m := range months {
		days := 29 // February, in a leap year
		switch m {
		case 4, 6, 9, 11:
			days = 30
		case 1, 3, 5, 7, 8, 10, 12:
			days = 31
		}
		for _, d := range o.Bymonthday {
			if d != 0 && d <= days && d >= -days {
				return true
			}
		}
	}
	return false
}

var pyWeekdays = [7]rrule.Weekday{rrule.SU, rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA}

// explicitDefaults writes down what RFC 5545 takes from DTSTART when a
// part is missing (the same choices rrule-go makes).
func explicitDefaults(o *rrule.ROption) {
	ds := o.Dtstart
	if len(o.Byweekno) == 0 && len(o.Byyearday) == 0 && len(o.Bymonthday) == 0 && len(o.Byweekday) == 0 {
		switch o.Freq {
		case rrule.YEARLY:
			if len(o.Bymonth) == 0 {
				o.Bymonth = []int{int(ds.Month())}
			}
			o.Bymonthday = []int{ds.Day()}
		case rrule.MONTHLY:
			o.Bymonthday = []int{ds.Day()}
		case rrule.WEEKLY:
			o.Byweekday = []rrule.Weekday{pyWeekdays[ds.Weekday()]}
		}
	}
	if len(o.Byhour) == 0 {
		o.Byhour = []int{ds.Hour()}
	}
	if len(o.Byminute) == 0 {
		o.Byminute = []int{ds.Minute()}
	}
	o.Bysecond = []int{ds.Second()}
	if o.Interval < 1 {
		o.Interval = 1
	}
}
