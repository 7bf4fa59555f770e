package console_test

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web/public"
)

// manualIncident opens a manual incident in the workspace of key.
func (e *env) manualIncident(key, title string) string {
	e.T.Helper()
	return e.API("POST", "/api/v1/incidents", key, map[string]any{"title": title, "message": "Looking into it."}, 201)["id"].(string)
}

// fieldErrors are the field messages a form page shows, by field.
func fieldErrors(body string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`<p class="error" id="err-([a-z-]+)">([^<]*)</p>`).FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// TestWebAppIncidentsMatrix: every role, every incident action of the web
// app, as the API's scopes allow them: all roles read (incidents:read),
// editors and above write (incidents:write); another workspace's incident
// is not found for anyone.
func TestWebAppIncidentsMatrix(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.WsA.ID
		mon := e.Monitor(e.KeyA, "Website", "https://www.example.com/", nil)
		theirs := e.manualIncident(e.KeyB, "Theirs")
		n := 0
		for _, role := range account.Roles {
			p := e.member(string(role)+"@a.test", role)
			inc := ws + "/incidents/" + e.manualIncident(e.KeyA, "For "+string(role))
			writer := role.Grants(account.ScopeIncidentsWrite)
			n += judge(t, role, p, []action{
				{"see the incidents", "GET", ws + "/incidents", nil, true, 200},
				{"see an incident", "GET", inc, nil, true, 200},
				{"open an incident", "POST", ws + "/incidents", form("title", "By "+string(role), "status", "identified", "message", "Slow.",
					"affected", mon, "public", "on"), writer, 303},
				{"acknowledge an incident", "POST", inc + "/acknowledge", form(), writer, 303},
				{"post an update", "POST", inc + "/updates", form("update-status", "monitoring", "update-message", "A fix is out."), writer, 303},
				{"change an incident", "POST", inc + "/edit", form("title", "Renamed", "affected", mon, "public", "on", "public-title", "Slow pages"), writer, 303},
				{"resolve an incident", "POST", inc + "/resolve", form("resolve-message", "All good."), writer, 303},
				{"see another workspace's incident", "GET", ws + "/incidents/" + theirs, nil, false, 0},
				{"resolve another workspace's incident", "POST", ws + "/incidents/" + theirs + "/resolve", form(), false, 0},
				{"see no incident", "GET", ws + "/incidents/not-an-id", nil, false, 0},
			})
			got := e.API("GET", "/api/v1/"+strings.TrimPrefix(inc, ws+"/"), e.KeyA, nil, 200)
			if writer != (got["status"] == "resolved" && got["title"] == "Renamed" && got["public"] == true && got["acknowledgedAt"] != nil) {
				t.Errorf("%s's incident after the actions: %v", role, got)
			}
			if writer {
				var statuses []string
				for _, u := range got["updates"].([]any) {
					statuses = append(statuses, u.(map[string]any)["status"].(string))
				}
				if !slices.Equal(statuses, []string{"investigating", "monitoring", "resolved"}) {
					t.Errorf("%s's timeline: %v", role, statuses)
				}
			}
		}
		if got := e.API("GET", "/api/v1/incidents/"+theirs, e.KeyB, nil, 200); got["status"] != "investigating" {
			t.Errorf("another workspace's incident changed: %v", got)
		}
		t.Logf("%d requests checked", n)
	})
}

