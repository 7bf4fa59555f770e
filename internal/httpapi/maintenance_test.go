package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stamp"
)

// rfc3339 is how the API writes a time (package stamp).
func rfc3339(t time.Time) string { return stamp.Format(t) }

// pointers returns the JSON pointers a 422 names, failing unless the body
// is a validation_error.
func pointers(t *testing.T, r response) []string {
	t.Helper()
	if r.status != 422 || r.code(t) != "validation_error" {
		t.Fatalf("want 422 validation_error, got %d %s", r.status, r.body)
	}
	var env struct {
		Error struct {
			Details []struct{ Pointer, Message string }
		}
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range env.Error.Details {
		if d.Message == "" {
			t.Errorf("detail without a message: %s", r.body)
		}
		out = append(out, d.Pointer)
	}
	return out
}

func TestMaintenanceWindowLifecycle(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		m1, m2 := e.monitorIn(e.wsA), e.monitorIn(e.wsA)
		now := time.Now().UTC()
		start, end := now.Add(-time.Minute).Truncate(time.Second), now.Add(2*time.Hour).Truncate(time.Second)
		r := e.req("POST", "/api/v1/maintenance-windows", k, map[string]any{
			"name": "DB upgrade", "description": "Postgres 17", "startsAt": rfc3339(start), "endsAt": rfc3339(end),
			"monitorIds": []string{m2, m1}})
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		w := r.json(t)
		id := w["id"].(string)
		if !strings.HasPrefix(id, "mw_") || r.header.Get("Location") != "/api/v1/maintenance-windows/"+id {
			t.Errorf("id %s, Location %q", id, r.header.Get("Location"))
		}
		if w["active"] != true || w["currentEndsAt"] != rfc3339(end) || w["nextStartAt"] != nil ||
			w["startsAt"] != rfc3339(start) || w["endsAt"] != rfc3339(end) || w["recurrence"] != nil ||
			w["description"] != "Postgres 17" {
			t.Errorf("created one-off window: %s", r.body)
		}
		ms := w["monitorIds"].([]any)
		if len(ms) != 2 || !slices.Contains(ms, any(m1)) || !slices.Contains(ms, any(m2)) || len(w["heartbeatIds"].([]any)) != 0 {
			t.Errorf("subjects: %s", r.body)
		}
		if g := e.req("GET", "/api/v1/maintenance-windows/"+id, k, nil); g.status != 200 || string(g.body) != string(r.body) {
			t.Errorf("get differs from create:\n%s\n%s", g.body, r.body)
		}

		// Recurring: nightly at 02:00 Berlin for 90 minutes.
		rec := e.req("POST", "/api/v1/maintenance-windows", k, map[string]any{
			"name": "nightly", "monitorIds": []string{m1},
			"recurrence": map[string]any{"cron": "0 2 * * *", "timezone": "Europe/Berlin", "durationMinutes": 90}})
		if rec.status != http.StatusCreated {
			t.Fatalf("create recurring: %d %s", rec.status, rec.body)
		}
		rw := rec.json(t)
		recID := rw["id"].(string)
		next, err := time.Parse(time.RFC3339, rw["nextStartAt"].(string))
		if err != nil {
			t.Fatalf("nextStartAt: %s", rec.body)
		}
		berlin, _ := time.LoadLocation("Europe/Berlin")
		if l := next.In(berlin); l.Hour() != 2 || l.Minute() != 0 || next.Before(now) || next.After(now.Add(25*time.Hour)) {
			t.Errorf("next start %v (%v in Berlin)", next, l)
		}
		rr := rw["recurrence"].(map[string]any)
		if rr["timezone"] != "Europe/Berlin" || rr["durationMinutes"] != float64(90) || rw["endsAt"] != nil || rw["startsAt"] == nil {
			t.Errorf("recurring window: %s", rec.body)
		}
		// The time zone defaults to UTC.
		utc := e.req("POST", "/api/v1/maintenance-windows", k, map[string]any{
			"name": "utc", "monitorIds": []string{m1}, "recurrence": map[string]any{"rrule": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=3;BYMINUTE=0", "durationMinutes": 30}})
		if utc.status != 201 || utc.json(t)["recurrence"].(map[string]any)["timezone"] != "UTC" {
			t.Errorf("default time zone: %d %s", utc.status, utc.body)
		}
		utcID := utc.json(t)["id"].(string)

		// List, one per page.
		var seen []string
		cursor := ""
		for range 5 {
			path := "/api/v1/maintenance-windows?limit=1"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			l := e.req("GET", path, k, nil).json(t)
			for _, x := range l["data"].([]any) {
				seen = append(seen, x.(map[string]any)["id"].(string))
			}
			if l["total"] != float64(3) {
				t.Errorf("total %v", l["total"])
			}
			if l["nextCursor"] == nil {
				break
			}
			cursor = l["nextCursor"].(string)
		}
		if !slices.Equal(seen, []string{id, recID, utcID}) {
			t.Errorf("listed %v", seen)
		}

		// PATCH merges: rename, switch the one-off window to recurring, change subjects.
		p := e.req("PATCH", "/api/v1/maintenance-windows/"+id, k, map[string]any{
			"name": "DB upgrade (weekly)", "endsAt": nil, "description": nil,
			"recurrence": map[string]any{"rrule": "FREQ=WEEKLY;BYDAY=SA;BYHOUR=2;BYMINUTE=0", "timezone": "America/New_York", "durationMinutes": 60},
			"monitorIds": []string{m2}})
		pw := p.json(t)
		if p.status != 200 || pw["name"] != "DB upgrade (weekly)" || pw["endsAt"] != nil || pw["description"] != "" ||
			pw["recurrence"].(map[string]any)["rrule"] != "FREQ=WEEKLY;BYDAY=SA;BYHOUR=2;BYMINUTE=0" ||
			pw["startsAt"] != rfc3339(start) || len(pw["monitorIds"].([]any)) != 1 || pw["updatedAt"] == w["updatedAt"] {
			t.Errorf("patch to recurring: %d %s", p.status, p.body)
		}
		// A nested merge: swap the rule, keep the rest.
		p = e.req("PATCH", "/api/v1/maintenance-windows/"+id, k, `{"recurrence":{"rrule":null,"cron":"30 1 * * 0"}}`)
		pr := p.json(t)["recurrence"].(map[string]any)
		if p.status != 200 || pr["cron"] != "30 1 * * 0" || pr["rrule"] != nil || pr["timezone"] != "America/New_York" || pr["durationMinutes"] != float64(60) {
			t.Errorf("patch the rule: %d %s", p.status, p.body)
		}
		// And back to one-off.
		p = e.req("PATCH", "/api/v1/maintenance-windows/"+id, k, map[string]any{"recurrence": nil, "endsAt": rfc3339(end)})
		if pw := p.json(t); p.status != 200 || pw["recurrence"] != nil || pw["endsAt"] != rfc3339(end) || pw["active"] != true {
			t.Errorf("patch to one-off: %d %s", p.status, p.body)
		}

		// Invalid merged results are refused with the fields named; nothing changes.
		before := e.req("GET", "/api/v1/maintenance-windows/"+id, k, nil)
		for _, c := range []struct {
			patch string
			want  []string
		}{
			{`{"endsAt":"2000-01-01T00:00:00Z"}`, []string{"/endsAt"}},
			{`{"recurrence":{"cron":"0 2 * * *"}}`, []string{"/recurrence/durationMinutes"}},
			{`{"recurrence":{"cron":"0 2 * * *","durationMinutes":60}}`, []string{"/endsAt"}},
			{`{"recurrence":{"cron":"0 2 * * *","durationMinutes":60},"endsAt":null,"startsAt":null}`, nil}, // valid: startsAt defaults
			{`{"name":""}`, []string{"/name"}},
			{`{"monitorIds":["mon_nope"]}`, []string{"/monitorIds/0"}},
			{`{"monitorIds":null}`, []string{"/monitorIds"}},
			{`{"colour":"red"}`, []string{"/colour"}},
		} {
			res := e.req("PATCH", "/api/v1/maintenance-windows/"+id, k, c.patch)
			if c.want == nil {
				if res.status != 200 {
					t.Errorf("%s: %d %s", c.patch, res.status, res.body)
				}
				e.req("PATCH", "/api/v1/maintenance-windows/"+id, k, map[string]any{"recurrence": nil, "startsAt": rfc3339(start), "endsAt": rfc3339(end)})
				before = e.req("GET", "/api/v1/maintenance-windows/"+id, k, nil)
				continue
			}
			got := pointers(t, res)
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("%s: details %v lack %s", c.patch, got, w)
				}
			}
			if after := e.req("GET", "/api/v1/maintenance-windows/"+id, k, nil); string(after.body) != string(before.body) {
				t.Errorf("%s: a refused patch changed the window:\n%s\n%s", c.patch, before.body, after.body)
			}
		}

		// A window that has ended may still be renamed; its timing is not judged again.
		e.clock.Set(end.Add(time.Hour))
		if r := e.req("PATCH", "/api/v1/maintenance-windows/"+id, k, map[string]any{"name": "done"}); r.status != 200 || r.json(t)["active"] != false {
			t.Errorf("rename an ended window: %d %s", r.status, r.body)
		}
		if r := e.req("PATCH", "/api/v1/maintenance-windows/"+id, k, map[string]any{"endsAt": rfc3339(end.Add(time.Minute))}); r.status != 422 {
			t.Errorf("move an ended window's end, still in the past: %d %s", r.status, r.body)
		}
		e.clock.Set(time.Time{})
		k = e.ownerKey() // the old key's rate-limit bucket lives three hours ahead now
		if got := pointers(t, e.req("PATCH", "/api/v1/maintenance-windows/"+recID, k, `{"recurrence":{"timezone":"Mars/Olympus"}}`)); !slices.Equal(got, []string{"/recurrence/timezone"}) {
			t.Errorf("unknown time zone: %v", got)
		}
		past := e.req("PATCH", "/api/v1/maintenance-windows/"+recID, k, map[string]any{"recurrence": map[string]any{"until": rfc3339(now.Add(-time.Hour))}})
		if got := pointers(t, past); !slices.Contains(got, "/recurrence/until") {
			t.Errorf("until in the past: %v", got)
		}

		if d := e.req("DELETE", "/api/v1/maintenance-windows/"+id, k, nil); d.status != http.StatusNoContent {
			t.Errorf("delete: %d %s", d.status, d.body)
		}
		for _, method := range []string{"GET", "PATCH", "DELETE"} {
			var body any
			if method == "PATCH" {
				body = map[string]any{"name": "x"}
			}
			if g := e.req(method, "/api/v1/maintenance-windows/"+id, k, body); g.status != 404 || g.code(t) != "not_found" {
				t.Errorf("%s after delete: %d %s", method, g.status, g.body)
			}
		}
		// Deleting a monitor takes it out of its windows.
		if d := e.req("DELETE", "/api/v1/monitors/"+m1, k, nil); d.status != 204 {
			t.Fatalf("delete monitor: %d", d.status)
		}
		if g := e.req("GET", "/api/v1/maintenance-windows/"+recID, k, nil).json(t); len(g["monitorIds"].([]any)) != 0 {
			t.Errorf("window still lists the deleted monitor: %v", g)
		}
	})
}

