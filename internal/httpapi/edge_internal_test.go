package httpapi

import (
	"slices"
	"strings"
	"testing"
)

func TestNULPointers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"clean", `{"name":"a","list":["b"]}`, nil},
		{"no NUL, an escaped backslash before u0000", `{"name":"\\u0000"}`, nil},
		{"top-level string", `"\u0000"`, []string{"/"}},
		{"field", `{"name":"a\u0000b"}`, []string{"/name"}},
		{"after other fields", `{"a":1,"b":[true,null,{"c":"x"}],"name":"\u0000"}`, []string{"/name"}},
		{"nested object", `{"config":{"url":"x","auth":{"value":"\u0000"}}}`, []string{"/config/auth/value"}},
		{"array element", `{"ids":["a","b","\u0000"]}`, []string{"/ids/2"}},
		{"array of objects", `{"a":[{"p":"x"},{"p":"\u0000"}]}`, []string{"/a/1/p"}},
		{"after an empty object and array", `{"a":{},"b":[],"c":"\u0000"}`, []string{"/c"}},
		{"key", `{"headers":{"X-\u0000":"v"}}`, []string{"/headers/X-\x00"}},
		{"key and its value, named once", `{"h":{"\u0000":"\u0000"}}`, []string{"/h/\x00"}},
		{"key escaping", `{"a/b":{"c~d":"\u0000"}}`, []string{"/a~1b/c~0d"}},
		{"several", `{"name":"\u0000","m":"\u0000","x":["\u0000"]}`, []string{"/name", "/m", "/x/0"}},
		{"invalid JSON is left to the decoder", `{"name":"\u0000"`, nil},
		{"two values are not JSON", `"\u0000" "x"`, nil},
		{"trailing garbage", `{"name":"\u0000"} x`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nulPointers([]byte(tc.body)); !slices.Equal(got, tc.want) {
				t.Errorf("nulPointers(%s) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		body := "[" + strings.Repeat(`"\u0000",`, 100) + `"x"]`
		if got := nulPointers([]byte(body)); len(got) != maxNULDetails || got[0] != "/0" {
			t.Errorf("%d pointers, first %q", len(got), got[0])
		}
	})
	t.Run("deep", func(t *testing.T) {
		body := strings.Repeat(`{"a":`, 5000) + `"\u0000"` + strings.Repeat("}", 5000)
		got := nulPointers([]byte(body))
		if len(got) != 1 || got[0] != strings.Repeat("/a", 5000) {
			t.Errorf("deep: %d pointers", len(got))
		}
	})
}

func TestJSONMediaType(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]bool{
		"application/json":                      true,
		"application/json; charset=utf-8":       true,
		"Application/JSON; Charset=UTF-8":       true,
		"application/json;charset=\"utf-8\"":    true,
		"":                                      false,
		"text/plain":                            false,
		"application/json; charset=iso-8859-1":  false,
		"application/merge-patch+json":          false,
		"application/vnd.api+json":              false,
		"application/x-www-form-urlencoded":     false,
		"application/json\xff":                  false,
		"application/json; charset":             false,
		"multipart/form-data; boundary=x":       false,
		"application/jsonx":                     false,
		"application/json, application/json":    false,
		"application/json; charset=utf-8; a=b":  true,
		"application/json; charset=utf-16":      false,
		"application/json; charset=utf-8\x00":   false,
		" application/json ":                    true,
		"application/json; charset=utf-8; q=1 ": true,
	} {
		if got := jsonMediaType(ct, false); got != want {
			t.Errorf("jsonMediaType(%q) = %v, want %v", ct, got, want)
		}
	}
	for ct, want := range map[string]bool{"application/merge-patch+json": true, "application/merge-patch+json; charset=utf-8": true, "application/json": true, "application/x+json": false} {
		if jsonMediaType(ct, true) != want || ct == "application/merge-patch+json" && jsonMediaType(ct, false) {
			t.Errorf("jsonMediaType(%q) on a PATCH = %v, want %v (and false elsewhere)", ct, !want, want)
		}
	}
}

func TestCheckQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, where string // where "": accepted
	}{
		{"", ""},
		{"limit=10&cursor=abc", ""},
		{"subject=mon_1&&x", ""},
		{"q=%C3%A9t%C3%A9+x", ""},
		{"a=b=c", ""},
		{"subject=%00", "query.subject"},
		{"subject=a%ffb", "query.subject"},
		{"subject=%c3%28", "query.subject"},
		{"subject=\xff", "query.subject"},
		{"limit=1&from=%zz", "query.from"},
		{"to=%", "query.to"},
		{"%ff=1", "query"},
		{"%00", "query"},
		{"a%zz=1", "query"},
		{"n%c3%28=1", "query"},
	} {
		d, ok := checkQuery(tc.raw)
		if ok != (tc.where == "") || d.Parameter != tc.where {
			t.Errorf("checkQuery(%q) = %+v, %v; want parameter %q", tc.raw, d, ok, tc.where)
		}
		if !ok && d.Message == "" {
			t.Errorf("checkQuery(%q): no message", tc.raw)
		}
	}
}

func TestIDParams(t *testing.T) {
	t.Parallel()
	got := idParams("/api/v1/notification-channels/{id}/deliveries")
	if len(got) != 1 || got[0] != (idParam{name: "id", prefix: "nch"}) {
		t.Errorf("idParams = %+v", got)
	}
	if got := idParams("/api/v1/monitors"); len(got) != 0 {
		t.Errorf("idParams of a collection = %+v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("a parameter after an unknown collection did not panic")
		}
	}()
	idParams("/api/v1/widgets/{id}")
}
