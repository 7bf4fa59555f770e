package console

// The monitor form: GET /w/{id}/monitors/new and /w/{id}/monitors/{mid}/edit,
// POSTed to /w/{id}/monitors (create), /w/{id}/monitors/{mid}/edit (update)
// or, by its "Test now" button, /w/{id}/monitors/test. It offers every
// field of the API's monitor body as text (numbers too, so a bad one comes
// back as typed). One form holds a fieldset per type; the stylesheet shows
// only the chosen type's, and without it every fieldset shows, each named
// by its type. Field names:
//
//	every type  type, name, interval, timeout, degraded-latency,
//	            confirmations, recoveries, paused (new only), slo-target
//	            (percent), slo-period (days)
//	http        url, method, headers ("Name: value" lines), header-remove
//	            (stored names, edit only), body, follow-redirects,
//	            status-codes ("200-299, 304"), keyword-N, keyword-N-absent,
//	            keyword-N-nocase, assertion-N-path, assertion-N-operator,
//	            assertion-N-value, auth-type, auth-username, auth-password,
//	            auth-token, auth-header, auth-value
//	tcp         tcp-host, tcp-port, send, expect
//	dns         record-name, record-type, expected-values (one a line),
//	            resolver
//	tls         tls-host, tls-port, server-name, degraded-expiry,
//	            down-expiry
//
// Hidden fields "mode" (new or edit) and "id" let "Test now" come back to
// the same form.

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The monitor form (MonitorForm) read into what the API's monitor
// body becomes: a monitor.Draft for a create or a test, an
// app.MonitorUpdate for an edit. Only the chosen type's fields are read.
// Numbers are read leniently (spaces, an empty field is the default) and
// one that is no number is a field error, reported with the draft's own
// problems so one answer lists every mistake.

// MonitorForm is the create or edit form of a monitor, and its answer to
// "Test now".
type MonitorForm struct {
	// Shell: the workspace is Shell.WorkspaceID.
	Shell Shell
	// Mode is FormNew or FormEdit.
	Mode FormMode
	// ID is the monitor's id when editing.
	ID string
	// Values re-fill the form.
	Values MonitorValues
	// Errors holds the fields' messages, by the field names above (see
	// MonitorField for the API's pointers).
	Errors FormErrors
	// Test is what "Test now" found; nil: not tested.
	Test *TestResult
}

func (MonitorForm) template() string { return "monitor_form.html" }

// TrailingBlankRows is how many empty keyword and JSON assertion rows the
// form offers after the filled ones.
const TrailingBlankRows = 3

// KeywordRow is one keyword check of the form.
type KeywordRow struct {
	Keyword string
	// Absent: the keyword must not be in the body.
	Absent bool
	// NoCase: letter case is ignored.
	NoCase bool
}

// Blank reports whether the row holds nothing to check.
func (r KeywordRow) Blank() bool { return strings.TrimSpace(r.Keyword) == "" }

// AssertionRow is one JSON path assertion of the form; Value is JSON as
// typed (text that is no JSON counts as a string).
type AssertionRow struct {
	Path, Operator, Value string
}

// Blank reports whether the row holds nothing to check.
func (r AssertionRow) Blank() bool {
	return strings.TrimSpace(r.Path) == "" && strings.TrimSpace(r.Value) == ""
}

// MonitorValues are the form's values as typed (or as stored, for an
// edit). Secrets are never among them: the password, token and header
// value fields are always empty, and Auth*Set says what is stored.
type MonitorValues struct {
	Type                 string
	Name                 string
	Interval             string
	Timeout              string
	DegradedLatency      string
	Confirmations        string
	Recoveries           string
	Paused               bool
	SLOTarget, SLOPeriod string

	// http
	URL             string
	Method          string
	Headers         string   // "Name: value" lines typed now; never the stored values
	HeadersSet      []string // names of the stored headers (edit)
	HeaderRemove    []string // stored names ticked for removal
	Body            string
	FollowRedirects bool
	StatusCodes     string
	Keywords        []KeywordRow
	Assertions      []AssertionRow
	AuthType        string // "", basic, bearer, header
	AuthUsername    string
	AuthHeader      string
	// What the stored credential holds (edit): its secret fields then say
	// "set — leave empty to keep".
	AuthStored      string // stored auth type, "" for none
	AuthPasswordSet bool
	AuthTokenSet    bool
	AuthValueSet    bool
	// AuthRetype says a secret was typed in the form this one answers:
	// it is not sent back, so it must be typed again to be saved.
	AuthRetype bool

	// tcp
	TCPHost, TCPPort, Send, Expect string
	// dns
	RecordName, RecordType, ExpectedValues, Resolver string
	// tls
	TLSHost, TLSPort, ServerName, DegradedExpiry, DownExpiry string
}

