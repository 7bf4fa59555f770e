package monitor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/tocsin/tocsin/internal/errs"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/theory/jsonpath"
)

// Limits on a monitor's configuration: they keep every check bounded.
const (
	MaxNameLen           = 200
	MaxURLLen            = 2048
	MaxHeaders           = 50
	MaxHeaderLen         = 8192
	MaxBodyLen           = 64 << 10
	MaxAssertions        = 20
	MaxKeywordLen        = 1024
	MaxJSONPathLen       = 256
	MaxAssertionValueLen = 4096
	MaxTimeoutSeconds    = 60
	DefaultTimeout       = 10
	DefaultConfirmations = 2
	DefaultRecoveries    = 1
	MaxConfirmations     = 10
	MaxExpectedValues    = 20
	MaxStatusCodes       = 50  // entries of expectedStatusCodes
	MinStatusCode        = 100 // what an HTTP status code can be
	MaxStatusCode        = 599
	MaxHostLen           = 253 // a DNS name's limit: host, recordName, serverName
	MaxPort              = 65535
	MaxExpiryDays        = 365 // TLS expiry thresholds
)

// DefaultExpectedStatus is accepted when a monitor names no status codes.
var DefaultExpectedStatus = []StatusRange{{From: 200, To: 399}}

// HTTPMethods are the methods an HTTP check may use.
var HTTPMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// DNSRecordTypes are the record types a DNS check may query.
var DNSRecordTypes = []string{"A", "AAAA", "CNAME", "MX", "NS", "TXT", "SRV", "CAA", "PTR", "SOA"}

// Draft is a monitor as a user asks for it, before it is stored.
type Draft struct {
	Type            Type
	Name            string
	Config          Config
	Auth            *Auth
	IntervalSeconds int
	Paused          bool
	SLO             *SLO // validated by the application (metrics.Objective)
}

// Normalize fills defaults and then validates. It returns every failing field
// at once, each named by its JSON pointer in the request body.
func (d *Draft) Normalize() []errs.FieldError {
	v := &validator{}
	d.Name = strings.TrimSpace(d.Name)
	if d.Name == "" {
		v.add("/name", "must not be empty")
	} else if utf8.RuneCountInString(d.Name) > MaxNameLen {
		v.add("/name", fmt.Sprintf("must be at most %d characters", MaxNameLen))
	}
	if d.IntervalSeconds == 0 {
		d.IntervalSeconds = DefaultIntervalSeconds
	}
	if d.IntervalSeconds < MinIntervalSeconds || d.IntervalSeconds > MaxIntervalSeconds {
		v.add("/intervalSeconds", fmt.Sprintf("must be between %d and %d", MinIntervalSeconds, MaxIntervalSeconds))
	}
	c := &d.Config
	switch d.Type {
	case TypeHTTP:
		v.http(c, d.Auth)
	case TypeTCP:
		v.hostPort(c, true)
		if len(c.Send) > MaxBodyLen {
			v.add("/config/send", fmt.Sprintf("must be at most %d bytes", MaxBodyLen))
		}
		if len(c.Expect) > MaxKeywordLen {
			v.add("/config/expect", fmt.Sprintf("must be at most %d bytes", MaxKeywordLen))
		}
	case TypeDNS:
		v.dns(c)
	case TypeTLS:
		if c.Port == 0 {
			c.Port = 443
		}
		v.hostPort(c, false)
		if c.DegradedExpiryDays == 0 {
			c.DegradedExpiryDays = 14
		}
		if c.DownExpiryDays == 0 {
			c.DownExpiryDays = 3
		}
		if len(c.ServerName) > MaxHostLen {
			v.add("/config/serverName", fmt.Sprintf("must be a host name of at most %d characters", MaxHostLen))
		}
		if c.DownExpiryDays < 0 || c.DownExpiryDays > MaxExpiryDays {
			v.add("/config/downExpiryDays", fmt.Sprintf("must be between 0 and %d", MaxExpiryDays))
		}
		if c.DegradedExpiryDays < c.DownExpiryDays || c.DegradedExpiryDays > MaxExpiryDays {
			v.add("/config/degradedExpiryDays", fmt.Sprintf("must be between downExpiryDays and %d", MaxExpiryDays))
		}
	default:
		v.add("/type", fmt.Sprintf("must be one of %s", joinTypes()))
	}
	if d.Type != TypeHTTP && d.Auth != nil {
		v.add("/config/auth", "is only allowed for http monitors")
	}
	v.foreign(d.Type, c)
	if c.Confirmations == 0 {
		c.Confirmations = DefaultConfirmations
	}
	if c.Confirmations < 1 || c.Confirmations > MaxConfirmations {
		v.add("/config/confirmations", fmt.Sprintf("must be between 1 and %d", MaxConfirmations))
	}
	if c.Recoveries == 0 {
		c.Recoveries = DefaultRecoveries
	}
	if c.Recoveries < 1 || c.Recoveries > MaxConfirmations {
		v.add("/config/recoveries", fmt.Sprintf("must be between 1 and %d", MaxConfirmations))
	}
	// A check must end before the next one is due (checked only when both
	// are otherwise valid, so one mistake gets one message).
	if c.TimeoutSeconds <= MaxTimeoutSeconds && d.IntervalSeconds >= MinIntervalSeconds && c.TimeoutSeconds > d.IntervalSeconds {
		v.add("/config/timeoutSeconds", "must not exceed intervalSeconds")
	}
	c.AuthSet = d.Auth.Presence()
	c.HeadersSet = HeaderNames(c.Headers)
	return v.problems
}

