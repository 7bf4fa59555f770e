package heartbeat

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/recur"
)

// Limits on a heartbeat's configuration.
const (
	MinPeriodSeconds       = 60
	MaxPeriodSeconds       = 31_536_000 // 365 days
	DefaultGraceSeconds    = 300
	MaxGraceSeconds        = 31_536_000
	MaxRuntimeLimitSeconds = 604_800  // 7 days; maxRuntimeSeconds 0 = no overrun check
	MaxPingBody            = 10 << 10 // 10 KiB kept of a POST body
)

// Schedule says when runs are expected: exactly one of PeriodSeconds or
// Cron. Timezone goes only with Cron (an IANA name, default "UTC").
type Schedule struct {
	PeriodSeconds int    `json:"periodSeconds,omitempty"`
	Cron          string `json:"cron,omitempty"`
	Timezone      string `json:"timezone,omitempty"`
	GraceSeconds  int    `json:"graceSeconds"`
}

// Draft is a heartbeat as a user asks for it, before it is stored.
type Draft struct {
	Name              string
	Schedule          Schedule
	MaxRuntimeSeconds int
	Paused            bool
	SLO               *monitor.SLO // validated by the application (metrics.Objective)
}

// Normalize fills defaults and then validates. It returns every failing
// field at once, each named by its JSON pointer in the request body.
// GraceSeconds 0 is taken as absent and becomes DefaultGraceSeconds.
func (d *Draft) Normalize() []errs.FieldError {
	v := &validator{}
	d.Name = strings.TrimSpace(d.Name)
	switch {
	case d.Name == "":
		v.add("/name", "must not be empty")
	case utf8.RuneCountInString(d.Name) > monitor.MaxNameLen:
		v.add("/name", fmt.Sprintf("must be at most %d characters", monitor.MaxNameLen))
	case strings.ContainsFunc(d.Name, unicode.IsControl):
		v.add("/name", "must not contain control characters")
	}
	d.Schedule.fillDefaults()
	d.Schedule.compile(v)
	if d.MaxRuntimeSeconds < 0 || d.MaxRuntimeSeconds > MaxRuntimeLimitSeconds {
		v.add("/maxRuntimeSeconds", fmt.Sprintf("must be between 0 and %d (0: no overrun check)", MaxRuntimeLimitSeconds))
	}
	return v.problems
}

func (s *Schedule) fillDefaults() {
	s.Cron = strings.Join(strings.Fields(s.Cron), " ")
	s.Timezone = strings.TrimSpace(s.Timezone)
	if s.Cron != "" && s.Timezone == "" {
		s.Timezone = "UTC"
	}
	if s.GraceSeconds == 0 {
		s.GraceSeconds = DefaultGraceSeconds
	}
}

// compile validates s and builds its Plan, which is meaningful only when
// v has no errors. An empty Timezone means UTC.
func (s Schedule) compile(v *validator) Plan {
	p := Plan{period: seconds(s.PeriodSeconds), grace: seconds(s.GraceSeconds)}
	switch {
	case s.PeriodSeconds != 0 && s.Cron != "":
		v.add("/schedule", "must have either periodSeconds or cron, not both")
	case s.PeriodSeconds == 0 && s.Cron == "":
		v.add("/schedule", "must have periodSeconds or cron")
	}
	if s.PeriodSeconds != 0 && (s.PeriodSeconds < MinPeriodSeconds || s.PeriodSeconds > MaxPeriodSeconds) {
		v.add("/schedule/periodSeconds", fmt.Sprintf("must be between %d and %d", MinPeriodSeconds, MaxPeriodSeconds))
	}
	loc, zoneErr := time.UTC, ""
	switch {
	case s.Timezone == "":
	case s.Cron == "":
		zoneErr = "is only allowed with cron"
	default:
		if l, ok := zone(s.Timezone); ok {
			loc = l
		} else {
			zoneErr = "must be an IANA time zone name such as Europe/Berlin or UTC"
		}
	}
	if s.Cron != "" {
		rule, err := recur.ParseCron(s.Cron, loc)
		if err != nil {
			v.add("/schedule/cron", err.Error())
		}
		p.rule = rule
	}
	if zoneErr != "" {
		v.add("/schedule/timezone", zoneErr)
	}
	if s.GraceSeconds < 0 || s.GraceSeconds > MaxGraceSeconds {
		v.add("/schedule/graceSeconds", fmt.Sprintf("must be between 0 and %d", MaxGraceSeconds))
	}
	return p
}

// zone loads an IANA time zone. "Local" is refused: it would mean whatever
// zone the server runs in.
func zone(name string) (*time.Location, bool) {
	if name == "Local" || len(name) > recur.MaxZoneLen {
		return nil, false
	}
	loc, err := time.LoadLocation(name)
	return loc, err == nil
}

type validator struct{ problems []errs.FieldError }

func (v *validator) add(ptr, msg string) {
	v.problems = append(v.problems, errs.FieldError{Pointer: ptr, Message: msg})
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }
