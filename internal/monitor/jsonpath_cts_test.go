package monitor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/theory/jsonpath"
)

// ctsFile is the RFC 9535 JSONPath Compliance Test Suite; see the README.md
// beside it for where it came from.
var ctsFile = filepath.Join("testdata", "jsonpath-cts", "cts.json")

// knownDeviations lists suite cases that fail because of our bounds or a
// gap in the library, by case name, with the reason. Each listed case must
// still fail: one that starts passing fails the test, so the list cannot go
// stale. Any failing case not listed here also fails the test.
var knownDeviations = map[string]string{}

// ctsCase is one case of cts.json. Document and results stay raw so they
// are decoded exactly as our code decodes response bodies and assertion
// values.
type ctsCase struct {
	Name            string            `json:"name"`
	Selector        string            `json:"selector"`
	Document        json.RawMessage   `json:"document"`
	Result          json.RawMessage   `json:"result"`
	Results         []json.RawMessage `json:"results"`
	InvalidSelector bool              `json:"invalid_selector"`
}

// TestJSONPathCompliance runs every case of the suite through the paths
// our code takes: validation (length bound, then jsonpath.Parse, as in
// validate.go) and evaluation (decodeBounded, jsonpath.Parse, selectSafely,
// at most MaxSelectedJSON nodes, as in assert.go).
func TestJSONPathCompliance(t *testing.T) {
	raw, err := os.ReadFile(ctsFile)
	if err != nil {
		t.Fatalf("read the suite: %v", err)
	}
	var suite struct {
		Tests []ctsCase `json:"tests"`
	}
	if err := json.Unmarshal(raw, &suite); err != nil {
		t.Fatalf("parse the suite: %v", err)
	}
	if len(suite.Tests) == 0 {
		t.Fatal("the suite has no tests")
	}

	names := make(map[string]bool, len(suite.Tests))
	for _, c := range suite.Tests {
		if names[c.Name] {
			t.Errorf("case name %q occurs twice; knownDeviations needs unique names", c.Name)
		}
		names[c.Name] = true
	}
	for name := range knownDeviations {
		if !names[name] {
			t.Errorf("knownDeviations lists %q, which is not a case of the suite", name)
		}
	}

	passed, deviated := 0, 0
	for _, c := range suite.Tests {
		t.Run(c.Name, func(t *testing.T) {
			failure := ctsRun(c)
			reason, known := knownDeviations[c.Name]
			switch {
			case known && failure == "":
				passed++
				t.Errorf("listed in knownDeviations (%s) but passes now: remove it from the list", reason)
			case known:
				deviated++
				t.Logf("known deviation (%s): %s", reason, failure)
			case failure != "":
				t.Errorf("selector %q: %s", c.Selector, failure)
			default:
				passed++
			}
		})
	}
	t.Logf("JSONPath Compliance Test Suite: %d cases, %d passed, %d failed as known deviations, %d failed otherwise",
		len(suite.Tests), passed, deviated, len(suite.Tests)-passed-deviated)
}

// ctsRun runs one case and describes how it failed; "" when it passed.
func ctsRun(c ctsCase) string {
	// Validation: the length bound first, then the parser (validate.go).
	bounded := c.Selector != "" && len(c.Selector) <= MaxJSONPathLen
	var p *jsonpath.Path
	var parseErr error
	if bounded {
		p, parseErr = jsonpath.Parse(c.Selector)
	}
	if c.InvalidSelector {
		if bounded && parseErr == nil {
			return fmt.Sprintf("invalid selector accepted (parsed as %q)", p.String())
		}
		return ""
	}
	if !bounded {
		return fmt.Sprintf("validation rejects it: not 1 to %d characters", MaxJSONPathLen)
	}
	if parseErr != nil {
		return "valid selector rejected: " + parseErr.Error()
	}

	// Evaluation, as evalJSON does it.
	if c.Document == nil {
		return "the case has neither invalid_selector nor document"
	}
	doc, err := decodeBounded(c.Document, false)
	if err != nil {
		return "document not decoded: " + err.Error()
	}
	nodes, err := selectSafely(p, doc)
	if err != nil {
		return "evaluation failed: " + err.Error()
	}
	if len(nodes) > MaxSelectedJSON {
		nodes = nodes[:MaxSelectedJSON]
	}

	wants := c.Results
	if c.Result != nil {
		wants = []json.RawMessage{c.Result}
	}
	if len(wants) == 0 {
		return "the case gives neither result nor results"
	}
	for _, w := range wants {
		want, err := ctsDecode(w)
		if err != nil {
			return "expected result not decoded: " + err.Error()
		}
		if ctsEqual([]any(nodes), want) {
			return ""
		}
	}
	got, _ := json.Marshal(nodes)
	if len(wants) == 1 {
		return fmt.Sprintf("got %s, want %s", got, wants[0])
	}
	return fmt.Sprintf("got %s, want one of %d orders, first %s", got, len(wants), ctsCompact(wants[0]))
}

// ctsDecode decodes an expected value with numbers kept as json.Number, as
// assertion values are decoded in assert.go.
func ctsDecode(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func ctsCompact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// ctsEqual compares JSON values: numbers by value whatever their Go type
// (json.Number, float64, integers), arrays in order, objects by key.
func ctsEqual(a, b any) bool {
	if x, ok := ctsNumber(a); ok {
		y, ok := ctsNumber(b)
		return ok && x.Cmp(y) == 0
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !ctsEqual(x[i], y[i]) {
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
			if !ok || !ctsEqual(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// ctsNumber gives the exact value of a JSON number of any Go type.
func ctsNumber(v any) (*big.Rat, bool) {
	switch n := v.(type) {
	case json.Number:
		return new(big.Rat).SetString(n.String())
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(n) == nil {
			return nil, false
		}
		return r, true
	case float32:
		return ctsNumber(float64(n))
	case int:
		return new(big.Rat).SetInt64(int64(n)), true
	case int64:
		return new(big.Rat).SetInt64(n), true
	case int32:
		return new(big.Rat).SetInt64(int64(n)), true
	case uint64:
		return new(big.Rat).SetFrac(new(big.Int).SetUint64(n), big.NewInt(1)), true
	}
	return nil, false
}
