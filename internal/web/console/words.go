package console

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
)

// BrowserName sums a user agent up the way people name it: "Firefox 133
// on Linux". The whole string stays available as the element's title.
func BrowserName(ua string) string {
	find := func(names [][2]string) string {
		for _, n := range names {
			if i := strings.Index(ua, n[0]); i >= 0 {
				if n[0][len(n[0])-1] != '/' {
					return n[1]
				}
				v := ua[i+len(n[0]):]
				if j := strings.IndexAny(v, ". ;)"); j >= 0 {
					v = v[:j]
				}
				return n[1] + " " + v
			}
		}
		return ""
	}
	// Order matters: Edge and Opera say Chrome too; Chrome says Safari.
	b := find([][2]string{{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"HeadlessChrome/", "Headless Chrome"},
		{"Chrome/", "Chrome"}, {"Version/", "Safari"}, {"curl/", "curl"}})
	os := find([][2]string{{"Android", "Android"}, {"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Windows", "Windows"},
		{"Mac OS X", "macOS"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"}})
	switch {
	case b == "":
		return clean.Shorten(ua, 60)
	case os == "":
		return b
	}
	return b + " on " + os
}

// TimeText is how the pages write a time: "2026-11-26 09:14 UTC".
func TimeText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// TimeISO is a time's machine-readable form, for <time datetime>.
func TimeISO(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// WaitText says how long to wait, rounded up: "30 seconds", "1 minute",
// "5 minutes".
func WaitText(d time.Duration) string {
	if d <= 0 {
		return "a moment"
	}
	if d <= time.Minute {
		s := int((d + time.Second - 1) / time.Second)
		return plural(s, "second")
	}
	return plural(int((d+time.Minute-1)/time.Minute), "minute")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// SecretGroups writes a base32 secret in groups of four for reading it
// into an app by hand.
func SecretGroups(s string) string {
	var b strings.Builder
	for i, r := range strings.ToUpper(strings.TrimRight(s, "=")) {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// scopeWords says what a scope allows, for the workspace's home.
func scopeWords(s account.Scope) string {
	return map[account.Scope]string{
		account.ScopeMonitorsRead:       "see monitors and heartbeats",
		account.ScopeMonitorsWrite:      "create, change and delete monitors and heartbeats",
		account.ScopeIncidentsRead:      "see incidents",
		account.ScopeIncidentsWrite:     "open, update and resolve incidents",
		account.ScopeMetricsRead:        "read response times and uptime",
		account.ScopeStatusPagesRead:    "see status pages",
		account.ScopeStatusPagesWrite:   "create and change status pages",
		account.ScopeNotificationsRead:  "see notification channels",
		account.ScopeNotificationsWrite: "create and change notification channels",
	}[s]
}

// PercentText writes an availability (0 to 1) as "99.95 %", never
// rounding up to 100 % what was not; nil (or not a number) is "no data".
func PercentText(v *float64) string {
	f, ok := finite(v)
	if !ok {
		return "no data"
	}
	f = min(max(f, 0), 1)
	if f == 1 {
		return "100 %"
	}
	return strconv.FormatFloat(math.Floor(f*10000+1e-6)/100, 'f', 2, 64) + " %"
}

// LatencyText writes a latency: "42 ms", "1.25 s".
func LatencyText(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < 10*time.Second {
		return strconv.FormatInt(int64((d+time.Millisecond/2)/time.Millisecond), 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// millisText writes a latency given in milliseconds; nil is "no data".
func millisText(v *float64) string {
	f, ok := finite(v)
	if !ok {
		return "no data"
	}
	return LatencyText(time.Duration(min(max(f, 0), maxChartMs) * float64(time.Millisecond)))
}

// IntervalText writes a check interval: "30 s", "1 min", "90 s", "1 h".
func IntervalText(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + " h"
	case d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	}
	return strconv.Itoa(int((d+time.Second/2)/time.Second)) + " s"
}

// StateText is a state as the pages say it: "up", "down", "paused".
func StateText(s monitor.State) string {
	if s == "" {
		return "unknown"
	}
	return strings.ToLower(string(s))
}

// stateClass is a state badge's class; the text always says the state
// too, colour is never alone.
func stateClass(s monitor.State) string {
	switch s {
	case monitor.StateUp:
		return "badge s-up"
	case monitor.StateDown:
		return "badge s-down"
	case monitor.StateDegraded:
		return "badge s-degraded"
	case monitor.StatePaused:
		return "badge s-paused"
	case monitor.StateMaintenance:
		return "badge s-maintenance"
	}
	return "badge s-unknown"
}

func budgetText(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return strconv.Itoa(int(d/time.Second)) + " s"
	}
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	if h == 0 {
		return strconv.Itoa(m) + " min"
	}
	return fmt.Sprintf("%d h %d min", h, m)
}

// leftText writes the share of an error budget left; negative when it
// is overspent.
func leftText(v *float64) string {
	f, ok := finite(v)
	if !ok {
		return "no data"
	}
	s := strconv.FormatFloat(math.Round(f*1000)/10, 'f', 1, 64) + " %"
	if f < 0 {
		s += " (overspent)"
	}
	return s
}

func rateText(v *float64) string {
	f, ok := finite(v)
	if !ok {
		return "no data"
	}
	return strconv.FormatFloat(max(f, 0), 'f', 2, 64) + "×"
}

// finite is *v when v holds a real number.
func finite(v *float64) (float64, bool) {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return 0, false
	}
	return *v, true
}

func msText(v float64) string {
	return LatencyText(time.Duration(min(max(v, 0), maxChartMs) * float64(time.Millisecond)))
}

// num writes a coordinate with at most one decimal.
func num(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0
	}
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

func esc(s string) string { return template.HTMLEscapeString(s) }

func ptr(f float64) *float64 { return &f }

// ScheduleText says when a job runs: "every 1 h", or "cron 0 3 * * *
// (Europe/Berlin)".
func ScheduleText(s heartbeat.Schedule) string {
	if s.Cron != "" {
		tz := s.Timezone
		if tz == "" {
			tz = "UTC"
		}
		return "cron " + s.Cron + " (" + tz + ")"
	}
	return "every " + IntervalText(time.Duration(s.PeriodSeconds)*time.Second)
}

// GraceText is the schedule's grace: "5 min".
func GraceText(s heartbeat.Schedule) string {
	return IntervalText(time.Duration(s.GraceSeconds) * time.Second)
}

// DurationText is a run's duration: "1.25 s", "3 min 4 s".
func DurationText(d time.Duration) string {
	if d < time.Minute {
		return LatencyText(d)
	}
	return budgetText(d)
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

// dict builds a map from name/value pairs, to hand a partial several
// values.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("console: dict: odd arguments")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("console: dict: key %T", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}

// lasted is how long inc lasted, or has so far.
func lasted(inc *incident.Incident, now time.Time) time.Duration {
	if inc.ResolvedAt != nil {
		return inc.ResolvedAt.Sub(inc.StartedAt)
	}
	return now.Sub(inc.StartedAt)
}
