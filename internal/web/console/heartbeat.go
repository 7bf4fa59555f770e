package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
)

// HeartbeatDetail is GET /w/{ws}/heartbeats/{id}.
type HeartbeatDetail struct {
	// Shell: set Shell.Active to NavHeartbeats and Shell.Live; roles that
	// grant monitors:write get pause/resume, edit, delete and a new ping
	// URL.
	Shell Shell
	ID    string
	Name  string
	// Schedule is when its job runs; MaxRuntimeSeconds 0 is no limit.
	Schedule          heartbeat.Schedule
	MaxRuntimeSeconds int
	// State is its current state, since StateSince; Cause is why it is in
	// it ("" when UP or nothing says).
	State      monitor.State
	StateSince time.Time
	Cause      string
	Paused     bool
	// PingURL is the full ping URL (base URL + "/ping/" + token).
	PingURL string
	// LastPingAt and NextDeadline: zero for never and nothing due.
	LastPingAt, NextDeadline time.Time
	// LastResult is the last completed run's "success" or "fail" ("":
	// none yet), with its exit code (-1: none) and duration (-1: no
	// start).
	LastResult   string
	LastExitCode int
	LastDuration time.Duration
	// Availability24h, Availability30d and Availability90d (0 to 1); nil
	// when nothing was known.
	Availability24h, Availability30d, Availability90d *float64
	// Uptime is the bar's days, oldest first.
	Uptime []UptimeDay
	// SLO is the objective and its budget; nil when none is set.
	SLO *SLOView
	// Pings are the most recent pings, newest first.
	Pings []PingRow
	// States are the most recent state changes, newest first.
	States []StateRow
}

func (HeartbeatDetail) template() string { return "heartbeat.html" }

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

// LastDurationText is the last run's duration as text.
func (d HeartbeatDetail) LastDurationText() string { return DurationText(d.LastDuration) }

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

// PingRow is one received ping.
type PingRow struct {
	At time.Time
	// Signal is "start", "success" or "fail".
	Signal string
	// ExitCode is the exit code it gave; -1: none.
	ExitCode int
	// Duration is the run's, for the end of a run that sent /start; -1:
	// none.
	Duration time.Duration
	// Client is the address it came from; UserAgent what it said it was.
	Client, UserAgent string
	// Body is what a POST carried (valid UTF-8); Truncated says it was cut
	// at 10 KiB when received.
	Body      string
	Truncated bool
	// Ignored says it came while the heartbeat was paused.
	Ignored bool
}

// pingPreview is how much of a body the list shows on its line.
const pingPreview = 80

// Preview is the start of the body on one line, for the list.
func (p PingRow) Preview() string {
	return clean.Shorten(strings.Join(strings.Fields(p.Body), " "), pingPreview)
}

// Longer reports whether the preview leaves something out: the whole body
// is then behind a disclosure.
func (p PingRow) Longer() bool { return p.Preview() != p.Body || p.Truncated }

// DurationText is the run's duration as text.
func (p PingRow) DurationText() string { return DurationText(p.Duration) }

// Snippet is one way to call the ping URL, ready to copy.
type Snippet struct {
	// ID is the code element's id (the copy button's target).
	ID string
	// Title names it; Note says what it does.
	Title, Note string
	// Text is the code.
	Text string
}

// curlPing is the curl command line that calls url quietly, failing on an
// error status, retrying briefly.
func curlPing(url string) string { return "curl -fsS -m 10 --retry 5 -o /dev/null " + url }

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

func heartbeatPath(ws, id string) string { return "/w/" + ws + "/heartbeats/" + id }

// heartbeatID is the path's heartbeat id; anything that is not one is not
// found, before it reaches the database.
func (w *Server) heartbeatID(q *request) (string, error) { return w.pathID(q, ids.Heartbeat) }

// pingURL is the full ping URL of a token, as the API gives it.
func (w *Server) pingURL(token string) string { return w.base + "/ping/" + token }

func (w *Server) heartbeatPage(q *request) error {
	id, err := w.heartbeatID(q)
	if err != nil {
		return err
	}
	return w.servePage(q, NavHeartbeats, http.StatusOK, func(s Shell) (view, error) {
		s.Live = liveURL(q)
		h, err := w.app.GetHeartbeat(q.ctx(), q.actor, id)
		if err != nil {
			return nil, err
		}
		rt := h.Runtime
		v := HeartbeatDetail{Shell: s, ID: h.ID, Name: h.Name, Schedule: h.Schedule, MaxRuntimeSeconds: h.MaxRuntimeSeconds,
			State: rt.State, StateSince: rt.Since, Paused: h.Paused, PingURL: w.pingURL(h.Token), LastPingAt: rt.LastPing,
			NextDeadline: h.NextDeadline(), LastExitCode: -1, LastDuration: -1}
		if rt.LastCompletion != 0 {
			v.LastResult, v.LastExitCode, v.LastDuration = rt.LastCompletion.String(), rt.LastExitCode, rt.LastDuration
		}
		f, err := readFigures(q, w.app.HeartbeatMetricsEach, id, "")
		if err != nil {
			return nil, err
		}
		v.Availability24h, v.Availability30d, v.Availability90d = f.day.Figures.Ratios.Availability, f.a30, f.a90
		v.Uptime, v.SLO = f.uptime, f.slo
		pings, err := w.app.ListPings(q.ctx(), q.actor, id, app.PingQuery{PageRequest: app.PageRequest{Limit: recentRows}})
		if err != nil {
			return nil, err
		}
		for _, p := range pings.Items {
			v.Pings = append(v.Pings, PingRow{At: p.At, Signal: p.Signal.String(), ExitCode: p.ExitCode, Duration: p.Duration,
				Client: p.Client, UserAgent: p.UserAgent, Body: strings.ToValidUTF8(string(p.Body), "\uFFFD"), Truncated: p.Truncated,
				Ignored: p.Ignored})
		}
		if v.States, err = w.stateRows(q, id); err != nil {
			return nil, err
		}
		// The cause of the state it is in: the change that put it there.
		if len(v.States) > 0 && v.States[0].To == rt.State && rt.State != monitor.StateUp {
			v.Cause = v.States[0].Cause
		}
		return v, nil
	})
}

func (w *Server) pauseHeartbeat(q *request) error { return w.setHeartbeatPaused(q, true) }

func (w *Server) resumeHeartbeat(q *request) error { return w.setHeartbeatPaused(q, false) }

func (w *Server) setHeartbeatPaused(q *request, paused bool) error {
	id, err := w.heartbeatID(q)
	if err != nil {
		return err
	}
	if _, err := w.app.SetHeartbeatPaused(q.ctx(), q.actor, id, paused); err != nil {
		return err
	}
	flash := "heartbeat-resumed"
	if paused {
		flash = "heartbeat-paused"
	}
	return q.redirect(heartbeatPath(q.actor.WorkspaceID, id), flash)
}

func (w *Server) deleteHeartbeat(q *request) error {
	return w.deleteListed(q, ids.Heartbeat, w.app.DeleteHeartbeat, "heartbeats", "heartbeat-deleted")
}

// rotateHeartbeat gives the heartbeat a new ping URL; its page, where the
// redirect leads, shows it.
func (w *Server) rotateHeartbeat(q *request) error {
	id, err := w.heartbeatID(q)
	if err != nil {
		return err
	}
	if _, err := w.app.RotateHeartbeatToken(q.ctx(), q.actor, id); err != nil {
		return err
	}
	return q.redirect(heartbeatPath(q.actor.WorkspaceID, id)+"#url-h", "heartbeat-rotated")
}
