package console_test

import (
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web/console"
)

const pingURL = "https://tocsin.acme.example/ping/kmhDcDwIAzYiCd-r84PoObfIO2dI7YCXb-PTaZcWZu8"

func heartbeatRows() []console.HeartbeatRow {
	return []console.HeartbeatRow{
		{ID: "hb_01JDQ7A", Name: "Nightly backup", Schedule: heartbeat.Schedule{Cron: "30 2 * * *", Timezone: "Europe/Berlin", GraceSeconds: 1800},
			State: monitor.StateUp, LastPingAt: at(0, 1, 31), NextDeadline: at(1, 2, 0)},
		{ID: "hb_01JDQ7B", Name: "Invoice sync <eu>", Schedule: heartbeat.Schedule{PeriodSeconds: 300, GraceSeconds: 300},
			State: monitor.StateDown, LastPingAt: at(0, 9, 2)},
		{ID: "hb_01JDQ7C", Name: "Reports", Schedule: heartbeat.Schedule{PeriodSeconds: 86400, GraceSeconds: 300}, State: monitor.StatePending},
	}
}

func heartbeatDetail() console.HeartbeatDetail {
	var uptime []console.UptimeDay
	for i := range 90 {
		d := console.UptimeDay{Day: at(i-89, 0, 0)}
		if i > 60 {
			d.Availability = f64(1)
		}
		uptime = append(uptime, d)
	}
	return console.HeartbeatDetail{Shell: shell(console.NavHeartbeats), ID: "hb_01JDQ7B", Name: "Invoice sync <eu>",
		Schedule: heartbeat.Schedule{PeriodSeconds: 300, GraceSeconds: 300}, MaxRuntimeSeconds: 120, State: monitor.StateDown,
		StateSince: at(0, 9, 2), Cause: "failure: exit code 1", PingURL: pingURL, LastPingAt: at(0, 9, 2), NextDeadline: at(0, 9, 12),
		LastResult: "fail", LastExitCode: 1, LastDuration: 3*time.Minute + 4*time.Second,
		Availability24h: f64(0.9712), Uptime: uptime,
		SLO: &console.SLOView{Target: 0.995, PeriodDays: 30, Allowed: 216 * time.Minute, Spent: 43 * time.Minute, Left: f64(0.8)},
		Pings: []console.PingRow{
			{At: at(0, 9, 2), Signal: "fail", ExitCode: 1, Duration: 3*time.Minute + 4*time.Second, Client: "203.0.113.7", UserAgent: "curl/8.5.0",
				Body: "error: <ledger> answered 503\n" + strings.Repeat("retrying… ", 20), Truncated: true},
			{At: at(0, 8, 59), Signal: "start", ExitCode: -1, Duration: -1, Client: "203.0.113.7", UserAgent: "curl/8.5.0"},
			{At: at(0, 8, 55), Signal: "success", ExitCode: -1, Duration: -1, Client: "2001:db8::1", Body: "ok", Ignored: true},
		},
		States: []console.StateRow{{At: at(0, 9, 2), From: monitor.StateUp, To: monitor.StateDown, Cause: "failure: exit code 1"}},
	}
}

