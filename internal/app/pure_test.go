package app

// Tests of the parts of app that need no database: request fingerprints,
// cursors and Actor.Require. Internal, because cursors are unexported.

import (
	"bytes"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
)

func TestFingerprintSame(t *testing.T) {
	cases := []struct {
		name string
		a, b string
	}{
		{"identical", `{"name":"api","type":"http"}`, `{"name":"api","type":"http"}`},
		{"key order", `{"name":"api","type":"http"}`, `{"type":"http","name":"api"}`},
		{"whitespace", `{"name":"api","type":"http"}`, " {\n\t\"name\" : \"api\" ,\r\n \"type\":\"http\"\n}\n"},
		{"nested key order", `{"config":{"url":"https://a.example","method":"GET"},"name":"n"}`,
			`{"name":"n","config":{"method":"GET","url":"https://a.example"}}`},
		{"key order inside arrays", `{"a":[{"x":1,"y":2}]}`, `{"a":[{"y":2,"x":1}]}`},
		{"unicode escapes", `{"name":"café"}`, `{"name":"caf\u00e9"}`},
		{"escaped slash", `{"url":"https://a.example/x"}`, `{"url":"https:\/\/a.example\/x"}`},
		{"trailing newline", `{"a":1}`, "{\"a\":1}\n"},
		{"number kept as written", `{"n":12345678901234567890123}`, `{ "n" : 12345678901234567890123 }`},
		{"empty body", ``, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fa := Fingerprint("POST", "/api/v1/monitors", []byte(c.a))
			fb := Fingerprint("POST", "/api/v1/monitors", []byte(c.b))
			if !bytes.Equal(fa, fb) {
				t.Errorf("%s and %s differ", c.a, c.b)
			}
			if len(fa) != 32 {
				t.Errorf("fingerprint is %d bytes, want 32 (SHA-256)", len(fa))
			}
		})
	}
}

func TestFingerprintDiffers(t *testing.T) {
	type req struct {
		method, path, body string
	}
	base := req{"POST", "/api/v1/monitors", `{"name":"api","n":1}`}
	cases := []struct {
		name string
		a, b req
	}{
		{"method", base, req{"PUT", base.path, base.body}},
		{"method case", base, req{"post", base.path, base.body}},
		{"path", base, req{base.method, "/api/v1/heartbeats", base.body}},
		{"path trailing slash", base, req{base.method, base.path + "/", base.body}},
		{"path and method are not concatenated", req{"POST", "/x", ""}, req{"POS", "T/x", ""}},
		{"value", base, req{base.method, base.path, `{"name":"web","n":1}`}},
		{"1.0 vs 1", req{"POST", "/p", `{"n":1.0}`}, req{"POST", "/p", `{"n":1}`}},
		{"1e2 vs 100", req{"POST", "/p", `{"n":1e2}`}, req{"POST", "/p", `{"n":100}`}},
		{"0.1 vs 0.10", req{"POST", "/p", `{"n":0.1}`}, req{"POST", "/p", `{"n":0.10}`}},
		{"big ints beyond float64", req{"POST", "/p", `{"n":9007199254740993}`}, req{"POST", "/p", `{"n":9007199254740992}`}},
		{"bigger ints", req{"POST", "/p", `{"n":12345678901234567890}`}, req{"POST", "/p", `{"n":12345678901234567891}`}},
		{"string vs number", req{"POST", "/p", `{"n":"1"}`}, req{"POST", "/p", `{"n":1}`}},
		{"array order", req{"POST", "/p", `{"a":[1,2]}`}, req{"POST", "/p", `{"a":[2,1]}`}},
		{"null vs absent", req{"POST", "/p", `{"a":null}`}, req{"POST", "/p", `{}`}},
		{"empty vs empty object", req{"POST", "/p", ``}, req{"POST", "/p", `{}`}},
		{"empty vs null", req{"POST", "/p", ``}, req{"POST", "/p", `null`}},
		{"not JSON is hashed as sent", req{"POST", "/p", `name=api`}, req{"POST", "/p", `name=api `}},
		{"trailing garbage", req{"POST", "/p", `{"a":1}`}, req{"POST", "/p", `{"a":1} x`}},
		{"two values", req{"POST", "/p", `{"a":1}`}, req{"POST", "/p", `{"a":1}{"a":1}`}},
		{"extra closing brace", req{"POST", "/p", `{"a":1}`}, req{"POST", "/p", `{"a":1}}`}},
		{"extra closing bracket", req{"POST", "/p", `{"a":1}`}, req{"POST", "/p", `{"a":1}]`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fa := Fingerprint(c.a.method, c.a.path, []byte(c.a.body))
			fb := Fingerprint(c.b.method, c.b.path, []byte(c.b.body))
			if bytes.Equal(fa, fb) {
				t.Errorf("%+v and %+v have the same fingerprint", c.a, c.b)
			}
		})
	}
}

