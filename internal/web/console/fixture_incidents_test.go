package console_test

import (
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/web/console"
)

func fixtureSubjects() []console.Subject {
	return []console.Subject{{ID: "mon_01JDQ6B", Name: "Checkout API <v2>"}, {ID: "hb_01JDQ7A", Name: "Nightly backup", Heartbeat: true},
		{ID: "mon_01JDQ6A", Name: "Website"}}
}

func incidentPages() []uiPage {
	ws := "/w/ws_01JDQ4K8Z6"
	checkout := &console.Subject{ID: "mon_01JDQ6B", Name: "Checkout API <v2>"}
	return []uiPage{
		{"incidents", ws + "/incidents", "Incidents", func() ([]byte, error) {
			return console.Render(console.Incidents{Shell: shell(console.NavIncidents),
				Open: []console.IncidentRow{{ID: "inc_01JDQ8A", Title: "Checkout API <v2> is down", Subject: checkout, State: "open",
					Status: "investigating", StartedAt: at(0, 8, 52), Duration: 22 * time.Minute}},
				Resolved: []console.IncidentRow{{ID: "inc_01JDQ8B", Title: "Slow logins", State: "resolved", Status: "resolved",
					StartedAt: at(-2, 14, 0), Duration: 95 * time.Minute, Public: true}},
				NextPage: ws + "/incidents?cursor=abc", Subjects: fixtureSubjects(),
				Form: console.IncidentForm{Title: " ", Status: "identified", Affected: []string{"hb_01JDQ7A"}},
				Errors: console.FormErrors{Fields: map[string]string{"title": "must not be blank", "message": "must not be blank",
					"public": "a public incident needs at least one affected monitor or heartbeat: status pages show it by them"}}})
		}, []string{`data-incident-id="inc_01JDQ8A"`, `href="` + ws + `/monitors/mon_01JDQ6B">Checkout API &lt;v2&gt;</a>`, `data-incident-state="open"`,
			"22 min", "1 h 35 min", `<span class="muted">manual</span>`, `action="` + ws + `/incidents"`, `id="err-title"`, `id="err-message"`,
			`id="err-public"`, `value="hb_01JDQ7A" checked`, `<option value="identified" selected>`, `rel="next"`,
			`href="` + ws + `/incidents" aria-current="page"`}},
		{"incident", ws + "/incidents/inc_01JDQ8A", "Checkout API <v2> is down", func() ([]byte, error) {
			return console.Render(console.IncidentDetail{Shell: shell(console.NavIncidents), ID: "inc_01JDQ8A", Title: "Checkout API <v2> is down",
				Subject: checkout, Cause: "HTTP 503: status 503 is not among the expected codes", State: "acknowledged", Status: "identified",
				StartedAt: at(0, 8, 52), AcknowledgedAt: at(0, 8, 55), Duration: 22 * time.Minute,
				Affected: []console.Subject{{ID: "mon_01JDQ6A", Name: "Website"}},
				Timeline: []console.TimelineEntry{{At: at(0, 8, 52), Event: "opened", By: "Tocsin, when the subject went down"},
					{At: at(0, 8, 52), Status: "investigating", Message: "HTTP 503", Automatic: true},
					{At: at(0, 8, 55), Event: "acknowledged"},
					{At: at(0, 9, 1), Status: "identified", Message: "The payment provider <times out>.\nA retry is on its way."}},
				Subjects: fixtureSubjects(), UpdateStatus: "monitoring",
				Settings:       console.IncidentSettings{Title: "Checkout API <v2> is down", Affected: []string{"mon_01JDQ6A"}},
				UpdateErrors:   console.FormErrors{Fields: map[string]string{"update-message": "must not be blank"}},
				ResolveErrors:  console.FormErrors{Fields: map[string]string{"resolve-message": "must be at most 5000 characters"}},
				SettingsErrors: console.FormErrors{Fields: map[string]string{"public-title": "must not be blank (give none to clear it)"}}})
		}, []string{`action="` + ws + `/incidents/inc_01JDQ8A/updates"`, `action="` + ws + `/incidents/inc_01JDQ8A/resolve"`,
			`action="` + ws + `/incidents/inc_01JDQ8A/edit"`, `data-event="opened"`, `data-event="acknowledged"`, `data-update="identified"`,
			"The payment provider &lt;times out&gt;.", "never shown on status pages", `id="err-update-message"`, `id="err-resolve-message"`,
			`id="err-public-title"`, `<option value="monitoring" selected>`, `value="mon_01JDQ6A" checked`}},
		{"maintenance", ws + "/maintenance", "Maintenance windows", func() ([]byte, error) {
			return console.Render(console.Maintenance{Shell: shell(console.NavMaintenance), Subjects: fixtureSubjects(),
				Rows: []console.MaintenanceRow{
					{ID: "mw_01JDQ9A", Name: "Database upgrade", Description: "Postgres 18 <major>", Covers: []console.Subject{{ID: "mon_01JDQ6B", Name: "Checkout API <v2>"}},
						StartsAt: at(0, 9, 0), EndsAt: at(0, 11, 0), Active: true, CurrentEndsAt: at(0, 11, 0)},
					{ID: "mw_01JDQ9B", Name: "Weekly patching", Covers: fixtureSubjects()[1:], Recurring: true, Cron: "30 2 * * 6",
						Timezone: "Europe/Berlin", Duration: 90 * time.Minute, StartsAt: at(-30, 0, 0), NextStartAt: at(2, 1, 30), Public: true},
				},
				Form: console.MaintenanceForm{Kind: "recurring", Timezone: "Mars/Olympus", Duration: "0", Monitors: []string{"mon_01JDQ6A"}},
				Errors: console.FormErrors{Fields: map[string]string{"timezone": "must be an IANA time zone name such as Europe/Berlin or UTC",
					"duration": "must be between 1 and 10080 minutes (7 days)", "name": "must not be blank"}}})
		}, []string{`data-window-id="mw_01JDQ9A"`, "data-window-active", "every Saturday at 02:30, for 1 h 30 min each", "Europe/Berlin",
			`href="` + ws + `/maintenance/mw_01JDQ9B/edit"`, `action="` + ws + `/maintenance/mw_01JDQ9B/delete"`, `id="err-timezone"`,
			`id="err-duration"`, `id="kind-recurring" name="kind" value="recurring" checked`, `value="mon_01JDQ6A" checked`,
			`href="` + ws + `/maintenance" aria-current="page"`}},
		{"maintenance-edit", ws + "/maintenance/mw_01JDQ9B/edit", "Edit Weekly patching", func() ([]byte, error) {
			return console.Render(console.Maintenance{Shell: shell(console.NavMaintenance), Subjects: fixtureSubjects(), EditID: "mw_01JDQ9B",
				Form: console.MaintenanceForm{Name: "Weekly patching", Kind: "recurring", Timezone: "Europe/Berlin", Cron: "30 2 * * 6", Duration: "90",
					Heartbeats: []string{"hb_01JDQ7A"}}})
		}, []string{`action="` + ws + `/maintenance/mw_01JDQ9B/edit"`, `value="30 2 * * 6"`, `value="hb_01JDQ7A" checked`, "Cancel"}},
	}
}

