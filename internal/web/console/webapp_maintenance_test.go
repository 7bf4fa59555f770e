package console_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/web/public"
)

// window creates a one-off maintenance window over monitor mon through
// the API, starting in an hour.
func (e *env) window(key, name, mon string) string {
	e.T.Helper()
	start := e.Clock.Now().Add(time.Hour).UTC()
	return e.API("POST", "/api/v1/maintenance-windows", key, map[string]any{"name": name, "monitorIds": []string{mon},
		"startsAt": start.Format(time.RFC3339), "endsAt": start.Add(2 * time.Hour).Format(time.RFC3339)}, 201)["id"].(string)
}

// wall is t as a datetime-local field writes it, in UTC.
func wall(t time.Time) string { return t.UTC().Format("2006-01-02T15:04") }

// TestWebAppMaintenanceMatrix: every role, every maintenance window
// action, as the API's scopes allow them: all roles read (monitors:read),
// editors and above write (monitors:write); another workspace's window is
// not found for anyone.
func TestWebAppMaintenanceMatrix(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.WsA.ID
		mon := e.Monitor(e.KeyA, "Website", "https://www.example.com/", nil)
		theirs := e.window(e.KeyB, "Theirs", e.Monitor(e.KeyB, "B", "https://b.example.com/", nil))
		start := e.Clock.Now().Add(24 * time.Hour)
		n := 0
		for _, role := range account.Roles {
			p := e.member(string(role)+"@a.test", role)
			mw := ws + "/maintenance/" + e.window(e.KeyA, "For "+string(role), mon)
			writer := role.Grants(account.ScopeMonitorsWrite)
			n += judge(t, role, p, []action{
				{"see the windows", "GET", ws + "/maintenance", nil, true, 200},
				{"make a one-off window", "POST", ws + "/maintenance", form("name", "Upgrade by "+string(role), "kind", "one-off",
					"timezone", "Europe/Berlin", "starts", wall(start), "ends", wall(start.Add(time.Hour)), "monitor", mon), writer, 303},
				{"make a recurring window", "POST", ws + "/maintenance", form("name", "Weekly by "+string(role), "kind", "recurring",
					"timezone", "Europe/Berlin", "cron", "0 2 * * 6", "duration", "120", "monitor", mon, "public", "on"), writer, 303},
				{"open a window's form", "GET", mw + "/edit", nil, writer, 200},
				{"change a window", "POST", mw + "/edit", form("name", "Renamed", "kind", "recurring", "timezone", "UTC",
					"rrule", "FREQ=DAILY;BYHOUR=3;BYMINUTE=0", "duration", "30", "monitor", mon), writer, 303},
				{"delete a window", "POST", mw + "/delete", form(), writer, 303},
				{"open another workspace's window", "GET", ws + "/maintenance/" + theirs + "/edit", nil, false, 0},
				{"change another workspace's window", "POST", ws + "/maintenance/" + theirs + "/edit", form("name", "x", "kind", "one-off",
					"starts", wall(start), "ends", wall(start.Add(time.Hour)), "monitor", mon), false, 0},
				{"delete another workspace's window", "POST", ws + "/maintenance/" + theirs + "/delete", form(), false, 0},
				{"delete no window", "POST", ws + "/maintenance/not-an-id/delete", form(), false, 0},
			})
		}
		list := e.API("GET", "/api/v1/maintenance-windows?limit=100", e.KeyA, nil, 200)["data"].([]any)
		made := map[string]map[string]any{}
		for _, w := range list {
			made[w.(map[string]any)["name"].(string)] = w.(map[string]any)
		}
		for _, role := range account.Roles {
			writer := role.Grants(account.ScopeMonitorsWrite)
			_, kept := made["For "+string(role)]
			weekly, made1 := made["Weekly by "+string(role)]
			if _, ok := made["Upgrade by "+string(role)]; ok != writer || made1 != writer || kept == writer {
				t.Errorf("%s: windows afterwards: %v", role, made)
			}
			if writer {
				rec := weekly["recurrence"].(map[string]any)
				if rec["cron"] != "0 2 * * 6" || rec["timezone"] != "Europe/Berlin" || rec["durationMinutes"] != float64(120) || weekly["public"] != true {
					t.Errorf("%s's weekly window: %v", role, weekly)
				}
				up := made["Upgrade by "+string(role)]
				berlin, _ := time.LoadLocation("Europe/Berlin")
				want, _ := time.ParseInLocation("2006-01-02T15:04", wall(start), berlin)
				if !mustTime(t, up["startsAt"].(string)).Equal(want) {
					t.Errorf("%s's one-off window starts %v, want %s (the wall time read in Berlin)", role, up["startsAt"], want.UTC())
				}
			}
		}
		if got := e.API("GET", "/api/v1/maintenance-windows/"+theirs, e.KeyB, nil, 200); got["name"] != "Theirs" {
			t.Errorf("another workspace's window changed: %v", got)
		}
		t.Logf("%d requests checked", n)
	})
}

