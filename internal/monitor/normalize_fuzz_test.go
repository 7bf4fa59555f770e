package monitor_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/monitor"
)

// FuzzNormalize builds drafts from arbitrary input and checks that Normalize
// never panics, that every error names its field by a JSON pointer, and that
// a draft it accepts is a fixed point (normalizing it again changes nothing).
//
//	go test -fuzz FuzzNormalize -fuzztime 30s ./internal/monitor/
func FuzzNormalize(f *testing.F) {
	type seed struct {
		typ, name, url, method, headerName, headerValue, body string
		host, recordName, recordType, resolver                string
		jsonPath, operator, jsonValue, keyword                string
		authType, authUser, authSecret                        string
		interval, timeout, port, latency, degraded, down, low int
	}
	seeds := []seed{
		{typ: "http", name: "api", url: "https://api.example.com/health", method: "get", headerName: "X-A", headerValue: "b",
			jsonPath: "$.status", operator: "equals", jsonValue: `"up"`, keyword: "ok", authType: "bearer", authSecret: "t",
			interval: 60, timeout: 10, latency: 500, low: 200},
		{typ: "http", name: " ", url: "ftp://u:p@x", method: "BREW", headerName: "Host", headerValue: "a\r\nb",
			jsonPath: "$.a[", operator: "gt", jsonValue: `"5"`, authType: "basic", authUser: "u",
			interval: 5, timeout: 90, latency: -1, low: 700},
		{typ: "http", name: "n", url: "http://a", jsonPath: "$[?match(@.a, 'x')]", operator: "exists", jsonValue: "null", interval: 10, timeout: 10},
		{typ: "http", name: "n", url: "http://a", jsonPath: "$..*", operator: "lt", jsonValue: "1e400"},
		{typ: "tcp", name: "db", host: "db.example.com", port: 5432, body: "PING"},
		{typ: "tcp", name: "db", host: "::1", port: 70000, url: "https://x", recordName: "x"},
		{typ: "dns", name: "dns", recordName: "example.com", recordType: "aaaa", resolver: "1.1.1.1:53"},
		{typ: "dns", name: "dns", recordName: "a b", recordType: "ANY", resolver: "nowhere", port: 53},
		{typ: "tls", name: "cert", host: "example.com", degraded: 30, down: 7},
		{typ: "tls", name: "cert", host: "a/b", port: -1, degraded: 2, down: 400},
		{typ: "smtp", name: "x", authType: "digest"},
		{typ: "", name: strings.Repeat("é", 201), headerName: "a/b~c", jsonPath: strings.Repeat("$", 300)},
	}
	for _, s := range seeds {
		f.Add(s.typ, s.name, s.url, s.method, s.headerName, s.headerValue, s.body,
			s.host, s.recordName, s.recordType, s.resolver,
			s.jsonPath, s.operator, s.jsonValue, s.keyword,
			s.authType, s.authUser, s.authSecret,
			s.interval, s.timeout, s.port, s.latency, s.degraded, s.down, s.low)
	}
	f.Fuzz(func(t *testing.T, typ, name, url, method, headerName, headerValue, body string,
		host, recordName, recordType, resolver string,
		jsonPath, operator, jsonValue, keyword string,
		authType, authUser, authSecret string,
		interval, timeout, port, latency, degraded, down, low int) {
		d := monitor.Draft{
			Type:            monitor.Type(typ),
			Name:            name,
			IntervalSeconds: interval,
			Config: monitor.Config{
				URL:                url,
				Method:             method,
				Body:               body,
				TimeoutSeconds:     timeout,
				DegradedLatencyMs:  latency,
				Host:               host,
				Port:               port,
				RecordName:         recordName,
				RecordType:         recordType,
				Resolver:           resolver,
				DegradedExpiryDays: degraded,
				DownExpiryDays:     down,
			},
		}
		if headerName != "" || headerValue != "" {
			d.Config.Headers = map[string]string{headerName: headerValue}
		}
		if keyword != "" {
			d.Config.KeywordAssertions = []monitor.KeywordAssertion{{Keyword: keyword, Present: true}}
		}
		if jsonPath != "" || operator != "" || jsonValue != "" {
			a := monitor.JSONAssertion{Path: jsonPath, Operator: monitor.Operator(operator)}
			if jsonValue != "" {
				a.Value = json.RawMessage(jsonValue)
			}
			d.Config.JSONAssertions = []monitor.JSONAssertion{a}
		}
		if low != 0 {
			d.Config.ExpectedStatusCodes = []monitor.StatusRange{{From: low, To: low + interval%200}}
		}
		if authType != "" {
			d.Auth = &monitor.Auth{Type: monitor.AuthType(authType), Username: authUser}
			switch monitor.AuthType(authType) {
			case monitor.AuthBasic:
				d.Auth.Password = authSecret
			case monitor.AuthBearer:
				d.Auth.Token = authSecret
			default:
				d.Auth.Header, d.Auth.Value = authUser, authSecret
			}
		}

		errs := d.Normalize()
		for _, e := range errs {
			if !strings.HasPrefix(e.Pointer, "/") {
				t.Errorf("pointer %q does not start with /", e.Pointer)
			}
			if e.Message == "" {
				t.Errorf("%s: empty message", e.Pointer)
			}
			if authSecret != "" && len(authSecret) > 3 && strings.Contains(e.Message, authSecret) {
				t.Errorf("%s: message echoes the credential: %q", e.Pointer, e.Message)
			}
		}
		if d.Auth != nil && !reflect.DeepEqual(d.Config.AuthSet, d.Auth.Presence()) {
			t.Errorf("AuthSet = %+v, want %+v", d.Config.AuthSet, d.Auth.Presence())
		}
		if len(errs) > 0 {
			return
		}
		// Accepted: the defaults are in place and a second pass is a no-op.
		if d.IntervalSeconds < monitor.MinIntervalSeconds || d.IntervalSeconds > monitor.MaxIntervalSeconds {
			t.Errorf("accepted interval %d", d.IntervalSeconds)
		}
		if d.Config.TimeoutSeconds < 1 || d.Config.TimeoutSeconds > monitor.MaxTimeoutSeconds {
			t.Errorf("accepted timeout %d", d.Config.TimeoutSeconds)
		}
		// The config is persisted as JSON: what is accepted must be storable.
		if _, err := json.Marshal(d.Config); err != nil {
			t.Errorf("an accepted config cannot be stored: %v", err)
		}
		again := d
		again.Config.Headers = cloneMap(d.Config.Headers)
		again.Config.JSONAssertions = append([]monitor.JSONAssertion(nil), d.Config.JSONAssertions...)
		if errs := again.Normalize(); len(errs) != 0 {
			t.Fatalf("an accepted draft is rejected on a second pass: %v\n%+v", errs, d)
		}
		if !reflect.DeepEqual(again, d) {
			t.Errorf("a second Normalize changed the draft:\n%+v\n%+v", d, again)
		}
	})
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
