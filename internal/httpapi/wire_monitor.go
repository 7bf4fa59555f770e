package httpapi

import (
	"encoding/json"
	"fmt"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/stamp"
)

// Monitor is a monitor as the API shows it.
type Monitor struct {
	ID              string        `json:"id" example:"mon_01JD5Z8Q3C4M6V9X2B7N1K0PQR" doc:"Stable, sortable identifier."`
	Type            string        `json:"type" enum:"http,tcp,dns,tls"`
	Name            string        `json:"name"`
	Config          MonitorConfig `json:"config"`
	IntervalSeconds int           `json:"intervalSeconds" doc:"Seconds between checks."`
	State           string        `json:"state" enum:"PENDING,UP,DEGRADED,DOWN,UNKNOWN,PAUSED,MAINTENANCE" doc:"PENDING until the first checks have a result."`
	StateSince      stamp.Time    `json:"stateSince"`
	LastCheckAt     *stamp.Time   `json:"lastCheckAt" nullable:"true" doc:"When the latest check started; null before the first."`
	LastResult      *string       `json:"lastResult" nullable:"true" doc:"The latest check's result (up, degraded, down or unknown); null before the first."`
	LastReason      string        `json:"lastReason,omitempty" doc:"Why the latest check was not up."`
	LastLatencyMs   *float64      `json:"lastLatencyMs" nullable:"true" doc:"The latest check's latency in milliseconds; null before the first."`
	CertExpiresAt   *stamp.Time   `json:"certificateExpiresAt,omitempty" doc:"tls monitors: when the certificate the checks last saw expires."`
	Paused          bool          `json:"paused"`
	CreatedAt       stamp.Time    `json:"createdAt"`
	UpdatedAt       stamp.Time    `json:"updatedAt"`
	SLO             *Objective    `json:"slo" doc:"The monitor's objective; null: none."`
}

// MonitorCreate is the body of POST /api/v1/monitors (spec §2).
type MonitorCreate struct {
	Type            string        `json:"type" doc:"The kind of check."`
	Name            string        `json:"name" doc:"Display name."`
	Config          MonitorConfig `json:"config" doc:"Type-specific settings."`
	IntervalSeconds int           `json:"intervalSeconds,omitempty" default:"60" doc:"Seconds between checks, 10 to 86400; the workspace's plan may require more."`
	Paused          bool          `json:"paused,omitempty" doc:"Create the monitor paused: no checks run until it is resumed."`
	SLO             *Objective    `json:"slo,omitempty" doc:"An objective; absent: none."`
}