// TestWebAppMaintenance: the list says what each window covers, when it
// runs (a recurrence in words, in its zone) and whether it is active or
// when it next begins; the edit form holds the stored window; refused
// forms show every message at its field; hostile text is a field's
// message, never a server error or stored.
func TestWebAppMaintenance(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.WsA.ID
		editor := e.member("editor@a.test", account.RoleEditor)
		viewer := e.member("viewer@a.test", account.RoleViewer)
		mon := e.Monitor(e.KeyA, "Checkout", "https://shop.example.com/", nil)
		hb := e.API("POST", "/api/v1/heartbeats", e.KeyA, map[string]any{"name": "Nightly backup",
			"schedule": map[string]any{"periodSeconds": 3600, "graceSeconds": 300}}, 201)["id"].(string)
		now := e.Clock.Now()
		r := editor.post(ws+"/maintenance", form("name", "Now", "kind", "one-off", "starts", wall(now.Add(-time.Minute)),
			"ends", wall(now.Add(time.Hour)), "monitor", mon, "heartbeat", hb))
		if r.status != 303 {
			t.Fatalf("a window in progress: %d %v %.500s", r.status, fieldErrors(r.body), r.body)
		}
		weekly := e.API("POST", "/api/v1/maintenance-windows", e.KeyA, map[string]any{"name": "Weekly", "monitorIds": []string{mon},
			"recurrence": map[string]any{"cron": "30 2 * * 6", "timezone": "Europe/Berlin", "durationMinutes": 90}}, 201)
		r = viewer.get(ws + "/maintenance")
		if r.status != 200 {
			t.Fatalf("list: %d %.500s", r.status, r.body)
		}
		for _, want := range []string{`href="` + ws + `/monitors/` + mon + `">Checkout</a>`, "Nightly backup</a> <span class=\"muted\">(heartbeat)</span>",
			"data-window-active", "every Saturday at 02:30, for 1 h 30 min each", "Europe/Berlin", "next "} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the list lacks %q", want)
			}
		}
		if strings.Contains(r.body, "/edit") || strings.Contains(r.body, `action="`+ws+`/maintenance"`) {
			t.Error("a viewer is offered the window forms")
		}
		if r := viewer.get(ws + "/maintenance/" + weekly["id"].(string) + "/edit"); r.status != 403 {
			t.Errorf("a viewer's edit form: %d", r.status)
		}
		r = editor.get(ws + "/maintenance/" + weekly["id"].(string) + "/edit")
		for _, want := range []string{`value="30 2 * * 6"`, `value="Europe/Berlin"`, `value="90"`, `id="kind-recurring" name="kind" value="recurring" checked`,
			`value="` + mon + `" checked`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the edit form lacks %q", want)
			}
		}
		// Saving the form as shown changes nothing of the timing.
		edit := form("name", "Weekly, renamed", "kind", "recurring", "timezone", "Europe/Berlin", "cron", "30 2 * * 6", "duration", "90",
			"starts", mustTime(t, weekly["startsAt"].(string)).In(berlin(t)).Format("2006-01-02T15:04"), "monitor", mon)
		if r := editor.post(ws+"/maintenance/"+weekly["id"].(string)+"/edit", edit); r.status != 303 {
			t.Errorf("saving the form as shown: %d %v", r.status, fieldErrors(r.body))
		}
		if got := e.API("GET", "/api/v1/maintenance-windows/"+weekly["id"].(string), e.KeyA, nil, 200); got["name"] != "Weekly, renamed" ||
			!mustTime(t, got["startsAt"].(string)).Equal(mustTime(t, weekly["startsAt"].(string))) {
			t.Errorf("after the edit: %v", got)
		}

		// Three mistakes, three messages at their fields.
		r = editor.post(ws+"/maintenance", form("name", " ", "kind", "one-off", "starts", wall(now.Add(time.Hour)), "ends", wall(now), "timezone", "UTC"))
		got := fieldErrors(r.body)
		if r.status != 422 || len(got) != 3 || got["name"] == "" || got["ends"] == "" || got["monitor"] == "" {
			t.Errorf("a form with three mistakes: %d %v", r.status, got)
		}
		r = editor.post(ws+"/maintenance", form("name", "n", "kind", "recurring", "timezone", "Mars/Olympus", "cron", "99 * * * *", "duration", "0", "monitor", mon))
		if got := fieldErrors(r.body); r.status != 422 || got["timezone"] == "" || got["cron"] == "" || got["duration"] == "" {
			t.Errorf("a recurring form with three mistakes: %d %v", r.status, got)
		}

		// Hostile text, in each field and in the list's link.
		for _, bad := range []string{"nul\x00byte", "bad \xff utf-8"} {
			for _, field := range []string{"name", "description", "kind", "starts", "ends", "timezone", "cron", "rrule", "duration", "until", "monitor"} {
				f := form("name", "n", "kind", "recurring", "cron", "0 2 * * *", "duration", "60", "monitor", mon)
				f.Set(field, bad)
				for _, path := range []string{ws + "/maintenance", ws + "/maintenance/" + weekly["id"].(string) + "/edit"} {
					r := editor.post(path, f)
					if got := fieldErrors(r.body); r.status != 422 || got[field] != "Must be valid UTF-8 text without NUL." {
						t.Errorf("%s %s %q: %d %v", path, field, bad, r.status, got)
					}
				}
			}
			if r := editor.get(ws + "/maintenance?cursor=" + url.QueryEscape(bad)); r.status != 422 || !strings.Contains(r.body, "does not work") {
				t.Errorf("a hostile cursor: %d", r.status)
			}
		}
		if n := len(e.API("GET", "/api/v1/maintenance-windows", e.KeyA, nil, 200)["data"].([]any)); n != 2 {
			t.Errorf("windows stored after the refused forms: %d", n)
		}
	})
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func berlin(t *testing.T) *time.Location {
	t.Helper()
	l, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return l
}
