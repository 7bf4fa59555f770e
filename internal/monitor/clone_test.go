package monitor

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestCloneSharesNothing: changing every part of a clone leaves the
// original as it was (the store hands out clones of cached configs).
func TestCloneSharesNothing(t *testing.T) {
	yes := true
	orig := Config{
		URL: "https://a.example", Headers: map[string]string{"X-A": "1"}, HeadersSet: []string{"X-A"}, FollowRedirects: &yes,
		ExpectedStatusCodes: []StatusRange{{200, 299}}, KeywordAssertions: []KeywordAssertion{{Keyword: "ok", Present: true}},
		JSONAssertions: []JSONAssertion{{Path: "$.a", Operator: OpEquals, Value: json.RawMessage(`"x"`)}},
		Auth:           &Auth{Type: AuthBearer, Token: "t"}, AuthSet: &AuthPresence{Type: AuthBearer, TokenSet: true},
		ExpectedValues: []string{"1.2.3.4"},
	}
	snapshot, _ := json.Marshal(orig)
	c := orig.Clone()
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("clone differs:\n%+v\n%+v", c, orig)
	}
	c.Headers["X-A"] = "2"
	c.HeadersSet[0] = "X-B"
	*c.FollowRedirects = false
	c.ExpectedStatusCodes[0].From = 100
	c.KeywordAssertions[0].Keyword = "changed"
	c.JSONAssertions[0].Path = "$.b"
	c.JSONAssertions[0].Value[1] = 'y'
	c.Auth.Token = "changed"
	c.AuthSet.TokenSet = false
	c.ExpectedValues[0] = "changed"
	after, _ := json.Marshal(orig)
	if string(after) != string(snapshot) || orig.Auth.Token != "t" || orig.Headers["X-A"] != "1" {
		t.Errorf("changing the clone changed the original:\n%s\n%s", snapshot, after)
	}
}