// TestMaintenanceWindowHeartbeats: a window names heartbeats of its
// workspace as it names monitors; another workspace's heartbeat is
// described exactly as a missing one.
func TestMaintenanceWindowHeartbeats(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		bKey := e.key(e.ownerB, e.wsB.ID, false, "monitors:write")
		newHeartbeat := func(key string) string {
			t.Helper()
			r := e.req("POST", "/api/v1/heartbeats", key, map[string]any{"name": "backup", "schedule": map[string]any{"periodSeconds": 3600}})
			if r.status != http.StatusCreated {
				t.Fatalf("create heartbeat: %d %s", r.status, r.body)
			}
			return r.json(t)["id"].(string)
		}
		hb1, hb2, theirs := newHeartbeat(k), newHeartbeat(k), newHeartbeat(bKey)
		now := time.Now().UTC()
		window := func(heartbeatIDs ...string) map[string]any {
			return map[string]any{"name": "backups paused", "startsAt": rfc3339(now.Add(-time.Minute)),
				"endsAt": rfc3339(now.Add(time.Hour)), "heartbeatIds": heartbeatIDs}
		}

		// Heartbeats alone are subjects enough.
		r := e.req("POST", "/api/v1/maintenance-windows", k, window(hb2, hb1))
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		w := r.json(t)
		id := w["id"].(string)
		want := []string{hb1, hb2}
		slices.Sort(want)
		if got := fmt.Sprint(w["heartbeatIds"]); got != fmt.Sprint(want) || len(w["monitorIds"].([]any)) != 0 {
			t.Errorf("subjects: %s", r.body)
		}
		if g := e.req("GET", "/api/v1/maintenance-windows/"+id, k, nil); g.status != 200 || string(g.body) != string(r.body) {
			t.Errorf("get differs from create:\n%s\n%s", g.body, r.body)
		}
		// A patch that leaves heartbeatIds alone keeps them.
		if p := e.req("PATCH", "/api/v1/maintenance-windows/"+id, k, map[string]any{"name": "renamed"}); p.status != 200 ||
			fmt.Sprint(p.json(t)["heartbeatIds"]) != fmt.Sprint(want) {
			t.Errorf("rename: %d %s", p.status, p.body)
		}
		if got := pointers(t, e.req("PATCH", "/api/v1/maintenance-windows/"+id, k, `{"heartbeatIds":["hb_nope"]}`)); !slices.Equal(got, []string{"/heartbeatIds/0"}) {
			t.Errorf("patch to an unknown heartbeat: %v", got)
		}

		// Unknown, and another workspace's, alike.
		for _, bad := range []string{"hb_01ZZZZZZZZZZZZZZZZZZZZZZZZ", theirs} {
			res := e.req("POST", "/api/v1/maintenance-windows", k, window(hb1, bad))
			if got := pointers(t, res); !slices.Equal(got, []string{"/heartbeatIds/1"}) {
				t.Errorf("naming %s: %v", bad, got)
			}
			if strings.Contains(string(res.body), e.wsB.ID) {
				t.Errorf("another workspace named: %s", res.body)
			}
		}
		a := e.req("POST", "/api/v1/maintenance-windows", k, window(theirs))
		b := e.req("POST", "/api/v1/maintenance-windows", k, window("hb_01ZZZZZZZZZZZZZZZZZZZZZZZZ"))
		if strings.ReplaceAll(string(a.body), a.header.Get("X-Request-Id"), "") != strings.ReplaceAll(string(b.body), b.header.Get("X-Request-Id"), "") {
			t.Errorf("another workspace's heartbeat is told apart from a missing one:\n%s\n%s", a.body, b.body)
		}

		// Deleting a heartbeat takes it out of its windows.
		if d := e.req("DELETE", "/api/v1/heartbeats/"+hb1, k, nil); d.status != http.StatusNoContent {
			t.Fatalf("delete heartbeat: %d %s", d.status, d.body)
		}
		if g := e.req("GET", "/api/v1/maintenance-windows/"+id, k, nil).json(t); fmt.Sprint(g["heartbeatIds"]) != fmt.Sprint([]string{hb2}) {
			t.Errorf("window after deleting a heartbeat: %v", g)
		}
	})
}

