package console_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web/console"
)

func renderForm(t *testing.T, v console.MonitorForm) string {
	t.Helper()
	b, err := console.Render(v)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	checkMarkup(t, out)
	return out
}

var typeFieldset = regexp.MustCompile(`<fieldset class="group type-fields type-([a-z]+)">`)

// TestMonitorFormTypes: a new monitor's form offers every type, each
// with its fieldset; an edit shows only the monitor's own type.
func TestMonitorFormTypes(t *testing.T) {
	out := renderForm(t, console.MonitorForm{Shell: shell(console.NavNone), Values: console.NewMonitorValues()})
	var got []string
	for _, m := range typeFieldset.FindAllStringSubmatch(out, -1) {
		got = append(got, m[1])
	}
	var want []string
	for _, ty := range monitor.Types {
		want = append(want, string(ty))
		if !strings.Contains(out, `<input type="radio" id="type-`+string(ty)+`" name="type" value="`+string(ty)+`"`) {
			t.Errorf("no choice of type %s", ty)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("type fieldsets %v, want %v", got, want)
	}
	fields := map[monitor.Type][]string{
		monitor.TypeHTTP: {"url", "method", "headers", "body", "follow-redirects", "status-codes", "keyword-0", "assertion-0-path", "auth-type", "auth-password"},
		monitor.TypeTCP:  {"tcp-host", "tcp-port", "send", "expect"},
		monitor.TypeDNS:  {"record-name", "record-type", "expected-values", "resolver"},
		monitor.TypeTLS:  {"tls-host", "tls-port", "server-name", "degraded-expiry", "down-expiry"},
	}
	common := []string{"name", "interval", "timeout", "degraded-latency", "confirmations", "recoveries", "slo-target", "slo-period"}
	for _, ty := range monitor.Types {
		m := monitor.Monitor{ID: "mon_1", Type: ty, Name: "one " + string(ty), IntervalSeconds: 60}
		out := renderForm(t, console.MonitorForm{Shell: shell(console.NavNone), Mode: console.FormEdit, ID: m.ID, Values: console.MonitorFormValues(m)})
		if got := typeFieldset.FindAllStringSubmatch(out, -1); len(got) != 1 || got[0][1] != string(ty) {
			t.Errorf("edit %s: fieldsets %v", ty, got)
		}
		if strings.Contains(out, `name="type" value="`+string(ty)+`" checked`) || !strings.Contains(out, `type="hidden" name="type" value="`+string(ty)+`"`) {
			t.Errorf("edit %s: the type can be changed", ty)
		}
		if strings.Contains(out, `name="paused"`) {
			t.Errorf("edit %s: offers to create it paused", ty)
		}
		for other, names := range fields {
			for _, n := range names {
				if has := strings.Contains(out, `name="`+n+`"`); has != (other == ty) {
					t.Errorf("edit %s: field %s shown %v", ty, n, has)
				}
			}
		}
		for _, n := range common {
			if !strings.Contains(out, `id="f-`+n+`" name="`+n+`"`) {
				t.Errorf("edit %s: no field %s", ty, n)
			}
		}
	}
}

// TestMonitorFormErrorsAtFields: each message sits under its own field,
// tied to it, and the summary links there.
func TestMonitorFormErrorsAtFields(t *testing.T) {
	v := console.MonitorForm{Shell: shell(console.NavNone), Values: console.NewMonitorValues()}
	v.Values.Keywords = []console.KeywordRow{{}, {Keyword: "x"}}
	v.Errors = console.FormErrors{Fields: map[string]string{"url": "URL is bad.", "keyword-1": "Keyword 2 is bad.",
		"assertion-0-value": "Value 1 is bad.", "auth-token": "Token is bad.", "tls-port": "Port is bad."}}
	out := renderForm(t, v)
	for name, msg := range v.Errors.Fields {
		re := regexp.MustCompile(`id="f-` + name + `"[^>]*aria-describedby="(?:hint-` + name + ` )?err-` + name + `"[^>]*aria-invalid="true">(?:\s*</div>)?\s*<p class="error" id="err-` + name + `">` + regexp.QuoteMeta(msg) + `</p>`)
		if !re.MatchString(out) {
			t.Errorf("%s: message not at its field", name)
		}
		if !strings.Contains(out, `<li><a href="#f-`+name+`">`+msg+`</a></li>`) {
			t.Errorf("%s: not in the summary", name)
		}
	}
	if n := strings.Count(out, `<p class="error"`); n != len(v.Errors.Fields) {
		t.Errorf("%d messages, want %d", n, len(v.Errors.Fields))
	}
}

func TestMonitorFieldPointers(t *testing.T) {
	kw, js := []int{1, 4}, []int{0, 2, 5}
	for ptr, want := range map[string]string{
		"/name": "name", "/type": "type", "/intervalSeconds": "interval", "/slo/target": "slo-target", "/slo/periodDays": "slo-period",
		"/config/url": "url", "/config/method": "method", "/config/headers/X-Api~1Key": "headers", "/config/body": "body",
		"/config/followRedirects": "follow-redirects", "/config/expectedStatusCodes/3": "status-codes",
		"/config/keywordAssertions/1/keyword": "keyword-4", "/config/keywordAssertions": "keyword-0",
		"/config/jsonAssertions/1/path": "assertion-2-path", "/config/jsonAssertions/2/value": "assertion-5-value",
		"/config/jsonAssertions/0/operator": "assertion-0-operator", "/config/jsonAssertions/7/path": "assertion-7-path",
		"/config/degradedLatencyMs": "degraded-latency", "/config/timeoutSeconds": "timeout", "/config/confirmations": "confirmations",
		"/config/recoveries": "recoveries", "/config/auth": "auth-type", "/config/auth/type": "auth-type", "/config/auth/password": "auth-password",
		"/config/auth/header": "auth-header", "/config/host": "tcp-host", "/config/port": "tcp-port", "/config/send": "send",
		"/config/recordName": "record-name", "/config/recordType": "record-type", "/config/expectedValues": "expected-values",
		"/config/resolver": "resolver", "/config/serverName": "server-name", "/config/degradedExpiryDays": "degraded-expiry",
		"/config/downExpiryDays": "down-expiry", "/config": "", "/nonsense": "", "/config/nonsense": "",
	} {
		if got := console.MonitorField(monitor.TypeTCP, ptr, kw, js); got != want {
			t.Errorf("MonitorField(%s) = %q, want %q", ptr, got, want)
		}
	}
	if got := console.MonitorField(monitor.TypeTLS, "/config/port", nil, nil); got != "tls-port" {
		t.Errorf("a tls monitor's port is %q", got)
	}
	for name, want := range map[string]string{"url": "URL must be an absolute URL.", "assertion-2-path": "Path 3 must be an absolute URL.",
		"keyword-0": "Keyword 1 must be an absolute URL.", "who-knows": "must be an absolute URL."} {
		if got := console.MonitorFieldMessage(name, "must be an absolute URL"); got != want {
			t.Errorf("MonitorFieldMessage(%s) = %q, want %q", name, got, want)
		}
	}
}

// TestMonitorFormShowsNoSecret: a stored credential and header values
// never reach the page, only that they are set.
func TestMonitorFormShowsNoSecret(t *testing.T) {
	m := storedMonitor()
	m.Config.Auth = &monitor.Auth{Type: monitor.AuthBasic, Username: "probe", Password: "pw-secret-1"}
	m.Config.Headers = map[string]string{"X-Api-Key": "hdr-secret-2", "X-Trace": "hdr-secret-3"}
	out := renderForm(t, console.MonitorForm{Shell: shell(console.NavNone), Mode: console.FormEdit, ID: m.ID, Values: console.MonitorFormValues(m)})
	for _, s := range []string{"pw-secret-1", "hdr-secret-2", "hdr-secret-3"} {
		if strings.Contains(out, s) {
			t.Errorf("the form shows %s", s)
		}
	}
	for _, want := range []string{`<p class="hint" id="hint-auth-password">set — leave empty to keep</p>`, `A basic credential is stored`,
		`<input id="f-auth-password" name="auth-password" type="password" autocomplete="new-password" aria-describedby="hint-auth-password">`,
		`Remove <code>X-Api-Key</code>`, `Remove <code>X-Trace</code>`, "“Test now” sends only the headers and credentials typed here"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q", want)
		}
	}
}