// MonitorFormValues are the form's values for a stored monitor, with its
// secrets left out.
func MonitorFormValues(m monitor.Monitor) MonitorValues {
	c := m.Config
	num := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	v := MonitorValues{Type: string(m.Type), Name: m.Name, Interval: num(m.IntervalSeconds), Timeout: num(c.TimeoutSeconds),
		DegradedLatency: num(c.DegradedLatencyMs), Confirmations: num(c.Confirmations), Recoveries: num(c.Recoveries), Paused: m.Paused,
		URL: c.URL, Method: c.Method, HeadersSet: c.HeadersSet, Body: c.Body, FollowRedirects: c.FollowRedirects == nil || *c.FollowRedirects,
		RecordName: c.RecordName, RecordType: c.RecordType, ExpectedValues: strings.Join(c.ExpectedValues, "\n"), Resolver: c.Resolver,
		Send: c.Send, Expect: c.Expect, ServerName: c.ServerName, DegradedExpiry: num(c.DegradedExpiryDays), DownExpiry: num(c.DownExpiryDays)}
	switch m.Type {
	case monitor.TypeTCP:
		v.TCPHost, v.TCPPort = c.Host, num(c.Port)
	case monitor.TypeTLS:
		v.TLSHost, v.TLSPort = c.Host, num(c.Port)
	}
	var codes []string
	for _, r := range c.ExpectedStatusCodes {
		if r.From == r.To {
			codes = append(codes, strconv.Itoa(r.From))
		} else {
			codes = append(codes, fmt.Sprintf("%d-%d", r.From, r.To))
		}
	}
	v.StatusCodes = strings.Join(codes, ", ")
	for _, k := range c.KeywordAssertions {
		v.Keywords = append(v.Keywords, KeywordRow{Keyword: k.Keyword, Absent: !k.Present, NoCase: !k.CaseSensitive})
	}
	for _, a := range c.JSONAssertions {
		v.Assertions = append(v.Assertions, AssertionRow{Path: a.Path, Operator: string(a.Operator), Value: string(a.Value)})
	}
	if p := c.AuthSet; p != nil {
		v.AuthType, v.AuthStored, v.AuthUsername, v.AuthHeader = string(p.Type), string(p.Type), p.Username, p.Header
		v.AuthPasswordSet, v.AuthTokenSet, v.AuthValueSet = p.PasswordSet, p.TokenSet, p.ValueSet
	}
	if m.SLO != nil {
		v.SLOTarget = strconv.FormatFloat(m.SLO.Target*100, 'g', 12, 64)
		v.SLOPeriod = strconv.Itoa(m.SLO.PeriodDays)
	}
	return v
}

// TestAssertion is one assertion's verdict in a test's result.
type TestAssertion struct {
	// Label names the assertion: "Status code", "Keyword “ok” present",
	// "JSON $.status equals "up"".
	Label  string
	Passed bool
	// Reason says why it failed; empty when it passed.
	Reason string
}

// TestResult is what "Test now" found: one check of the form's draft.
type TestResult struct {
	// Result is up, degraded, down or unknown.
	Result monitor.Result
	// Reason says why it is not up.
	Reason     string
	Latency    time.Duration
	StatusCode int       // 0: none (other types, or no response)
	CertExpiry time.Time // zero: none
	Assertions []TestAssertion
}

