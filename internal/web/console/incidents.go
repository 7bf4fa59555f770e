package console

import (
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The incident and maintenance window pages and their helpers. Which
// function renders which route (form field names in parentheses):
//
//	GET/POST /w/{id}/incidents              RenderIncidents (title, status,
//	                                        message, affected…, public,
//	                                        public-title; list: GET cursor)
//	GET /w/{id}/incidents/{incID}           RenderIncident; its forms POST
//	                                        …/acknowledge, …/updates
//	                                        (update-status, update-message),
//	                                        …/resolve (resolve-message) and
//	                                        …/edit (title, affected…, public,
//	                                        public-title)
//	GET/POST /w/{id}/maintenance            RenderMaintenance (name,
//	                                        description, kind, timezone,
//	                                        starts, ends, cron, rrule,
//	                                        duration, until, monitor…,
//	                                        heartbeat…, public); delete: POST
//	                                        /w/{id}/maintenance/{mwID}/delete
//	GET/POST /w/{id}/maintenance/{mwID}/edit RenderMaintenance with EditID

// RenderIncidents renders GET /w/{ws}/incidents.
func RenderIncidents(v Incidents) ([]byte, error) { return execute("incidents.html", v) }

// RenderIncident renders GET /w/{ws}/incidents/{id}.
func RenderIncident(v IncidentDetail) ([]byte, error) { return execute("incident.html", v) }

// RenderMaintenance renders GET /w/{ws}/maintenance and a window's edit
// page.
func RenderMaintenance(v Maintenance) ([]byte, error) { return execute("maintenance.html", v) }

// IncidentStatuses are the statuses an update may give, in order.
var IncidentStatuses = []string{"investigating", "identified", "monitoring", "resolved"}

// incidentFuncs are the templates' helpers for these pages.
var incidentFuncs = template.FuncMap{
	"lasted":      LastedText,
	"recurrence":  RecurrenceText,
	"incClass":    incidentClass,
	"in":          func(list []string, s string) bool { return slices.Contains(list, s) },
	"newStatuses": func() []string { return IncidentStatuses[:3] },
	"local":       func(t time.Time, tz string) string { return LocalText(t, tz) },
	"dict":        dict,
	// statusChoices are the statuses an update may give: a resolved
	// incident takes notes with status resolved only.
	"statusChoices": func(open bool) []string {
		if open {
			return IncidentStatuses
		}
		return IncidentStatuses[3:]
	},
	"updateHint": func(public bool) string {
		if public {
			return "Status page readers see it exactly as written."
		}
		return "Resolved resolves the incident."
	},
}

// dict builds a map from name/value pairs, to hand a partial several
// values.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("webui: dict: odd arguments")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("webui: dict: key %T", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}

// incidentClass is the badge class of an incident's state or status.
func incidentClass(s string) string {
	switch s {
	case "open", "investigating":
		return "badge s-down"
	case "acknowledged", "identified", "monitoring":
		return "badge s-degraded"
	case "resolved":
		return "badge s-up"
	}
	return "badge s-unknown"
}

// LastedText writes how long something lasted: "45 s", "12 min",
// "3 h 5 min", "2 d 4 h".
func LastedText(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return strconv.Itoa(h) + " h"
		}
		return fmt.Sprintf("%d h %d min", h, m)
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return strconv.Itoa(days) + " d"
	}
	return fmt.Sprintf("%d d %d h", days, h)
}

// LocalText writes an instant as the wall time of the zone tz ("" or an
// unknown zone: UTC): "2026-11-28 02:00 Europe/Berlin".
func LocalText(t time.Time, tz string) string {
	loc, err := time.LoadLocation(tz)
	if tz == "" || tz == "Local" || err != nil {
		return TimeText(t)
	}
	return t.In(loc).Format("2006-01-02 15:04 ") + tz
}

var weekdays = map[string]string{"0": "Sunday", "1": "Monday", "2": "Tuesday", "3": "Wednesday", "4": "Thursday", "5": "Friday",
	"6": "Saturday", "7": "Sunday", "SUN": "Sunday", "MON": "Monday", "TUE": "Tuesday", "WED": "Wednesday", "THU": "Thursday",
	"FRI": "Friday", "SAT": "Saturday", "SU": "Sunday", "MO": "Monday", "TU": "Tuesday", "WE": "Wednesday", "TH": "Thursday",
	"FR": "Friday", "SA": "Saturday"}