// TestFingerprintDoesNotModifyBody: the body is read, never rewritten.
func TestFingerprintDoesNotModifyBody(t *testing.T) {
	body := []byte(`{ "b": 2, "a": 1 }`)
	orig := bytes.Clone(body)
	Fingerprint("POST", "/p", body)
	if !bytes.Equal(body, orig) {
		t.Errorf("body changed to %s", body)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	afters := []string{
		"mon_01JD0000000000000000000000",
		"x",
		`quote " and backslash \ and slash /`,
		"ünïcödé ✓",
		strings.Repeat("z", 500),
	}
	for _, after := range afters {
		for _, limit := range []int{0, 1, 50, 100} {
			c := encodeCursor(after)
			if strings.ContainsAny(c, "+/=") {
				t.Errorf("cursor %q is not URL-safe unpadded base64", c)
			}
			got, gotLimit, err := PageRequest{Cursor: c, Limit: limit}.decode()
			if err != nil {
				t.Fatalf("decode(encode(%q)): %v", after, err)
			}
			wantLimit := limit
			if limit == 0 {
				wantLimit = DefaultPageLimit
			}
			if got != after || gotLimit != wantLimit {
				t.Errorf("decode(encode(%q), %d) = %q, %d", after, limit, got, gotLimit)
			}
		}
	}
}

func TestPageRequestLimits(t *testing.T) {
	cases := []struct {
		limit int
		want  int // 0: rejected
	}{
		{0, 50},
		{1, 1},
		{50, 50},
		{99, 99},
		{100, 100},
		{101, 0},
		{1000, 0},
		{-1, 0},
		{-50, 0},
	}
	for _, c := range cases {
		after, limit, err := PageRequest{Limit: c.limit}.decode()
		if c.want == 0 {
			requireInvalid(t, err, "query.limit")
			continue
		}
		if err != nil || after != "" || limit != c.want {
			t.Errorf("limit %d: got %q, %d, %v; want \"\", %d", c.limit, after, limit, err, c.want)
		}
	}
}

func TestPageRequestRejectsGarbageCursors(t *testing.T) {
	b64 := base64.RawURLEncoding.EncodeToString
	valid := encodeCursor("mon_1")
	flipped := []byte(valid)
	flipped[len(flipped)/2] ^= 0x01
	cases := []struct {
		name   string
		cursor string
	}{
		{"not base64", "!!!not-a-cursor!!!"},
		{"space", "eyJ2IjoxLCJhIjoibW9uXzEifQ "},
		{"standard base64 with padding", base64.StdEncoding.EncodeToString([]byte(`{"v":1,"a":"mon_1"}`))},
		{"base64 of text", b64([]byte("hello"))},
		{"base64 of a number", b64([]byte("1"))},
		{"base64 of null", b64([]byte("null"))},
		{"base64 of an array", b64([]byte(`["mon_1"]`))},
		{"other version", b64([]byte(`{"v":2,"a":"mon_1"}`))},
		{"no version", b64([]byte(`{"a":"mon_1"}`))},
		{"version as a string", b64([]byte(`{"v":"1","a":"mon_1"}`))},
		{"empty position", b64([]byte(`{"v":1,"a":""}`))},
		{"no position", b64([]byte(`{"v":1}`))},
		{"position not a string", b64([]byte(`{"v":1,"a":5}`))},
		{"truncated", valid[:len(valid)-3]},
		{"bit flipped", string(flipped)},
		{"a raw id", "mon_01JD0000000000000000000000"},
		{"position with NUL", b64([]byte(`{"v":1,"a":"mon_1\u0000"}`))},
		{"position of NUL only", b64([]byte(`{"v":1,"a":"\u0000"}`))},
		{"position with invalid UTF-8", b64([]byte("{\"v\":1,\"a\":\"mon_\xff\"}"))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			after, limit, err := PageRequest{Cursor: c.cursor}.decode()
			if err == nil {
				t.Fatalf("accepted %q as after=%q limit=%d", c.cursor, after, limit)
			}
			requireInvalid(t, err, "query.cursor")
		})
	}
	t.Run("limit is checked first", func(t *testing.T) {
		_, _, err := PageRequest{Cursor: "!!!", Limit: 101}.decode()
		requireInvalid(t, err, "query.limit")
	})
}

