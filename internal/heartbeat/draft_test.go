package heartbeat

import (
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // real zones even where /usr/share/zoneinfo is missing

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/recur"
)

func cronDraft() Draft {
	return Draft{Name: "Nightly backup", Schedule: Schedule{Cron: "30 2 * * *", Timezone: "Europe/Berlin", GraceSeconds: 600}}
}

func periodDraft() Draft {
	return Draft{Name: "Queue worker", Schedule: Schedule{PeriodSeconds: 3600}}
}

// cronErr is recur's own message for a bad expression, which Normalize
// must pass on unchanged.
func cronErr(t *testing.T, expr string) string {
	t.Helper()
	_, err := recur.ParseCron(expr, time.UTC)
	if err == nil {
		t.Fatalf("ParseCron(%q) accepted it", expr)
	}
	return err.Error()
}

func fe(ptr, msg string) errs.FieldError { return errs.FieldError{Pointer: ptr, Message: msg} }

func TestNormalize(t *testing.T) {
	const (
		both     = "must have either periodSeconds or cron, not both"
		neither  = "must have periodSeconds or cron"
		period   = "must be between 60 and 31536000"
		badZone  = "must be an IANA time zone name such as Europe/Berlin or UTC"
		zoneOnly = "is only allowed with cron"
		grace    = "must be between 0 and 31536000"
		runtime  = "must be between 0 and 604800 (0: no overrun check)"
	)
	cases := []struct {
		name  string
		draft func() Draft
		edit  func(d *Draft)
		want  []errs.FieldError // nil: valid
	}{
		{"valid cron in a time zone", cronDraft, func(d *Draft) {}, nil},
		{"valid period", periodDraft, func(d *Draft) {}, nil},
		{"valid macro", cronDraft, func(d *Draft) { d.Schedule.Cron = "@hourly" }, nil},
		{"valid extensions", cronDraft, func(d *Draft) { d.Schedule.Cron = "0 22 L * *" }, nil},

		{"blank name", cronDraft, func(d *Draft) { d.Name = " \t " }, []errs.FieldError{fe("/name", "must not be empty")}},
		{"name of 200 runes", cronDraft, func(d *Draft) { d.Name = strings.Repeat("é", 200) }, nil},
		{"name of 201 runes", cronDraft, func(d *Draft) { d.Name = strings.Repeat("é", 201) },
			[]errs.FieldError{fe("/name", "must be at most 200 characters")}},
		{"name with a line break", cronDraft, func(d *Draft) { d.Name = "backup\nlogs" },
			[]errs.FieldError{fe("/name", "must not contain control characters")}},
		{"name with NUL", cronDraft, func(d *Draft) { d.Name = "backup\x00" },
			[]errs.FieldError{fe("/name", "must not contain control characters")}},
		{"name with DEL", cronDraft, func(d *Draft) { d.Name = "back\x7fup" },
			[]errs.FieldError{fe("/name", "must not contain control characters")}},

		{"period and cron", cronDraft, func(d *Draft) { d.Schedule.PeriodSeconds = 3600 },
			[]errs.FieldError{fe("/schedule", both)}},
		{"neither period nor cron", periodDraft, func(d *Draft) { d.Schedule.PeriodSeconds = 0 },
			[]errs.FieldError{fe("/schedule", neither)}},
		{"cron of blanks only", periodDraft, func(d *Draft) { d.Schedule = Schedule{Cron: " \t "} },
			[]errs.FieldError{fe("/schedule", neither)}},

		{"period 59", periodDraft, func(d *Draft) { d.Schedule.PeriodSeconds = 59 }, []errs.FieldError{fe("/schedule/periodSeconds", period)}},
		{"period 60", periodDraft, func(d *Draft) { d.Schedule.PeriodSeconds = 60 }, nil},
		{"period 365 days", periodDraft, func(d *Draft) { d.Schedule.PeriodSeconds = MaxPeriodSeconds }, nil},
		{"period above 365 days", periodDraft, func(d *Draft) { d.Schedule.PeriodSeconds = MaxPeriodSeconds + 1 },
			[]errs.FieldError{fe("/schedule/periodSeconds", period)}},
		{"negative period", periodDraft, func(d *Draft) { d.Schedule.PeriodSeconds = -3600 },
			[]errs.FieldError{fe("/schedule/periodSeconds", period)}},

		{"cron with seconds", cronDraft, func(d *Draft) { d.Schedule.Cron = "0 30 2 * * *" },
			[]errs.FieldError{fe("/schedule/cron", cronErr(t, "0 30 2 * * *"))}},
		{"cron out of range", cronDraft, func(d *Draft) { d.Schedule.Cron = "30 24 * * *" },
			[]errs.FieldError{fe("/schedule/cron", cronErr(t, "30 24 * * *"))}},
		{"cron that never fires", cronDraft, func(d *Draft) { d.Schedule.Cron = "0 0 30 2 *" },
			[]errs.FieldError{fe("/schedule/cron", cronErr(t, "0 0 30 2 *"))}},
		{"@reboot", cronDraft, func(d *Draft) { d.Schedule.Cron = "@reboot" },
			[]errs.FieldError{fe("/schedule/cron", cronErr(t, "@reboot"))}},

		{"unknown time zone", cronDraft, func(d *Draft) { d.Schedule.Timezone = "Mars/Olympus_Mons" },
			[]errs.FieldError{fe("/schedule/timezone", badZone)}},
		{"Local", cronDraft, func(d *Draft) { d.Schedule.Timezone = "Local" },
			[]errs.FieldError{fe("/schedule/timezone", badZone)}},
		{"path as a time zone", cronDraft, func(d *Draft) { d.Schedule.Timezone = "../../etc/passwd" },
			[]errs.FieldError{fe("/schedule/timezone", badZone)}},
		{"time zone with a period", periodDraft, func(d *Draft) { d.Schedule.Timezone = "Europe/Berlin" },
			[]errs.FieldError{fe("/schedule/timezone", zoneOnly)}},
		{"UTC with a period", periodDraft, func(d *Draft) { d.Schedule.Timezone = "UTC" },
			[]errs.FieldError{fe("/schedule/timezone", zoneOnly)}},

		{"negative grace", cronDraft, func(d *Draft) { d.Schedule.GraceSeconds = -1 },
			[]errs.FieldError{fe("/schedule/graceSeconds", grace)}},
		{"grace of 365 days", cronDraft, func(d *Draft) { d.Schedule.GraceSeconds = MaxGraceSeconds }, nil},
		{"grace above 365 days", cronDraft, func(d *Draft) { d.Schedule.GraceSeconds = MaxGraceSeconds + 1 },
			[]errs.FieldError{fe("/schedule/graceSeconds", grace)}},

		{"max runtime 1 s", cronDraft, func(d *Draft) { d.MaxRuntimeSeconds = 1 }, nil},
		{"max runtime 7 days", cronDraft, func(d *Draft) { d.MaxRuntimeSeconds = MaxRuntimeLimitSeconds }, nil},
		{"max runtime above 7 days", cronDraft, func(d *Draft) { d.MaxRuntimeSeconds = MaxRuntimeLimitSeconds + 1 },
			[]errs.FieldError{fe("/maxRuntimeSeconds", runtime)}},
		{"negative max runtime", cronDraft, func(d *Draft) { d.MaxRuntimeSeconds = -1 },
			[]errs.FieldError{fe("/maxRuntimeSeconds", runtime)}},

		{"every failing field at once", cronDraft, func(d *Draft) {
			*d = Draft{Name: "", Schedule: Schedule{PeriodSeconds: 10, Cron: "* * *", Timezone: "Nowhere/Land", GraceSeconds: -5}, MaxRuntimeSeconds: -1}
		}, []errs.FieldError{
			fe("/name", "must not be empty"),
			fe("/schedule", both),
			fe("/schedule/periodSeconds", period),
			fe("/schedule/cron", cronErr(t, "* * *")),
			fe("/schedule/timezone", badZone),
			fe("/schedule/graceSeconds", grace),
			fe("/maxRuntimeSeconds", runtime),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.draft()
			c.edit(&d)
			got := d.Normalize()
			if !slices.Equal(got, c.want) {
				t.Errorf("Normalize() = %q\nwant         %q", got, c.want)
			}
		})
	}
}

