package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// TestHostileInput walks the served OpenAPI document and sends every
// operation a bounded set of hostile variants — NUL, invalid UTF-8,
// overlong strings, deep and mistyped JSON, impossible ids, garbage
// cursors, odd headers, missing or wrong media types — in its path, query,
// headers and every string field of its body schema. Every answer must be
// the spec's error envelope with a 4xx status (the rule's status where the
// edge has one), never a 5xx, and the server must still serve a control
// request after each operation. Each operation runs in a fresh workspace
// with real resources, under a raised rate limit, so no 429 or 402 stands
// in for the answer; its valid request, sent last, must succeed, so the
// variants were judged for their hostile part alone.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			start := time.Now()
			e := newEnvWith(t, eng, app.Config{RatePerMinute: 1_000_000})
			h := newHostile(t, e)
			ops := h.operations()
			if len(ops) < 40 {
				t.Fatalf("the document lists only %d operations", len(ops))
			}
			sent := 0
			for _, o := range ops {
				t.Run(o.id, func(t *testing.T) { sent += h.attack(t, o) })
			}
			t.Logf("%d operations, %d hostile requests in %v", len(ops), sent, time.Since(start).Round(time.Millisecond))
		})
	}
}

// hostile is the suite's state on one server.
type hostile struct {
	e          *env
	doc        map[string]any
	userID     string // owns every fresh workspace
	controlKey string
	controlMon string
}

func newHostile(t *testing.T, e *env) *hostile {
	t.Helper()
	r := e.send(t, "GET", "/api/v1/openapi.json", "", nil)
	if r.status != 200 {
		t.Fatalf("openapi.json: %d", r.status)
	}
	h := &hostile{e: e, doc: r.json(t)}
	u, err := e.app.CreateUser(context.Background(), app.UserRequest{Email: "hostile@h.test", Password: "correct horse battery", Workspace: "hostile-0", Role: account.RoleOwner})
	if err != nil {
		t.Fatal(err)
	}
	h.userID = u.User.ID
	h.controlKey = e.ownerKey()
	h.controlMon = e.monitorIn(e.wsA)
	return h
}

// operation is one operation of the served document.
type operation struct {
	id, method, path string
	params           []param
	body             map[string]any // the request body's schema; nil: none
	bodyRequired     bool
	raw              bool // the body is not JSON (a logo's image)
	ping             bool
}

type param struct {
	in, name string
	schema   map[string]any
}

func (h *hostile) operations() []operation {
	var ops []operation
	for path, item := range h.doc["paths"].(map[string]any) {
		for method, raw := range item.(map[string]any) {
			o, ok := raw.(map[string]any)
			if !ok || !slices.Contains([]string{"get", "post", "put", "patch", "delete"}, method) {
				continue
			}
			op := operation{id: o["operationId"].(string), method: strings.ToUpper(method), path: path,
				ping: strings.HasPrefix(path, "/ping/")}
			for _, p := range asList(o["parameters"]) {
				pm := p.(map[string]any)
				op.params = append(op.params, param{in: pm["in"].(string), name: pm["name"].(string), schema: h.resolve(pm["schema"])})
			}
			if rb, ok := o["requestBody"].(map[string]any); ok {
				op.bodyRequired, _ = rb["required"].(bool)
				for ct, mt := range rb["content"].(map[string]any) {
					op.body = h.resolve(mt.(map[string]any)["schema"])
					op.raw = ct != "application/json"
				}
			}
			ops = append(ops, op)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].id < ops[j].id })
	return ops
}

// resolve follows a $ref into components.
func (h *hostile) resolve(s any) map[string]any {
	m, _ := s.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		return h.resolve(h.doc["components"].(map[string]any)["schemas"].(map[string]any)[name])
	}
	return m
}

func asList(v any) []any { l, _ := v.([]any); return l }

// fixture is an operation's fresh workspace, its key and its resources,
// made when first needed.
type fixture struct {
	h     *hostile
	t     *testing.T
	ws    string
	key   string
	ids   map[string]string // prefix → a real resource's id
	token string            // a heartbeat's ping token
}