type validator struct{ problems []errs.FieldError }

func (v *validator) add(ptr, msg string) {
	v.problems = append(v.problems, errs.FieldError{Pointer: ptr, Message: msg})
}

func (v *validator) http(c *Config, auth *Auth) {
	if c.URL == "" {
		v.add("/config/url", "is required for http monitors")
	} else if len(c.URL) > MaxURLLen {
		v.add("/config/url", fmt.Sprintf("must be at most %d characters", MaxURLLen))
	} else if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.add("/config/url", "must be an absolute http or https URL")
	} else if u.User != nil {
		v.add("/config/url", "must not carry credentials; use config.auth")
	}
	c.Method = strings.ToUpper(c.Method)
	if c.Method == "" {
		c.Method = "GET"
	}
	if !slices.Contains(HTTPMethods, c.Method) {
		v.add("/config/method", "must be one of "+strings.Join(HTTPMethods, ", "))
	}
	if len(c.Headers) > MaxHeaders {
		v.add("/config/headers", fmt.Sprintf("must have at most %d entries", MaxHeaders))
	}
	seen := make(map[string]string, len(c.Headers)) // lower case → first name
	for _, name := range HeaderNames(c.Headers) {
		val := c.Headers[name]
		ptr := "/config/headers/" + escapePointer(name)
		if !validHeaderName(name) {
			v.add(ptr, "is not a valid header name")
		} else if strings.EqualFold(name, "Host") || strings.EqualFold(name, "Content-Length") || strings.EqualFold(name, "Transfer-Encoding") {
			v.add(ptr, "is set by the probe and cannot be overridden")
		} else if first, dup := seen[strings.ToLower(name)]; dup {
			v.add(ptr, fmt.Sprintf("is the header %q again: header names ignore case", first))
		} else {
			seen[strings.ToLower(name)] = name
		}
		if len(val) > MaxHeaderLen || strings.ContainsAny(val, "\r\n\x00") {
			v.add(ptr, "must be at most 8192 bytes without line breaks")
		}
	}
	if len(c.Body) > MaxBodyLen {
		v.add("/config/body", fmt.Sprintf("must be at most %d bytes", MaxBodyLen))
	}
	if c.TimeoutSeconds == 0 {
		c.TimeoutSeconds = DefaultTimeout
	}
	if c.TimeoutSeconds < 1 || c.TimeoutSeconds > MaxTimeoutSeconds {
		v.add("/config/timeoutSeconds", fmt.Sprintf("must be between 1 and %d", MaxTimeoutSeconds))
	}
	if c.FollowRedirects == nil {
		t := true
		c.FollowRedirects = &t
	}
	if len(c.ExpectedStatusCodes) == 0 {
		c.ExpectedStatusCodes = slices.Clone(DefaultExpectedStatus)
	}
	if len(c.ExpectedStatusCodes) > MaxStatusCodes {
		v.add("/config/expectedStatusCodes", fmt.Sprintf("must have at most %d entries", MaxStatusCodes))
	}
	for i, r := range c.ExpectedStatusCodes {
		if r.From < MinStatusCode || r.To > MaxStatusCode || r.From > r.To {
			v.add(fmt.Sprintf("/config/expectedStatusCodes/%d", i),
				fmt.Sprintf("must be a status code or range within %d-%d, low end first", MinStatusCode, MaxStatusCode))
		}
	}
	if len(c.KeywordAssertions) > MaxAssertions {
		v.add("/config/keywordAssertions", fmt.Sprintf("must have at most %d entries", MaxAssertions))
	}
	for i, k := range c.KeywordAssertions {
		if k.Keyword == "" || len(k.Keyword) > MaxKeywordLen {
			v.add(fmt.Sprintf("/config/keywordAssertions/%d/keyword", i), fmt.Sprintf("must be 1 to %d bytes", MaxKeywordLen))
		}
	}
	if len(c.JSONAssertions) > MaxAssertions {
		v.add("/config/jsonAssertions", fmt.Sprintf("must have at most %d entries", MaxAssertions))
	}
	for i := range c.JSONAssertions {
		v.jsonAssertion(fmt.Sprintf("/config/jsonAssertions/%d", i), &c.JSONAssertions[i])
	}
	if c.DegradedLatencyMs < 0 || c.DegradedLatencyMs > 0 && c.TimeoutSeconds >= 1 && c.DegradedLatencyMs > c.TimeoutSeconds*1000 {
		v.add("/config/degradedLatencyMs", "must be between 1 and timeoutSeconds×1000 (0 or absent: never degraded by latency)")
	}
	if auth != nil {
		v.auth(auth)
	}
}

