package recur

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/adhocore/gronx"
)

// ErrNeverFires is wrapped by the parse errors of rules that match no
// instant at all, such as "0 0 30 2 *" (February 30th).
var ErrNeverFires = errors.New("never fires")

// MaxCronLen bounds the text of a cron expression.
const MaxCronLen = 256

var cronMacros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// cronField describes one of the five fields for validation.
type cronField struct {
	name     string
	min, max int
	names    []string // symbolic values, index + min is the value
	extra    *regexp.Regexp
}

var cronFields = [5]cronField{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day-of-month", min: 1, max: 31, extra: regexp.MustCompile(`^(\?|L|[0-9]{1,2}W)$`)},
	{name: "month", min: 1, max: 12, names: strings.Fields("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC")},
	{name: "day-of-week", min: 0, max: 7, names: strings.Fields("SUN MON TUE WED THU FRI SAT"),
		extra: regexp.MustCompile(`^(\?|[0-7]L|[0-7]#[1-5])$`)},
}

// ParseCron parses a five-field cron expression evaluated in loc. It
// rejects seconds and year fields, @reboot, and expressions that never
// fire; errors say which field is wrong.
func ParseCron(expr string, loc *time.Location) (Rule, error) {
	if loc == nil {
		return Rule{}, errors.New("a time zone is required")
	}
	expr = strings.Join(strings.Fields(expr), " ")
	norm, err := normalizeCron(expr)
	if err != nil {
		return Rule{}, err
	}
	if err := checkCronFires(expr, norm); err != nil {
		return Rule{}, err
	}
	return Rule{Cron: expr, Location: loc}, nil
}

// normalizeCron validates expr and returns it as five upper-case fields
// separated by single spaces, macros expanded.
func normalizeCron(expr string) (string, error) {
	expr = strings.TrimSpace(expr)
	switch {
	case expr == "":
		return "", errors.New("cron expression is empty")
	case len(expr) > MaxCronLen:
		return "", fmt.Errorf("cron expression is longer than %d characters", MaxCronLen)
	case strings.HasPrefix(expr, "@"):
		m, ok := cronMacros[strings.ToLower(expr)]
		if !ok {
			if strings.EqualFold(expr, "@reboot") {
				return "", errors.New("@reboot has no schedule to monitor; use a time-based expression")
			}
			return "", fmt.Errorf("unknown macro %q (use @yearly, @monthly, @weekly, @daily or @hourly)", expr)
		}
		expr = m
	}
	fields := strings.Fields(strings.ToUpper(expr))
	switch n := len(fields); {
	case n == 6 || n == 7:
		return "", fmt.Errorf("cron expression has %d fields; seconds and years are not supported: use 5 (minute hour day-of-month month day-of-week)", n)
	case n != 5:
		return "", fmt.Errorf("cron expression has %d fields; want 5 (minute hour day-of-month month day-of-week)", n)
	}
	for i, f := range fields {
		if err := cronFields[i].check(f); err != nil {
			return "", err
		}
	}
	norm := strings.Join(fields, " ")
	if !gronxValid(norm) {
		return "", fmt.Errorf("cron expression %q is not valid", expr)
	}
	return norm, nil
}

// checkCronFires rejects a normalized expression that never fires. Five
// field patterns repeat every 400 years and none that fires at all leaves a
// gap of more than about 40, so asking for one tick is enough.
func checkCronFires(expr, norm string) error {
	if _, ok := (cronSeq{expr: norm}).after(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)); !ok {
		return fmt.Errorf("cron expression %q %w: no date matches its day-of-month, month and day-of-week fields", expr, ErrNeverFires)
	}
	return nil
}

// check validates one field's list of values, ranges and steps.
func (c cronField) check(field string) error {
	for part := range strings.SplitSeq(field, ",") {
		if c.extra != nil && c.extra.MatchString(part) {
			if err := c.checkExtra(part); err != nil {
				return err
			}
			continue
		}
		if err := c.checkPart(part); err != nil {
			return fmt.Errorf("%s field %q: %w", c.name, field, err)
		}
	}
	return nil
}

func (c cronField) checkExtra(part string) error {
	digits := strings.TrimRight(strings.SplitN(part, "#", 2)[0], "LW?")
	if digits == "" {
		return nil
	}
	v, _ := strconv.Atoi(digits)
	if v < c.min || v > c.max {
		return fmt.Errorf("%s field: %q is out of range %d-%d", c.name, part, c.min, c.max)
	}
	return nil
}

func (c cronField) checkPart(part string) error {
	rng, step, hasStep := strings.Cut(part, "/")
	if hasStep {
		n, err := strconv.Atoi(step)
		if err != nil || n < 1 || n > c.max+1 {
			return fmt.Errorf("step %q must be a number from 1 to %d", step, c.max+1)
		}
	}
	if rng == "*" {
		return nil
	}
	from, to, isRange := strings.Cut(rng, "-")
	lo, err := c.value(from)
	if err != nil {
		return err
	}
	if !isRange {
		return nil
	}
	hi, err := c.value(to)
	if err != nil {
		return err
	}
	if hi < lo {
		return fmt.Errorf("range %q runs backwards", rng)
	}
	return nil
}

func (c cronField) value(s string) (int, error) {
	for i, n := range c.names {
		if s == n {
			return i + c.min, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || s == "" || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("%q is not a value", s)
	}
	if v < c.min || v > c.max {
		return 0, fmt.Errorf("%d is out of range %d-%d", v, c.min, c.max)
	}
	return v, nil
}

func gronxValid(norm string) (ok bool) {
	defer contain(&ok)
	return gronx.IsValid(norm)
}

// cronFixed reports whether a normalized expression runs at specific wall
// times (neither minute nor hour field starts with "*"): those get the
// gap and fold rules; the others follow real elapsed time.
func cronFixed(norm string) bool {
	f := strings.Fields(norm)
	return !strings.HasPrefix(f[0], "*") && !strings.HasPrefix(f[1], "*")
}

// cronSeq is a normalized cron expression over wall times (see zone.go).
type cronSeq struct{ expr string }

func (c cronSeq) after(w time.Time) (t time.Time, ok bool) {
	defer contain(&ok)
	base := w.Truncate(time.Minute) // ticks are whole minutes
	t, err := gronx.NextTickAfter(c.expr, base, false)
	return t, err == nil && t.After(w)
}

func (c cronSeq) atOrBefore(w time.Time) (t time.Time, ok bool) {
	defer contain(&ok)
	base := w.Truncate(time.Minute)
	t, err := gronx.PrevTickBefore(c.expr, base, true)
	return t, err == nil && !t.After(w) && t.Second() == 0
}

// contain turns a panic in a dependency into "no occurrence": a malformed
// rule must not take the scheduler down.
func contain(ok *bool) {
	if recover() != nil {
		*ok = false
	}
}