func heartbeatPages() []uiPage {
	return []uiPage{
		{"heartbeats", "/w/ws_01JDQ4K8Z6/heartbeats", "Heartbeats", func() ([]byte, error) {
			return console.Render(console.Heartbeats{Shell: shell(console.NavHeartbeats), Counts: stateCounts(), Rows: heartbeatRows(),
				Matching: 3, Any: true})
		}, []string{`href="/w/ws_01JDQ4K8Z6/heartbeats/new"`, `data-heartbeat-id="hb_01JDQ7A"`, `data-state="DOWN"`, `data-name="Invoice sync &lt;eu&gt;"`,
			"cron 30 2 * * * (Europe/Berlin)", "every 5 min", "every 24 h", "30 min", "never", `role="search"`, `method="get"`, `name="state"`,
			`name="q"`, `aria-current="page">Heartbeats</a>`, "3 heartbeats."}},
		{"heartbeats-filtered", "/w/ws_01JDQ4K8Z6/heartbeats/filtered", "Heartbeats", func() ([]byte, error) {
			return console.Render(console.Heartbeats{Shell: viewer(console.NavHeartbeats), Counts: stateCounts(), Any: true,
				Filter: console.HeartbeatFilterForm{State: "down", Q: "sync <x>"},
				Errors: console.FormErrors{Fields: map[string]string{"q": "Must be valid UTF-8 text without NUL."}}})
		}, []string{`<option value="down" selected>down</option>`, `value="sync &lt;x&gt;"`, `id="err-q"`, `aria-invalid="true"`,
			"No heartbeat matches", "0 of the workspace"}},
		{"heartbeats-empty", "/w/ws_01JDQ4K8Z6/heartbeats/empty", "Heartbeats", func() ([]byte, error) {
			return console.Render(console.Heartbeats{Shell: viewer(console.NavHeartbeats), Counts: []console.StateCount{{State: monitor.StateUp}}})
		}, []string{"No heartbeats yet", "may look but not create"}},
		{"heartbeat", "/w/ws_01JDQ4K8Z6/heartbeats/hb_01JDQ7B", "Invoice sync <eu>", func() ([]byte, error) {
			return console.Render(heartbeatDetail())
		}, []string{`action="/w/ws_01JDQ4K8Z6/heartbeats/hb_01JDQ7B/pause"`, `href="/w/ws_01JDQ4K8Z6/heartbeats/hb_01JDQ7B/edit"`,
			`action="/w/ws_01JDQ4K8Z6/heartbeats/hb_01JDQ7B/delete" data-confirm=`, `action="/w/ws_01JDQ4K8Z6/heartbeats/hb_01JDQ7B/rotate" data-confirm=`,
			`<code id="ping-url" class="secret uri">` + pingURL + `</code>`, `data-copy="ping-url"`, `data-copy="snippet-curl"`,
			"curl -fsS -m 10 --retry 5 -o /dev/null " + pingURL + "</code>", "*/5 * * * * curl", pingURL + "/$?", "OnUnitActiveSec=300s",
			`Invoke-RestMethod -Uri &#34;$url/start&#34;`, "Cause:</span> failure: exit code 1", "fail, exit code 1, took 3 min", "2 min",
			`<span class="badge sig-fail">fail</span> <span class="muted">exit 1</span>`, "&lt;ledger&gt; answered 503", "<details><summary>",
			"Cut at 10 KiB when received.", "(ignored: paused)", `title="curl/8.5.0">curl 8</span>`, "2001:db8::1", `<svg class="uptime"`, "99.5 %", "over 30 days",
			`data-heartbeat-id="hb_01JDQ7B"`, `data-state="DOWN"`}},
		{"heartbeat-viewer", "/w/ws_01JDQ4K8Z6/heartbeats/hb_01JDQ7C", "Reports", func() ([]byte, error) {
			return console.Render(console.HeartbeatDetail{Shell: viewer(console.NavHeartbeats), ID: "hb_01JDQ7C", Name: "Reports",
				Schedule: heartbeat.Schedule{Cron: "0 6 * * 1-5", Timezone: "UTC", GraceSeconds: 300}, State: monitor.StatePending,
				StateSince: at(0, 7, 0), PingURL: pingURL, LastExitCode: -1, LastDuration: -1})
		}, []string{"No pings yet", "No state changes yet.", "none yet", "no limit", "0 6 * * 1-5 curl", "OnCalendar=daily"}},
		{"heartbeat-new", "/w/ws_01JDQ4K8Z6/heartbeats/new", "New heartbeat", func() ([]byte, error) {
			return console.Render(console.HeartbeatForm{Shell: shell(console.NavHeartbeats), Values: console.NewHeartbeatValues()})
		}, []string{`action="/w/ws_01JDQ4K8Z6/heartbeats"`, `id="kind-period" name="kind" value="period" checked`, `value="3600"`, `value="300"`,
			`name="cron"`, `name="timezone"`, `name="max-runtime"`, `name="slo-target"`, `name="slo-period"`, `name="paused"`, "Create heartbeat"}},
		{"heartbeat-edit", "/w/ws_01JDQ4K8Z6/heartbeats/hb_01JDQ7A/edit", "Edit Nightly backup", func() ([]byte, error) {
			h := heartbeat.Heartbeat{ID: "hb_01JDQ7A", Name: "Nightly backup", MaxRuntimeSeconds: 3600,
				Schedule: heartbeat.Schedule{Cron: "30 2 * * *", Timezone: "Europe/Berlin", GraceSeconds: 1800},
				SLO:      &monitor.SLO{Target: 0.999, PeriodDays: 30}}
			return console.Render(console.HeartbeatForm{Shell: shell(console.NavHeartbeats), Mode: console.FormEdit, ID: h.ID,
				Values: console.HeartbeatFormValues(h), Errors: console.FormErrors{Fields: map[string]string{
					"cron": console.HeartbeatFieldMessage("cron", "must have periodSeconds or cron"), "grace": "Grace must be a whole number."}}})
		}, []string{`action="/w/ws_01JDQ4K8Z6/heartbeats/hb_01JDQ7A/edit"`, `id="kind-cron" name="kind" value="cron" checked`, `value="30 2 * * *"`,
			`value="Europe/Berlin"`, `value="1800"`, `value="3600"`, `value="99.9"`, `id="err-cron">Cron expression must not be empty.</p>`,
			`id="err-grace"`, "Please correct the marked fields.", "Save changes"}},
	}
}