// jsonAssertion applies the per-operator value rules:
// equals and contains need a value; exists takes none or a boolean (false:
// the path must select nothing); gt and lt need a number.
func (v *validator) jsonAssertion(ptr string, a *JSONAssertion) {
	if a.Path == "" || len(a.Path) > MaxJSONPathLen {
		v.add(ptr+"/path", fmt.Sprintf("must be 1 to %d characters", MaxJSONPathLen))
	} else if _, err := jsonpath.Parse(a.Path); err != nil {
		v.add(ptr+"/path", "is not an RFC 9535 JSONPath: "+strings.TrimPrefix(err.Error(), "jsonpath: "))
	}
	val := bytes.TrimSpace(a.Value)
	if len(val) == 0 || bytes.Equal(val, []byte("null")) && a.Operator == OpExists {
		val = nil
	}
	a.Value = val
	if val != nil && !json.Valid(val) && (a.Operator == OpEquals || a.Operator == OpContains) {
		v.add(ptr+"/value", "must be a JSON value")
		return
	}
	if len(val) > MaxAssertionValueLen {
		v.add(ptr+"/value", fmt.Sprintf("must be at most %d bytes of JSON", MaxAssertionValueLen))
		return
	}
	switch a.Operator {
	case OpEquals, OpContains:
		if val == nil {
			v.add(ptr+"/value", fmt.Sprintf("is required for operator %q", a.Operator))
		}
	case OpExists:
		if val != nil && !bytes.Equal(val, []byte("true")) && !bytes.Equal(val, []byte("false")) {
			v.add(ptr+"/value", "must be absent or a boolean for operator \"exists\"")
		}
	case OpGT, OpLT:
		var n json.Number
		if val == nil || !isJSONNumber(val) || json.Unmarshal(val, &n) != nil {
			v.add(ptr+"/value", fmt.Sprintf("must be a number for operator %q", a.Operator))
		} else if _, err := strconv.ParseFloat(n.String(), 64); err != nil {
			v.add(ptr+"/value", "must be a finite number")
		}
	default:
		v.add(ptr+"/operator", "must be one of equals, contains, exists, gt, lt")
	}
}