// dayList says a comma-separated list of weekdays, or "" when one is not
// a plain weekday.
func dayList(s string) string {
	var out []string
	for _, d := range strings.Split(strings.ToUpper(s), ",") {
		name, ok := weekdays[d]
		if !ok {
			return ""
		}
		out = append(out, name)
	}
	if len(out) > 1 {
		return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
	}
	return out[0]
}

// number reports whether s is a plain whole number below max.
func number(s string, max int) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n < max && strconv.Itoa(n) == s
}

func clock(hour, minute string) string {
	h, _ := strconv.Atoi(hour)
	m, _ := strconv.Atoi(minute)
	return fmt.Sprintf("%02d:%02d", h, m)
}

func ordinal(n string) string {
	switch {
	case strings.HasSuffix(n, "11"), strings.HasSuffix(n, "12"), strings.HasSuffix(n, "13"):
		return n + "th"
	case strings.HasSuffix(n, "1"):
		return n + "st"
	case strings.HasSuffix(n, "2"):
		return n + "nd"
	case strings.HasSuffix(n, "3"):
		return n + "rd"
	}
	return n + "th"
}

// RecurrenceText says when a recurring window's occurrences begin, in
// words where the rule is a common one ("every Saturday at 02:00"), else
// the rule as written ("cron 0 2 L * *").
func RecurrenceText(cron, rrule string) string {
	if cron != "" {
		if s := cronWords(strings.TrimSpace(cron)); s != "" {
			return s
		}
		return "cron " + cron
	}
	if s := rruleWords(strings.TrimSpace(rrule)); s != "" {
		return s
	}
	return "rule " + rrule
}

func cronWords(expr string) string {
	switch strings.ToLower(expr) {
	case "@hourly":
		return "every hour, on the hour"
	case "@daily", "@midnight":
		return "every day at 00:00"
	case "@weekly":
		return "every Sunday at 00:00"
	case "@monthly":
		return "on the 1st of every month at 00:00"
	case "@yearly", "@annually":
		return "every 1 January at 00:00"
	}
	f := strings.Fields(expr)
	if len(f) != 5 || !number(f[0], 60) || !number(f[1], 24) || f[3] != "*" {
		return ""
	}
	at := " at " + clock(f[1], f[0])
	switch {
	case f[2] == "*" && f[4] == "*":
		return "every day" + at
	case f[2] == "*":
		if days := dayList(f[4]); days != "" {
			return "every " + days + at
		}
	case f[4] == "*" && number(f[2], 32) && f[2] != "0":
		return "on the " + ordinal(f[2]) + " of every month" + at
	}
	return ""
}

func rruleWords(rule string) string {
	parts := map[string]string{}
	for _, p := range strings.Split(strings.TrimPrefix(strings.ToUpper(rule), "RRULE:"), ";") {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return ""
		}
		parts[k] = v
	}
	hour, minute := parts["BYHOUR"], parts["BYMINUTE"]
	if !number(hour, 24) || !number(minute, 60) {
		return ""
	}
	at := " at " + clock(hour, minute)
	every, interval := "every ", parts["INTERVAL"]
	if interval != "" && interval != "1" {
		if !number(interval, 1000) {
			return ""
		}
		every = "every " + ordinal(interval) + " "
	}
	for k := range parts {
		if !slices.Contains([]string{"FREQ", "INTERVAL", "BYDAY", "BYHOUR", "BYMINUTE", "BYMONTHDAY", "BYSECOND"}, k) {
			return "" // COUNT, UNTIL, BYSETPOS…: say it as written
		}
	}
	switch parts["FREQ"] {
	case "DAILY":
		if parts["BYDAY"] == "" && parts["BYMONTHDAY"] == "" {
			return every + "day" + at
		}
	case "WEEKLY":
		if days := dayList(parts["BYDAY"]); days != "" && parts["BYMONTHDAY"] == "" {
			if every == "every " {
				return "every " + days + at
			}
			return every + "week on " + days + at
		}
	case "MONTHLY":
		if d := parts["BYMONTHDAY"]; number(d, 32) && d != "0" && parts["BYDAY"] == "" {
			return "on the " + ordinal(d) + " of " + every + "month" + at
		}
	}
	return ""
}
