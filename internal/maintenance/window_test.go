package maintenance_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/maintenance"
	"github.com/tocsin/tocsin/internal/recur"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

// TestMaintenanceTiming: a window's timing is what recur computes,
// with the time zone, the RRULE's DTSTART taken from StartsAt, and Until;
// invalid windows name their fields.
func TestMaintenanceTiming(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name     string
		w        maintenance.Window
		now      string
		active   bool
		end      string // when active
		next     string // "" when none
		badField string // Timing fails naming this field
	}{
		{name: "one-off inside", w: maintenance.Window{StartsAt: at("2026-05-01T10:00:00Z"), EndsAt: at("2026-05-01T12:00:00Z")},
			now: "2026-05-01T11:00:00Z", active: true, end: "2026-05-01T12:00:00Z"},
		{name: "one-off before", w: maintenance.Window{StartsAt: at("2026-05-01T10:00:00Z"), EndsAt: at("2026-05-01T12:00:00Z")},
			now: "2026-05-01T09:00:00Z", next: "2026-05-01T10:00:00Z"},
		// Saturdays 02:00 Berlin (CEST in May: 00:00Z) for two hours.
		{name: "cron in a zone", w: maintenance.Window{Cron: "0 2 * * 6", Timezone: "Europe/Berlin", Duration: 2 * time.Hour,
			StartsAt: at("2026-01-01T00:00:00Z")}, now: "2026-05-02T01:30:00Z", active: true, end: "2026-05-02T02:00:00Z", next: "2026-05-09T00:00:00Z"},
		// The same in March: the 28th is still CET (01:00Z); the 4th of April is CEST.
		{name: "cron across DST", w: maintenance.Window{Cron: "0 2 * * 6", Timezone: "Europe/Berlin", Duration: 2 * time.Hour,
			StartsAt: at("2026-01-01T00:00:00Z")}, now: "2026-03-28T02:59:00Z", active: true, end: "2026-03-28T03:00:00Z", next: "2026-04-04T00:00:00Z"},
		{name: "until stops it", w: maintenance.Window{Cron: "0 2 * * 6", Timezone: "Europe/Berlin", Duration: 2 * time.Hour,
			StartsAt: at("2026-01-01T00:00:00Z"), Until: at("2026-05-03T00:00:00Z")}, now: "2026-05-02T01:30:00Z", active: true, end: "2026-05-02T02:00:00Z"},
		{name: "starts at bounds it", w: maintenance.Window{Cron: "0 2 * * 6", Timezone: "Europe/Berlin", Duration: 2 * time.Hour,
			StartsAt: at("2026-05-02T00:30:00Z")}, now: "2026-05-02T01:30:00Z", next: "2026-05-09T00:00:00Z"},
		// FREQ=DAILY without BYHOUR: the time of day comes from DTSTART (StartsAt) in the zone.
		{name: "rrule anchored at startsAt", w: maintenance.Window{RRule: "FREQ=DAILY;INTERVAL=2", Timezone: "America/New_York",
			Duration: 30 * time.Minute, StartsAt: at("2026-06-01T07:00:00Z")}, now: "2026-06-03T07:10:00Z", active: true,
			end: "2026-06-03T07:30:00Z", next: "2026-06-05T07:00:00Z"},
		{name: "unknown zone", w: maintenance.Window{Cron: "0 2 * * *", Timezone: "Mars/Olympus", Duration: time.Hour, StartsAt: t0}, badField: "rule.location"},
		{name: "Local is not a zone", w: maintenance.Window{Cron: "0 2 * * *", Timezone: "Local", Duration: time.Hour, StartsAt: t0}, badField: "rule.location"},
		{name: "cron that never fires", w: maintenance.Window{Cron: "0 0 30 2 *", Timezone: "UTC", Duration: time.Hour, StartsAt: t0}, badField: "rule.cron"},
		{name: "bad rrule", w: maintenance.Window{RRule: "FREQ=HOURLY", Timezone: "UTC", Duration: time.Hour, StartsAt: t0}, badField: "rule.rrule"},
		{name: "both rules", w: maintenance.Window{Cron: "0 2 * * *", RRule: "FREQ=DAILY", Timezone: "UTC", Duration: time.Hour, StartsAt: t0}, badField: "rule.rrule"},
		{name: "duration too long", w: maintenance.Window{Cron: "0 2 * * *", Timezone: "UTC", Duration: 8 * 24 * time.Hour, StartsAt: t0}, badField: "duration"},
		{name: "one-off backwards", w: maintenance.Window{StartsAt: t0, EndsAt: t0.Add(-time.Hour)}, badField: "end"},
	}
	for _, c := range cases {
		timing, err := c.w.Timing()
		if c.badField != "" {
			var fes recur.FieldErrors
			if !errors.As(err, &fes) || !slices.ContainsFunc(fes, func(fe recur.FieldError) bool { return fe.Field == c.badField }) {
				t.Errorf("%s: Timing() error %v, want one naming %s", c.name, err, c.badField)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		now := at(c.now)
		active, end := timing.Active(now)
		if active != c.active || (active && !end.Equal(at(c.end))) {
			t.Errorf("%s: Active(%s) = %v, %v; want %v, %s", c.name, c.now, active, end, c.active, c.end)
		}
		next, ok := timing.NextStart(now)
		if ok != (c.next != "") || (ok && !next.Equal(at(c.next))) {
			t.Errorf("%s: NextStart(%s) = %v, %v; want %q", c.name, c.now, next, ok, c.next)
		}
	}
}
