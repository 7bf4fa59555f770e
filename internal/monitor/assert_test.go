package monitor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func jsonA(path string, op Operator, value string) JSONAssertion {
	a := JSONAssertion{Path: path, Operator: op}
	if value != "" {
		a.Value = json.RawMessage(value)
	}
	return a
}

func TestEvaluateJSON(t *testing.T) {
	body := `{"status":"ok","version":"1.2.3","checks":[{"name":"db","ms":12},{"name":"cache","ms":3.5}],
		"count":10,"big":12345678901234567890,"ratio":1.0,"tags":["a","b"],"nothing":null,"ok":true}`
	cases := []struct {
		a    JSONAssertion
		pass bool
	}{
		{jsonA("$.status", OpEquals, `"ok"`), true},
		{jsonA("$.status", OpEquals, `"OK"`), false},
		{jsonA("$.ratio", OpEquals, `1`), true}, // numbers by value
		{jsonA("$.big", OpEquals, `12345678901234567890`), true},
		{jsonA("$.big", OpEquals, `12345678901234567891`), false}, // exact, not float64
		{jsonA("$.tags", OpEquals, `["a","b"]`), true},
		{jsonA("$.checks[0]", OpEquals, `{"ms":12,"name":"db"}`), true},
		{jsonA("$.nothing", OpEquals, `null`), true},
		{jsonA("$.ok", OpEquals, `true`), true},
		{jsonA("$.missing", OpEquals, `"x"`), false},
		{jsonA("$.version", OpContains, `"1.2"`), true},
		{jsonA("$.version", OpContains, `"2.0"`), false},
		{jsonA("$.tags", OpContains, `"b"`), true},
		{jsonA("$.tags", OpContains, `"c"`), false},
		{jsonA("$.count", OpContains, `1`), false},
		{jsonA("$.checks[*].name", OpContains, `"cac"`), true}, // any selected node
		{jsonA("$.status", OpExists, ""), true},
		{jsonA("$.missing", OpExists, ""), false},
		{jsonA("$.missing", OpExists, "false"), true},
		{jsonA("$.status", OpExists, "false"), false},
		{jsonA("$.nothing", OpExists, ""), true}, // null is something
		{jsonA("$.count", OpGT, `9`), true},
		{jsonA("$.count", OpGT, `10`), false},
		{jsonA("$.count", OpLT, `10.5`), true},
		{jsonA("$.checks[*].ms", OpGT, `10`), true},
		{jsonA("$.checks[*].ms", OpLT, `3`), false},
		{jsonA("$.status", OpGT, `1`), false}, // not a number
		{jsonA("$.checks[?@.ms > 10].name", OpEquals, `"db"`), true},
		{jsonA("$.checks[?@.ms < 1].name", OpExists, ""), false},
	}
	for _, c := range cases {
		ok, outs := EvaluateHTTP(Config{JSONAssertions: []JSONAssertion{c.a}}, 200, []byte(body), false)
		if ok != c.pass {
			t.Errorf("%s %s %s: passed=%v, want %v (%+v)", c.a.Path, c.a.Operator, c.a.Value, ok, c.pass, outs)
		}
		last := outs[len(outs)-1]
		if last.Passed == (last.Reason != "") {
			t.Errorf("%s: a reason must be given exactly when it fails: %+v", c.a.Path, last)
		}
	}
}

// A failed JSON assertion's reason says what the body held against what
// was expected, so a person can act on it without opening the body.
func TestJSONAssertionReasons(t *testing.T) {
	body := `{"status":"degraded","count":3,"version":"1.2.3","checks":[{"ms":12},{"ms":30}]}`
	for _, c := range []struct {
		a    JSONAssertion
		want string
	}{
		{jsonA("$.status", OpEquals, `"ok"`), `$.status is "degraded", expected "ok"`},
		{jsonA("$.version", OpContains, `"2.0"`), `$.version is "1.2.3", expected it to contain "2.0"`},
		{jsonA("$.count", OpGT, `5`), `$.count is 3, expected more than 5`},
		{jsonA("$.count", OpLT, `1`), `$.count is 3, expected less than 1`},
		{jsonA("$.checks[*].ms", OpLT, `10`), `$.checks[*].ms selects 2 values, none as expected (expected less than 10); the first is 12`},
		{jsonA("$.missing", OpEquals, `"x"`), `$.missing selects nothing`},
		{jsonA("$.status", OpExists, "false"), `$.status selects 1 node(s), but must select none`},
	} {
		_, outs := EvaluateHTTP(Config{JSONAssertions: []JSONAssertion{c.a}}, 200, []byte(body), false)
		if got := outs[1].Reason; outs[1].Passed || got != c.want {
			t.Errorf("%s %s %s: reason %q, want %q", c.a.Path, c.a.Operator, c.a.Value, got, c.want)
		}
	}
}

