package httpapi_test

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/netguard"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// Spellings of hosts, as resolvers and dialers read them. IPv6 literals are
// written bare; a URL field brackets them.
var (
	privateTargets = []string{
		"127.0.0.1", "2130706433", "0x7f000001", "0X7F000001", "017700000001", "127.1", "127.0.1", "0177.0.0.1",
		"0x7f.1", "0177.1", "0x7f.0x0.0.01", "127.000.000.001", "0000000177.0.0.1",
		"2852039166", "0xa9fea9fe", "169.254.43518", "0251.0376.0251.0376", "167772161", "10.1", "192.168.1.1", "100.64.0.1",
		"0", "0x", "0.0", "0.0.0.0",
		"１２７．０．０．１", "127。0。0。1", "127｡0｡0｡1", "１２７．１", "２１３０７０６４３３", "０ｘ７ｆ０００００１",
		"１６９．２５４．１６９．２５４",
		"127.0.0.1.", "2130706433.", "localhost", "LOCALHOST.", "db.localhost", "Api.LocalHost.", "ｌｏｃａｌｈｏｓｔ",
		"::1", "::", "::ffff:127.0.0.1", "::ffff:a9fe:a9fe", "::127.0.0.1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::",
		"fe80::1%eth0", "fd00::1",
	}
	// privateURLHosts are spellings only a URL carries.
	privateURLHosts = []string{"%EF%BC%91%EF%BC%92%EF%BC%97.0.0.1", "[::ffff:7f00:1]"}
	publicTargets   = []string{"134744072", "0x8080808", "8.8.2056", "010.010.010.010", "0127.0.0.1", "ｅｘａｍｐｌｅ．ｃｏｍ",
		"example.com", "2606:4700:4700::1111"}
)

// urlHost writes a host as a URL's: IPv6 in brackets, its zone escaped.
func urlHost(h string) string {
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		return "[" + strings.ReplaceAll(h, "%", "%25") + "]"
	}
	return h
}

// targetField is a field that names where the server connects: how a
// host is written in it, and the bodies that create and change it.
type targetField struct {
	name, coll, ptr string
	inURL           bool
	value           func(host string) string
	create, patch   func(v string) any
	// base is the value the field is created with before the updates
	// (default: its value for example.com).
	base string
	// shapeRefuses says the field's own rules refuse a host whatever the
	// policy (a URL with credentials, an IPv6 zone in host).
	shapeRefuses func(host string) bool
}

func withZone(h string) bool { return strings.Contains(h, "%") }

func always(string) bool { return true }

func httpURL(h string) string { return "http://" + urlHost(h) + "/health" }

func hookURL(h string) string { return "https://" + urlHost(h) + "/services/T1/B1/x" }

func chatChannel(kind string) targetField {
	return targetField{name: kind + " secrets.hookUrl", coll: "/api/v1/notification-channels", ptr: "/secrets/hookUrl", inURL: true,
		value: hookURL,
		create: func(v string) any {
			return map[string]any{"name": "n", "kind": kind, "secrets": map[string]any{"hookUrl": v}}
		},
		patch: func(v string) any { return map[string]any{"secrets": map[string]any{"hookUrl": v}} }}
}

var targetFields = []targetField{
	{name: "http config.url", coll: "/api/v1/monitors", ptr: "/config/url", inURL: true,
		value: func(h string) string { return "http://" + urlHost(h) + ":8080/health" },
		create: func(v string) any {
			return map[string]any{"type": "http", "name": "n", "config": map[string]any{"url": v}}
		},
		patch: func(v string) any { return map[string]any{"config": map[string]any{"url": v}} }},
	{name: "http config.url without port", coll: "/api/v1/monitors", ptr: "/config/url", inURL: true, value: httpURL,
		create: func(v string) any {
			return map[string]any{"type": "http", "name": "n", "config": map[string]any{"url": v}}
		},
		patch: func(v string) any { return map[string]any{"config": map[string]any{"url": v}} }},
	{name: "http config.url with userinfo", coll: "/api/v1/monitors", ptr: "/config/url", inURL: true,
		value: func(h string) string { return "http://probe:pw@" + urlHost(h) + ":8080/health" },
		base:  "https://example.com/", shapeRefuses: always,
		create: func(v string) any {
			return map[string]any{"type": "http", "name": "n", "config": map[string]any{"url": v}}
		},
		patch: func(v string) any { return map[string]any{"config": map[string]any{"url": v}} }},
	{name: "tcp config.host", coll: "/api/v1/monitors", ptr: "/config/host", value: func(h string) string { return h },
		shapeRefuses: withZone,
		create: func(v string) any {
			return map[string]any{"type": "tcp", "name": "n", "config": map[string]any{"host": v, "port": 5432}}
		},
		patch: func(v string) any { return map[string]any{"config": map[string]any{"host": v}} }},
	{name: "tls config.host", coll: "/api/v1/monitors", ptr: "/config/host", value: func(h string) string { return h },
		shapeRefuses: withZone,
		create: func(v string) any {
			return map[string]any{"type": "tls", "name": "n", "config": map[string]any{"host": v}}
		},
		patch: func(v string) any { return map[string]any{"config": map[string]any{"host": v}} }},
	{name: "dns config.resolver", coll: "/api/v1/monitors", ptr: "/config/resolver",
		value: func(h string) string { return net.JoinHostPort(h, "53") },
		create: func(v string) any {
			return map[string]any{"type": "dns", "name": "n", "config": map[string]any{"recordName": "a.example", "resolver": v}}
		},
		patch: func(v string) any { return map[string]any{"config": map[string]any{"resolver": v}} }},
	{name: "webhook config.url", coll: "/api/v1/notification-channels", ptr: "/config/url", inURL: true, value: httpURL,
		create: func(v string) any {
			return map[string]any{"name": "n", "kind": "webhook", "config": map[string]any{"url": v}}
		},
		patch: func(v string) any { return map[string]any{"config": map[string]any{"url": v}} }},
	{name: "ntfy config.url", coll: "/api/v1/notification-channels", ptr: "/config/url", inURL: true,
		value: func(h string) string { return "https://" + urlHost(h) + ":8443" },
		create: func(v string) any {
			return map[string]any{"name": "n", "kind": "ntfy", "config": map[string]any{"url": v, "topic": "alerts"}}
		},
		patch: func(v string) any { return map[string]any{"config": map[string]any{"url": v, "topic": "alerts"}} }},
	chatChannel("slack"), chatChannel("discord"), chatChannel("msteams"),
}

