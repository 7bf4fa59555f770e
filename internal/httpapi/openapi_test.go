package httpapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"slices"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

var update = flag.Bool("update", false, "rewrite testdata/openapi.golden.json from the served document")

// TestOpenAPIGolden fails when the contract changes unnoticed. After an
// intended change: go test ./internal/httpapi -run Golden -update
func TestOpenAPIGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Engines(t)[0])
	r := e.req("GET", "/api/v1/openapi.json", "", nil)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var doc map[string]any
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	const golden = "testdata/openapi.golden.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the served OpenAPI document differs from %s; if the change is intended, run: go test ./internal/httpapi -run Golden -update", golden)
	}
}

// TestOpenAPIDescribesErrors: every operation documents its errors with the
// envelope, and authenticated ones their scope and rate-limit headers.
func TestOpenAPIDescribesErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Engines(t)[0])
	doc := e.api.OpenAPI()
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %s", doc.OpenAPI)
	}
	n := 0
	for path, item := range doc.Paths {
		for _, o := range opsOf(item) {
			n++
			want := []string{"400", "401", "403", "429", "500"}
			if slices.Contains(o.Tags, "Pings") {
				// The ping URLs: the secret in the URL is the credential.
				if len(o.Security) != 0 {
					t.Errorf("%s %s: a ping URL needs no API key", path, o.OperationID)
				}
				want = []string{"400", "404", "429", "503"}
			} else if len(o.Security) == 0 {
				t.Errorf("%s %s: no security requirement", path, o.OperationID)
			}
			for _, status := range want {
				resp := o.Responses[status]
				if resp == nil {
					t.Errorf("%s: no %s response", o.OperationID, status)
					continue
				}
				if s := resp.Content["application/json"].Schema; s == nil || s.Ref != "#/components/schemas/ErrorResponse" {
					t.Errorf("%s %s: error schema %+v", o.OperationID, status, s)
				}
			}
			if resp := o.Responses["429"]; resp != nil && resp.Headers["Retry-After"] == nil {
				t.Errorf("%s: 429 without Retry-After", o.OperationID)
			}
			for status, resp := range o.Responses {
				if resp.Headers["X-Request-Id"] == nil {
					t.Errorf("%s %s: X-Request-Id undocumented", o.OperationID, status)
				}
			}
		}
	}
	if n < 7 {
		t.Errorf("only %d operations", n)
	}
}

func opsOf(item *huma.PathItem) []*huma.Operation {
	var ops []*huma.Operation
	for _, o := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
		if o != nil {
			ops = append(ops, o)
		}
	}
	return ops
}