// NewTestResult describes an observation of a check of config c, naming
// each assertion by what it checks.
func NewTestResult(o monitor.Observation, c monitor.Config) *TestResult {
	t := &TestResult{Result: o.Result, Reason: o.Reason, Latency: o.Latency, StatusCode: o.StatusCode, CertExpiry: o.CertExpiry}
	for _, a := range o.Assertions {
		ta := TestAssertion{Passed: a.Passed, Reason: a.Reason}
		switch a.Kind {
		case "status":
			ta.Label = "Status code is " + statusCodesText(c.ExpectedStatusCodes)
		case "keyword":
			ta.Label = fmt.Sprintf("Keyword %d", a.Index+1)
			if a.Index < len(c.KeywordAssertions) {
				k := c.KeywordAssertions[a.Index]
				ta.Label = fmt.Sprintf("Keyword “%s” %s", k.Keyword, map[bool]string{true: "present", false: "absent"}[k.Present])
			}
		case "json":
			ta.Label = fmt.Sprintf("JSON assertion %d", a.Index+1)
			if a.Index < len(c.JSONAssertions) {
				j := c.JSONAssertions[a.Index]
				ta.Label = strings.TrimSpace(fmt.Sprintf("JSON %s %s %s", j.Path, j.Operator, j.Value))
			}
		default:
			ta.Label = a.Kind
		}
		t.Assertions = append(t.Assertions, ta)
	}
	return t
}

func statusCodesText(rs []monitor.StatusRange) string {
	if len(rs) == 0 {
		rs = monitor.DefaultExpectedStatus
	}
	var out []string
	for _, r := range rs {
		if r.From == r.To {
			out = append(out, strconv.Itoa(r.From))
		} else {
			out = append(out, fmt.Sprintf("%d–%d", r.From, r.To))
		}
	}
	return strings.Join(out, ", ")
}

// Edit reports whether the form edits a stored monitor.
func (f MonitorForm) Edit() bool { return f.Mode == FormEdit }

// Action is where the form POSTs to save.
func (f MonitorForm) Action() string {
	if f.Edit() {
		return "/w/" + f.Shell.WorkspaceID + "/monitors/" + f.ID + "/edit"
	}
	return "/w/" + f.Shell.WorkspaceID + "/monitors"
}

// MonitorField is the form field where the message of a field error
// with JSON pointer ptr (as monitor.Draft.Normalize and the app name
// them) belongs, for a monitor of type t. keywordRows and assertionRows
// give the form row of each keyword and JSON assertion of the draft (the
// form skips blank rows). "" means the error has no field of its own.
func MonitorField(t monitor.Type, ptr string, keywordRows, assertionRows []int) string {
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	row := func(rows []int, s string) (int, bool) {
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 {
			return 0, false
		}
		if i < len(rows) {
			return rows[i], true
		}
		return i, true
	}
	switch parts[0] {
	case "name", "type", "paused":
		return parts[0]
	case "intervalSeconds":
		return "interval"
	case "slo":
		if len(parts) > 1 && parts[1] == "periodDays" {
			return "slo-period"
		}
		return "slo-target"
	case "config":
	default:
		return ""
	}
	if len(parts) < 2 {
		return ""
	}
	switch name := parts[1]; name {
	case "url", "method", "body", "send", "expect", "resolver", "confirmations", "recoveries":
		return name
	case "headers", "headersSet":
		return "headers"
	case "followRedirects":
		return "follow-redirects"
	case "expectedStatusCodes":
		return "status-codes"
	case "keywordAssertions":
		if len(parts) > 2 {
			if r, ok := row(keywordRows, parts[2]); ok {
				return fmt.Sprintf("keyword-%d", r)
			}
		}
		return "keyword-0"
	case "jsonAssertions":
		if len(parts) > 2 {
			if r, ok := row(assertionRows, parts[2]); ok {
				sub := "path"
				if len(parts) > 3 && (parts[3] == "operator" || parts[3] == "value") {
					sub = parts[3]
				}
				return fmt.Sprintf("assertion-%d-%s", r, sub)
			}
		}
		return "assertion-0-path"
	case "degradedLatencyMs":
		return "degraded-latency"
	case "timeoutSeconds":
		return "timeout"
	case "auth":
		if len(parts) > 2 && parts[2] != "type" {
			return "auth-" + parts[2]
		}
		return "auth-type"
	case "host", "port":
		if t == monitor.TypeTLS {
			return "tls-" + name
		}
		return "tcp-" + name
	case "recordName":
		return "record-name"
	case "recordType":
		return "record-type"
	case "expectedValues":
		return "expected-values"
	case "serverName":
		return "server-name"
	case "degradedExpiryDays":
		return "degraded-expiry"
	case "downExpiryDays":
		return "down-expiry"
	}
	return ""
}