func (h *hostile) fixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	ws := account.Workspace{ID: ids.New(ids.Workspace, now), MaxMonitors: 1000, MinIntervalSeconds: 10, CreatedAt: now}
	ws.Name, ws.Slug = ws.ID, strings.ToLower(ws.ID)
	if err := h.e.db.CreateWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if err := h.e.db.PutMembership(ctx, account.Membership{WorkspaceID: ws.ID, UserID: h.userID, Role: account.RoleOwner, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	return &fixture{h: h, t: t, ws: ws.ID, key: h.e.key("hostile@h.test", ws.ID, false, account.Scopes...), ids: map[string]string{}}
}

// id returns a real resource's id for a prefix.
func (f *fixture) id(prefix string) string {
	f.t.Helper()
	if id, ok := f.ids[prefix]; ok {
		return id
	}
	create := map[string]struct {
		path string
		body any
	}{
		ids.Monitor:     {"/api/v1/monitors", monitorBaseline()},
		ids.Heartbeat:   {"/api/v1/heartbeats", map[string]any{"name": "h", "schedule": map[string]any{"periodSeconds": 3600}}},
		ids.Incident:    {"/api/v1/incidents", map[string]any{"title": "t", "message": "m"}},
		ids.Channel:     {"/api/v1/notification-channels", map[string]any{"name": "c", "kind": "webhook", "config": map[string]any{"url": "http://127.0.0.1:1/hook"}}},
		ids.Maintenance: {"/api/v1/maintenance-windows", nil},
		ids.Delivery:    {"", nil},
		ids.StatusPage:  {"/api/v1/status-pages", nil},
	}
	c, ok := create[prefix]
	if !ok {
		f.t.Fatalf("no resource known for prefix %s", prefix)
	}
	switch prefix {
	case ids.Maintenance:
		c.body = f.windowBaseline()
	case ids.Delivery:
		c.path = "/api/v1/notification-channels/" + f.id(ids.Channel) + "/test"
	case ids.StatusPage:
		c.body = f.pageBaseline()
	}
	r := f.h.e.send(f.t, "POST", c.path, f.key, c.body)
	if r.status != http.StatusCreated && r.status != http.StatusAccepted {
		f.t.Fatalf("create %s: %d %s", prefix, r.status, r.body)
	}
	m := r.json(f.t)
	f.ids[prefix] = m["id"].(string)
	if prefix == ids.Heartbeat {
		u := m["pingUrl"].(string)
		f.token = u[strings.LastIndex(u, "/")+1:]
	}
	return f.ids[prefix]
}

func monitorBaseline() map[string]any {
	return map[string]any{"type": "http", "name": "m", "config": map[string]any{"url": "http://127.0.0.1:1/"}}
}

func (f *fixture) windowBaseline() map[string]any {
	now := time.Now().UTC()
	return map[string]any{"name": "w", "startsAt": rfc3339(now.Add(-time.Minute)), "endsAt": rfc3339(now.Add(time.Hour)),
		"monitorIds": []any{f.id(ids.Monitor)}}
}

func (f *fixture) pageBaseline() map[string]any {
	return map[string]any{"slug": freshSlug(), "title": "p", "visibility": "password", "password": "a long password",
		"customDomain": freshSlug() + ".example.com", "footerLinks": []any{map[string]any{"label": "l", "url": "https://example.com/"}},
		"groups": []any{map[string]any{"name": "g", "components": []any{map[string]any{"monitorId": f.id(ids.Monitor), "name": "c", "description": "d"}}}}}
}

// baseline is the valid body of an operation; the suite fails when an
// operation with a body has none, so new operations are covered.
func (f *fixture) baseline(o operation) map[string]any {
	switch o.id {
	case "createMonitor", "testMonitor":
		return monitorBaseline()
	case "updateMonitor":
		return map[string]any{"name": "m2"}
	case "createHeartbeat":
		return map[string]any{"name": "h", "schedule": map[string]any{"periodSeconds": 3600}}
	case "updateHeartbeat":
		return map[string]any{"name": "h2"}
	case "createIncident":
		return map[string]any{"title": "t", "message": "m"}
	case "updateIncident":
		return map[string]any{"title": "t2"}
	case "resolveIncident":
		return map[string]any{"message": "done"}
	case "postIncidentUpdate":
		return map[string]any{"status": "identified", "message": "m"}
	case "createMaintenanceWindow":
		return f.windowBaseline()
	case "updateMaintenanceWindow":
		return map[string]any{"name": "w2"}
	case "createNotificationChannel":
		return map[string]any{"name": "c", "kind": "webhook", "config": map[string]any{"url": "http://127.0.0.1:1/hook"}}
	case "updateNotificationChannel":
		return map[string]any{"name": "c2"}
	case "createStatusPage":
		return f.pageBaseline()
	case "updateStatusPage":
		return map[string]any{"title": "p2", "description": "d2"}
	}
	f.t.Fatalf("%s: no valid body known; add one to baseline", o.id)
	return nil
}

// variant is one hostile request and what the answer must be.
type variant struct {
	name   string
	path   string            // escaped path and query
	header map[string]string // set; "" deletes
	body   []byte            // nil: none
	status int               // the exact status the rule gives; 0: any 4xx
	code   string            // its error code, when status is set
	where  string            // a detail's pointer or parameter the answer must name
	maybe  bool              // a 2xx is acceptable too (no rule refuses it)
	// ack: the answer must be a success. A ping is never refused for its
	// bytes (a refused success ping becomes a false "late" alert).
	ack bool
}

// attack sends an operation's variants, then its valid request and the
// control request, and returns how many requests it sent.
func (h *hostile) attack(t *testing.T, o operation) int {
	f := h.fixture(t)
	vs := f.variants(o)
	for _, v := range vs {
		r := f.send(o, v)
		f.judge(o, v, r)
	}
	// The valid request proves the variants were judged for their hostile
	// part; it goes last, since it may delete the resource.
	ok := f.send(o, f.valid(o))
	if o.ping {
		if ok.status >= 300 {
			t.Errorf("valid ping: %d %s", ok.status, ok.body)
		}
	} else if ok.status >= 300 && !(o.id == "redeliver" && ok.status == http.StatusConflict) {
		t.Errorf("valid request after the variants: %d %s", ok.status, ok.body)
	}
	if c := h.e.send(t, "GET", "/api/v1/monitors/"+h.controlMon, h.controlKey, nil); c.status != http.StatusOK {
		t.Errorf("control request after %s: %d %s", o.id, c.status, c.body)
	}
	return len(vs) + 2
}

// valid is the operation's request with real ids and a valid body.
func (f *fixture) valid(o operation) variant {
	v := variant{name: "valid", path: f.fill(o, "", ""), header: map[string]string{}}
	switch {
	case o.raw:
		v.body = pngLogo
		v.header["Content-Type"] = "image/png"
	case o.body != nil && !o.ping:
		v.body, _ = json.Marshal(f.baseline(o))
		v.header["Content-Type"] = "application/json"
	}
	return v
}

// fill writes the path with real ids, one parameter replaced by raw (an
// already escaped value).
func (f *fixture) fill(o operation, name, raw string) string {
	segs := strings.Split(o.path, "/")
	for i, s := range segs {
		p, ok := strings.CutPrefix(s, "{")
		if !ok {
			continue
		}
		p = strings.TrimSuffix(p, "}")
		switch {
		case p == name:
			segs[i] = raw
		case p == "token":
			f.id(ids.Heartbeat)
			segs[i] = f.token
		case p == "signal":
			segs[i] = "start"
		default:
			segs[i] = f.id(prefixOf(f.t, segs[i-1]))
		}
	}
	return strings.Join(segs, "/")
}

func prefixOf(t *testing.T, collection string) string {
	p, ok := map[string]string{"monitors": ids.Monitor, "heartbeats": ids.Heartbeat, "incidents": ids.Incident,
		"maintenance-windows": ids.Maintenance, "notification-channels": ids.Channel, "deliveries": ids.Delivery,
		"status-pages": ids.StatusPage}[collection]
	if !ok {
		t.Fatalf("no id prefix known for /%s/{id}", collection)
	}
	return p
}

// Hostile text, raw and as it appears in a URL.
var (
	badBytes = []struct{ name, raw, escaped string }{
		{"NUL", "a\x00b", "a%00b"},
		{"byte FF", "a\xffb", "a%ffb"},
		{"broken sequence", "\xc3\x28", "%c3%28"},
	}
	overlong = strings.Repeat("x", 70_000) // beyond every maxLength of the document
)

func (f *fixture) variants(o operation) []variant {
	valid := f.valid(o)
	with := func(v variant) variant {
		if v.path == "" {
			v.path = valid.path
		}
		h := map[string]string{}
		for k, x := range valid.header {
			h[k] = x
		}
		for k, x := range v.header {
			h[k] = x
		}
		v.header = h
		if v.body == nil {
			v.body = valid.body
		}
		return v
	}
	var vs []variant
	for _, p := range o.params {
		switch p.in {
		case "path":
			vs = append(vs, f.pathVariants(o, p, with)...)
		case "query":
			vs = append(vs, f.queryVariants(o, p, valid.path, with)...)
		case "header":
			vs = append(vs, headerVariants(p, with)...)
		}
	}
	if !o.ping {
		vs = append(vs, authVariants(with)...)
		// A parameter the operation does not know, with odd bytes.
		vs = append(vs, with(variant{name: "unknown query parameter with byte FF", path: valid.path + "?zz=%ff",
			status: 400, code: "bad_request", where: "query.zz"}))
	}
	if o.body != nil {
		vs = append(vs, f.bodyVariants(o, with)...)
	}
	return vs
}

func (f *fixture) pathVariants(o operation, p param, with func(variant) variant) []variant {
	var vs []variant
	status, code := 404, "not_found"
	if o.ping {
		status, code = 0, "" // the ping routes judge their own tokens
	}
	bad := []struct{ name, raw string }{
		{"wrong prefix", ids.New("zz", time.Now())},
		{"wrong length", "mon_123"},
		{"lower case", strings.ToLower(ids.New(ids.Monitor, time.Now()))},
		{"overlong", strings.Repeat("A", 300)},
	}
	if p.name == "id" {
		// A real resource's id, of another kind.
		segs := strings.Split(o.path, "/")
		other := ids.Monitor
		if prefixOf(f.t, segs[slices.Index(segs, "{id}")-1]) == ids.Monitor {
			other = ids.Incident
		}
		bad = append(bad, struct{ name, raw string }{"another resource's id", f.id(other)})
	}
	for _, b := range badBytes {
		bad = append(bad, struct{ name, raw string }{b.name, b.escaped})
	}
	for _, b := range bad {
		vs = append(vs, with(variant{name: "path " + p.name + ": " + b.name, path: f.fill(o, p.name, b.raw), status: status, code: code}))
	}
	return vs
}

func (f *fixture) queryVariants(o operation, p param, path string, with func(variant) variant) []variant {
	var vs []variant
	where := "query." + p.name
	status, code := 400, "bad_request"
	if o.ping {
		// A ping's ?key= and ?rid= are kept whatever their bytes (as a
		// digest when they are not clean text): the ping is acknowledged.
		status, code, where = 0, "", ""
	}
	for _, b := range badBytes {
		vs = append(vs, with(variant{name: "query " + p.name + ": " + b.name, path: path + "?" + p.name + "=" + b.escaped,
			status: status, code: code, where: where, maybe: o.ping, ack: o.ping}))
	}
	vs = append(vs, with(variant{name: "query " + p.name + ": bad escape", path: path + "?" + p.name + "=%zz",
		status: status, code: code, maybe: o.ping}))
	if !o.ping {
		vs = append(vs, with(variant{name: "query " + p.name + ": overlong", path: path + "?" + p.name + "=" + overlong[:5000]}))
	}
	if p.name == "cursor" {
		b64 := base64.RawURLEncoding.EncodeToString
		for _, c := range []struct{ name, raw string }{
			{"NUL", b64([]byte(`{"v":1,"a":"\u0000"}`))},
			{"invalid UTF-8", b64([]byte("{\"v\":1,\"a\":\"mon_\xff\"}"))},
			{"not JSON", b64([]byte("\xff\x00garbage"))},
			{"not base64", "!!!"},
		} {
			vs = append(vs, with(variant{name: "cursor decoding to " + c.name, path: path + "?cursor=" + url.QueryEscape(c.raw),
				status: 422, code: "validation_error", where: "query.cursor"}))
		}
	}
	return vs
}

func headerVariants(p param, with func(variant) variant) []variant {
	var vs []variant
	where := "header." + p.name
	for _, b := range badBytes[1:] { // a NUL cannot be sent in a header
		vs = append(vs, with(variant{name: "header " + p.name + ": " + b.name, header: map[string]string{p.name: b.raw},
			status: 400, code: "bad_request", where: where}))
	}
	vs = append(vs, with(variant{name: "header " + p.name + ": overlong", header: map[string]string{p.name: overlong[:4000]}}))
	return vs
}

// authVariants: odd credentials, and odd headers beside a well-formed key
// that exists nowhere, are refused before anything else looks at them.
func authVariants(with func(variant) variant) []variant {
	unknown := "Bearer " + app.KeyPrefix + strings.Repeat("0", 43)
	return []variant{
		with(variant{name: "Authorization with byte FF", header: map[string]string{"Authorization": "Bearer " + app.KeyPrefix + "\xff" + strings.Repeat("0", 43)},
			status: 401, code: "unauthorized"}),
		with(variant{name: "Authorization of byte FF only", header: map[string]string{"Authorization": "\xff"}, status: 401, code: "unauthorized"}),
		with(variant{name: "Authorization overlong", header: map[string]string{"Authorization": "Bearer " + overlong[:4000]}, status: 401, code: "unauthorized"}),
		with(variant{name: "no Authorization", header: map[string]string{"Authorization": ""}, status: 401, code: "unauthorized"}),
		with(variant{name: "unknown key", header: map[string]string{"Authorization": unknown}, status: 401, code: "unauthorized"}),
		with(variant{name: "unknown key, X-Workspace-Id of byte FF", header: map[string]string{"Authorization": unknown, "X-Workspace-Id": "\xff"},
			status: 400, code: "bad_request", where: "header.X-Workspace-Id"}),
		with(variant{name: "Idempotency-Key with byte FF", header: map[string]string{"Idempotency-Key": "k\xff"},
			status: 400, code: "bad_request", where: "header.Idempotency-Key"}),
	}
}

func (f *fixture) bodyVariants(o operation, with func(variant) variant) []variant {
	if o.ping {
		// A ping's body is cleaned and kept (cut to 10 KiB), never refused
		// for its bytes.
		var vs []variant
		for _, b := range badBytes {
			vs = append(vs, with(variant{name: "ping body: " + b.name, body: []byte("ok " + b.raw), maybe: true, ack: true}))
		}
		return append(vs, with(variant{name: "ping body: overlong", body: []byte(overlong), maybe: true, ack: true}))
	}
	if o.raw {
		return rawBodyVariants(with)
	}
	base := f.baseline(o)
	valid, _ := json.Marshal(base)
	ct := func(v string) map[string]string { return map[string]string{"Content-Type": v} }
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	vs := []variant{
		with(variant{name: "no Content-Type", header: ct(""), status: 415, code: "unsupported_media_type"}),
		with(variant{name: "Content-Type text/plain", header: ct("text/plain"), status: 415, code: "unsupported_media_type"}),
		with(variant{name: "Content-Type form", header: ct("application/x-www-form-urlencoded"), status: 415, code: "unsupported_media_type"}),
		with(variant{name: "Content-Type JSON in Latin-1", header: ct("application/json; charset=iso-8859-1"), status: 415, code: "unsupported_media_type"}),
		with(variant{name: "Content-Type with byte FF", header: ct("application/json\xff"), status: 415, code: "unsupported_media_type"}),
		with(variant{name: "raw byte FF in a string", body: bytes.Replace(valid, []byte(`"`), []byte("\"\xff"), 4), status: 400, code: "bad_request"}),
		with(variant{name: "raw NUL", body: append([]byte{0}, valid...), status: 400, code: "bad_request"}),
		with(variant{name: "too deep", body: []byte(deep(10_001)), status: 400, code: "bad_request"}),
		with(variant{name: "truncated", body: valid[:len(valid)/2], status: 400, code: "bad_request"}),
		with(variant{name: "a deep array for an object", body: []byte(deep(5_000)), status: 422, code: "validation_error"}),
		with(variant{name: "a string for an object", body: []byte(`"x"`), status: 422, code: "validation_error"}),
		with(variant{name: "a number for an object", body: []byte(`1`), status: 422, code: "validation_error"}),
		with(variant{name: "NUL in an unknown key", body: []byte(`{"x\u0000":1}`), status: 422, code: "validation_error", where: "/x\x00"}),
	}
	for _, fld := range stringFields(f.h, o.body, nil) {
		ptr := pointerOf(fld.path)
		put := func(val any) []byte {
			b, err := json.Marshal(setAt(copyJSON(base), fld.path, val))
			if err != nil {
				f.t.Fatal(err)
			}
			return b
		}
		vs = append(vs,
			with(variant{name: ptr + ": NUL", body: put("a\x00b"), status: 422, code: "validation_error", where: ptr}),
			with(variant{name: ptr + ": only NUL", body: put("\x00"), status: 422, code: "validation_error", where: ptr}),
			with(variant{name: ptr + ": a number", body: put(7), status: 422, code: "validation_error"}),
			with(variant{name: ptr + ": an object", body: put(map[string]any{"a": "\x00"}), status: 422, code: "validation_error"}),
			with(variant{name: ptr + ": deep", body: bytes.Replace(put("DEEP"), []byte(`"DEEP"`), []byte(deep(2_000)), 1), status: 422, code: "validation_error"}),
		)
		if fld.maxLength > 0 {
			vs = append(vs, with(variant{name: ptr + ": overlong", body: put(overlong), status: 422, code: "validation_error", where: ptr}))
		} else {
			// No bound in the schema: refused or kept, never a 5xx.
			vs = append(vs, with(variant{name: ptr + ": overlong, unbounded", body: put(overlong), maybe: true}))
		}
	}
	return vs
}

// rawBodyVariants: an image body is told by its bytes, whatever it
// claims to be, and bounded.
func rawBodyVariants(with func(variant) variant) []variant {
	ct := func(v string) map[string]string { return map[string]string{"Content-Type": v} }
	vs := []variant{
		with(variant{name: "SVG", body: []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), header: ct("image/svg+xml"),
			status: 415, code: "unsupported_media_type"}),
		with(variant{name: "JSON", body: []byte(`{"a":1}`), header: ct("application/json"), status: 415, code: "unsupported_media_type"}),
		with(variant{name: "PNG header only, cut", body: pngLogo[:4], status: 415, code: "unsupported_media_type"}),
		with(variant{name: "over 128 KiB", body: append(slices.Clone(pngLogo), make([]byte, app.MaxStatusPageLogo)...), status: 413, code: "payload_too_large"}),
		with(variant{name: "no Content-Type, a PNG", header: ct(""), maybe: true}),
	}
	for _, b := range badBytes {
		vs = append(vs, with(variant{name: "bytes: " + b.name, body: []byte(b.raw), status: 415, code: "unsupported_media_type"}))
	}
	return vs
}

