package console_test

import (
	"encoding/json"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web/console"
)

const monID = "mon_01JDQ6A4B2"

// storedMonitor is an HTTP monitor with every field set, a stored
// credential and stored headers.
func storedMonitor() monitor.Monitor {
	no := false
	return monitor.Monitor{ID: monID, WorkspaceID: wsID, Type: monitor.TypeHTTP, Name: "Checkout API", IntervalSeconds: 30,
		Config: monitor.Config{URL: "https://shop.acme.example/health", Method: "POST", HeadersSet: []string{"X-Api-Key", "X-Trace"},
			Body: `{"ping":true}`, FollowRedirects: &no, TimeoutSeconds: 5, DegradedLatencyMs: 800, Confirmations: 3, Recoveries: 2,
			ExpectedStatusCodes: []monitor.StatusRange{{From: 200, To: 299}, {From: 304, To: 304}},
			KeywordAssertions:   []monitor.KeywordAssertion{{Keyword: "ok", Present: true, CaseSensitive: true}, {Keyword: "error", Present: false}},
			JSONAssertions: []monitor.JSONAssertion{{Path: "$.status", Operator: monitor.OpEquals, Value: json.RawMessage(`"up"`)},
				{Path: "$.queue", Operator: monitor.OpLT, Value: json.RawMessage(`100`)}},
			AuthSet: &monitor.AuthPresence{Type: monitor.AuthBasic, Username: "probe", PasswordSet: true}},
		SLO: &monitor.SLO{Target: 0.999, PeriodDays: 30}}
}

func monitorFormPages() []uiPage {
	form := func(active console.Nav) console.MonitorForm {
		return console.MonitorForm{Shell: shell(active), Mode: console.FormNew, Values: console.NewMonitorValues()}
	}
	return []uiPage{
		{"monitor-new", "/w/ws_01JDQ4K8Z6/monitors/new", "New monitor", func() ([]byte, error) {
			return console.Render(form(console.NavNone))
		}, []string{`action="/w/ws_01JDQ4K8Z6/monitors"`, `formaction="/w/ws_01JDQ4K8Z6/monitors/test"`, `name="type" value="http" checked`,
			`name="type" value="tcp"`, `name="type" value="dns"`, `name="type" value="tls"`, `name="url"`, `name="method"`, `name="headers"`,
			`name="body"`, `name="status-codes"`, `name="keyword-2"`, `name="assertion-2-path"`, `name="assertion-2-operator"`, `name="assertion-2-value"`,
			`name="auth-type"`, `name="auth-password"`, `name="tcp-host"`, `name="tcp-port"`, `name="send"`, `name="expect"`, `name="record-name"`,
			`name="record-type"`, `name="expected-values"`, `name="resolver"`, `name="tls-host"`, `name="server-name"`, `name="degraded-expiry"`,
			`name="down-expiry"`, `name="interval"`, `name="timeout"`, `name="slo-target"`, `name="slo-period"`, `name="paused"`, `name="confirmations"`}},
		{"monitor-new-errors", "/w/ws_01JDQ4K8Z6/monitors/new/errors", "New monitor", func() ([]byte, error) {
			f := form(console.NavNone)
			f.Values.Name, f.Values.URL, f.Values.Interval = "", "ftp://x", "soon"
			f.Values.Assertions = []console.AssertionRow{{Path: "$.a", Operator: "equals", Value: "1"}, {Path: "$[", Operator: "equals", Value: "1"}}
			f.Errors = console.FormErrors{Fields: map[string]string{"name": "must not be empty", "url": "must be an absolute http or https URL",
				"interval": "must be a whole number of seconds", "assertion-1-path": "is not an RFC 9535 JSONPath"}}
			return console.Render(f)
		}, []string{`id="err-name"`, `id="err-url"`, `id="err-interval"`, `id="err-assertion-1-path"`, `href="#f-assertion-1-path"`,
			`aria-describedby="hint-url err-url"`, `value="soon"`, `name="assertion-4-path"`}},
		{"monitor-edit", "/w/ws_01JDQ4K8Z6/monitors/mon_01JDQ6A4B2/edit", "Edit Checkout API", func() ([]byte, error) {
			return console.Render(console.MonitorForm{Shell: shell(console.NavNone), Mode: console.FormEdit, ID: monID,
				Values: console.MonitorFormValues(storedMonitor())})
		}, []string{`action="/w/ws_01JDQ4K8Z6/monitors/mon_01JDQ6A4B2/edit"`, `type="hidden" name="type" value="http"`, `value="Checkout API"`,
			`value="200-299, 304"`, `name="header-remove" value="X-Api-Key"`, "set — leave empty to keep", `value="probe"`,
			`name="assertion-0-path" value="$.status"`, `value="&#34;up&#34;"`, `name="keyword-1-absent" value="on" checked`, `value="99.9"`,
			`<option value="POST" selected>`, `name="auth-type" value="basic" checked`}},
		{"monitor-edit-tcp", "/w/ws_01JDQ4K8Z6/monitors/mon_01JDQ6T/edit", "Edit Mail relay", func() ([]byte, error) {
			m := monitor.Monitor{ID: "mon_01JDQ6T", Type: monitor.TypeTCP, Name: "Mail relay", IntervalSeconds: 60,
				Config: monitor.Config{Host: "mail.acme.example", Port: 25, Expect: "220", TimeoutSeconds: 10}}
			return console.Render(console.MonitorForm{Shell: shell(console.NavNone), Mode: console.FormEdit, ID: m.ID, Values: console.MonitorFormValues(m)})
		}, []string{`name="tcp-host" type="text" value="mail.acme.example"`, `value="25"`, `value="220"`}},
		{"monitor-test", "/w/ws_01JDQ4K8Z6/monitors/test", "New monitor", func() ([]byte, error) {
			f := form(console.NavNone)
			v := storedMonitor()
			f.Values = console.MonitorFormValues(v)
			f.Values.AuthStored, f.Values.AuthPasswordSet, f.Values.HeadersSet = "", false, nil
			f.Test = console.NewTestResult(monitor.Observation{Result: monitor.ResultDown, Reason: "status 500 is not among the expected codes",
				Latency: 42 * time.Millisecond, StatusCode: 500, Assertions: []monitor.Outcome{
					{Kind: "status", Reason: "status 500 is not among the expected codes"},
					{Kind: "keyword", Index: 0, Passed: true}, {Kind: "keyword", Index: 1, Passed: true},
					{Kind: "json", Index: 0, Reason: `$.status selected "down", not "up"`}, {Kind: "json", Index: 1, Passed: true}}}, v.Config)
			return console.Render(f)
		}, []string{"Test result:", "✗ Failed:</strong> Status code is 200–299, 304 — status 500 is not among the expected codes",
			"✓ Passed:</strong> Keyword “ok” present", "✓ Passed:</strong> Keyword “error” absent", "✗ Failed:</strong> JSON $.status equals &#34;up&#34;",
			"42 ms", "Nothing was saved."}},
	}
}