// TestWebAppIncidents: the list puts open incidents first with their
// subject, state, status and publication; the page shows the timeline;
// refused forms show every message at its field, and hostile text is a
// field's message, never a server error or stored.
func TestWebAppIncidents(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.WsA.ID
		editor := e.member("editor@a.test", account.RoleEditor)
		viewer := e.member("viewer@a.test", account.RoleViewer)
		mon := e.Monitor(e.KeyA, "Checkout", "https://shop.example.com/", nil)
		old := e.manualIncident(e.KeyA, "Old trouble")
		e.API("POST", "/api/v1/incidents/"+old+"/resolve", e.KeyA, nil, 200)
		e.Record(mon, "connection refused", monitor.ResultDown, monitor.ResultDown)
		auto := e.API("GET", "/api/v1/incidents?status=open", e.KeyA, nil, 200)["data"].([]any)
		if len(auto) != 1 {
			t.Fatalf("open incidents after the outage: %v", auto)
		}
		autoID := auto[0].(map[string]any)["id"].(string)

		r := viewer.get(ws + "/incidents")
		if r.status != 200 {
			t.Fatalf("list: %d %.500s", r.status, r.body)
		}
		iOpen, iOld := strings.Index(r.body, `data-incident-id="`+autoID+`"`), strings.Index(r.body, `data-incident-id="`+old+`"`)
		if iOpen < 0 || iOld < 0 || iOpen > iOld {
			t.Errorf("the open incident is not listed before the resolved one (%d, %d)", iOpen, iOld)
		}
		openRow := r.body[iOpen:iOld]
		for _, want := range []string{`href="` + ws + `/monitors/` + mon + `">Checkout</a>`, `data-incident-state="open"`, "investigating", "private", "so far"} {
			if !strings.Contains(openRow, want) {
				t.Errorf("the open incident's row lacks %q: %s", want, openRow)
			}
		}
		if !strings.Contains(r.body[iOld:], "manual") || !strings.Contains(r.body[iOld:], `data-incident-state="resolved"`) {
			t.Errorf("the resolved manual incident's row: %.800s", r.body[iOld:])
		}
		if strings.Contains(r.body, `action="`+ws+`/incidents"`) {
			t.Error("a viewer is offered the new incident form")
		}
		if r := editor.get(ws + "/incidents"); !strings.Contains(r.body, `action="`+ws+`/incidents"`) || !strings.Contains(r.body, `value="`+mon+`"`) {
			t.Errorf("an editor's list lacks the form with the monitor to tick")
		}

		r = viewer.get(ws + "/incidents/" + autoID)
		for _, want := range []string{"Checkout", "connection refused", `data-event="opened"`, "by Tocsin", `data-update="investigating"`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the incident's page lacks %q", want)
			}
		}
		if strings.Contains(r.body, "/acknowledge") || strings.Contains(r.body, "Post an update") {
			t.Error("a viewer is offered the incident's forms")
		}

		// Three mistakes, three messages at their fields.
		r = editor.post(ws+"/incidents", form("title", " ", "status", "resolved", "message", ""))
		got := fieldErrors(r.body)
		if r.status != 422 || len(got) != 3 || got["title"] == "" || got["status"] == "" || got["message"] == "" {
			t.Errorf("a form with three mistakes: %d %v", r.status, got)
		}
		r = editor.post(ws+"/incidents/"+autoID+"/updates", form("update-status", "fixed", "update-message", " "))
		if got := fieldErrors(r.body); r.status != 422 || got["update-status"] == "" || got["update-message"] == "" {
			t.Errorf("an update with two mistakes: %d %v", r.status, got)
		}
		r = editor.post(ws+"/incidents/"+autoID+"/edit", form("title", "x", "public", "on", "public-title", " "))
		if got := fieldErrors(r.body); r.status != 422 || got["public-title"] == "" {
			t.Errorf("settings with a blank public title: %d %v", r.status, got)
		}

		// Hostile text, in each form and in the list's link.
		for _, bad := range []string{"nul\x00byte", "bad \xff utf-8"} {
			for _, c := range []struct {
				path, field string
				form        url.Values
			}{
				{ws + "/incidents", "title", form("title", bad, "status", "investigating", "message", "m")},
				{ws + "/incidents", "message", form("title", "t", "status", "investigating", "message", bad)},
				{ws + "/incidents", "affected", form("title", "t", "message", "m", "affected", bad)},
				{ws + "/incidents/" + autoID + "/updates", "update-message", form("update-status", "identified", "update-message", bad)},
				{ws + "/incidents/" + autoID + "/updates", "update-status", form("update-status", bad, "update-message", "m")},
				{ws + "/incidents/" + autoID + "/resolve", "resolve-message", form("resolve-message", bad)},
				{ws + "/incidents/" + autoID + "/edit", "title", form("title", bad)},
				{ws + "/incidents/" + autoID + "/edit", "public-title", form("title", "t", "public-title", bad)},
			} {
				r := editor.post(c.path, c.form)
				if got := fieldErrors(r.body); r.status != 422 || got[c.field] != "Must be valid UTF-8 text without NUL." {
					t.Errorf("%s %s %q: %d %v", c.path, c.field, bad, r.status, got)
				}
			}
			if r := editor.get(ws + "/incidents?cursor=" + url.QueryEscape(bad)); r.status != 422 || !strings.Contains(r.body, "does not work") {
				t.Errorf("a hostile cursor: %d", r.status)
			}
		}
		if r := editor.get(ws + "/incidents?cursor=garbage"); r.status != 422 || !strings.Contains(r.body, "does not work") {
			t.Errorf("a broken cursor: %d", r.status)
		}
		// The subject recovers: Tocsin resolves the incident, and says so.
		e.Record(mon, "", monitor.ResultUp)
		r = viewer.get(ws + "/incidents/" + autoID)
		for _, want := range []string{`data-event="resolved"`, "by Tocsin, when the subject recovered", `data-incident-state="resolved"`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the recovered incident's page lacks %q", want)
			}
		}
		list := e.API("GET", "/api/v1/incidents", e.KeyA, nil, 200)["data"].([]any)
		if len(list) != 2 {
			t.Errorf("incidents stored after the refused forms: %d", len(list))
		}
		if got := e.API("GET", "/api/v1/incidents/"+autoID, e.KeyA, nil, 200); got["status"] != "resolved" || len(got["updates"].([]any)) != 2 ||
			got["acknowledgedAt"] != nil || got["publicTitle"] != "" || got["title"] == "x" {
			t.Errorf("the incident changed by refused forms: %v", got)
		}
	})
}