func TestEvaluateBodyProblems(t *testing.T) {
	exists := Config{JSONAssertions: []JSONAssertion{jsonA("$.a", OpExists, "")}}
	for _, c := range []struct {
		name      string
		body      string
		truncated bool
		reason    string
	}{
		{"not JSON", "<html>", false, "not JSON"},
		{"cut JSON", `{"a": [1, 2,`, true, "cut at 128 KiB"},
		{"two documents", `{"a":1} {"a":2}`, false, "more than one"},
		{"too deep", strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1), false, "deeper than"},
	} {
		ok, outs := EvaluateHTTP(exists, 200, []byte(c.body), c.truncated)
		if ok || !strings.Contains(outs[1].Reason, c.reason) {
			t.Errorf("%s: %v %+v", c.name, ok, outs)
		}
	}
	// A body longer than the limit is cut, and a cut body is still asserted on.
	long := append([]byte(`{"a":1}`), bytes.Repeat([]byte(" "), MaxAssertedBody)...)
	long = append(long, []byte("late-keyword")...)
	cfg := Config{KeywordAssertions: []KeywordAssertion{{Keyword: "late-keyword", Present: true}, {Keyword: `"a"`, Present: true}}}
	ok, outs := EvaluateHTTP(cfg, 200, long, false)
	if ok || outs[1].Passed || !strings.Contains(outs[1].Reason, "first 128 KiB") || !outs[2].Passed {
		t.Errorf("cut body: %+v", outs)
	}
}

func TestEvaluateStatusAndKeywords(t *testing.T) {
	cfg := Config{
		ExpectedStatusCodes: []StatusRange{{200, 204}, {301, 301}},
		KeywordAssertions: []KeywordAssertion{
			{Keyword: "Healthy", Present: true, CaseSensitive: true},
			{Keyword: "error", Present: false},
			{Keyword: "HEALTHY", Present: true},
		},
	}
	for _, c := range []struct {
		status int
		body   string
		pass   bool
	}{
		{200, "all Healthy", true},
		{301, "all Healthy", true},
		{205, "all Healthy", false},
		{200, "all healthy", false},          // case-sensitive keyword
		{200, "all Healthy, ERROR x", false}, // absent keyword, case-insensitive
	} {
		if ok, outs := EvaluateHTTP(cfg, c.status, []byte(c.body), false); ok != c.pass {
			t.Errorf("%d %q: %v %+v", c.status, c.body, ok, outs)
		}
	}
	if ok, _ := EvaluateHTTP(Config{}, 399, nil, false); !ok {
		t.Error("default expected codes are 200-399")
	}
	if ok, _ := EvaluateHTTP(Config{}, 404, nil, false); ok {
		t.Error("404 accepted by default")
	}
}

// FuzzEvaluateJSON: no document or path makes evaluation panic, and it
// stays fast (bounded by the body limit and the depth cap).
func FuzzEvaluateJSON(f *testing.F) {
	f.Add(`{"a":[1,2,{"b":"c"}]}`, "$.a[*].b", "equals", `"c"`)
	f.Add(`[[[[[]]]]]`, "$..*", "exists", ``)
	f.Add(`{"a":"x"}`, `$[?match(@.a, "x")]`, "exists", ``)
	f.Add(`{"a":1e400}`, "$.a", "gt", `1`)
	f.Fuzz(func(t *testing.T, body, path, op, value string) {
		a := JSONAssertion{Path: path, Operator: Operator(op)}
		if json.Valid([]byte(value)) {
			a.Value = json.RawMessage(value)
		}
		start := time.Now()
		ok, outs := EvaluateHTTP(Config{JSONAssertions: []JSONAssertion{a}}, 200, []byte(body), false)
		if len(outs) != 2 || ok != outs[1].Passed && outs[0].Passed {
			t.Fatalf("outcomes %+v", outs)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("evaluation took %s", d)
		}
	})
}
