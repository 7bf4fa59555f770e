package monitor_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
)

// Valid drafts of each type, the starting point of every case.
func httpDraft() monitor.Draft {
	return monitor.Draft{Type: monitor.TypeHTTP, Name: "API", Config: monitor.Config{URL: "https://api.example.com/health"}}
}

func tcpDraft() monitor.Draft {
	return monitor.Draft{Type: monitor.TypeTCP, Name: "DB", Config: monitor.Config{Host: "db.example.com", Port: 5432}}
}

func dnsDraft() monitor.Draft {
	return monitor.Draft{Type: monitor.TypeDNS, Name: "DNS", Config: monitor.Config{RecordName: "example.com"}}
}

func tlsDraft() monitor.Draft {
	return monitor.Draft{Type: monitor.TypeTLS, Name: "Cert", Config: monitor.Config{Host: "example.com"}}
}

func draftOf(t monitor.Type) monitor.Draft {
	switch t {
	case monitor.TypeHTTP:
		return httpDraft()
	case monitor.TypeTCP:
		return tcpDraft()
	case monitor.TypeDNS:
		return dnsDraft()
	case monitor.TypeTLS:
		return tlsDraft()
	}
	panic("no draft for " + t)
}

func ptr[T any](v T) *T { return &v }

func pointers(problems []errs.FieldError) []string {
	p := make([]string, len(problems))
	for i, e := range problems {
		p[i] = e.Pointer
	}
	slices.Sort(p)
	return p
}

func headers(n int) map[string]string {
	h := make(map[string]string, n)
	for i := range n {
		h[fmt.Sprintf("X-H%d", i)] = "v"
	}
	return h
}

func TestNormalizeValidDraftsHaveNoErrors(t *testing.T) {
	for _, typ := range monitor.Types {
		d := draftOf(typ)
		if problems := d.Normalize(); len(problems) != 0 {
			t.Errorf("%s: valid draft rejected: %v", typ, problems)
		}
	}
}

