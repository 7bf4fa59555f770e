package monitor_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/monitor"
)

// TestHeaderPatchApply: a patch names only what changes; every other
// stored header keeps its value, and names match as HTTP's do.
func TestHeaderPatchApply(t *testing.T) {
	v := func(s string) *string { return &s }
	stored := map[string]string{"Authorization": "Bearer t1", "X-Api-Password": "pw", "Accept": "text/plain"}
	cases := []struct {
		name  string
		patch monitor.HeaderPatch
		want  map[string]string
	}{
		{"empty patch keeps all", monitor.HeaderPatch{}, stored},
		{"set one, keep the rest", monitor.HeaderPatch{Set: map[string]*string{"Accept": v("application/json")}},
			map[string]string{"Authorization": "Bearer t1", "X-Api-Password": "pw", "Accept": "application/json"}},
		{"add one", monitor.HeaderPatch{Set: map[string]*string{"X-New": v("1")}},
			map[string]string{"Authorization": "Bearer t1", "X-Api-Password": "pw", "Accept": "text/plain", "X-New": "1"}},
		{"null removes", monitor.HeaderPatch{Set: map[string]*string{"X-Api-Password": nil}},
			map[string]string{"Authorization": "Bearer t1", "Accept": "text/plain"}},
		{"removing an absent name is no error", monitor.HeaderPatch{Set: map[string]*string{"X-Nope": nil}}, stored},
		{"names ignore case: replaced, not doubled", monitor.HeaderPatch{Set: map[string]*string{"authorization": v("Bearer t2")}},
			map[string]string{"authorization": "Bearer t2", "X-Api-Password": "pw", "Accept": "text/plain"}},
		{"names ignore case: removed", monitor.HeaderPatch{Set: map[string]*string{"x-api-password": nil}},
			map[string]string{"Authorization": "Bearer t1", "Accept": "text/plain"}},
		{"clear removes all", monitor.HeaderPatch{Clear: true}, nil},
		{"clear then set", monitor.HeaderPatch{Clear: true, Set: map[string]*string{"X-Only": v("1"), "Accept": nil}},
			map[string]string{"X-Only": "1"}},
		{"removing the last leaves none", monitor.HeaderPatch{Set: map[string]*string{"Authorization": nil, "X-Api-Password": nil, "Accept": nil}}, nil},
	}
	for _, c := range cases {
		before := map[string]string{}
		for k, val := range stored {
			before[k] = val
		}
		got := c.patch.Apply(stored)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
		if !reflect.DeepEqual(stored, before) {
			t.Fatalf("%s: Apply changed the stored map: %v", c.name, stored)
		}
		if got := c.patch.IsZero(); got != (c.name == "empty patch keeps all") {
			t.Errorf("%s: IsZero = %v", c.name, got)
		}
	}
}

// TestNormalizeListsHeaderNames: what may be shown of the headers (their
// names, sorted) follows the values, which stay out of the stored JSON.
func TestNormalizeListsHeaderNames(t *testing.T) {
	d := httpDraft()
	d.Config.Headers = map[string]string{"X-B": "secret-b", "Authorization": "secret-a"}
	if errs := d.Normalize(); len(errs) != 0 {
		t.Fatal(errs)
	}
	if want := []string{"Authorization", "X-B"}; !reflect.DeepEqual(d.Config.HeadersSet, want) {
		t.Errorf("HeadersSet = %v, want %v", d.Config.HeadersSet, want)
	}
	stored, err := json.Marshal(d.Config)
	if err != nil || strings.Contains(string(stored), "secret-") || !strings.Contains(string(stored), `"headersSet":["Authorization","X-B"]`) {
		t.Errorf("the stored form must name the headers without their values: %s %v", stored, err)
	}
	d.Config.Headers = nil
	if errs := d.Normalize(); len(errs) != 0 || d.Config.HeadersSet != nil {
		t.Errorf("without headers: HeadersSet = %v, errs %v", d.Config.HeadersSet, errs)
	}
}