// field is a string somewhere in a body schema.
type field struct {
	path      []string // keys; "0" indexes an array
	maxLength int
}

// stringFields walks a schema, through nested objects, arrays, maps and
// the string branch of a oneOf, and lists every place a string goes. A
// free-form object (any values) gets a string under the key "hostile".
func stringFields(h *hostile, s map[string]any, at []string) []field {
	if len(at) > 8 {
		return nil
	}
	types := map[string]bool{}
	switch t := s["type"].(type) {
	case string:
		types[t] = true
	case []any:
		for _, x := range t {
			types[x.(string)] = true
		}
	}
	var out []field
	for _, alt := range asList(s["oneOf"]) {
		out = append(out, stringFields(h, h.resolve(alt), at)...)
	}
	if types["string"] {
		n, _ := s["maxLength"].(float64)
		out = append(out, field{path: slices.Clone(at), maxLength: int(n)})
	}
	if types["array"] {
		out = append(out, stringFields(h, h.resolve(s["items"]), append(slices.Clone(at), "0"))...)
	}
	if types["object"] {
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, stringFields(h, h.resolve(props[k]), append(slices.Clone(at), k))...)
		}
		switch ap := s["additionalProperties"].(type) {
		case map[string]any:
			sub := h.resolve(ap)
			if len(sub) == 0 {
				out = append(out, field{path: append(slices.Clone(at), "hostile")})
			} else {
				out = append(out, stringFields(h, sub, append(slices.Clone(at), "X-Hostile"))...)
			}
		}
	}
	return out
}