// TestNormalizeDefaults: what an omitted field becomes, per type.
func TestNormalizeDefaults(t *testing.T) {
	cases := []struct {
		name  string
		draft monitor.Draft
		check func(t *testing.T, d monitor.Draft)
	}{
		{"http", httpDraft(), func(t *testing.T, d monitor.Draft) {
			c := d.Config
			if d.IntervalSeconds != 60 {
				t.Errorf("intervalSeconds = %d, want 60", d.IntervalSeconds)
			}
			if c.Method != "GET" {
				t.Errorf("method = %q, want GET", c.Method)
			}
			if c.TimeoutSeconds != 10 {
				t.Errorf("timeoutSeconds = %d, want 10", c.TimeoutSeconds)
			}
			if c.FollowRedirects == nil || !*c.FollowRedirects {
				t.Errorf("followRedirects = %v, want true", c.FollowRedirects)
			}
			if want := []monitor.StatusRange{{From: 200, To: 399}}; !reflect.DeepEqual(c.ExpectedStatusCodes, want) {
				t.Errorf("expectedStatusCodes = %v, want %v", c.ExpectedStatusCodes, want)
			}
			if c.AuthSet != nil {
				t.Errorf("authSet = %+v without auth", c.AuthSet)
			}
			if c.DegradedLatencyMs != 0 {
				t.Errorf("degradedLatencyMs = %d, want 0 (never degraded by latency)", c.DegradedLatencyMs)
			}
		}},
		{"http keeps what is set", func() monitor.Draft {
			d := httpDraft()
			d.IntervalSeconds = 300
			d.Config.Method = "post"
			d.Config.TimeoutSeconds = 30
			d.Config.FollowRedirects = ptr(false)
			d.Config.ExpectedStatusCodes = []monitor.StatusRange{{From: 204, To: 204}}
			return d
		}(), func(t *testing.T, d monitor.Draft) {
			c := d.Config
			if d.IntervalSeconds != 300 || c.Method != "POST" || c.TimeoutSeconds != 30 ||
				c.FollowRedirects == nil || *c.FollowRedirects ||
				!reflect.DeepEqual(c.ExpectedStatusCodes, []monitor.StatusRange{{From: 204, To: 204}}) {
				t.Errorf("explicit values changed: interval %d, %+v", d.IntervalSeconds, c)
			}
		}},
		{"name is trimmed", func() monitor.Draft { d := httpDraft(); d.Name = "  API \t\n"; return d }(), func(t *testing.T, d monitor.Draft) {
			if d.Name != "API" {
				t.Errorf("name = %q, want %q", d.Name, "API")
			}
		}},
		{"tcp", tcpDraft(), func(t *testing.T, d monitor.Draft) {
			if d.IntervalSeconds != 60 || d.Config.TimeoutSeconds != 10 {
				t.Errorf("interval %d, timeout %d; want 60, 10", d.IntervalSeconds, d.Config.TimeoutSeconds)
			}
			if d.Config.Method != "" || d.Config.FollowRedirects != nil || d.Config.ExpectedStatusCodes != nil {
				t.Errorf("http defaults leaked into a tcp monitor: %+v", d.Config)
			}
		}},
		{"tls", tlsDraft(), func(t *testing.T, d monitor.Draft) {
			c := d.Config
			if c.Port != 443 {
				t.Errorf("port = %d, want 443", c.Port)
			}
			if c.DegradedExpiryDays != 14 || c.DownExpiryDays != 3 {
				t.Errorf("expiry days = %d/%d, want 14/3", c.DegradedExpiryDays, c.DownExpiryDays)
			}
			if c.TimeoutSeconds != 10 || d.IntervalSeconds != 60 {
				t.Errorf("interval %d, timeout %d; want 60, 10", d.IntervalSeconds, c.TimeoutSeconds)
			}
		}},
		{"tls keeps a set port", func() monitor.Draft { d := tlsDraft(); d.Config.Port = 8443; return d }(), func(t *testing.T, d monitor.Draft) {
			if d.Config.Port != 8443 {
				t.Errorf("port = %d, want 8443", d.Config.Port)
			}
		}},
		{"dns", dnsDraft(), func(t *testing.T, d monitor.Draft) {
			if d.Config.RecordType != "A" {
				t.Errorf("recordType = %q, want A", d.Config.RecordType)
			}
			if d.Config.TimeoutSeconds != 10 || d.IntervalSeconds != 60 {
				t.Errorf("interval %d, timeout %d; want 60, 10", d.IntervalSeconds, d.Config.TimeoutSeconds)
			}
		}},
		{"dns record type is upper-cased", func() monitor.Draft { d := dnsDraft(); d.Config.RecordType = "aaaa"; return d }(), func(t *testing.T, d monitor.Draft) {
			if d.Config.RecordType != "AAAA" {
				t.Errorf("recordType = %q, want AAAA", d.Config.RecordType)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.draft
			if problems := d.Normalize(); len(problems) != 0 {
				t.Fatalf("Normalize: %v", problems)
			}
			c.check(t, d)
		})
	}
}

// TestNormalizeRules: each rule alone, with the JSON pointer it reports.
// want lists every expected pointer (sorted comparison), so a case also
// proves no other field complains.
func TestNormalizeRules(t *testing.T) {
	type mut func(*monitor.Draft)
	cases := []struct {
		name    string
		base    monitor.Type
		mutate  mut
		want    []string
		wantMsg string // a substring of the first error's message, if set
	}{
		// common
		{"name empty", monitor.TypeHTTP, func(d *monitor.Draft) { d.Name = "" }, []string{"/name"}, "must not be empty"},
		{"name blank", monitor.TypeHTTP, func(d *monitor.Draft) { d.Name = " \t " }, []string{"/name"}, "must not be empty"},
		{"name 200 runes ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.Name = strings.Repeat("é", 200) }, nil, ""},
		{"name 201 runes", monitor.TypeHTTP, func(d *monitor.Draft) { d.Name = strings.Repeat("x", 201) }, []string{"/name"}, "at most 200"},
		{"interval 9", monitor.TypeHTTP, func(d *monitor.Draft) { d.IntervalSeconds = 9; d.Config.TimeoutSeconds = 5 }, []string{"/intervalSeconds"}, "between 10 and 86400"},
		{"interval 10 ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.IntervalSeconds = 10 }, nil, ""},
		{"interval 86400 ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.IntervalSeconds = 86400 }, nil, ""},
		{"interval 86401", monitor.TypeHTTP, func(d *monitor.Draft) { d.IntervalSeconds = 86401 }, []string{"/intervalSeconds"}, ""},
		{"interval negative", monitor.TypeTCP, func(d *monitor.Draft) { d.IntervalSeconds = -60 }, []string{"/intervalSeconds"}, ""},
		{"type empty", monitor.TypeHTTP, func(d *monitor.Draft) { d.Type = "" }, []string{"/type"}, "must be one of http, tcp, dns, tls"},
		{"type upper case", monitor.TypeHTTP, func(d *monitor.Draft) { d.Type = "HTTP" }, []string{"/type"}, ""},
		{"type unknown", monitor.TypeHTTP, func(d *monitor.Draft) { d.Type = "smtp" }, []string{"/type"}, ""},
		{"auth on tcp", monitor.TypeTCP, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Type: monitor.AuthBearer, Token: "t"} }, []string{"/config/auth"}, "only allowed for http"},
		{"auth on dns", monitor.TypeDNS, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Type: monitor.AuthBearer, Token: "t"} }, []string{"/config/auth"}, ""},
		{"auth on tls", monitor.TypeTLS, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Type: monitor.AuthBearer, Token: "t"} }, []string{"/config/auth"}, ""},

		// http: url
		{"url missing", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.URL = "" }, []string{"/config/url"}, "is required"},
		{"url too long", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.URL = "https://a.example/" + strings.Repeat("a", 2048) }, []string{"/config/url"}, "at most 2048"},
		{"url 2048 ok", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.URL = "https://a.example/" + strings.Repeat("a", 2048-len("https://a.example/"))
		}, nil, ""},
		{"url ftp", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.URL = "ftp://a.example" }, []string{"/config/url"}, "absolute http or https"},
		{"url relative", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.URL = "/health" }, []string{"/config/url"}, ""},
		{"url without scheme", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.URL = "a.example/health" }, []string{"/config/url"}, ""},
		{"url without host", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.URL = "https://" }, []string{"/config/url"}, ""},
		{"url unparseable", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.URL = "http://a.example/%zz" }, []string{"/config/url"}, ""},
		{"url with user and password", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.URL = "https://u:p@a.example" }, []string{"/config/url"}, "must not carry credentials"},
		{"url with user only", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.URL = "https://u@a.example" }, []string{"/config/url"}, "must not carry credentials"},
		{"url http ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.URL = "http://10.0.0.1:8080/x?y=1" }, nil, ""},

		// http: method, headers, body
		{"method lower case ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Method = "head" }, nil, ""},
		{"method unknown", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Method = "BREW" }, []string{"/config/method"}, "must be one of GET"},
		{"method CONNECT", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Method = "CONNECT" }, []string{"/config/method"}, ""},
		{"50 headers ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = headers(50) }, nil, ""},
		{"51 headers", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = headers(51) }, []string{"/config/headers"}, "at most 50"},
		{"header name with space", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"Bad Header": "x"} }, []string{"/config/headers/Bad Header"}, "not a valid header name"},
		{"header name escaped in the pointer", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"a/b~c": "x"} }, []string{"/config/headers/a~1b~0c"}, ""},
		{"header name empty", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"": "x"} }, []string{"/config/headers/"}, ""},
		{"header name non-ASCII", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"X-Naïve": "x"} }, []string{"/config/headers/X-Naïve"}, ""},
		{"header Host", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"Host": "x"} }, []string{"/config/headers/Host"}, "set by the probe"},
		{"header content-length any case", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"content-LENGTH": "1"} }, []string{"/config/headers/content-LENGTH"}, "set by the probe"},
		{"header Transfer-Encoding", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"Transfer-Encoding": "chunked"} }, []string{"/config/headers/Transfer-Encoding"}, ""},
		{"header value CRLF", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"X-A": "a\r\nInjected: 1"} }, []string{"/config/headers/X-A"}, "without line breaks"},
		{"header value NUL", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"X-A": "a\x00"} }, []string{"/config/headers/X-A"}, ""},
		{"header value too long", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"X-A": strings.Repeat("v", 8193)} }, []string{"/config/headers/X-A"}, ""},
		{"header value 8192 ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"X-A": strings.Repeat("v", 8192)} }, nil, ""},
		{"header names differing in case", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"X-A": "1", "X-B": "2", "x-a": "3"} }, []string{"/config/headers/x-a"}, "header names ignore case"},
		{"header bad name and bad value", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Headers = map[string]string{"Host": "a\nb"} }, []string{"/config/headers/Host", "/config/headers/Host"}, ""},
		{"body 64 KiB ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Method = "POST"; d.Config.Body = strings.Repeat("b", 64<<10) }, nil, ""},
		{"body too long", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Body = strings.Repeat("b", 64<<10+1) }, []string{"/config/body"}, "at most 65536 bytes"},

		// http: timeout, status codes, latency
		{"timeout 61", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.TimeoutSeconds = 61; d.IntervalSeconds = 120 }, []string{"/config/timeoutSeconds"}, "between 1 and 60"},
		{"timeout negative", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.TimeoutSeconds = -1 }, []string{"/config/timeoutSeconds"}, ""},
		{"timeout 60 ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.TimeoutSeconds = 60 }, nil, ""},
		{"timeout above interval", monitor.TypeHTTP, func(d *monitor.Draft) { d.IntervalSeconds = 10; d.Config.TimeoutSeconds = 11 }, []string{"/config/timeoutSeconds"}, "must not exceed intervalSeconds"},
		{"timeout equal to interval ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.IntervalSeconds = 10; d.Config.TimeoutSeconds = 10 }, nil, ""},
		{"default timeout above interval", monitor.TypeHTTP, func(d *monitor.Draft) { d.IntervalSeconds = 10 }, nil, ""},
		{"status code 99", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.ExpectedStatusCodes = []monitor.StatusRange{{From: 99, To: 99}} }, []string{"/config/expectedStatusCodes/0"}, "within 100-599"},
		{"status code 600", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.ExpectedStatusCodes = []monitor.StatusRange{{From: 200, To: 600}} }, []string{"/config/expectedStatusCodes/0"}, ""},
		{"status range backwards at index 1", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.ExpectedStatusCodes = []monitor.StatusRange{{From: 200, To: 200}, {From: 299, To: 200}}
		}, []string{"/config/expectedStatusCodes/1"}, "low end first"},
		{"status range 100-599 ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.ExpectedStatusCodes = []monitor.StatusRange{{From: 100, To: 599}} }, nil, ""},
		{"degraded latency negative", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.DegradedLatencyMs = -1 }, []string{"/config/degradedLatencyMs"}, "timeoutSeconds×1000"},
		{"degraded latency above timeout", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.TimeoutSeconds = 2; d.Config.DegradedLatencyMs = 2001 }, []string{"/config/degradedLatencyMs"}, ""},
		{"degraded latency equal to timeout ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.TimeoutSeconds = 2; d.Config.DegradedLatencyMs = 2000 }, nil, ""},
		{"degraded latency against the default timeout", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.DegradedLatencyMs = 10001 }, []string{"/config/degradedLatencyMs"}, ""},

		// http: assertions
		{"20 keyword assertions ok", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.KeywordAssertions = slices.Repeat([]monitor.KeywordAssertion{{Keyword: "ok", Present: true}}, 20)
		}, nil, ""},
		{"21 keyword assertions", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.KeywordAssertions = slices.Repeat([]monitor.KeywordAssertion{{Keyword: "ok", Present: true}}, 21)
		}, []string{"/config/keywordAssertions"}, "at most 20"},
		{"keyword empty", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.KeywordAssertions = []monitor.KeywordAssertion{{Keyword: "ok"}, {Keyword: ""}}
		}, []string{"/config/keywordAssertions/1/keyword"}, "1 to 1024 bytes"},
		{"keyword too long", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.KeywordAssertions = []monitor.KeywordAssertion{{Keyword: strings.Repeat("k", 1025)}}
		}, []string{"/config/keywordAssertions/0/keyword"}, ""},
		{"21 json assertions", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.JSONAssertions = slices.Repeat([]monitor.JSONAssertion{{Path: "$.ok", Operator: monitor.OpExists}}, 21)
		}, []string{"/config/jsonAssertions"}, "at most 20"},
		{"json path empty", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.JSONAssertions = []monitor.JSONAssertion{{Operator: monitor.OpExists}}
		}, []string{"/config/jsonAssertions/0/path"}, "1 to 256 characters"},
		{"json path 257 characters", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.JSONAssertions = []monitor.JSONAssertion{{Path: "$." + strings.Repeat("a", 255), Operator: monitor.OpExists}}
		}, []string{"/config/jsonAssertions/0/path"}, "1 to 256 characters"},
		{"json path 256 characters ok", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.JSONAssertions = []monitor.JSONAssertion{{Path: "$." + strings.Repeat("a", 254), Operator: monitor.OpExists}}
		}, nil, ""},
		{"json assertion index in pointer", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.JSONAssertions = []monitor.JSONAssertion{{Path: "$.a", Operator: monitor.OpExists}, {Path: "$.b", Operator: "matches"}}
		}, []string{"/config/jsonAssertions/1/operator"}, "must be one of equals, contains, exists, gt, lt"},

		// http: auth
		{"auth basic ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Type: monitor.AuthBasic, Username: "u", Password: "p"} }, nil, ""},
		{"auth basic without password", monitor.TypeHTTP, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Type: monitor.AuthBasic, Username: "u"} }, []string{"/config/auth/password"}, `is required for auth type "basic"`},
		{"auth basic without anything", monitor.TypeHTTP, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Type: monitor.AuthBasic} }, []string{"/config/auth/password", "/config/auth/username"}, ""},
		{"auth basic with a token", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Auth = &monitor.Auth{Type: monitor.AuthBasic, Username: "u", Password: "p", Token: "t", Header: "X", Value: "v"}
		}, []string{"/config/auth/header", "/config/auth/token", "/config/auth/value"}, `is not used by auth type "basic"`},
		{"auth basic password with newline", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Auth = &monitor.Auth{Type: monitor.AuthBasic, Username: "u", Password: "p\nq"}
		}, []string{"/config/auth/password"}, "without line breaks"},
		{"auth bearer ok", monitor.TypeHTTP, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Type: monitor.AuthBearer, Token: "t"} }, nil, ""},
		{"auth bearer without token", monitor.TypeHTTP, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Type: monitor.AuthBearer} }, []string{"/config/auth/token"}, ""},
		{"auth bearer token too long", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Auth = &monitor.Auth{Type: monitor.AuthBearer, Token: strings.Repeat("t", 8193)}
		}, []string{"/config/auth/token"}, ""},
		{"auth bearer with basic fields", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Auth = &monitor.Auth{Type: monitor.AuthBearer, Token: "t", Username: "u", Password: "p"}
		}, []string{"/config/auth/password", "/config/auth/username"}, ""},
		{"auth header ok", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Auth = &monitor.Auth{Type: monitor.AuthHeader, Header: "X-Api-Key", Value: "v"}
		}, nil, ""},
		{"auth header without value", monitor.TypeHTTP, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Type: monitor.AuthHeader, Header: "X-Api-Key"} }, []string{"/config/auth/value"}, ""},
		{"auth header bad name", monitor.TypeHTTP, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Type: monitor.AuthHeader, Header: "X Api", Value: "v"} }, []string{"/config/auth/header"}, "not a valid header name"},
		{"auth header with token", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Auth = &monitor.Auth{Type: monitor.AuthHeader, Header: "X-Api-Key", Value: "v", Token: "t"}
		}, []string{"/config/auth/token"}, ""},
		{"auth type unknown", monitor.TypeHTTP, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Type: "digest"} }, []string{"/config/auth/type"}, "must be one of basic, bearer, header"},
		{"auth type empty", monitor.TypeHTTP, func(d *monitor.Draft) { d.Auth = &monitor.Auth{Token: "t"} }, []string{"/config/auth/type"}, ""},

		// tcp
		{"tcp host missing", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Host = "" }, []string{"/config/host"}, "is required"},
		{"tcp host with slash", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Host = "a.example/x" }, []string{"/config/host"}, "host name or IP address"},
		{"tcp host with port", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Host = "a.example:22" }, []string{"/config/host"}, ""},
		{"tcp host with space", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Host = "a example" }, []string{"/config/host"}, ""},
		{"tcp host 254 characters", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Host = strings.Repeat("a", 254) }, []string{"/config/host"}, ""},
		{"tcp host IPv6 ok", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Host = "2001:db8::1" }, nil, ""},
		{"tcp host IPv4 ok", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Host = "192.0.2.1" }, nil, ""},
		{"tcp port missing", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Port = 0 }, []string{"/config/port"}, "is required"},
		{"tcp port 65536", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Port = 65536 }, []string{"/config/port"}, "between 1 and 65535"},
		{"tcp port negative", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Port = -1 }, []string{"/config/port"}, ""},
		{"tcp port 65535 ok", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Port = 65535 }, nil, ""},
		{"tcp timeout 61", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.TimeoutSeconds = 61 }, []string{"/config/timeoutSeconds"}, ""},
		{"tcp send and expect ok", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Send = "PING\r\n"; d.Config.Expect = "+PONG" }, nil, ""},
		{"tcp send too long", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Send = strings.Repeat("s", 64<<10+1) }, []string{"/config/send"}, ""},
		{"tcp expect too long", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Expect = strings.Repeat("e", 1025) }, []string{"/config/expect"}, ""},

		// dns
		{"dns name missing", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.RecordName = "" }, []string{"/config/recordName"}, "domain name"},
		{"dns name too long", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.RecordName = strings.Repeat("a", 254) }, []string{"/config/recordName"}, ""},
		{"dns name with space", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.RecordName = "a example" }, []string{"/config/recordName"}, ""},
		{"dns name a URL", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.RecordName = "https://example.com" }, []string{"/config/recordName"}, ""},
		{"dns record type unknown", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.RecordType = "ANY" }, []string{"/config/recordType"}, "must be one of A, AAAA"},
		{"dns 20 expected values ok", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.ExpectedValues = slices.Repeat([]string{"192.0.2.1"}, 20) }, nil, ""},
		{"dns 21 expected values", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.ExpectedValues = slices.Repeat([]string{"192.0.2.1"}, 21) }, []string{"/config/expectedValues"}, "at most 20"},
		{"dns resolver ok", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.Resolver = "1.1.1.1:53" }, nil, ""},
		{"dns resolver without port", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.Resolver = "1.1.1.1" }, []string{"/config/resolver"}, "host:port"},
		{"dns timeout 0 becomes 10", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.TimeoutSeconds = 0 }, nil, ""},
		{"dns timeout 61", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.TimeoutSeconds = 61 }, []string{"/config/timeoutSeconds"}, ""},

		// tls
		{"tls host missing", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.Host = "" }, []string{"/config/host"}, "is required"},
		{"tls port 70000", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.Port = 70000 }, []string{"/config/port"}, "between 1 and 65535"},
		{"tls server name ok", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.ServerName = "www.example.com" }, nil, ""},
		{"tls down expiry negative", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.DownExpiryDays = -1 }, []string{"/config/downExpiryDays"}, "between 0 and 365"},
		{"tls down expiry 366", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.DownExpiryDays = 366; d.Config.DegradedExpiryDays = 366 },
			[]string{"/config/degradedExpiryDays", "/config/downExpiryDays"}, ""},
		{"tls degraded expiry 366", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.DegradedExpiryDays = 366 }, []string{"/config/degradedExpiryDays"}, "between downExpiryDays and 365"},
		{"tls degraded below down", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.DegradedExpiryDays = 5; d.Config.DownExpiryDays = 7 }, []string{"/config/degradedExpiryDays"}, ""},
		{"tls degraded below default down", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.DegradedExpiryDays = 2 }, []string{"/config/degradedExpiryDays"}, ""},
		{"tls degraded equal to down ok", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.DegradedExpiryDays = 7; d.Config.DownExpiryDays = 7 }, nil, ""},
		{"tls expiry 365 ok", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.DegradedExpiryDays = 365; d.Config.DownExpiryDays = 365 }, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := draftOf(c.base)
			c.mutate(&d)
			problems := d.Normalize()
			want := slices.Clone(c.want)
			slices.Sort(want)
			if got := pointers(problems); !slices.Equal(got, want) {
				t.Fatalf("pointers = %q, want %q\nerrors: %v", got, want, problems)
			}
			if c.wantMsg != "" && !strings.Contains(problems[0].Message, c.wantMsg) {
				t.Errorf("message %q does not contain %q", problems[0].Message, c.wantMsg)
			}
			for _, e := range problems {
				if e.Message == "" {
					t.Errorf("%s: empty message", e.Pointer)
				}
			}
		})
	}
}

