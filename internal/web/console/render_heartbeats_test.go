package console_test

import (
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/web/console"
)

// TestHeartbeatFieldPointers: every pointer heartbeat.Draft.Normalize
// and the SLO rules name lands at a field of the form, and a message
// reads as a sentence naming it.
func TestHeartbeatFieldPointers(t *testing.T) {
	for _, c := range []struct{ ptr, kind, want string }{
		{"/name", "period", "name"}, {"/schedule", "period", "period"}, {"/schedule", "cron", "cron"},
		{"/schedule/periodSeconds", "period", "period"}, {"/schedule/cron", "cron", "cron"}, {"/schedule/timezone", "cron", "timezone"},
		{"/schedule/graceSeconds", "cron", "grace"}, {"/maxRuntimeSeconds", "period", "max-runtime"}, {"/slo/target", "period", "slo-target"},
		{"/slo", "period", "slo-target"}, {"/slo/periodDays", "period", "slo-period"}, {"/paused", "period", ""}, {"/other", "period", ""},
	} {
		if got := console.HeartbeatField(c.ptr, c.kind); got != c.want {
			t.Errorf("%s (%s): %q, want %q", c.ptr, c.kind, got, c.want)
		}
	}
	// Every pointer a bad draft yields has a field.
	d := heartbeat.Draft{Name: "\x01", Schedule: heartbeat.Schedule{PeriodSeconds: 1, Cron: "x", Timezone: "Nowhere/Else", GraceSeconds: -1}, MaxRuntimeSeconds: -1}
	for _, p := range d.Normalize() {
		if console.HeartbeatField(p.Pointer, "period") == "" {
			t.Errorf("%s %q has no field", p.Pointer, p.Message)
		}
	}
	for _, c := range []struct{ name, msg, want string }{
		{"period", "must be between 60 and 31536000", "Period must be between 60 and 31536000."},
		{"cron", "must have periodSeconds or cron", "Cron expression must not be empty."},
		{"max-runtime", "must be a whole number.", "Maximum run time must be a whole number."},
	} {
		if got := console.HeartbeatFieldMessage(c.name, c.msg); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.name, c.msg, got, c.want)
		}
	}
}

// TestHeartbeatSnippetSchedules: the crontab line and the systemd timer
// run the job when the heartbeat expects it.
func TestHeartbeatSnippetSchedules(t *testing.T) {
	for _, c := range []struct {
		s             heartbeat.Schedule
		crontab, unit string
	}{
		{heartbeat.Schedule{PeriodSeconds: 60}, "* * * * * curl", "OnUnitActiveSec=60s"},
		{heartbeat.Schedule{PeriodSeconds: 900}, "*/15 * * * * curl", "OnUnitActiveSec=900s"},
		{heartbeat.Schedule{PeriodSeconds: 3600}, "0 * * * * curl", "OnBootSec=3600s"},
		{heartbeat.Schedule{PeriodSeconds: 21600}, "0 */6 * * * curl", "OnUnitActiveSec=21600s"},
		{heartbeat.Schedule{PeriodSeconds: 86400}, "0 0 * * * curl", "OnUnitActiveSec=86400s"},
		{heartbeat.Schedule{PeriodSeconds: 604800}, "0 0 * * 0 curl", "OnUnitActiveSec=604800s"},
		{heartbeat.Schedule{Cron: "30 2 * * *", Timezone: "UTC"}, "\n30 2 * * * curl", "OnCalendar=*-*-* 02:30:00 UTC"},
		{heartbeat.Schedule{Cron: "*/10 8,20 * * *", Timezone: "Asia/Tokyo"}, "CRON_TZ=Asia/Tokyo\n*/10 8,20 * * * curl", "OnCalendar=*-*-* 08,20:00/10:00 Asia/Tokyo"},
		{heartbeat.Schedule{Cron: "0 6 * * 1-5", Timezone: "UTC"}, "0 6 * * 1-5 curl", "OnCalendar=daily"},
	} {
		d := console.HeartbeatDetail{PingURL: "https://t.example/ping/tok", Schedule: c.s}
		got := map[string]string{}
		for _, s := range d.Snippets() {
			got[s.ID] = "\n" + s.Text
			if !strings.Contains(s.Text, "https://t.example/ping/tok") {
				t.Errorf("%s does not call the ping URL: %q", s.ID, s.Text)
			}
		}
		if !strings.Contains(got["snippet-crontab"], c.crontab) {
			t.Errorf("%+v: crontab %q lacks %q", c.s, got["snippet-crontab"], c.crontab)
		}
		if !strings.Contains(got["snippet-systemd"], c.unit) {
			t.Errorf("%+v: units %q lack %q", c.s, got["snippet-systemd"], c.unit)
		}
	}
}