func TestRecurrenceText(t *testing.T) {
	for _, c := range []struct{ cron, rrule, want string }{
		{"0 2 * * 6", "", "every Saturday at 02:00"},
		{"30 23 * * *", "", "every day at 23:30"},
		{"0 4 * * 1,3,5", "", "every Monday, Wednesday and Friday at 04:00"},
		{"0 4 * * MON", "", "every Monday at 04:00"},
		{"15 1 1 * *", "", "on the 1st of every month at 01:15"},
		{"0 3 22 * *", "", "on the 22nd of every month at 03:00"},
		{"@weekly", "", "every Sunday at 00:00"},
		{"0 2 L * *", "", "cron 0 2 L * *"},
		{"*/5 * * * *", "", "cron */5 * * * *"},
		{"0 2 * 1 *", "", "cron 0 2 * 1 *"},
		{"", "FREQ=WEEKLY;BYDAY=SA;BYHOUR=2;BYMINUTE=0", "every Saturday at 02:00"},
		{"", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;BYHOUR=6;BYMINUTE=30", "every 2nd week on Tuesday and Thursday at 06:30"},
		{"", "FREQ=DAILY;BYHOUR=3;BYMINUTE=0", "every day at 03:00"},
		{"", "FREQ=MONTHLY;BYMONTHDAY=13;BYHOUR=1;BYMINUTE=5", "on the 13th of every month at 01:05"},
		{"", "FREQ=MONTHLY;BYDAY=1SU;BYHOUR=1;BYMINUTE=0", "rule FREQ=MONTHLY;BYDAY=1SU;BYHOUR=1;BYMINUTE=0"},
		{"", "FREQ=DAILY;COUNT=3;BYHOUR=3;BYMINUTE=0", "rule FREQ=DAILY;COUNT=3;BYHOUR=3;BYMINUTE=0"},
		{"", "FREQ=DAILY", "rule FREQ=DAILY"},
	} {
		if got := console.RecurrenceText(c.cron, c.rrule); got != c.want {
			t.Errorf("%q %q: %q, want %q", c.cron, c.rrule, got, c.want)
		}
	}
	for d, want := range map[time.Duration]string{45 * time.Second: "45 s", 12 * time.Minute: "12 min", 3 * time.Hour: "3 h",
		3*time.Hour + 5*time.Minute: "3 h 5 min", 50 * time.Hour: "2 d 2 h", 48 * time.Hour: "2 d", -time.Second: "0 s"} {
		if got := console.LastedText(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
	if got := console.LocalText(time.Date(2026, 11, 28, 1, 30, 0, 0, time.UTC), "Europe/Berlin"); got != "2026-11-28 02:30 Europe/Berlin" {
		t.Errorf("local: %q", got)
	}
}