func pointerOf(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func copyJSON(v map[string]any) map[string]any {
	b, _ := json.Marshal(v)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// setAt puts val at path in doc, making the objects and arrays on the way.
func setAt(doc map[string]any, path []string, val any) map[string]any {
	var cur any = doc
	for i, k := range path {
		last := i == len(path)-1
		next := func() any {
			if path[i+1] == "0" {
				return []any{nil}
			}
			return map[string]any{}
		}
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[k] = val
				return doc
			}
			if _, ok := c[k].(map[string]any); !ok || path[i+1] == "0" {
				if _, isList := c[k].([]any); !isList {
					c[k] = next()
				}
			}
			cur = c[k]
		case []any:
			if last {
				c[0] = val
				return doc
			}
			if _, ok := c[0].(map[string]any); !ok {
				c[0] = next()
			}
			cur = c[0]
		}
	}
	return doc
}

// send sends a variant as it is, with the operation's key unless the
// variant sets Authorization, and checks the answer against the document.
func (f *fixture) send(o operation, v variant) response {
	t := f.t
	t.Helper()
	var rd io.Reader
	if v.body != nil {
		rd = bytes.NewReader(v.body)
	}
	req, err := http.NewRequest(o.method, f.h.e.srv.URL+v.path, rd)
	if err != nil {
		t.Fatalf("%s: %v", v.name, err)
	}
	if !o.ping {
		req.Header["Authorization"] = []string{"Bearer " + f.key}
	}
	for k, x := range v.header {
		if x == "" {
			req.Header.Del(k)
			continue
		}
		req.Header[http.CanonicalHeaderKey(k)] = []string{x}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", v.name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	f.h.e.validate(t, req, v.body, resp, b)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// judge checks one answer.
func (f *fixture) judge(o operation, v variant, r response) {
	t := f.t
	t.Helper()
	short := func() string {
		if len(r.body) > 300 {
			return string(r.body[:300]) + "…"
		}
		return strings.TrimSpace(string(r.body))
	}
	switch {
	case v.ack && r.status >= 300:
		t.Errorf("%s: %d, want the ping acknowledged: %s", v.name, r.status, short())
		return
	case r.status >= 500:
		t.Errorf("%s: %d %s", v.name, r.status, short())
		return
	case r.status < 400 && !v.maybe:
		t.Errorf("%s: %d, want a 4xx: %s", v.name, r.status, short())
		return
	case r.status < 400:
		return
	}
	if o.ping {
		return // the ping routes answer in plain text or JSON; pings.go owns them
	}
	code := r.code(t) // the envelope with a message and the requestId
	if v.status != 0 && (r.status != v.status || code != v.code) {
		t.Errorf("%s: %d %s, want %d %s", v.name, r.status, short(), v.status, v.code)
		return
	}
	if v.where != "" && !names(r, v.where) {
		t.Errorf("%s: the answer does not name %q: %s", v.name, v.where, short())
	}
}

// names reports whether an error's details name a pointer or parameter.
func names(r response, where string) bool {
	var env struct {
		Error struct {
			Details []struct{ Pointer, Parameter string }
		}
	}
	if json.Unmarshal(r.body, &env) != nil {
		return false
	}
	for _, d := range env.Error.Details {
		if d.Pointer == where || d.Parameter == where {
			return true
		}
	}
	return false
}
