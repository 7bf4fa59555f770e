package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// fieldsOf reads a 422's details as "where: message", where is a pointer
// or a parameter.
func fieldsOf(t *testing.T, r response) map[string]string {
	t.Helper()
	if r.status != http.StatusUnprocessableEntity || r.code(t) != "validation_error" {
		t.Fatalf("want 422 validation_error, got %d %s", r.status, r.body)
	}
	var env struct {
		Error struct {
			Details []struct{ Pointer, Parameter, Message string }
		}
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range env.Error.Details {
		where := d.Pointer + d.Parameter
		if _, dup := out[where]; dup {
			t.Errorf("%s is listed twice: %s", where, r.body)
		}
		out[where] = d.Message
	}
	return out
}

// pageNames lists a page's names and its nextCursor and total.
func pageNames(t *testing.T, r response) (got []string, next string, total int) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var page struct {
		Data []struct {
			Name, State, Type string
		}
		NextCursor *string
		Total      int
	}
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatal(err)
	}
	for _, d := range page.Data {
		got = append(got, d.Name)
	}
	if page.NextCursor != nil {
		next = *page.NextCursor
	}
	return got, next, page.Total
}

// TestMonitorFilters: state, type and q narrow the list, combine, and
// total counts what matches.
func TestMonitorFilters(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		create := func(body string) string {
			r := e.req("POST", "/api/v1/monitors", k, body)
			if r.status != http.StatusCreated {
				t.Fatalf("%d %s", r.status, r.body)
			}
			return r.json(t)["id"].(string)
		}
		create(`{"type":"http","name":"Shop API","config":{"url":"https://shop.example"}}`)
		paused := create(`{"type":"http","name":"Blog","config":{"url":"https://blog.example"}}`)
		create(`{"type":"tcp","name":"shop database","config":{"host":"db.example","port":5432}}`)
		create(`{"type":"tls","name":"ÜBER Cert","config":{"host":"a.example"}}`)
		if r := e.req("POST", "/api/v1/monitors/"+paused+"/pause", k, nil); r.status != http.StatusOK {
			t.Fatalf("pause: %d %s", r.status, r.body)
		}
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"", []string{"Shop API", "Blog", "shop database", "ÜBER Cert"}},
			{"state=PAUSED", []string{"Blog"}},
			{"state=PENDING", []string{"Shop API", "shop database", "ÜBER Cert"}},
			{"state=PAUSED&state=PENDING", []string{"Shop API", "Blog", "shop database", "ÜBER Cert"}},
			{"state=DOWN", nil},
			{"type=tcp", []string{"shop database"}},
			{"type=tcp&type=tls", []string{"shop database", "ÜBER Cert"}},
			{"q=SHOP", []string{"Shop API", "shop database"}},
			{"q=über", []string{"ÜBER Cert"}},  // beyond ASCII, on SQLite too
			{"q=" + url.QueryEscape("%"), nil}, // no wildcards
			{"q=shop&type=http", []string{"Shop API"}},
			{"q=shop&state=PAUSED", nil},
		} {
			got, _, total := pageNames(t, e.req("GET", "/api/v1/monitors?"+c.query, k, nil))
			if !slices.Equal(got, c.want) || total != len(c.want) {
				t.Errorf("?%s: %q total %d, want %q", c.query, got, total, c.want)
			}
		}
	})
}