// TestNormalizeReportsEveryErrorAtOnce: one call lists every failing field.
func TestNormalizeReportsEveryErrorAtOnce(t *testing.T) {
	cases := []struct {
		name  string
		draft monitor.Draft
		want  []string
	}{
		{"http", monitor.Draft{
			Type:            monitor.TypeHTTP,
			Name:            " ",
			IntervalSeconds: 5,
			Config: monitor.Config{
				URL:                 "ftp://x",
				Method:              "BREW",
				Headers:             map[string]string{"Host": "x"},
				TimeoutSeconds:      90,
				ExpectedStatusCodes: []monitor.StatusRange{{From: 200, To: 200}, {From: 700, To: 800}},
				KeywordAssertions:   []monitor.KeywordAssertion{{Keyword: ""}},
				JSONAssertions: []monitor.JSONAssertion{
					{Path: "a.b", Operator: monitor.OpEquals},
					{Path: "$.n", Operator: monitor.OpGT, Value: json.RawMessage(`"5"`)},
				},
				DegradedLatencyMs: -5,
				Host:              "stray.example",
			},
			Auth: &monitor.Auth{Type: monitor.AuthBasic},
		}, []string{
			"/name", "/intervalSeconds", "/config/url", "/config/method", "/config/headers/Host",
			"/config/timeoutSeconds", // out of range (one message: the interval rule waits for a valid value)
			"/config/expectedStatusCodes/1", "/config/keywordAssertions/0/keyword",
			"/config/jsonAssertions/0/path", "/config/jsonAssertions/0/value", "/config/jsonAssertions/1/value",
			"/config/degradedLatencyMs", "/config/auth/username", "/config/auth/password", "/config/host",
		}},
		{"tcp", monitor.Draft{
			Type:   monitor.TypeTCP,
			Config: monitor.Config{Port: 99999, URL: "https://a.example", RecordName: "x"},
		}, []string{"/name", "/config/host", "/config/port", "/config/url", "/config/recordName"}},
		{"dns", monitor.Draft{
			Type:            monitor.TypeDNS,
			Name:            "d",
			IntervalSeconds: 1 << 20,
			Config:          monitor.Config{RecordType: "XYZ", Resolver: "nowhere", Port: 53},
		}, []string{"/intervalSeconds", "/config/recordName", "/config/recordType", "/config/resolver", "/config/port"}},
		{"tls", monitor.Draft{
			Type:   monitor.TypeTLS,
			Name:   "t",
			Config: monitor.Config{Host: "a b", Port: -3, DownExpiryDays: 400, Send: "x"},
		}, []string{"/config/host", "/config/port", "/config/downExpiryDays", "/config/degradedExpiryDays", "/config/send"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			problems := c.draft.Normalize()
			want := slices.Clone(c.want)
			slices.Sort(want)
			if got := pointers(problems); !slices.Equal(got, want) {
				t.Errorf("pointers = %q\nwant       %q\nerrors: %v", got, want, problems)
			}
		})
	}
}