// MonitorConfig holds the settings of every monitor type; each type uses
// its own fields and rejects the others.
type MonitorConfig struct {
	// http
	URL                 string             `json:"url,omitempty" doc:"http: the URL to request (http or https). Required for http." example:"https://example.com/health"`
	Method              string             `json:"method,omitempty" doc:"http: request method; default GET."`
	Headers             map[string]string  `json:"headers,omitempty" writeOnly:"true" doc:"http: extra request headers, name to value. The values may be credentials, so they are stored encrypted and write-only: responses list the names in headersSet, never the values. In a PATCH, a header not named keeps its value."`
	HeadersSet          []string           `json:"headersSet,omitempty" readOnly:"true" doc:"http: names of the stored request headers, sorted; their values are never shown. Ignored in requests."`
	Body                string             `json:"body,omitempty" doc:"http: request body."`
	TimeoutSeconds      int                `json:"timeoutSeconds,omitempty" doc:"Seconds before the check gives up; default 10, never more than intervalSeconds."`
	FollowRedirects     *bool              `json:"followRedirects,omitempty" doc:"http: follow up to 10 redirects; default true."`
	ExpectedStatusCodes []StatusCode       `json:"expectedStatusCodes,omitempty" doc:"http: accepted status codes, as integers or ranges such as \"200-299\"; default 200-399."`
	KeywordAssertions   []KeywordAssertion `json:"keywordAssertions,omitempty" doc:"http: keywords that must (or must not) be in the first 128 KiB of the body."`
	JSONAssertions      []JSONAssertion    `json:"jsonAssertions,omitempty" doc:"http: RFC 9535 JSONPath assertions on the first 128 KiB of the body."`
	DegradedLatencyMs   int                `json:"degradedLatencyMs,omitempty" doc:"A correct answer slower than this many milliseconds is degraded; 0 or absent: never."`
	Auth                *MonitorAuth       `json:"auth,omitempty" doc:"http: credentials, stored encrypted. Secret fields are write-only: responses say which are set."`
	Confirmations       int                `json:"confirmations,omitempty" doc:"Consecutive down results before the monitor is DOWN; default 2, so one blip raises no alarm."`
	Recoveries          int                `json:"recoveries,omitempty" doc:"Consecutive up results before a DOWN monitor is UP again; default 1."`

	// tcp, tls
	Host string `json:"host,omitempty" doc:"tcp, tls: host name or IP address."`
	Port int    `json:"port,omitempty" doc:"tcp: required; tls: default 443."`
	Send string `json:"send,omitempty" doc:"tcp: bytes to send after connecting."`
	// Expect is matched against what the server sends back.
	Expect string `json:"expect,omitempty" doc:"tcp: text the reply must contain."`

	// dns
	RecordName     string   `json:"recordName,omitempty" doc:"dns: the name to resolve. Required for dns."`
	RecordType     string   `json:"recordType,omitempty" doc:"dns: record type; default A."`
	ExpectedValues []string `json:"expectedValues,omitempty" doc:"dns: values the answer must contain; empty: any answer."`
	Resolver       string   `json:"resolver,omitempty" doc:"dns: resolver as host:port; default the system resolver."`

	// tls
	ServerName         string `json:"serverName,omitempty" doc:"tls: SNI name; default host."`
	DegradedExpiryDays int    `json:"degradedExpiryDays,omitempty" doc:"tls: degraded when the certificate expires within this many days; default 14."`
	DownExpiryDays     int    `json:"downExpiryDays,omitempty" doc:"tls: down when the certificate expires within this many days; default 3."`
}

// MonitorAuth is an authenticated check's credential.
type MonitorAuth struct {
	Type        string `json:"type" enum:"basic,bearer,header"`
	Username    string `json:"username,omitempty" doc:"basic: user name."`
	Password    string `json:"password,omitempty" writeOnly:"true" doc:"basic: password. Write-only."`
	Token       string `json:"token,omitempty" writeOnly:"true" doc:"bearer: token. Write-only."`
	Header      string `json:"header,omitempty" doc:"header: header name."`
	Value       string `json:"value,omitempty" writeOnly:"true" doc:"header: header value. Write-only."`
	PasswordSet bool   `json:"passwordSet,omitempty" readOnly:"true" doc:"A password is stored."`
	TokenSet    bool   `json:"tokenSet,omitempty" readOnly:"true" doc:"A token is stored."`
	ValueSet    bool   `json:"valueSet,omitempty" readOnly:"true" doc:"A header value is stored."`
}

// KeywordAssertion checks for a keyword in the body.
type KeywordAssertion struct {
	Keyword       string `json:"keyword"`
	Present       *bool  `json:"present,omitempty" doc:"true (default): the keyword must appear; false: it must not."`
	CaseSensitive *bool  `json:"caseSensitive,omitempty" doc:"Default true."`
}

// JSONAssertion compares what a JSONPath selects with a value.
type JSONAssertion struct {
	Path     string `json:"path" doc:"RFC 9535 JSONPath, e.g. $.status." example:"$.status"`
	Operator string `json:"operator" enum:"equals,contains,exists,gt,lt" doc:"equals: a selected node equals value; contains: a selected string contains value (a string) or a selected array has an element equal to value; exists: the path selects something (value false: selects nothing); gt / lt: a selected number is greater / less than value."`
	Value    any    `json:"value,omitempty" doc:"Any JSON for equals and contains; absent or boolean for exists; a number for gt and lt."`
}

