package console

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
)

// The heartbeat pages' helpers: the schedule as text, and the snippets
// that call a ping URL from a shell, a crontab, systemd and PowerShell.

// RenderHeartbeats renders GET /w/{ws}/heartbeats.
func RenderHeartbeats(v Heartbeats) ([]byte, error) { return execute("heartbeats.html", v) }

// RenderHeartbeat renders GET /w/{ws}/heartbeats/{id}.
func RenderHeartbeat(v HeartbeatDetail) ([]byte, error) { return execute("heartbeat.html", v) }

// RenderHeartbeatForm renders the heartbeat form (new or edit).
func RenderHeartbeatForm(v HeartbeatForm) ([]byte, error) {
	if v.Mode == "" {
		v.Mode = FormNew
	}
	if v.Values.Kind != "cron" {
		v.Values.Kind = "period"
	}
	return execute("heartbeat_form.html", v)
}

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

// ScheduleText is the row's schedule as text.
func (r HeartbeatRow) ScheduleText() string { return ScheduleText(r.Schedule) }

// GraceText is the row's grace as text.
func (r HeartbeatRow) GraceText() string { return GraceText(r.Schedule) }

// ScheduleText is the heartbeat's schedule as text.
func (d HeartbeatDetail) ScheduleText() string { return ScheduleText(d.Schedule) }

// GraceText is the heartbeat's grace as text.
func (d HeartbeatDetail) GraceText() string { return GraceText(d.Schedule) }

// MaxRuntimeText is the longest a started run may take: "no limit",
// "2 h".
func (d HeartbeatDetail) MaxRuntimeText() string {
	if d.MaxRuntimeSeconds <= 0 {
		return "no limit"
	}
	return IntervalText(time.Duration(d.MaxRuntimeSeconds) * time.Second)
}

// DurationText is a run's duration: "1.25 s", "3 min 4 s".
func DurationText(d time.Duration) string {
	if d < time.Minute {
		return LatencyText(d)
	}
	return budgetText(d)
}

// curlPing is the curl command line that calls url quietly, failing on an
// error status, retrying briefly.
func curlPing(url string) string { return "curl -fsS -m 10 --retry 5 -o /dev/null " + url }

// Snippets are the ways to call the heartbeat's ping URL, each ready to
// copy: the first is the plain success ping.
func (d HeartbeatDetail) Snippets() []Snippet {
	u := d.PingURL
	cron := crontabTimes(d.Schedule)
	return []Snippet{
		{ID: "snippet-curl", Title: "curl", Note: "A run succeeded: call this at the end of the job.", Text: curlPing(u)},
		{ID: "snippet-crontab", Title: "Crontab line",
			Note: "Announces the start, runs the job, and reports its exit code ($?): 0 is a success, anything else a failure. Put your job in place of /usr/local/bin/job.",
			Text: cron + " " + curlPing(u+"/start") + "; /usr/local/bin/job; " + curlPing(u+"/$?")},
		{ID: "snippet-systemd", Title: "systemd service and timer",
			Note: "Three units: the job announces its start and its success; when it fails, OnFailure runs the unit that reports the failure.",
			Text: systemdUnits(u, d.Schedule)},
		{ID: "snippet-powershell", Title: "PowerShell",
			Note: "Announces the start, runs the job, and reports its exit code.",
			Text: "$url = \"" + u + "\"\n" +
				"Invoke-RestMethod -Uri \"$url/start\" -TimeoutSec 10 | Out-Null\n" +
				"& C:\\jobs\\job.exe\n" +
				"$code = if ($null -eq $LASTEXITCODE) { 0 } else { $LASTEXITCODE }\n" +
				"Invoke-RestMethod -Uri \"$url/$code\" -TimeoutSec 10 | Out-Null"},
	}
}

// crontabTimes are a crontab line's five time fields for the schedule:
// the cron expression itself (crontab reads it in the server's zone, so a
// zone other than UTC gets CRON_TZ first), or a period as the nearest
// crontab can say it.
func crontabTimes(s heartbeat.Schedule) string {
	if s.Cron != "" {
		if s.Timezone != "" && s.Timezone != "UTC" {
			return "CRON_TZ=" + s.Timezone + "\n" + s.Cron
		}
		return s.Cron
	}
	m := s.PeriodSeconds / 60
	switch {
	case m <= 1:
		return "* * * * *"
	case m < 60 && 60%m == 0:
		return "*/" + strconv.Itoa(m) + " * * * *"
	case m == 60:
		return "0 * * * *"
	case m%60 == 0 && m < 1440 && 1440%m == 0:
		return "0 */" + strconv.Itoa(m/60) + " * * *"
	case m == 1440:
		return "0 0 * * *"
	case m == 7*1440:
		return "0 0 * * 0"
	}
	return "0 0 * * *" // adjust: crontab has no step for this period
}

// systemdUnits are a service that pings around the job, the unit its
// OnFailure starts, and a timer for the schedule.
func systemdUnits(u string, s heartbeat.Schedule) string {
	var b strings.Builder
	b.WriteString("# /etc/systemd/system/job.service\n[Unit]\nDescription=The job Tocsin watches\nOnFailure=job-failed.service\n\n")
	b.WriteString("[Service]\nType=oneshot\nExecStartPre=-/usr/bin/" + curlPing(u+"/start") + "\nExecStart=/usr/local/bin/job\n")
	b.WriteString("ExecStartPost=-/usr/bin/" + curlPing(u) + "\n\n")
	b.WriteString("# /etc/systemd/system/job-failed.service\n[Service]\nType=oneshot\nExecStart=/usr/bin/" + curlPing(u+"/fail") + "\n\n")
	b.WriteString("# /etc/systemd/system/job.timer\n[Timer]\n")
	if s.Cron != "" {
		if cal, ok := onCalendar(s.Cron); ok {
			tz := ""
			if s.Timezone != "" {
				tz = " " + s.Timezone
			}
			b.WriteString("OnCalendar=" + cal + tz + "\n")
		} else {
			fmt.Fprintf(&b, "# the times of cron %q in OnCalendar= form\nOnCalendar=daily\n", s.Cron)
		}
		b.WriteString("Persistent=true\n")
	} else {
		p := strconv.Itoa(s.PeriodSeconds) + "s"
		b.WriteString("OnBootSec=" + p + "\nOnUnitActiveSec=" + p + "\n")
	}
	b.WriteString("\n[Install]\nWantedBy=timers.target")
	return b.String()
}

// onCalendar is a cron expression with any day of any month as systemd's
// OnCalendar= ("*-*-* 03:00:00"); ok is false for one it cannot say so
// simply.
func onCalendar(cron string) (string, bool) {
	f := strings.Fields(cron)
	if len(f) != 5 || f[2] != "*" || f[3] != "*" || f[4] != "*" {
		return "", false
	}
	field := func(s string) (string, bool) {
		if s == "*" {
			return "*", true
		}
		if n, ok := strings.CutPrefix(s, "*/"); ok {
			if _, err := strconv.Atoi(n); err != nil {
				return "", false
			}
			return "00/" + n, true
		}
		var out []string
		for _, part := range strings.Split(s, ",") {
			n, err := strconv.Atoi(part)
			if err != nil {
				return "", false
			}
			out = append(out, fmt.Sprintf("%02d", n))
		}
		return strings.Join(out, ","), true
	}
	m, ok1 := field(f[0])
	h, ok2 := field(f[1])
	if !ok1 || !ok2 {
		return "", false
	}
	return "*-*-* " + h + ":" + m + ":00", true
}