// TestNormalizeForeignFields: a field of another type is an error naming
// the field, never silently dropped.
func TestNormalizeForeignFields(t *testing.T) {
	type set func(*monitor.Config)
	fields := []struct {
		name  string
		set   set
		types []monitor.Type // the types that use the field
	}{
		{"url", func(c *monitor.Config) { c.URL = "https://a.example" }, []monitor.Type{monitor.TypeHTTP}},
		{"method", func(c *monitor.Config) { c.Method = "GET" }, []monitor.Type{monitor.TypeHTTP}},
		{"headers", func(c *monitor.Config) { c.Headers = map[string]string{"X-A": "b"} }, []monitor.Type{monitor.TypeHTTP}},
		{"body", func(c *monitor.Config) { c.Body = "{}" }, []monitor.Type{monitor.TypeHTTP}},
		{"followRedirects", func(c *monitor.Config) { c.FollowRedirects = ptr(false) }, []monitor.Type{monitor.TypeHTTP}},
		{"expectedStatusCodes", func(c *monitor.Config) { c.ExpectedStatusCodes = []monitor.StatusRange{{From: 200, To: 200}} }, []monitor.Type{monitor.TypeHTTP}},
		{"keywordAssertions", func(c *monitor.Config) { c.KeywordAssertions = []monitor.KeywordAssertion{{Keyword: "ok"}} }, []monitor.Type{monitor.TypeHTTP}},
		{"jsonAssertions", func(c *monitor.Config) {
			c.JSONAssertions = []monitor.JSONAssertion{{Path: "$.ok", Operator: monitor.OpExists}}
		}, []monitor.Type{monitor.TypeHTTP}},
		{"host", func(c *monitor.Config) { c.Host = "a.example" }, []monitor.Type{monitor.TypeTCP, monitor.TypeTLS}},
		{"port", func(c *monitor.Config) { c.Port = 443 }, []monitor.Type{monitor.TypeTCP, monitor.TypeTLS}},
		{"send", func(c *monitor.Config) { c.Send = "PING" }, []monitor.Type{monitor.TypeTCP}},
		{"expect", func(c *monitor.Config) { c.Expect = "PONG" }, []monitor.Type{monitor.TypeTCP}},
		{"recordName", func(c *monitor.Config) { c.RecordName = "example.com" }, []monitor.Type{monitor.TypeDNS}},
		{"recordType", func(c *monitor.Config) { c.RecordType = "A" }, []monitor.Type{monitor.TypeDNS}},
		{"expectedValues", func(c *monitor.Config) { c.ExpectedValues = []string{"192.0.2.1"} }, []monitor.Type{monitor.TypeDNS}},
		{"resolver", func(c *monitor.Config) { c.Resolver = "1.1.1.1:53" }, []monitor.Type{monitor.TypeDNS}},
		{"serverName", func(c *monitor.Config) { c.ServerName = "a.example" }, []monitor.Type{monitor.TypeTLS}},
		{"degradedExpiryDays", func(c *monitor.Config) { c.DegradedExpiryDays = 30 }, []monitor.Type{monitor.TypeTLS}},
		{"downExpiryDays", func(c *monitor.Config) { c.DownExpiryDays = 7 }, []monitor.Type{monitor.TypeTLS}},
	}
	for _, f := range fields {
		for _, typ := range monitor.Types {
			if slices.Contains(f.types, typ) {
				continue
			}
			t.Run(f.name+" on "+string(typ), func(t *testing.T) {
				d := draftOf(typ)
				f.set(&d.Config)
				problems := d.Normalize()
				ptr := "/config/" + f.name
				want := fmt.Sprintf("is not used by %s monitors", typ)
				found := false
				for _, e := range problems {
					switch {
					case e.Pointer == ptr && e.Message == want:
						found = true
					default:
						t.Errorf("unexpected error %s: %s", e.Pointer, e.Message)
					}
				}
				if !found {
					t.Errorf("no %q error at %s; got %v", want, ptr, problems)
				}
			})
		}
	}
	// degradedLatencyMs is shared by every type.
	for _, typ := range monitor.Types {
		d := draftOf(typ)
		d.Config.DegradedLatencyMs = 500
		if problems := d.Normalize(); len(problems) != 0 {
			t.Errorf("degradedLatencyMs on %s: %v", typ, problems)
		}
	}
}