// rows pads the form's rows with blanks, so TrailingBlankRows empty rows
// follow the last filled one, as far as monitor.MaxAssertions allows.
func padRows[R interface{ Blank() bool }](rows []R) []R {
	blank := 0
	for i := len(rows) - 1; i >= 0 && rows[i].Blank(); i-- {
		blank++
	}
	var zero R
	for ; blank < TrailingBlankRows && len(rows) < monitor.MaxAssertions; blank++ {
		rows = append(rows, zero)
	}
	return rows
}

// formRow is one numbered row of a repeatable group, for the template.
type formRow[R any] struct {
	Name   string // field name prefix: "keyword-0", "assertion-2"
	Number int    // 1-based, for labels
	Row    R
}

func numbered[R any](prefix string, rows []R) []formRow[R] {
	out := make([]formRow[R], len(rows))
	for i, r := range rows {
		out[i] = formRow[R]{Name: fmt.Sprintf("%s-%d", prefix, i), Number: i + 1, Row: r}
	}
	return out
}

// KeywordRows are the keyword rows to show: the form's, then blanks.
func (f MonitorForm) KeywordRows() []formRow[KeywordRow] {
	return numbered("keyword", padRows(slices.Clone(f.Values.Keywords)))
}

// AssertionRows are the JSON assertion rows to show: the form's, then
// blanks.
func (f MonitorForm) AssertionRows() []formRow[AssertionRow] {
	return numbered("assertion", padRows(slices.Clone(f.Values.Assertions)))
}

// Types are the monitor types to choose from.
func (MonitorForm) Types() []monitor.Type { return monitor.Types }

// Methods are the HTTP methods to choose from.
func (MonitorForm) Methods() []string { return monitor.HTTPMethods }

// Operators are the JSON assertion operators to choose from.
func (MonitorForm) Operators() []monitor.Operator { return monitor.Operators }

// AuthTypes are the credentials to choose from; "" is none.
func (MonitorForm) AuthTypes() []struct{ Value, Label string } {
	return []struct{ Value, Label string }{{"", "none"}, {string(monitor.AuthBasic), "basic (user name and password)"},
		{string(monitor.AuthBearer), "bearer token"}, {string(monitor.AuthHeader), "a header and its value"}}
}

// RecordTypes are the DNS record types to choose from.
func (MonitorForm) RecordTypes() []string { return monitor.DNSRecordTypes }

// Removing reports whether stored header name is ticked for removal.
func (f MonitorForm) Removing(name string) bool { return slices.Contains(f.Values.HeaderRemove, name) }

// HeadersHint explains the headers field; stored values are kept.
func (f MonitorForm) HeadersHint() string {
	if len(f.Values.HeadersSet) > 0 {
		return "One “Name: value” a line. Stored headers keep their values unless named here or removed below."
	}
	return "One “Name: value” a line, e.g. Accept: application/json."
}

// SecretHint is the hint of a write-only field: whether a value is stored.
func (f MonitorForm) SecretHint(set bool) string {
	switch {
	case set:
		return "set — leave empty to keep"
	case f.Values.AuthRetype:
		return "Type it again to save it: secrets are never sent back to the browser."
	}
	return ""
}

// LatencyText is the check's duration in words.
func (t TestResult) LatencyText() string { return LatencyText(t.Latency) }

// withDefaults makes a form without a mode a new one, with GET and
// record type A where none is chosen.
func (v MonitorForm) withDefaults() view {
	if v.Mode == "" {
		v.Mode = FormNew
	}
	if v.Values.Method == "" {
		v.Values.Method = "GET"
	}
	if v.Values.RecordType == "" {
		v.Values.RecordType = "A"
	}
	return v
}