func requireInvalid(t *testing.T, err error, pointer string) {
	t.Helper()
	var e *errs.Error
	if !errors.As(err, &e) || e.Kind != errs.KindInvalid {
		t.Fatalf("error %v, want a KindInvalid *errs.Error", err)
	}
	if len(e.Fields) != 1 || e.Fields[0].Pointer != pointer {
		t.Errorf("fields %v, want one at %s", e.Fields, pointer)
	}
}

// grants is DESIGN §3 written out, independent of account.Role.Grants.
var grants = map[account.Role][]account.Scope{
	account.RoleOwner: account.Scopes,
	account.RoleAdmin: account.Scopes,
	account.RoleEditor: {
		account.ScopeMonitorsRead, account.ScopeMonitorsWrite,
		account.ScopeIncidentsRead, account.ScopeIncidentsWrite,
		account.ScopeMetricsRead, account.ScopeStatusPagesRead, account.ScopeNotificationsRead,
	},
	account.RoleViewer: {
		account.ScopeMonitorsRead, account.ScopeIncidentsRead, account.ScopeMetricsRead,
		account.ScopeStatusPagesRead, account.ScopeNotificationsRead,
	},
}

const allowed errs.Kind = -1 // Require returns nil

func kindOf(err error) errs.Kind {
	if err == nil {
		return allowed
	}
	var e *errs.Error
	if !errors.As(err, &e) {
		return errs.KindInternal
	}
	return e.Kind
}