// TestJSONAssertionValues: the per-operator rules for the comparison value.
func TestJSONAssertionValues(t *testing.T) {
	const absent = "\x00absent" // marks a nil Value
	cases := []struct {
		op      monitor.Operator
		value   string
		ok      bool
		wantMsg string
		stored  string // the normalized value, when ok ("" = same as value)
	}{
		{monitor.OpEquals, absent, false, `is required for operator "equals"`, ""},
		{monitor.OpEquals, "", false, "is required", ""},
		{monitor.OpEquals, "   ", false, "is required", ""},
		{monitor.OpEquals, `"up"`, true, "", ""},
		{monitor.OpEquals, `42`, true, "", ""},
		{monitor.OpEquals, `{"a":[1,2]}`, true, "", ""},
		{monitor.OpEquals, `null`, true, "", ""}, // equals null is a real comparison
		{monitor.OpEquals, ` "up" `, true, "", `"up"`},
		{monitor.OpEquals, `{`, false, "", ""},    // not JSON: the config could not be stored
		{monitor.OpEquals, `'up'`, false, "", ""}, // not JSON
		{monitor.OpContains, `up`, false, "", ""}, // a bare word is not JSON
		{monitor.OpContains, absent, false, `is required for operator "contains"`, ""},
		{monitor.OpContains, `"ok"`, true, "", ""},
		{monitor.OpContains, `1`, true, "", ""},

		{monitor.OpExists, absent, true, "", absent},
		{monitor.OpExists, "", true, "", absent},
		{monitor.OpExists, `null`, true, "", absent}, // null is treated as absent
		{monitor.OpExists, ` null `, true, "", absent},
		{monitor.OpExists, `true`, true, "", ""},
		{monitor.OpExists, `false`, true, "", ""},
		{monitor.OpExists, " false\n", true, "", "false"},
		{monitor.OpExists, `"true"`, false, `must be absent or a boolean for operator "exists"`, ""},
		{monitor.OpExists, `1`, false, "must be absent or a boolean", ""},
		{monitor.OpExists, `"yes"`, false, "must be absent or a boolean", ""},
		{monitor.OpExists, `TRUE`, false, "must be absent or a boolean", ""},
		{monitor.OpExists, `[]`, false, "must be absent or a boolean", ""},

		{monitor.OpGT, `5`, true, "", ""},
		{monitor.OpGT, `0`, true, "", ""},
		{monitor.OpGT, `-1.5e3`, true, "", ""},
		{monitor.OpGT, `0.25`, true, "", ""},
		{monitor.OpGT, ` 7 `, true, "", "7"},
		{monitor.OpGT, absent, false, `must be a number for operator "gt"`, ""},
		{monitor.OpGT, `"5"`, false, `must be a number for operator "gt"`, ""},
		{monitor.OpGT, `null`, false, "must be a number", ""},
		{monitor.OpGT, `true`, false, "must be a number", ""},
		{monitor.OpGT, `[5]`, false, "must be a number", ""},
		{monitor.OpGT, `NaN`, false, "must be a number", ""},
		{monitor.OpGT, `Infinity`, false, "must be a number", ""},
		{monitor.OpGT, `-`, false, "must be a number", ""},
		{monitor.OpGT, `+5`, false, "must be a number", ""},
		{monitor.OpGT, `05`, false, "must be a number", ""},
		{monitor.OpGT, `5 6`, false, "must be a number", ""},
		{monitor.OpGT, `1e400`, false, "must be a finite number", ""},
		{monitor.OpLT, `100`, true, "", ""},
		{monitor.OpLT, `-0.001`, true, "", ""},
		{monitor.OpLT, absent, false, `must be a number for operator "lt"`, ""},
		{monitor.OpLT, `"5"`, false, `must be a number for operator "lt"`, ""},
		{monitor.OpLT, `-1e999`, false, "must be a finite number", ""},

		{monitor.OpEquals, `"` + strings.Repeat("x", 4094) + `"`, true, "", ""},
		{monitor.OpEquals, `"` + strings.Repeat("x", 4095) + `"`, false, "at most 4096 bytes", ""},
	}
	for _, c := range cases {
		name := string(c.op) + " " + c.value
		if c.value == absent {
			name = string(c.op) + " absent"
		}
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			a := monitor.JSONAssertion{Path: "$.status", Operator: c.op}
			if c.value != absent {
				a.Value = json.RawMessage(c.value)
			}
			d := httpDraft()
			d.Config.JSONAssertions = []monitor.JSONAssertion{a}
			problems := d.Normalize()
			if c.ok {
				if len(problems) != 0 {
					t.Fatalf("rejected: %v", problems)
				}
				got := d.Config.JSONAssertions[0].Value
				want := c.stored
				if want == "" {
					want = c.value
				}
				if want == absent {
					if got != nil {
						t.Errorf("value = %q, want absent (nil)", got)
					}
				} else if string(got) != want {
					t.Errorf("value = %q, want %q", got, want)
				}
				return
			}
			if len(problems) != 1 || problems[0].Pointer != "/config/jsonAssertions/0/value" {
				t.Fatalf("errors = %v, want one at /config/jsonAssertions/0/value", problems)
			}
			if !strings.Contains(problems[0].Message, c.wantMsg) {
				t.Errorf("message %q does not contain %q", problems[0].Message, c.wantMsg)
			}
		})
	}
}