// TestFilteredPages: a cursor from a filtered list continues that list;
// a cursor holds only a position, so with other filters the walk goes on
// from the same place under those filters.
func TestFilteredPages(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		var tcps, https []string
		for i := range 5 {
			name := "tcp" + string(rune('a'+i))
			if r := e.req("POST", "/api/v1/monitors", k, `{"type":"tcp","name":"`+name+`","config":{"host":"db.example","port":5432}}`); r.status != http.StatusCreated {
				t.Fatalf("%d %s", r.status, r.body)
			}
			tcps = append(tcps, name)
			name = "http" + string(rune('a'+i))
			if r := e.req("POST", "/api/v1/monitors", k, `{"type":"http","name":"`+name+`","config":{"url":"https://a.example"}}`); r.status != http.StatusCreated {
				t.Fatalf("%d %s", r.status, r.body)
			}
			https = append(https, name)
		}
		var walked []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("the walk does not end")
			}
			got, next, total := pageNames(t, e.req("GET", "/api/v1/monitors?type=tcp&limit=2&cursor="+cursor, k, nil))
			if len(got) > 2 || next != "" && len(got) != 2 {
				t.Fatalf("a page of %d: %q", len(got), got)
			}
			if total != 5 {
				t.Errorf("total %d, want the 5 that match", total)
			}
			walked = append(walked, got...)
			if next == "" {
				break
			}
			if cursor == "" {
				// After tcpa, tcpb: the http monitors created after tcpb.
				other, _, _ := pageNames(t, e.req("GET", "/api/v1/monitors?type=http&limit=10&cursor="+next, k, nil))
				if !slices.Equal(other, https[1:]) {
					t.Errorf("an old cursor with another filter: %q, want %q", other, https[1:])
				}
			}
			cursor = next
		}
		if !slices.Equal(walked, tcps) || cursor == "" {
			t.Errorf("walked %q, want %q", walked, tcps)
		}
	})
}

// TestHeartbeatStateFilter: heartbeats by state, with total.
func TestHeartbeatStateFilter(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		e.newHeartbeat(t, k, map[string]any{"name": "backup", "schedule": map[string]any{"periodSeconds": 3600}})
		h := e.newHeartbeat(t, k, map[string]any{"name": "queue", "schedule": map[string]any{"periodSeconds": 3600}})
		if r := e.req("POST", "/api/v1/heartbeats/"+h["id"].(string)+"/pause", k, nil); r.status != http.StatusOK {
			t.Fatalf("pause: %d %s", r.status, r.body)
		}
		for q, want := range map[string][]string{
			"state=PAUSED":               {"queue"},
			"state=PENDING":              {"backup"},
			"state=PENDING&state=PAUSED": {"backup", "queue"},
			"state=UP":                   nil,
		} {
			got, _, total := pageNames(t, e.req("GET", "/api/v1/heartbeats?"+q, k, nil))
			if !slices.Equal(got, want) || total != len(want) {
				t.Errorf("?%s: %q total %d, want %q", q, got, total, want)
			}
		}
	})
}

// TestBadFilters: a value no filter takes is 422 naming the parameter
// once and listing what it accepts; every bad parameter in one answer.
func TestBadFilters(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		d := fieldsOf(t, e.req("GET", "/api/v1/monitors?state=DOWN&state=down&state=nope&type=smtp&q="+strings.Repeat("x", 201), k, nil))
		if len(d) != 3 {
			t.Errorf("want query.state, query.type, query.q: %v", d)
		}
		for _, s := range []string{"PENDING", "UP", "DEGRADED", "DOWN", "UNKNOWN", "PAUSED", "MAINTENANCE"} {
			if !strings.Contains(d["query.state"], s) {
				t.Errorf("query.state: %q does not list %s", d["query.state"], s)
			}
		}
		if m := d["query.type"]; !strings.Contains(m, "http, tcp, dns, tls") {
			t.Errorf("query.type: %q", m)
		}
		if _, ok := d["query.q"]; !ok {
			t.Errorf("a long q: %v", d)
		}
		d = fieldsOf(t, e.req("GET", "/api/v1/heartbeats?state=LATE", k, nil))
		if !strings.Contains(d["query.state"], "MAINTENANCE") {
			t.Errorf("heartbeats: %v", d)
		}
		ch := e.webhookChannel(t, k, newReceiver(t), nil)
		d = fieldsOf(t, e.req("GET", "/api/v1/notification-channels/"+ch+"/deliveries?status=sent", k, nil))
		if !strings.Contains(d["query.status"], "succeeded") {
			t.Errorf("deliveries: %v", d)
		}
		if r := e.req("GET", "/api/v1/notification-channels/"+ch+"/deliveries?status=failed", k, nil); r.status != http.StatusOK {
			t.Errorf("deliveries: %d %s", r.status, r.body)
		}
	})
}

