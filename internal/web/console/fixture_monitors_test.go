package console_test

import (
	"math"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web/console"
)

func f64(v float64) *float64 { return &v }

func monitorRows() []console.MonitorRow {
	return []console.MonitorRow{
		{ID: "mon_01JDQ6A", Name: "Website", Type: monitor.TypeHTTP, Target: "https://www.acme.example/", Interval: time.Minute,
			State: monitor.StateUp, LastCheckAt: at(0, 9, 13), LastLatency: 182 * time.Millisecond, Availability24h: f64(0.99991)},
		{ID: "mon_01JDQ6B", Name: "Checkout API <v2>", Type: monitor.TypeHTTP,
			Target:   "https://api.acme.example/v2/checkout/health?region=eu-west-1&verbose=true&probe=tocsin-long-query-string",
			Interval: 30 * time.Second, State: monitor.StateDown, LastCheckAt: at(0, 9, 14), LastLatency: 10 * time.Second, Availability24h: f64(0.9412)},
		{ID: "mon_01JDQ6C", Name: "Postgres primary", Type: monitor.TypeTCP, Target: "db.internal:5432", Interval: 5 * time.Minute,
			State: monitor.StateDegraded, LastCheckAt: at(0, 9, 10), LastLatency: 912 * time.Millisecond, Availability24h: f64(1)},
		{ID: "mon_01JDQ6D", Name: "Certificate", Type: monitor.TypeTLS, Target: "acme.example:443", Interval: time.Hour,
			State: monitor.StatePaused, LastCheckAt: at(-3, 12, 0), LastLatency: 40 * time.Millisecond},
		{ID: "mon_01JDQ6E", Name: "MX record", Type: monitor.TypeDNS, Target: "acme.example (MX)", Interval: 10 * time.Minute,
			State: monitor.StatePending},
	}
}

func stateCounts() []console.StateCount {
	return []console.StateCount{{State: monitor.StateUp, Count: 1}, {State: monitor.StateDown, Count: 1}, {State: monitor.StateDegraded, Count: 1},
		{State: monitor.StateUnknown, Count: 1}, {State: monitor.StatePaused, Count: 1}}
}

// latencyPoints are 24 hours of buckets with a gap, a lone hour and a
// spike.
func latencyPoints() []console.LatencyPoint {
	var out []console.LatencyPoint
	for i := range 24 {
		start := at(-1, 10, 0).Add(time.Duration(i) * time.Hour)
		p := console.LatencyPoint{Start: start, End: start.Add(time.Hour)}
		switch {
		case i >= 5 && i <= 7, i == 9: // no checks, around a lone hour
		case i == 15:
			p.P50, p.P95 = f64(640), f64(2350)
		default:
			p.P50, p.P95 = f64(120+float64(i%5)*9), f64(210+float64(i%7)*25)
		}
		out = append(out, p)
	}
	return out
}

func uptimeDays() []console.UptimeDay {
	var out []console.UptimeDay
	for i := range 90 {
		d := console.UptimeDay{Day: at(-89+i, 0, 0)}
		switch {
		case i < 10: // before the monitor existed
		case i == 40:
			d.Availability = f64(0.9712)
		case i == 41:
			d.Availability = f64(0.995)
		case i == 70:
			d.Availability = f64(math.NaN())
		default:
			d.Availability = f64(1)
		}
		out = append(out, d)
	}
	return out
}

func monitorDetail() console.MonitorDetail {
	return console.MonitorDetail{Shell: shell(console.NavMonitors), ID: "mon_01JDQ6B", Name: "Checkout API <v2>", Type: monitor.TypeHTTP,
		Target: "https://api.acme.example/v2/checkout/health", Interval: 30 * time.Second,
		State: monitor.StateDown, StateSince: at(0, 8, 52), Cause: "status 503 not in 200-299",
		LastCheckAt: at(0, 9, 14), LastLatency: 245 * time.Millisecond,
		Availability24h: f64(0.9412), Availability30d: f64(0.99804), Availability90d: f64(0.999341),
		Latency: latencyPoints(), Uptime: uptimeDays(),
		SLO: &console.SLOView{Target: 0.999, PeriodDays: 30, Allowed: 43*time.Minute + 12*time.Second, Spent: 58 * time.Minute,
			Left: f64(-0.3426), BurnRate1h: f64(12), BurnRate6h: f64(3.41)},
		Checks: []console.CheckRow{
			{At: at(0, 9, 14), Result: monitor.ResultDown, Latency: 245 * time.Millisecond, StatusCode: 503, Reason: "status 503 not in 200-299"},
			{At: at(0, 9, 13), Result: monitor.ResultDown, Latency: 10 * time.Second, Reason: "timed out after 10 s waiting for the response headers of https://api.acme.example/v2/checkout/health"},
			{At: at(0, 9, 12), Result: monitor.ResultUp, Latency: 131 * time.Millisecond, StatusCode: 200},
			{At: at(0, 9, 11), Result: monitor.ResultUnknown, Reason: "the probe could not tell: no route"},
		},
		States: []console.StateRow{
			{At: at(0, 8, 52), ConfirmedAt: at(0, 8, 53), From: monitor.StateUp, To: monitor.StateDown, Cause: "status 503 not in 200-299 (after 2 consecutive failed checks)"},
			{At: at(-2, 14, 3), From: monitor.StateDegraded, To: monitor.StateUp, Cause: "no longer degraded: the check passed"},
			{At: at(-2, 13, 40), From: monitor.StatePending, To: monitor.StateDegraded},
		},
	}
}