// TestMaintenanceWindowValidation: every invalid field is a 422 naming it
// by its JSON pointer, and nothing is created.
func TestMaintenanceWindowValidation(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		k := e.ownerKey()
		mine, theirs := e.monitorIn(e.wsA), e.monitorIn(e.wsB)
		now := time.Now().UTC()
		from, to := rfc3339(now.Add(time.Hour)), rfc3339(now.Add(2*time.Hour))
		oneOff := func(extra string) string {
			return `{"name":"w","startsAt":"` + from + `","endsAt":"` + to + `","monitorIds":["` + mine + `"]` + extra + `}`
		}
		recurring := func(rec string) string {
			return `{"name":"w","monitorIds":["` + mine + `"],"recurrence":` + rec + `}`
		}
		cases := []struct {
			name string
			body string
			want []string
		}{
			{"cron that never fires", recurring(`{"cron":"0 0 30 2 *","durationMinutes":60}`), []string{"/recurrence/cron"}},
			{"cron with six fields", recurring(`{"cron":"0 0 2 * * *","durationMinutes":60}`), []string{"/recurrence/cron"}},
			{"bad RRULE", recurring(`{"rrule":"FREQ=SOMETIMES","durationMinutes":60}`), []string{"/recurrence/rrule"}},
			{"hourly RRULE", recurring(`{"rrule":"FREQ=HOURLY","durationMinutes":60}`), []string{"/recurrence/rrule"}},
			{"RRULE that never fires", recurring(`{"rrule":"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30","durationMinutes":60}`), []string{"/recurrence/rrule"}},
			{"cron and rrule", recurring(`{"cron":"0 2 * * *","rrule":"FREQ=DAILY","durationMinutes":60}`), []string{"/recurrence/rrule"}},
			{"neither cron nor rrule", recurring(`{"durationMinutes":60}`), []string{"/recurrence"}},
			{"bad timezone", recurring(`{"cron":"0 2 * * *","timezone":"Mars/Olympus","durationMinutes":60}`), []string{"/recurrence/timezone"}},
			{"server-local timezone", recurring(`{"cron":"0 2 * * *","timezone":"Local","durationMinutes":60}`), []string{"/recurrence/timezone"}},
			{"duration missing", recurring(`{"cron":"0 2 * * *"}`), []string{"/recurrence/durationMinutes"}},
			{"duration zero", recurring(`{"cron":"0 2 * * *","durationMinutes":0}`), []string{"/recurrence/durationMinutes"}},
			{"duration over 7 days", recurring(`{"cron":"0 2 * * *","durationMinutes":10081}`), []string{"/recurrence/durationMinutes"}},
			{"until before startsAt", `{"name":"w","monitorIds":["` + mine + `"],"startsAt":"` + to + `","recurrence":{"cron":"0 2 * * *","durationMinutes":60,"until":"` + from + `"}}`, []string{"/recurrence/until"}},
			{"until in the past", recurring(`{"cron":"0 2 * * *","durationMinutes":60,"until":"2020-01-01T00:00:00Z"}`), []string{"/recurrence/until"}},
			{"endsAt with a recurrence", `{"name":"w","monitorIds":["` + mine + `"],"endsAt":"` + to + `","recurrence":{"cron":"0 2 * * *","durationMinutes":60}}`, []string{"/endsAt"}},
			{"end before start", `{"name":"w","startsAt":"` + to + `","endsAt":"` + from + `","monitorIds":["` + mine + `"]}`, []string{"/endsAt"}},
			{"end equals start", `{"name":"w","startsAt":"` + from + `","endsAt":"` + from + `","monitorIds":["` + mine + `"]}`, []string{"/endsAt"}},
			{"one-off longer than 31 days", `{"name":"w","startsAt":"` + from + `","endsAt":"` + rfc3339(now.Add(32*24*time.Hour)) + `","monitorIds":["` + mine + `"]}`, []string{"/endsAt"}},
			{"one-off in the past", `{"name":"w","startsAt":"2020-01-01T00:00:00Z","endsAt":"2020-01-01T01:00:00Z","monitorIds":["` + mine + `"]}`, []string{"/endsAt"}},
			{"one-off without start", `{"name":"w","endsAt":"` + to + `","monitorIds":["` + mine + `"]}`, []string{"/startsAt"}},
			{"one-off without end", `{"name":"w","startsAt":"` + from + `","monitorIds":["` + mine + `"]}`, []string{"/endsAt"}},
			{"not a time", `{"name":"w","startsAt":"tomorrow","endsAt":"` + to + `","monitorIds":["` + mine + `"]}`, []string{"/startsAt"}},
			{"unknown monitor", `{"name":"w","startsAt":"` + from + `","endsAt":"` + to + `","monitorIds":["` + mine + `","mon_01ZZZZZZZZZZZZZZZZZZZZZZZZ"]}`, []string{"/monitorIds/1"}},
			{"other workspace's monitor", `{"name":"w","startsAt":"` + from + `","endsAt":"` + to + `","monitorIds":["` + theirs + `"]}`, []string{"/monitorIds/0"}},
			{"monitor listed twice", `{"name":"w","startsAt":"` + from + `","endsAt":"` + to + `","monitorIds":["` + mine + `","` + mine + `"]}`, []string{"/monitorIds/1"}},
			{"unknown heartbeat", oneOff(`,"heartbeatIds":["hb_01JD5Z8Q3C4M6V9X2B7N1K0PQR"]`), []string{"/heartbeatIds/0"}},
			{"heartbeat listed twice", oneOff(`,"heartbeatIds":["hb_x","hb_x"]`), []string{"/heartbeatIds/1"}},
			{"no subjects", `{"name":"w","startsAt":"` + from + `","endsAt":"` + to + `"}`, []string{"/monitorIds"}},
			{"empty subjects", `{"name":"w","startsAt":"` + from + `","endsAt":"` + to + `","monitorIds":[]}`, []string{"/monitorIds"}},
			{"blank name", strings.Replace(oneOff(""), `"name":"w"`, `"name":"   "`, 1), []string{"/name"}},
			{"missing name", strings.Replace(oneOff(""), `"name":"w",`, ``, 1), []string{"/name"}},
			{"long name", strings.Replace(oneOff(""), `"name":"w"`, `"name":"`+strings.Repeat("x", 201)+`"`, 1), []string{"/name"}},
			{"unknown field", oneOff(`,"colour":"red"`), []string{"/colour"}},
			{"unknown recurrence field", recurring(`{"cron":"0 2 * * *","durationMinutes":60,"count":3}`), []string{"/recurrence/count"}},
			{"several at once", `{"name":"","monitorIds":["` + theirs + `"],"heartbeatIds":["hb_x","hb_x"],"recurrence":{"cron":"0 0 30 2 *","timezone":"Nowhere/Land","durationMinutes":60}}`,
				[]string{"/name", "/heartbeatIds/1", "/recurrence/cron", "/recurrence/timezone"}},
			// Rules that need the database or the clock are judged together.
			{"unknown subjects and a past window", `{"name":"w","startsAt":"2020-01-01T00:00:00Z","endsAt":"2020-01-01T01:00:00Z","monitorIds":["` + theirs + `","mon_nope"],"heartbeatIds":["hb_nope"]}`,
				[]string{"/endsAt", "/monitorIds/0", "/monitorIds/1", "/heartbeatIds/0"}},
		}
		for _, c := range cases {
			r := e.req("POST", "/api/v1/maintenance-windows", k, c.body)
			if r.status != 422 {
				t.Errorf("%s: %d %s", c.name, r.status, r.body)
				continue
			}
			got := pointers(t, r)
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("%s: details %v lack %s (%s)", c.name, got, w, r.body)
				}
			}
			if strings.Contains(string(r.body), e.wsB.ID) {
				t.Errorf("%s: another workspace named: %s", c.name, r.body)
			}
		}
		// The other workspace's monitor is described exactly as a missing one.
		a := e.req("POST", "/api/v1/maintenance-windows", k, `{"name":"w","startsAt":"`+from+`","endsAt":"`+to+`","monitorIds":["`+theirs+`"]}`)
		b := e.req("POST", "/api/v1/maintenance-windows", k, `{"name":"w","startsAt":"`+from+`","endsAt":"`+to+`","monitorIds":["mon_01ZZZZZZZZZZZZZZZZZZZZZZZZ"]}`)
		if strings.ReplaceAll(string(a.body), a.header.Get("X-Request-Id"), "") != strings.ReplaceAll(string(b.body), b.header.Get("X-Request-Id"), "") {
			t.Errorf("another workspace's monitor is told apart from a missing one:\n%s\n%s", a.body, b.body)
		}
		if l := e.req("GET", "/api/v1/maintenance-windows", k, nil).json(t); l["total"] != float64(0) {
			t.Errorf("invalid requests created windows: %v", l)
		}
	})
}