func TestActorRequire(t *testing.T) {
	cases := []struct {
		name  string
		actor Actor
		scope account.Scope
		want  errs.Kind
	}{
		// API keys: the scope must be on the key and granted by the role.
		{"key with scope, role grants", Actor{KeyID: "key_1", Role: account.RoleEditor, Scopes: []account.Scope{account.ScopeMonitorsWrite}},
			account.ScopeMonitorsWrite, allowed},
		{"key lacking scope, role grants", Actor{KeyID: "key_1", Role: account.RoleOwner, Scopes: []account.Scope{account.ScopeMonitorsRead}},
			account.ScopeMonitorsWrite, errs.KindInsufficientScope},
		{"key without scopes", Actor{KeyID: "key_1", Role: account.RoleOwner},
			account.ScopeMonitorsRead, errs.KindInsufficientScope},
		{"key with scope, viewer role", Actor{KeyID: "key_1", Role: account.RoleViewer, Scopes: []account.Scope{account.ScopeMonitorsWrite}},
			account.ScopeMonitorsWrite, errs.KindForbidden},
		{"key with scope, editor and status pages", Actor{KeyID: "key_1", Role: account.RoleEditor, Scopes: account.Scopes},
			account.ScopeStatusPagesWrite, errs.KindForbidden},
		{"key with scope, creator demoted out of the workspace", Actor{KeyID: "key_1", Role: "", Scopes: account.Scopes},
			account.ScopeMonitorsRead, errs.KindForbidden},
		{"key lacking scope and role not granting", Actor{KeyID: "key_1", Role: account.RoleViewer, Scopes: []account.Scope{account.ScopeMonitorsRead}},
			account.ScopeMonitorsWrite, errs.KindInsufficientScope},
		{"read scope does not imply write", Actor{KeyID: "key_1", Role: account.RoleAdmin, Scopes: []account.Scope{account.ScopeIncidentsRead}},
			account.ScopeIncidentsWrite, errs.KindInsufficientScope},
		{"write scope does not imply read", Actor{KeyID: "key_1", Role: account.RoleAdmin, Scopes: []account.Scope{account.ScopeIncidentsWrite}},
			account.ScopeIncidentsRead, errs.KindInsufficientScope},

		// Web sessions (KeyID ""): the role alone decides; Scopes are ignored.
		{"session owner", Actor{Role: account.RoleOwner}, account.ScopeNotificationsWrite, allowed},
		{"session editor writes monitors", Actor{Role: account.RoleEditor}, account.ScopeMonitorsWrite, allowed},
		{"session editor cannot write channels", Actor{Role: account.RoleEditor}, account.ScopeNotificationsWrite, errs.KindForbidden},
		{"session viewer reads", Actor{Role: account.RoleViewer}, account.ScopeMetricsRead, allowed},
		{"session viewer cannot write", Actor{Role: account.RoleViewer}, account.ScopeMonitorsWrite, errs.KindForbidden},
		{"session scopes do not limit", Actor{Role: account.RoleAdmin, Scopes: []account.Scope{account.ScopeMetricsRead}}, account.ScopeMonitorsWrite, allowed},
		{"session scopes do not extend", Actor{Role: account.RoleViewer, Scopes: account.Scopes}, account.ScopeMonitorsWrite, errs.KindForbidden},
		{"session without a role", Actor{UserID: "usr_1"}, account.ScopeMonitorsRead, errs.KindForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.actor.Require(c.scope)
			if got := kindOf(err); got != c.want {
				t.Fatalf("Require(%s) = %v (kind %d), want kind %d", c.scope, err, got, c.want)
			}
			if err != nil && !strings.Contains(err.Error(), string(c.scope)) {
				t.Errorf("error %q does not name the scope", err)
			}
		})
	}
}

// TestActorRequireMatrix: every role × scope, for a web session, a key
// carrying every scope and a key carrying none of the one asked.
func TestActorRequireMatrix(t *testing.T) {
	for _, role := range account.Roles {
		for _, s := range account.Scopes {
			granted := slices.Contains(grants[role], s)
			others := slices.DeleteFunc(slices.Clone(account.Scopes), func(o account.Scope) bool { return o == s })
			cases := []struct {
				name  string
				actor Actor
				want  errs.Kind
			}{
				{"session", Actor{UserID: "usr_1", Role: role}, errs.KindForbidden},
				{"key with every scope", Actor{UserID: "usr_1", KeyID: "key_1", Role: role, Scopes: account.Scopes}, errs.KindForbidden},
				{"key with the other scopes", Actor{UserID: "usr_1", KeyID: "key_1", Role: role, Scopes: others}, errs.KindInsufficientScope},
			}
			if granted {
				cases[0].want, cases[1].want = allowed, allowed
			}
			for _, c := range cases {
				if got := kindOf(c.actor.Require(s)); got != c.want {
					t.Errorf("%s, role %s, scope %s: kind %d, want %d", c.name, role, s, got, c.want)
				}
			}
		}
	}
}