func monitorPages() []uiPage {
	return []uiPage{
		{"monitors", "/w/ws_01JDQ4K8Z6/monitors", "Monitors", func() ([]byte, error) {
			return console.Render(console.Monitors{Shell: shell(console.NavMonitors), Availability24h: f64(0.98765), Availability30d: f64(0.999),
				Counts: stateCounts(), Rows: monitorRows(), Matching: 5, Any: true, NextPage: "/w/ws_01JDQ4K8Z6/monitors?cursor=abc"})
		}, []string{`href="/w/ws_01JDQ4K8Z6/monitors/new"`, `data-monitor-id="mon_01JDQ6A"`, `data-state="DOWN"`, `<span class="badge s-down">down</span>`,
			`href="/w/ws_01JDQ4K8Z6/monitors/mon_01JDQ6B"`, "Checkout API &lt;v2&gt;", "db.internal:5432", "98.76 %", "99.90 %", "99.99 %", "100 %",
			"30 s", "5 min", "1 h", "182 ms", "10.0 s", "never", `role="search"`, `method="get"`, `name="state"`, `name="type"`, `name="q"`,
			`<option value="down">down</option>`, `aria-current="page">Monitors</a>`, `rel="next"`}},
		{"monitors-filtered", "/w/ws_01JDQ4K8Z6/monitors/filtered", "Monitors", func() ([]byte, error) {
			return console.Render(console.Monitors{Shell: viewer(console.NavMonitors), Counts: stateCounts(), Any: true,
				Filter: console.MonitorFilterForm{State: "down", Type: "tcp", Q: "db <x>"}})
		}, []string{`<option value="down" selected>down</option>`, `<option value="tcp" selected>tcp</option>`, `value="db &lt;x&gt;"`,
			"No monitor matches", "0 of the workspace", "no data"}},
		{"monitors-empty", "/w/ws_01JDQ4K8Z6/monitors/empty", "Monitors", func() ([]byte, error) {
			return console.Render(console.Monitors{Shell: shell(console.NavMonitors), Counts: []console.StateCount{{State: monitor.StateUp}}})
		}, []string{"No monitors yet", `href="/w/ws_01JDQ4K8Z6/monitors/new"`}},
		{"monitor", "/w/ws_01JDQ4K8Z6/monitors/mon_01JDQ6B", "Checkout API <v2>", func() ([]byte, error) {
			return console.Render(monitorDetail())
		}, []string{`action="/w/ws_01JDQ4K8Z6/monitors/mon_01JDQ6B/pause"`, `href="/w/ws_01JDQ4K8Z6/monitors/mon_01JDQ6B/edit"`,
			`action="/w/ws_01JDQ4K8Z6/monitors/mon_01JDQ6B/delete" data-confirm=`, `<svg class="chart"`, `role="img"`, `<svg class="uptime"`,
			`<title>2026-10-08: 97.12 % available</title>`, `<title>2026-08-29: no data</title>`, "status 503 not in 200-299", "since",
			"99.9 %", "-34.3 % (overspent)", "43 min", "12.00×", "HTTP 503", "after 2 consecutive failed checks", `<caption>Response time by hour</caption>`,
			`data-state="DOWN"`, `href="/w/ws_01JDQ4K8Z6/monitors"`}},
		{"monitor-viewer", "/w/ws_01JDQ4K8Z6/monitors/mon_01JDQ6D", "Certificate", func() ([]byte, error) {
			return console.Render(console.MonitorDetail{Shell: viewer(console.NavMonitors), ID: "mon_01JDQ6D", Name: "Certificate", Type: monitor.TypeTLS,
				Target: "acme.example:443", Interval: time.Hour, State: monitor.StatePaused, StateSince: at(-3, 12, 0), Paused: true})
		}, []string{"No checks in this period", "No checks yet.", "No state changes yet.", `<span class="badge s-paused">paused</span>`, "no data"}},
	}
}