func (v *validator) auth(a *Auth) {
	need := func(field, val string) {
		if val == "" {
			v.add("/config/auth/"+field, fmt.Sprintf("is required for auth type %q", a.Type))
		} else if len(val) > MaxHeaderLen || strings.ContainsAny(val, "\r\n\x00") {
			v.add("/config/auth/"+field, "must be at most 8192 bytes without line breaks")
		}
	}
	none := func(field, val string) {
		if val != "" {
			v.add("/config/auth/"+field, fmt.Sprintf("is not used by auth type %q", a.Type))
		}
	}
	switch a.Type {
	case AuthBasic:
		need("username", a.Username)
		need("password", a.Password)
		none("token", a.Token)
		none("header", a.Header)
		none("value", a.Value)
	case AuthBearer:
		need("token", a.Token)
		none("username", a.Username)
		none("password", a.Password)
		none("header", a.Header)
		none("value", a.Value)
	case AuthHeader:
		need("header", a.Header)
		need("value", a.Value)
		if a.Header != "" && !validHeaderName(a.Header) {
			v.add("/config/auth/header", "is not a valid header name")
		}
		none("username", a.Username)
		none("password", a.Password)
		none("token", a.Token)
	default:
		v.add("/config/auth/type", "must be one of basic, bearer, header")
	}
}

func (v *validator) hostPort(c *Config, portRequired bool) {
	if c.Host == "" {
		v.add("/config/host", "is required")
	} else if len(c.Host) > MaxHostLen || strings.ContainsAny(c.Host, "/:@ ") && net.ParseIP(c.Host) == nil {
		v.add("/config/host", "must be a host name or IP address")
	}
	if c.Port == 0 && portRequired {
		v.add("/config/port", "is required")
	} else if c.Port < 1 || c.Port > MaxPort {
		v.add("/config/port", fmt.Sprintf("must be between 1 and %d", MaxPort))
	}
	if c.TimeoutSeconds == 0 {
		c.TimeoutSeconds = DefaultTimeout
	}
	if c.TimeoutSeconds < 1 || c.TimeoutSeconds > MaxTimeoutSeconds {
		v.add("/config/timeoutSeconds", fmt.Sprintf("must be between 1 and %d", MaxTimeoutSeconds))
	}
}

func (v *validator) dns(c *Config) {
	if c.RecordName == "" || len(c.RecordName) > MaxHostLen || strings.ContainsAny(c.RecordName, "/:@ ") {
		v.add("/config/recordName", fmt.Sprintf("must be a domain name of at most %d characters", MaxHostLen))
	}
	c.RecordType = strings.ToUpper(c.RecordType)
	if c.RecordType == "" {
		c.RecordType = "A"
	}
	if !slices.Contains(DNSRecordTypes, c.RecordType) {
		v.add("/config/recordType", "must be one of "+strings.Join(DNSRecordTypes, ", "))
	}
	if len(c.ExpectedValues) > MaxExpectedValues {
		v.add("/config/expectedValues", fmt.Sprintf("must have at most %d entries", MaxExpectedValues))
	}
	if c.Resolver != "" {
		if _, _, err := net.SplitHostPort(c.Resolver); err != nil {
			v.add("/config/resolver", "must be host:port, e.g. 1.1.1.1:53")
		}
	}
	if c.TimeoutSeconds == 0 {
		c.TimeoutSeconds = DefaultTimeout
	}
	if c.TimeoutSeconds < 1 || c.TimeoutSeconds > MaxTimeoutSeconds {
		v.add("/config/timeoutSeconds", fmt.Sprintf("must be between 1 and %d", MaxTimeoutSeconds))
	}
}