// NewMonitorValues are the values of an empty form: an HTTP monitor with
// the API's defaults where a control needs one.
func NewMonitorValues() MonitorValues {
	return MonitorValues{Type: string(monitor.TypeHTTP), Method: "GET", FollowRedirects: true, RecordType: "A"}
}

// monitorLabels name the form's fields in messages.
var monitorLabels = map[string]string{
	"type": "Type", "name": "Name", "interval": "Check interval", "timeout": "Timeout", "degraded-latency": "Degraded latency",
	"confirmations": "Failures before down", "recoveries": "Successes before up", "paused": "Paused",
	"slo-target": "SLO target", "slo-period": "SLO period", "url": "URL", "method": "Method", "headers": "Request headers",
	"body": "Request body", "follow-redirects": "Follow redirects", "status-codes": "Expected status codes",
	"auth-type": "Credentials", "auth-username": "User name", "auth-password": "Password", "auth-token": "Token",
	"auth-header": "Header name", "auth-value": "Header value", "tcp-host": "Host", "tcp-port": "Port", "send": "Send",
	"expect": "Expect", "record-name": "Name to resolve", "record-type": "Record type", "expected-values": "Expected values",
	"resolver": "Resolver", "tls-host": "Host", "tls-port": "Port", "server-name": "Server name",
	"degraded-expiry": "Degraded expiry", "down-expiry": "Down expiry",
}

// MonitorFieldMessage is a message for field name as a sentence that
// names the field ("URL must be an absolute http or https URL."), so it
// reads alone in the error summary too.
func MonitorFieldMessage(name, msg string) string {
	label := monitorLabels[name]
	var row int
	var part string
	switch {
	case label != "":
	case strings.HasPrefix(name, "keyword-"):
		if _, err := fmt.Sscanf(name, "keyword-%d", &row); err == nil {
			label = fmt.Sprintf("Keyword %d", row+1)
		}
	case strings.HasPrefix(name, "assertion-"):
		if _, err := fmt.Sscanf(strings.ReplaceAll(name, "-", " "), "assertion %d %s", &row, &part); err == nil {
			label = fmt.Sprintf("%s %d", map[string]string{"path": "Path", "operator": "Operator", "value": "Value"}[part], row+1)
		}
	}
	msg = strings.TrimSuffix(strings.TrimSpace(msg), ".") + "."
	if label == "" {
		return msg
	}
	return label + " " + msg
}

func monitorPath(ws, id string) string { return "/w/" + ws + "/monitors/" + id }

// renderMonitorForm answers with the form.
func (w *Server) renderMonitorForm(q *request, status int, v MonitorForm) error {
	return w.servePage(q, NavNone, status, func(s Shell) (view, error) {
		v.Shell = s
		return v, nil
	})
}

func (w *Server) newMonitor(q *request) error {
	if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
		return err
	}
	return w.renderMonitorForm(q, http.StatusOK, MonitorForm{Mode: FormNew, Values: NewMonitorValues()})
}

func (w *Server) createMonitor(q *request) error {
	if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
		return err
	}
	if err := q.parse(); err != nil {
		return err
	}
	mf := readMonitorForm(q.r.PostForm, "")
	v := MonitorForm{Mode: FormNew, Values: mf.values}
	if fe := mf.problems(nil); fe.Any() {
		v.Errors = fe
		return w.renderMonitorForm(q, http.StatusUnprocessableEntity, v)
	}
	m, err := w.app.CreateMonitor(q.ctx(), q.actor, mf.draft)
	if err != nil {
		return w.monitorFormFailed(q, v, mf, err)
	}
	return q.redirect(monitorPath(q.actor.WorkspaceID, m.ID), "monitor-created")
}

// storedMonitor is monitor id of the workspace (a monitor of another
// workspace, or anything that is not a monitor's id, is not found before
// it reaches the database).
func (w *Server) storedMonitor(q *request, id string) (monitor.Monitor, error) {
	if !ids.Valid(ids.Monitor, id) {
		return monitor.Monitor{}, errs.ErrNotFound
	}
	return w.app.GetMonitor(q.ctx(), q.actor, id)
}