func TestJSONAssertionOperators(t *testing.T) {
	for _, op := range []monitor.Operator{"", "EQUALS", "Equals", "eq", "ne", "gte", "matches", "exist"} {
		d := httpDraft()
		d.Config.JSONAssertions = []monitor.JSONAssertion{{Path: "$.a", Operator: op, Value: json.RawMessage(`1`)}}
		problems := d.Normalize()
		if got := pointers(problems); !slices.Equal(got, []string{"/config/jsonAssertions/0/operator"}) {
			t.Errorf("operator %q: errors %v", op, problems)
		}
	}
	for _, op := range monitor.Operators {
		d := httpDraft()
		d.Config.JSONAssertions = []monitor.JSONAssertion{{Path: "$.a", Operator: op, Value: json.RawMessage(`1`)}}
		if op == monitor.OpExists {
			d.Config.JSONAssertions[0].Value = json.RawMessage(`true`)
		}
		if problems := d.Normalize(); len(problems) != 0 {
			t.Errorf("operator %q rejected: %v", op, problems)
		}
	}
}

// TestJSONPathIsRFC9535: paths are parsed as RFC 9535; the JSONPath
// dialects of other tools are refused with the parser's reason.
func TestJSONPathIsRFC9535(t *testing.T) {
	cases := []struct {
		path string
		ok   bool
	}{
		{"$", true},
		{"$.status", true},
		{"$.data[0].id", true},
		{"$['a b']", true},
		{"$..id", true},
		{"$.items[*].price", true},
		{"$.items[-1]", true},
		{"$.items[0:2]", true},
		{"$.items[?@.price > 10]", true},
		{"$.items[?(@.price > 10)]", true},
		{"$[?length(@.name) > 3]", true},
		{`$[?match(@.status, "up|ok")]`, true},

		{"status", false},                      // no root
		{"a.b", false},                         // no root
		{".status", false},                     // no root
		{"$.", false},                          // empty member
		{"$.a[", false},                        // unclosed
		{"$.a[?@.b == 'x'", false},             // unclosed filter
		{"$.items[(@.length-1)]", false},       // Goessner script expression
		{"$.items.length()", false},            // not a function of RFC 9535
		{"$.a[?(@.b =~ /x/)]", false},          // regex literal of other dialects
		{"$.a[?@.b === 1]", false},             // JavaScript comparison
		{"@.a", false},                         // current node outside a filter
		{"$[?foo(@)]", false},                  // unknown function
		{"$['a\"]", false},                     // unterminated string
		{"$.items[01]", false},                 // leading zero
		{"$[?@.a == 1 && ]", false},            // dangling operator
		{"$.a\n", false},                       // trailing newline
		{"$.a b", false},                       // trailing garbage
		{"$[?count(@.*) == 'x']", true},        // well-typed comparison of ValueType
		{"$[?count(@.a) > 1]", true},           // a singular query is still a NodesType argument
		{"$[?length(@.*) > 1]", false},         // length needs a singular query
		{"$[?match(@.a, 'x') == true]", false}, // LogicalType is not comparable
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			d := httpDraft()
			d.Config.JSONAssertions = []monitor.JSONAssertion{{Path: c.path, Operator: monitor.OpExists}}
			problems := d.Normalize()
			if c.ok {
				if len(problems) != 0 {
					t.Fatalf("rejected: %v", problems)
				}
				return
			}
			if len(problems) != 1 || problems[0].Pointer != "/config/jsonAssertions/0/path" {
				t.Fatalf("errors = %v, want one at /config/jsonAssertions/0/path", problems)
			}
			if !strings.Contains(problems[0].Message, "is not an RFC 9535 JSONPath") {
				t.Errorf("message = %q", problems[0].Message)
			}
		})
	}
}