// TestMaintenanceWindowRules: workspace isolation, idempotent creates and
// the per-workspace limit, on one server per engine.
func TestMaintenanceWindowRules(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		// The env's helpers fail the test they are given: give them the subtest.
		in := func(t *testing.T) *env {
			sub := *e
			sub.t = t
			return &sub
		}
		t.Run("isolation", func(t *testing.T) { maintenanceIsolation(t, in(t)) })
		t.Run("idempotent create", func(t *testing.T) { maintenanceIdempotentCreate(t, in(t)) })
		t.Run("quota", func(t *testing.T) {
			if testing.Short() {
				t.Skip("creates a hundred windows")
			}
			maintenanceQuota(t, in(t))
		})
	})
}

// maintenanceIsolation: another workspace's window does not exist,
// whatever the method.
func maintenanceIsolation(t *testing.T, e *env) {
	theirs := e.windowIn(e.wsB, e.monitorIn(e.wsB))
	k := e.ownerKey()
	for _, method := range []string{"GET", "PATCH", "DELETE"} {
		var body any
		if method == "PATCH" {
			body = map[string]any{"name": "mine now"}
		}
		if r := e.req(method, "/api/v1/maintenance-windows/"+theirs, k, body); r.status != 404 || r.code(t) != "not_found" {
			t.Errorf("%s on workspace B's window: %d %s", method, r.status, r.body)
		}
	}
	if l := e.req("GET", "/api/v1/maintenance-windows", k, nil); strings.Contains(string(l.body), theirs) {
		t.Errorf("A's list shows B's window: %s", l.body)
	}
	bKey := e.key(e.ownerB, e.wsB.ID, false, "monitors:read")
	if g := e.req("GET", "/api/v1/maintenance-windows/"+theirs, bKey, nil); g.status != 200 || g.json(t)["name"] != "seed" {
		t.Errorf("B's own window: %d %s", g.status, g.body)
	}
}