// withStored adds to typed values what the form shows of m's stored
// secrets: which are set, never their values.
func withStored(v MonitorValues, m monitor.Monitor) MonitorValues {
	s := MonitorFormValues(m)
	v.HeadersSet, v.AuthStored, v.AuthPasswordSet, v.AuthTokenSet, v.AuthValueSet = s.HeadersSet, s.AuthStored, s.AuthPasswordSet, s.AuthTokenSet, s.AuthValueSet
	return v
}

func (w *Server) editMonitor(q *request) error {
	if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
		return err
	}
	m, err := w.storedMonitor(q, q.r.PathValue("id"))
	if err != nil {
		return err
	}
	return w.renderMonitorForm(q, http.StatusOK, MonitorForm{Mode: FormEdit, ID: m.ID, Values: MonitorFormValues(m)})
}

func (w *Server) updateMonitor(q *request) error {
	if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
		return err
	}
	if err := q.parse(); err != nil {
		return err
	}
	m, err := w.storedMonitor(q, q.r.PathValue("id"))
	if err != nil {
		return err
	}
	mf := readMonitorForm(q.r.PostForm, m.Type)
	v := MonitorForm{Mode: FormEdit, ID: m.ID, Values: withStored(mf.values, m)}
	if fe := mf.problems(m.Config.AuthSet); fe.Any() {
		v.Errors = fe
		return w.renderMonitorForm(q, http.StatusUnprocessableEntity, v)
	}
	if _, err := w.app.UpdateMonitor(q.ctx(), q.actor, m.ID, mf.update()); err != nil {
		return w.monitorFormFailed(q, v, mf, err)
	}
	return q.redirect(monitorPath(q.actor.WorkspaceID, m.ID), "monitor-saved")
}

// testMonitor runs one check of the form's draft and shows the form
// again, as typed, with what the check found.
func (w *Server) testMonitor(q *request) error {
	if err := w.may(q, account.ScopeMonitorsWrite); err != nil {
		return err
	}
	if err := q.parse(); err != nil {
		return err
	}
	v := MonitorForm{Mode: FormNew}
	var stored *monitor.Monitor
	if q.r.PostForm.Get("mode") == string(FormEdit) {
		m, err := w.storedMonitor(q, q.r.PostForm.Get("id"))
		if err != nil {
			return err
		}
		v.Mode, v.ID, stored = FormEdit, m.ID, &m
	}
	var mf *monitorForm
	var auth *monitor.AuthPresence
	if stored != nil {
		mf = readMonitorForm(q.r.PostForm, stored.Type)
		v.Values, auth = withStored(mf.values, *stored), stored.Config.AuthSet
	} else {
		mf = readMonitorForm(q.r.PostForm, "")
		v.Values = mf.values
	}
	mf.draft = mf.testDraft(auth)
	if fe := mf.problems(nil); fe.Any() {
		v.Errors = fe
		return w.renderMonitorForm(q, http.StatusUnprocessableEntity, v)
	}
	d := mf.draft
	obs, err := w.app.TestMonitor(q.ctx(), q.actor, d)
	if err != nil {
		return w.monitorFormFailed(q, v, mf, err)
	}
	v.Test = NewTestResult(obs, d.Config)
	return w.renderMonitorForm(q, http.StatusOK, v)
}

// monitorFormFailed shows the form again with the app's objections, or
// the error page for an error that is not the person's to fix.
func (w *Server) monitorFormFailed(q *request, v MonitorForm, mf *monitorForm, err error) error {
	if errs.KindOf(err) == errs.KindFeatureUnavailable { // a node that runs no checks cannot test
		v.Errors = FormErrors{Summary: "This server runs no checks, so it cannot test one: save the monitor and see its first result."}
		return w.renderMonitorForm(q, http.StatusServiceUnavailable, v)
	}
	if _, ok := formErrors(err, nil); !ok || statusOf(err) == http.StatusForbidden || statusOf(err) == http.StatusNotFound {
		return err
	}
	v.Errors = mf.errors(err)
	return w.renderMonitorForm(q, statusOf(err), v)
}