// TestAuthPresence: what may be shown about credentials never carries them.
func TestAuthPresence(t *testing.T) {
	const (
		password = "hunter2-password-secret"
		token    = "tok-3b1f-secret"
		value    = "hdr-value-secret"
	)
	cases := []struct {
		name string
		auth *monitor.Auth
		want *monitor.AuthPresence
	}{
		{"nil", nil, nil},
		{"basic", &monitor.Auth{Type: monitor.AuthBasic, Username: "ops", Password: password},
			&monitor.AuthPresence{Type: monitor.AuthBasic, Username: "ops", PasswordSet: true}},
		{"basic without password", &monitor.Auth{Type: monitor.AuthBasic, Username: "ops"},
			&monitor.AuthPresence{Type: monitor.AuthBasic, Username: "ops"}},
		{"bearer", &monitor.Auth{Type: monitor.AuthBearer, Token: token},
			&monitor.AuthPresence{Type: monitor.AuthBearer, TokenSet: true}},
		{"header", &monitor.Auth{Type: monitor.AuthHeader, Header: "X-Api-Key", Value: value},
			&monitor.AuthPresence{Type: monitor.AuthHeader, Header: "X-Api-Key", ValueSet: true}},
		{"everything set", &monitor.Auth{Type: "odd", Username: "u", Password: password, Token: token, Header: "H", Value: value},
			&monitor.AuthPresence{Type: "odd", Username: "u", Header: "H", PasswordSet: true, TokenSet: true, ValueSet: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.auth.Presence()
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Presence() = %+v, want %+v", got, c.want)
			}
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{fmt.Sprintf("%+v", got), fmt.Sprintf("%#v", got), string(b)} {
				for _, secret := range []string{password, token, value} {
					if strings.Contains(s, secret) {
						t.Errorf("presence carries a secret: %s", s)
					}
				}
			}
		})
	}
}