// TestOneAnswerListsEveryField: schema rules (huma) and domain rules (app)
// answer together, each field once, with messages that say what would
// be accepted.
func TestOneAnswerListsEveryField(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		// The bad status code comes before the URL: its decoding must not
		// hide the fields after it.
		d := fieldsOf(t, e.req("POST", "/api/v1/monitors", k,
			`{"type":"http","name":"n","intervalSeconds":1,"config":{"expectedStatusCodes":[200,"2xx"],"url":"ftp://x"}}`))
		if len(d) != 3 {
			t.Errorf("want 3 fields: %v", d)
		}
		if m := d["/intervalSeconds"]; !strings.Contains(m, "10") {
			t.Errorf("/intervalSeconds: %q", m)
		}
		if m := d["/config/expectedStatusCodes/1"]; !strings.Contains(m, `"200-299"`) {
			t.Errorf("2xx: %q", m)
		}
		if m := d["/config/url"]; !strings.Contains(m, "http") {
			t.Errorf("/config/url: %q", m)
		}
		if e.countMonitors() != 0 {
			t.Error("an invalid monitor was created")
		}

		// Times: an example, never a Go layout; in a query and in a body.
		for _, r := range []response{
			e.req("GET", "/api/v1/incidents?from=yesterday", k, nil),
			e.req("POST", "/api/v1/maintenance-windows", k, `{"name":"m","startsAt":"tomorrow","endsAt":"2026-11-25","monitorIds":[]}`),
		} {
			for where, m := range fieldsOf(t, r) {
				if where == "/monitorIds" {
					continue
				}
				if !strings.Contains(m, "2026-11-25T14:00:00Z") || strings.Contains(m, "2006") {
					t.Errorf("%s: %q", where, m)
				}
			}
		}

		d = fieldsOf(t, e.req("POST", "/api/v1/notification-channels", k,
			`{"kind":"webhook","name":"w","events":["incident.opened","incident.exploded"],"config":{"url":"https://hooks.example/x"}}`))
		if m := d["/events/1"]; !strings.Contains(m, "incident.opened") || !strings.Contains(m, "incident.resolved") {
			t.Errorf("/events/1: %q", m)
		}

		r := e.req("POST", "/api/v1/notification-channels", k, `{"kind":"email","name":"m","config":{"to":["ops@example.com"]}}`)
		if r.status != http.StatusForbidden || !strings.Contains(string(r.body), "--smtp-url") || !strings.Contains(string(r.body), "TOCSIN_SMTP_URL") {
			t.Errorf("e-mail without SMTP: %d %s", r.status, r.body)
		}
	})
}

// TestIncidentStatusFilters: open incidents split by acknowledgement;
// a status no filter takes lists those it does.
func TestIncidentStatusFilters(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		open := func(title string) string {
			r := e.req("POST", "/api/v1/incidents", k, map[string]any{"title": title, "message": "…"})
			if r.status != http.StatusCreated {
				t.Fatalf("%d %s", r.status, r.body)
			}
			return r.json(t)["id"].(string)
		}
		acked, done := open("acked"), open("done")
		open("waiting")
		for _, p := range []string{"/api/v1/incidents/" + acked + "/acknowledge", "/api/v1/incidents/" + done + "/acknowledge", "/api/v1/incidents/" + done + "/resolve"} {
			if r := e.req("POST", p, k, nil); r.status != http.StatusOK {
				t.Fatalf("%s: %d %s", p, r.status, r.body)
			}
		}
		for q, want := range map[string][]string{ // newest first
			"open":           {"waiting", "acked"},
			"acknowledged":   {"acked"},
			"unacknowledged": {"waiting"},
			"resolved":       {"done"},
		} {
			r := e.req("GET", "/api/v1/incidents?status="+q, k, nil)
			var page struct{ Data []struct{ Title string } }
			if r.status != http.StatusOK || json.Unmarshal(r.body, &page) != nil {
				t.Fatalf("%d %s", r.status, r.body)
			}
			var got []string
			for _, d := range page.Data {
				got = append(got, d.Title)
			}
			if !slices.Equal(got, want) {
				t.Errorf("?status=%s: %q, want %q", q, got, want)
			}
		}
		if m := fieldsOf(t, e.req("GET", "/api/v1/incidents?status=closed", k, nil))["query.status"]; !strings.Contains(m, "unacknowledged") {
			t.Errorf("query.status: %q", m)
		}
	})
}