// TestMonitorFormRows: the filled rows, then three blank ones.
func TestMonitorFormRows(t *testing.T) {
	v := console.MonitorForm{Shell: shell(console.NavNone), Values: console.NewMonitorValues()}
	v.Values.Assertions = []console.AssertionRow{{Path: "$.a", Operator: "exists"}, {}, {Path: "$.b", Operator: "gt", Value: "3"}}
	out := renderForm(t, v)
	if !strings.Contains(out, `name="assertion-5-path"`) || strings.Contains(out, `name="assertion-6-path"`) {
		t.Error("not three blank rows after the last filled one")
	}
	if !strings.Contains(out, `<option value="gt" selected>`) || !strings.Contains(out, `name="assertion-2-value" value="3"`) {
		t.Error("a row lost its values")
	}
	full := make([]console.AssertionRow, monitor.MaxAssertions)
	for i := range full {
		full[i] = console.AssertionRow{Path: "$.x", Operator: "exists"}
	}
	v.Values.Assertions = full
	out = renderForm(t, v)
	if strings.Contains(out, `name="assertion-20-path"`) {
		t.Error("rows beyond the most a monitor may have")
	}
	if n := strings.Count(out, `name="keyword-`) / 3; n != console.TrailingBlankRows {
		t.Errorf("%d keyword rows on a new form", n)
	}
}

// TestMonitorTestResult: every assertion's verdict in words.
func TestMonitorTestResult(t *testing.T) {
	c := storedMonitor().Config
	r := console.NewTestResult(monitor.Observation{Result: monitor.ResultUp, Latency: 1500 * time.Millisecond, StatusCode: 200,
		CertExpiry: at(30, 0, 0), Assertions: []monitor.Outcome{{Kind: "status", Passed: true}, {Kind: "keyword", Index: 9, Reason: "gone"}}}, c)
	if len(r.Assertions) != 2 || r.Assertions[0].Label != "Status code is 200–299, 304" || !r.Assertions[0].Passed ||
		r.Assertions[1].Label != "Keyword 10" || r.Assertions[1].Passed || r.Assertions[1].Reason != "gone" {
		t.Errorf("assertions %+v", r.Assertions)
	}
	out := renderForm(t, console.MonitorForm{Shell: shell(console.NavNone), Values: console.NewMonitorValues(), Test: r})
	for _, want := range []string{`<span class="badge result">up</span>`, "1500 ms", "✓ Passed:</strong> Status code is 200–299, 304",
		"✗ Failed:</strong> Keyword 10 — gone", `<time datetime="2026-12-26T00:00:00Z">`} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q", want)
		}
	}
	if got := console.LatencyText(42 * time.Millisecond); got != "42 ms" {
		t.Errorf("LatencyText = %q", got)
	}
}