// TestAuthPresenceHasNoSecretFields guards the type itself: a string field
// added to AuthPresence must be a non-secret one.
func TestAuthPresenceHasNoSecretFields(t *testing.T) {
	allowed := map[string]bool{"Type": true, "Username": true, "Header": true}
	rt := reflect.TypeFor[monitor.AuthPresence]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Type.Kind() == reflect.Bool {
			continue
		}
		if !allowed[f.Name] {
			t.Errorf("AuthPresence.%s (%s) may carry a secret", f.Name, f.Type)
		}
	}
}

// TestNormalizedConfigNeverCarriesSecrets: after Normalize the stored config
// JSON says which credentials are set, never what they are.
func TestNormalizedConfigNeverCarriesSecrets(t *testing.T) {
	const password, token = "s3cr3t-pa55", "t0k3n-s3cr3t"
	for _, auth := range []*monitor.Auth{
		{Type: monitor.AuthBasic, Username: "ops", Password: password},
		{Type: monitor.AuthBearer, Token: token},
	} {
		d := httpDraft()
		d.Auth = auth
		if problems := d.Normalize(); len(problems) != 0 {
			t.Fatalf("Normalize: %v", problems)
		}
		if !reflect.DeepEqual(d.Config.AuthSet, auth.Presence()) {
			t.Errorf("AuthSet = %+v, want %+v", d.Config.AuthSet, auth.Presence())
		}
		d.Config.Auth = auth // even if a caller puts it there
		b, err := json.Marshal(d.Config)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), password) || strings.Contains(string(b), token) {
			t.Errorf("config JSON carries a secret: %s", b)
		}
		if !strings.Contains(string(b), `"authSet":{"type":"`+string(auth.Type)+`"`) {
			t.Errorf("config JSON lacks authSet: %s", b)
		}
	}
}