// foreign rejects fields that belong to another monitor type, so a typo in
// the type never silently drops settings.
func (v *validator) foreign(t Type, c *Config) {
	type field struct {
		name  string
		set   bool
		types []Type
	}
	fields := []field{
		{"url", c.URL != "", []Type{TypeHTTP}},
		{"method", c.Method != "" && t != TypeHTTP, []Type{TypeHTTP}},
		{"headers", len(c.Headers) > 0, []Type{TypeHTTP}},
		{"body", c.Body != "", []Type{TypeHTTP}},
		{"followRedirects", c.FollowRedirects != nil && t != TypeHTTP, []Type{TypeHTTP}},
		{"expectedStatusCodes", len(c.ExpectedStatusCodes) > 0 && t != TypeHTTP, []Type{TypeHTTP}},
		{"keywordAssertions", len(c.KeywordAssertions) > 0, []Type{TypeHTTP}},
		{"jsonAssertions", len(c.JSONAssertions) > 0, []Type{TypeHTTP}},
		{"degradedLatencyMs", c.DegradedLatencyMs != 0, []Type{TypeHTTP, TypeTCP, TypeDNS, TypeTLS}},
		{"host", c.Host != "", []Type{TypeTCP, TypeTLS}},
		{"port", c.Port != 0 && t != TypeTLS, []Type{TypeTCP, TypeTLS}},
		{"send", c.Send != "", []Type{TypeTCP}},
		{"expect", c.Expect != "", []Type{TypeTCP}},
		{"recordName", c.RecordName != "", []Type{TypeDNS}},
		{"recordType", c.RecordType != "" && t != TypeDNS, []Type{TypeDNS}},
		{"expectedValues", len(c.ExpectedValues) > 0, []Type{TypeDNS}},
		{"resolver", c.Resolver != "", []Type{TypeDNS}},
		{"serverName", c.ServerName != "", []Type{TypeTLS}},
		{"degradedExpiryDays", c.DegradedExpiryDays != 0 && t != TypeTLS, []Type{TypeTLS}},
		{"downExpiryDays", c.DownExpiryDays != 0 && t != TypeTLS, []Type{TypeTLS}},
	}
	if !slices.Contains(Types, t) {
		return
	}
	for _, f := range fields {
		if f.set && !slices.Contains(f.types, t) {
			v.add("/config/"+f.name, fmt.Sprintf("is not used by %s monitors", t))
		}
	}
}

func joinTypes() string {
	s := make([]string, len(Types))
	for i, t := range Types {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

func validHeaderName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

// escapePointer escapes a token for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// isJSONNumber reports whether raw JSON is a number literal (json.Number
// alone would also accept a quoted string).
func isJSONNumber(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// ParseStatusRange reads a status range as people write it, "200-299",
// or one code, "204". When text is not one, the message says what would
// be: a class such as "2xx" is written as its range.
func ParseStatusRange(text string) (StatusRange, string) {
	const want = `must be a status code such as 204 or a range such as "200-299"`
	if len(text) == 3 && text[0] >= '1' && text[0] <= '5' && strings.EqualFold(text[1:], "xx") {
		return StatusRange{}, fmt.Sprintf(`%s; for %s write "%c00-%c99"`, want, text, text[0], text[0])
	}
	lo, hi, isRange := strings.Cut(strings.TrimSpace(text), "-")
	from, err1 := strconv.Atoi(strings.TrimSpace(lo))
	to, err2 := from, error(nil)
	if isRange {
		to, err2 = strconv.Atoi(strings.TrimSpace(hi))
	}
	if err1 != nil || err2 != nil {
		return StatusRange{}, want
	}
	return StatusRange{From: from, To: to}, ""
}
