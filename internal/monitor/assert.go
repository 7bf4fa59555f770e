package monitor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/theory/jsonpath"

	"github.com/tocsin/tocsin/internal/clean"
)

// MaxAssertedBody is how much of a response assertions read (spec §1).
const MaxAssertedBody = 128 << 10

// Bounds on JSON evaluation, so no configuration makes a check slow or
// hungry: nesting depth of the document, and how many selected nodes are
// compared.
const (
	MaxJSONDepth    = 64
	MaxSelectedJSON = 1000
)

// Outcome is the verdict of one assertion, for the observation and for
// `POST /monitors/test`.
type Outcome struct {
	Kind   string // "status", "keyword" or "json"
	Index  int    // position in its list; 0 for status
	Passed bool
	Reason string // why it failed; empty when it passed
}

// EvaluateHTTP applies a monitor's assertions to a response: its status and
// the first MaxAssertedBody bytes of its body (truncated reports whether
// the body went on). Every assertion is evaluated, so the outcome lists all
// failures, not just the first.
func EvaluateHTTP(c Config, status int, body []byte, truncated bool) (bool, []Outcome) {
	if len(body) > MaxAssertedBody {
		body, truncated = body[:MaxAssertedBody], true
	}
	var out []Outcome
	st := Outcome{Kind: "status", Passed: statusAccepted(c.ExpectedStatusCodes, status)}
	if !st.Passed {
		st.Reason = fmt.Sprintf("status %d is not among the expected codes", status)
	}
	out = append(out, st)
	for i, k := range c.KeywordAssertions {
		o := Outcome{Kind: "keyword", Index: i, Passed: containsKeyword(body, k.Keyword, k.CaseSensitive) == k.Present}
		switch {
		case o.Passed:
		case k.Present && truncated:
			o.Reason = fmt.Sprintf("keyword %q not found in the first 128 KiB of the body", k.Keyword)
		case k.Present:
			o.Reason = fmt.Sprintf("keyword %q not found in the body", k.Keyword)
		default:
			o.Reason = fmt.Sprintf("keyword %q found in the body, but must be absent", k.Keyword)
		}
		out = append(out, o)
	}
	if len(c.JSONAssertions) > 0 {
		doc, err := decodeBounded(body, truncated)
		for i, a := range c.JSONAssertions {
			o := Outcome{Kind: "json", Index: i}
			if err != nil {
				o.Reason = err.Error()
			} else {
				o.Passed, o.Reason = evalJSON(a, doc)
			}
			out = append(out, o)
		}
	}
	ok := true
	for _, o := range out {
		ok = ok && o.Passed
	}
	return ok, out
}

func statusAccepted(ranges []StatusRange, status int) bool {
	if len(ranges) == 0 {
		ranges = DefaultExpectedStatus
	}
	for _, r := range ranges {
		if status >= r.From && status <= r.To {
			return true
		}
	}
	return false
}

func containsKeyword(body []byte, kw string, caseSensitive bool) bool {
	if caseSensitive {
		return bytes.Contains(body, []byte(kw))
	}
	return bytes.Contains(bytes.ToLower(body), bytes.ToLower([]byte(kw)))
}

// decodeBounded parses the body as one JSON document with numbers kept
// exact, refusing documents nested deeper than MaxJSONDepth.
func decodeBounded(body []byte, truncated bool) (any, error) {
	depth, maxDepth := 0, 0
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if truncated {
				return nil, errors.New("the body was cut at 128 KiB and the JSON in it is incomplete")
			}
			return nil, fmt.Errorf("the body is not JSON: %v", err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			maxDepth = max(maxDepth, depth)
			if maxDepth > MaxJSONDepth {
				return nil, fmt.Errorf("the JSON is nested deeper than %d levels", MaxJSONDepth)
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	dec = json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		if truncated {
			return nil, errors.New("the body was cut at 128 KiB and the JSON in it is incomplete")
		}
		return nil, fmt.Errorf("the body is not JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("the body holds more than one JSON value")
	}
	return doc, nil
}

// evalJSON: the assertion passes when any selected node satisfies it
// (exists: when the path selects something; with value false, nothing).
func evalJSON(a JSONAssertion, doc any) (passed bool, reason string) {
	p, err := jsonpath.Parse(a.Path)
	if err != nil {
		return false, "invalid JSONPath: " + err.Error()
	}
	nodes, err := selectSafely(p, doc)
	if err != nil {
		return false, err.Error()
	}
	if len(nodes) > MaxSelectedJSON {
		nodes = nodes[:MaxSelectedJSON]
	}
	var want any
	if a.Value != nil {
		dec := json.NewDecoder(bytes.NewReader(a.Value))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			return false, "invalid comparison value"
		}
	}
	switch a.Operator {
	case OpExists:
		wantExists := want != false
		if (len(nodes) > 0) == wantExists {
			return true, ""
		}
		if wantExists {
			return false, fmt.Sprintf("%s selects nothing", a.Path)
		}
		return false, fmt.Sprintf("%s selects %d node(s), but must select none", a.Path, len(nodes))
	case OpEquals, OpContains, OpGT, OpLT:
		if len(nodes) == 0 {
			return false, fmt.Sprintf("%s selects nothing", a.Path)
		}
		for _, n := range nodes {
			if match(a.Operator, n, want) {
				return true, ""
			}
		}
		return false, jsonMismatch(a.Path, a.Operator, want, nodes)
	}
	return false, fmt.Sprintf("unknown operator %q", a.Operator)
}

// jsonMismatch says what the body held against what was expected:
// `$.status is "degraded", expected "ok"`; with several selected values,
// how many there were and the first.
func jsonMismatch(path string, op Operator, want any, nodes []any) string {
	expected := "expected " + opWords[op] + compact(want)
	if len(nodes) == 1 {
		return fmt.Sprintf("%s is %s, %s", path, compact(nodes[0]), expected)
	}
	return fmt.Sprintf("%s selects %d values, none as expected (%s); the first is %s", path, len(nodes), expected, compact(nodes[0]))
}

// opWords lead the expected value in a reason ("expected " + words + value).
var opWords = map[Operator]string{OpEquals: "", OpContains: "it to contain ", OpGT: "more than ", OpLT: "less than "}

// selectSafely runs the query, turning a panic of the library into a
// failed assertion rather than a crashed probe.
func selectSafely(p *jsonpath.Path, doc any) (nodes []any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the JSONPath could not be evaluated on this document")
		}
	}()
	return p.Select(doc), nil
}

func match(op Operator, node, want any) bool {
	switch op {
	case OpEquals:
		return jsonEqual(node, want)
	case OpContains:
		switch n := node.(type) {
		case string:
			s, ok := want.(string)
			return ok && strings.Contains(n, s)
		case []any:
			for _, el := range n {
				if jsonEqual(el, want) {
					return true
				}
			}
		}
		return false
	case OpGT, OpLT:
		a, ok1 := number(node)
		b, ok2 := number(want)
		if !ok1 || !ok2 {
			return false
		}
		c := a.Cmp(b)
		return op == OpGT && c > 0 || op == OpLT && c < 0
	}
	return false
}

func number(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(n.String())
	return r, ok
}

// jsonEqual compares JSON values; numbers by value (1 equals 1.0).
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		ra, ok1 := number(x)
		rb, ok2 := number(b)
		return ok1 && ok2 && ra.Cmp(rb) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

// compact renders a value for a reason, cut short.
func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	// JSON keeps non-ASCII text as it is: cut on a rune boundary.
	return clean.Shorten(string(b), 80)
}