// StatusCode is an accepted status: an integer, or a range "200-299".
type StatusCode struct {
	From, To int
	problem  string // why the value given is none
}

// Schema documents and validates both forms.
func (StatusCode) Schema(huma.Registry) *huma.Schema {
	lo, hi := float64(monitor.MinStatusCode), float64(monitor.MaxStatusCode)
	return &huma.Schema{OneOf: []*huma.Schema{
		{Type: huma.TypeInteger, Minimum: &lo, Maximum: &hi},
		{Type: huma.TypeString, Pattern: `^[1-5][0-9]{2}-[1-5][0-9]{2}$`},
	}, Description: "A status code such as 204, or an inclusive range such as \"200-299\"."}
}

// UnmarshalJSON takes any JSON value: one that is no status code is
// kept as a problem for Resolve to report with the body's other fields
// (an error here would stop the decoding, and the fields after it would
// look absent).
func (s *StatusCode) UnmarshalJSON(b []byte) error {
	*s = StatusCode{}
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		s.From, s.To = n, n
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		_, s.problem = monitor.ParseStatusRange("")
		return nil
	}
	var r monitor.StatusRange
	r, s.problem = monitor.ParseStatusRange(str)
	s.From, s.To = r.From, r.To
	return nil
}

func (s StatusCode) MarshalJSON() ([]byte, error) {
	if s.From == s.To {
		return json.Marshal(s.From)
	}
	return json.Marshal(fmt.Sprintf("%d-%d", s.From, s.To))
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// draft converts a request body into a domain draft.
func (c MonitorCreate) draft() (monitor.Draft, error) {
	cfg, auth, err := c.Config.domain()
	return monitor.Draft{Type: monitor.Type(c.Type), Name: c.Name, Config: cfg, Auth: auth,
		IntervalSeconds: c.IntervalSeconds, Paused: c.Paused, SLO: c.SLO.domain()}, err
}

func (c MonitorConfig) domain() (monitor.Config, *monitor.Auth, error) {
	out := monitor.Config{
		URL: c.URL, Method: c.Method, Headers: c.Headers, Body: c.Body, TimeoutSeconds: c.TimeoutSeconds,
		FollowRedirects: c.FollowRedirects, DegradedLatencyMs: c.DegradedLatencyMs,
		Host: c.Host, Port: c.Port, Send: c.Send, Expect: c.Expect,
		RecordName: c.RecordName, RecordType: c.RecordType, ExpectedValues: c.ExpectedValues, Resolver: c.Resolver,
		ServerName: c.ServerName, DegradedExpiryDays: c.DegradedExpiryDays, DownExpiryDays: c.DownExpiryDays,
		Confirmations: c.Confirmations, Recoveries: c.Recoveries,
	}
	for _, s := range c.ExpectedStatusCodes {
		out.ExpectedStatusCodes = append(out.ExpectedStatusCodes, monitor.StatusRange{From: s.From, To: s.To})
	}
	for _, k := range c.KeywordAssertions {
		out.KeywordAssertions = append(out.KeywordAssertions, monitor.KeywordAssertion{
			Keyword: k.Keyword, Present: boolOr(k.Present, true), CaseSensitive: boolOr(k.CaseSensitive, true)})
	}
	for _, j := range c.JSONAssertions {
		a := monitor.JSONAssertion{Path: j.Path, Operator: monitor.Operator(j.Operator)}
		if j.Value != nil {
			b, err := json.Marshal(j.Value)
			if err != nil {
				return out, nil, err
			}
			a.Value = b
		}
		out.JSONAssertions = append(out.JSONAssertions, a)
	}
	var auth *monitor.Auth
	if c.Auth != nil {
		auth = &monitor.Auth{Type: monitor.AuthType(c.Auth.Type), Username: c.Auth.Username, Password: c.Auth.Password,
			Token: c.Auth.Token, Header: c.Auth.Header, Value: c.Auth.Value}
	}
	return out, auth, nil
}

func toConfig(c monitor.Config) MonitorConfig {
	// Header values are write-only: only their names are shown.
	out := MonitorConfig{
		URL: c.URL, Method: c.Method, HeadersSet: c.HeadersSet, Body: c.Body, TimeoutSeconds: c.TimeoutSeconds,
		FollowRedirects: c.FollowRedirects, DegradedLatencyMs: c.DegradedLatencyMs,
		Host: c.Host, Port: c.Port, Send: c.Send, Expect: c.Expect,
		RecordName: c.RecordName, RecordType: c.RecordType, ExpectedValues: c.ExpectedValues, Resolver: c.Resolver,
		ServerName: c.ServerName, DegradedExpiryDays: c.DegradedExpiryDays, DownExpiryDays: c.DownExpiryDays,
		Confirmations: c.Confirmations, Recoveries: c.Recoveries,
	}
	for _, r := range c.ExpectedStatusCodes {
		out.ExpectedStatusCodes = append(out.ExpectedStatusCodes, StatusCode{From: r.From, To: r.To})
	}
	for _, k := range c.KeywordAssertions {
		out.KeywordAssertions = append(out.KeywordAssertions, KeywordAssertion{Keyword: k.Keyword, Present: &k.Present, CaseSensitive: &k.CaseSensitive})
	}
	for _, j := range c.JSONAssertions {
		a := JSONAssertion{Path: j.Path, Operator: string(j.Operator)}
		if j.Value != nil {
			a.Value = json.RawMessage(j.Value)
		}
		out.JSONAssertions = append(out.JSONAssertions, a)
	}
	if p := c.AuthSet; p != nil {
		out.Auth = &MonitorAuth{Type: string(p.Type), Username: p.Username, Header: p.Header,
			PasswordSet: p.PasswordSet, TokenSet: p.TokenSet, ValueSet: p.ValueSet}
	}
	return out
}

func toMonitor(m monitor.Monitor) Monitor {
	out := Monitor{
		ID: m.ID, Type: string(m.Type), Name: m.Name, Config: toConfig(m.Config),
		IntervalSeconds: m.IntervalSeconds, State: string(m.State), StateSince: stamp.Of(m.StateSince),
		Paused: m.Paused, CreatedAt: stamp.Of(m.CreatedAt), UpdatedAt: stamp.Of(m.UpdatedAt), SLO: toObjective(m.SLO),
	}
	if l := m.Last; !l.At.IsZero() {
		at, result, latency := l.At, string(l.Result), ms(l.Latency)
		out.LastCheckAt, out.LastResult, out.LastReason, out.LastLatencyMs = stamp.Ptr(&at), &result, l.Reason, &latency
	}
	if exp := m.Last.CertExpiry; !exp.IsZero() {
		out.CertExpiresAt = stamp.Ptr(&exp)
	}
	return out
}

// Resolve runs the domain's rules after the schema's, so one 422 lists
// every failing field: huma calls it even when schema validation failed.
func (c *MonitorCreate) Resolve(huma.Context) []error {
	d, err := c.draft()
	if err != nil {
		return nil
	}
	// A code that could not be read says so first: its message says
	// what would be accepted; Normalize sees only that it is out of range.
	var problems []errs.FieldError
	for i, sc := range c.Config.ExpectedStatusCodes {
		if sc.problem != "" {
			problems = append(problems, errs.FieldError{Pointer: fmt.Sprintf("/config/expectedStatusCodes/%d", i), Message: sc.problem})
		}
	}
	return fieldDetails(append(append(problems, d.Normalize()...), app.SLOProblems(d.SLO)...))
}