// refusal reads a 422's details at ptr: whether the field is named, and
// whether the outbound policy is what refused it.
func refusal(t *testing.T, r response, ptr string) (named, byPolicy bool) {
	t.Helper()
	var body struct {
		Error struct {
			Details []struct{ Pointer, Message string }
		}
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	for _, d := range body.Error.Details {
		if d.Pointer == ptr {
			named = true
			byPolicy = byPolicy || strings.Contains(d.Message, "outbound policy")
		}
	}
	return named, byPolicy
}

// TestTargetsInEveryForm: with private targets blocked, every spelling of a
// private or special-purpose target in every field that names one is a 422
// validation_error at that field, on create and on update, and the value is
// not echoed; public targets written numerically are accepted. The same
// bodies on a server with the default policy are accepted as before.
func TestTargetsInEveryForm(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			blocked := newEnvWith(t, eng, app.Config{Outbound: netguard.Policy{BlockPrivate: true}, RatePerMinute: 1_000_000})
			open := newEnvWith(t, eng, app.Config{RatePerMinute: 1_000_000})
			for _, f := range targetFields {
				t.Run(f.name, func(t *testing.T) { checkTargetField(t, blocked, open, f) })
			}
		})
	}
}

func checkTargetField(t *testing.T, blocked, open *env, f targetField) {
	kb, ko := blocked.ownerKey(), open.ownerKey()
	base := f.base
	if base == "" {
		base = f.value("example.com")
	}
	id := created(t, blocked, kb, f.coll, f.create(base))
	hosts := privateTargets
	if f.inURL {
		hosts = append(append([]string{}, privateTargets...), privateURLHosts...)
	}
	for _, h := range hosts {
		v := f.value(h)
		// With the default policy nothing changes: what the field's own
		// rules accept is created. What they refuse need not be named by
		// the policy.
		shapeOK := f.shapeRefuses == nil || !f.shapeRefuses(h)
		if got := accepted(t, open, ko, f.coll, f.create(v)); got != shapeOK {
			t.Errorf("%q with the default policy: created %v, want %v", v, got, shapeOK)
		}
		for _, r := range []response{
			blocked.req("POST", f.coll, kb, f.create(v)),
			blocked.req("PATCH", f.coll+"/"+id, kb, f.patch(v)),
		} {
			if r.status != 422 || r.code(t) != "validation_error" {
				t.Errorf("%q: %d %s, want 422 validation_error", v, r.status, r.body)
				continue
			}
			named, byPolicy := refusal(t, r, f.ptr)
			if !named || (shapeOK && !byPolicy) {
				t.Errorf("%q: %s, want the outbound policy's refusal at %s", v, r.body, f.ptr)
			}
			if echoes(r, v) || echoes(r, h) {
				t.Errorf("%q: the refusal echoes the value: %s", v, r.body)
			}
		}
	}
	for _, h := range publicTargets {
		v := f.value(h)
		if f.shapeRefuses != nil && f.shapeRefuses(h) {
			continue
		}
		if !accepted(t, blocked, kb, f.coll, f.create(v)) {
			t.Errorf("public %q refused", v)
		}
		if r := blocked.req("PATCH", f.coll+"/"+id, kb, f.patch(v)); r.status != 200 {
			t.Errorf("public %q refused on update: %d %s", v, r.status, r.body)
		}
	}
}

// echoes reports whether a response repeats a value (one long enough not
// to occur by chance).
func echoes(r response, v string) bool { return len(v) > 4 && strings.Contains(string(r.body), v) }

// created makes a resource and returns its id.
func created(t *testing.T, e *env, key, coll string, body any) string {
	t.Helper()
	r := e.req("POST", coll, key, body)
	if r.status != 201 {
		t.Fatalf("POST %s: %d %s", coll, r.status, r.body)
	}
	id, _ := r.json(t)["id"].(string)
	return id
}

// accepted reports whether e creates the resource, and deletes it (so a
// long table stays under the workspace's quotas).
func accepted(t *testing.T, e *env, key, coll string, body any) bool {
	t.Helper()
	r := e.req("POST", coll, key, body)
	if r.status != 201 {
		return false
	}
	id, _ := r.json(t)["id"].(string)
	if d := e.req("DELETE", coll+"/"+id, key, nil); d.status != 204 {
		t.Fatalf("DELETE %s/%s: %d %s", coll, id, d.status, d.body)
	}
	return true
}