func TestNormalizeDefaults(t *testing.T) {
	cases := []struct {
		name string
		in   Draft
		want Draft
	}{
		{"cron: spaces, UTC and grace",
			Draft{Name: "  Backup\t", Schedule: Schedule{Cron: "  30\t 2 * *  *\n"}},
			Draft{Name: "Backup", Schedule: Schedule{Cron: "30 2 * * *", Timezone: "UTC", GraceSeconds: DefaultGraceSeconds}}},
		{"cron: time zone trimmed, grace kept",
			Draft{Name: "Backup", Schedule: Schedule{Cron: "@daily", Timezone: " Europe/Berlin ", GraceSeconds: 60}, MaxRuntimeSeconds: 600},
			Draft{Name: "Backup", Schedule: Schedule{Cron: "@daily", Timezone: "Europe/Berlin", GraceSeconds: 60}, MaxRuntimeSeconds: 600}},
		{"period: no time zone",
			Draft{Name: "Worker", Schedule: Schedule{PeriodSeconds: 300}, Paused: true},
			Draft{Name: "Worker", Schedule: Schedule{PeriodSeconds: 300, GraceSeconds: DefaultGraceSeconds}, Paused: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.in
			if problems := d.Normalize(); len(problems) != 0 {
				t.Fatalf("Normalize() = %v, want no errors", problems)
			}
			if d != c.want {
				t.Errorf("normalized to %+v\nwant          %+v", d, c.want)
			}
		})
	}
}

func TestCompile(t *testing.T) {
	valid := []Schedule{
		{PeriodSeconds: 60},
		{PeriodSeconds: 86400, GraceSeconds: 0},
		{Cron: "30 2 * * *", Timezone: "Europe/Berlin", GraceSeconds: 300},
		{Cron: "*/5 * * * *"}, // no time zone: UTC
	}
	for _, s := range valid {
		if _, err := s.Compile(); err != nil {
			t.Errorf("Compile(%+v) = %v, want a plan", s, err)
		}
	}
	invalid := []struct {
		s    Schedule
		want string // a part of the error
	}{
		{Schedule{}, "/schedule: must have periodSeconds or cron"},
		{Schedule{PeriodSeconds: 60, Cron: "* * * * *"}, "/schedule: must have either"},
		{Schedule{PeriodSeconds: 30}, "/schedule/periodSeconds: must be between"},
		{Schedule{Cron: "61 * * * *"}, "/schedule/cron: "},
		{Schedule{Cron: "* * * * *", Timezone: "Local"}, "/schedule/timezone: "},
		{Schedule{PeriodSeconds: 60, Timezone: "UTC"}, "/schedule/timezone: is only allowed with cron"},
		{Schedule{PeriodSeconds: 60, GraceSeconds: -1}, "/schedule/graceSeconds: "},
	}
	for _, c := range invalid {
		_, err := c.s.Compile()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%+v) = %v, want an error containing %q", c.s, err, c.want)
		}
	}
}