// maintenanceIdempotentCreate: a retried create with the same
// Idempotency-Key makes one window.
func maintenanceIdempotentCreate(t *testing.T, e *env) {
	e.clearWindows(e.wsA)
	k := e.ownerKey()
	now := time.Now()
	body := map[string]any{"name": "once", "monitorIds": []string{e.monitorIn(e.wsA)},
		"startsAt": rfc3339(now.Add(time.Hour)), "endsAt": rfc3339(now.Add(2 * time.Hour))}
	first := e.req("POST", "/api/v1/maintenance-windows", k, body, "Idempotency-Key", "mw-1")
	again := e.req("POST", "/api/v1/maintenance-windows", k, body, "Idempotency-Key", "mw-1")
	if first.status != 201 || again.status != 201 || string(first.body) != string(again.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s / %d %s", first.status, first.body, again.status, again.body)
	}
	body["name"] = "twice"
	if r := e.req("POST", "/api/v1/maintenance-windows", k, body, "Idempotency-Key", "mw-1"); r.status != 409 || r.code(t) != "idempotency_conflict" {
		t.Errorf("same key, other body: %d %s", r.status, r.body)
	}
	if l := e.req("GET", "/api/v1/maintenance-windows", k, nil).json(t); l["total"] != float64(1) {
		t.Errorf("%v windows", l["total"])
	}
}

// maintenanceQuota: a workspace holds a bounded number of windows, since
// the engine evaluates them all every few seconds.
func maintenanceQuota(t *testing.T, e *env) {
	e.clearWindows(e.wsA)
	k := e.ownerKey()
	m := e.monitorIn(e.wsA)
	now := time.Now()
	body := map[string]any{"name": "w", "monitorIds": []string{m},
		"startsAt": rfc3339(now.Add(time.Hour)), "endsAt": rfc3339(now.Add(2 * time.Hour))}
	for i := range 100 {
		if r := e.req("POST", "/api/v1/maintenance-windows", k, body); r.status != 201 {
			t.Fatalf("window %d: %d %s", i, r.status, r.body)
		}
	}
	r := e.req("POST", "/api/v1/maintenance-windows", k, body)
	if r.status != 402 || r.code(t) != "quota_exceeded" || !strings.Contains(string(r.body), fmt.Sprint(100)) {
		t.Errorf("window 101: %d %s", r.status, r.body)
	}
}
