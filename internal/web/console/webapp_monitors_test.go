package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web/public"
)

// TestWebAppMonitors: the monitor list and a monitor's page show what the
// checks found, the filters narrow the list, and only roles that may
// change monitors pause, resume and delete them.
func TestWebAppMonitors(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.WsA.ID
		viewer := e.member("viewer@a.test", account.RoleViewer)
		editor := e.member("editor@a.test", account.RoleEditor)

		if r := viewer.get(ws + "/monitors"); r.status != 200 || !strings.Contains(r.body, "No monitors yet") ||
			strings.Contains(r.body, ws+"/monitors/new") {
			t.Fatalf("a viewer's empty list: %d %.600s", r.status, r.body)
		}
		if r := editor.get(ws + "/monitors"); r.status != 200 || !strings.Contains(r.body, `href="`+ws+`/monitors/new"`) {
			t.Fatalf("an editor's empty list offers no new monitor: %d", r.status)
		}

		web1 := e.Monitor(e.KeyA, "Website", "https://www.example.com/", nil)
		db := e.API("POST", "/api/v1/monitors", e.KeyA, map[string]any{"type": "tcp", "name": "Database",
			"config": map[string]any{"host": "db.internal", "port": 5432}, "slo": map[string]any{"target": 0.999, "periodDays": 30}}, 201)["id"].(string)
		other := e.Monitor(e.KeyB, "Theirs", "https://b.example.com/", nil)
		e.Record(web1, "", monitor.ResultUp, monitor.ResultUp)
		e.Record(db, "connection refused", monitor.ResultDown, monitor.ResultDown, monitor.ResultDown)

		r := viewer.get(ws + "/monitors")
		if r.status != 200 {
			t.Fatalf("list: %d %.600s", r.status, r.body)
		}
		if w := row(t, r.body, "data-monitor-id", web1); !strings.Contains(w, `data-state="UP"`) || !strings.Contains(w, ">up</span></span>") ||
			!strings.Contains(w, `href="`+ws+`/monitors/`+web1+`"`) || !strings.Contains(w, "https://www.example.com/") ||
			!strings.Contains(w, "42 ms") || !strings.Contains(w, "1 min") || !strings.Contains(w, "http") {
			t.Errorf("the website's row: %s", w)
		}
		if w := row(t, r.body, "data-monitor-id", db); !strings.Contains(w, `data-state="DOWN"`) || !strings.Contains(w, ">down</span></span>") ||
			!strings.Contains(w, "db.internal:5432") || !strings.Contains(w, "tcp") {
			t.Errorf("the database's row: %s", w)
		}
		if strings.Contains(r.body, other) || strings.Contains(r.body, "Theirs") {
			t.Error("the list shows another workspace's monitor")
		}
		if strings.Contains(r.body, ws+"/monitors/new") {
			t.Error("a viewer is offered a new monitor")
		}
		for _, want := range []string{`<span class="badge s-up">up</span> <span class="count">1</span>`,
			`<span class="badge s-down">down</span> <span class="count">1</span>`, "Availability, 24 hours", "2 monitors."} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the list lacks %q", want)
			}
		}

		// The workspace's availability: the website's time up against the
		// database's time down, both known.
		if !regexp.MustCompile(`Availability, 24 hours</dt><dd>[0-9]+\.[0-9]{2} %</dd>`).MatchString(r.body) ||
			strings.Contains(r.body, "Availability, 24 hours</dt><dd>100 %") {
			t.Errorf("the overall availability is not a share of up and down time: %.1500s", r.body)
		}
		wantFiltered(t, viewer, ws+"/monitors", "data-monitor-id", []filtered{
			{"?state=down", []string{db}, []string{web1}},
			{"?state=up&type=http", []string{web1}, []string{db}},
			{"?type=tcp", []string{db}, []string{web1}},
			{"?q=WEB", []string{web1}, []string{db}},
			{"?q=nothing+like+it", nil, []string{web1, db}},
		})
		if r := viewer.get(ws + "/monitors?state=up"); !strings.Contains(r.body, `<option value="up" selected>`) {
			t.Error("the filter form forgets the state")
		}
		if r := viewer.get(ws + "/monitors?state=sideways"); r.status != 422 || !strings.Contains(r.body, `id="f-state"`) || !strings.Contains(r.body, `role="alert"`) {
			t.Errorf("a bad state filter: %d %.600s", r.status, r.body)
		}
		for _, bad := range []string{"nul\x00byte", "bad \xff utf-8", strings.Repeat("long ", 60)} {
			for _, k := range []string{"q", "state", "type", "cursor"} {
				if r := viewer.get(ws + "/monitors?" + url.Values{k: {bad}}.Encode()); r.status != 422 {
					t.Errorf("%s=%q: %d", k, bad, r.status)
				}
			}
			if r := viewer.get(ws + "/monitors/" + url.PathEscape(bad)); r.status != 404 {
				t.Errorf("monitor %q: %d", bad, r.status)
			}
			if r := editor.post(ws+"/monitors/"+url.PathEscape(bad)+"/pause", form()); r.status != 404 {
				t.Errorf("pausing monitor %q: %d", bad, r.status)
			}
		}
		if r := viewer.get(ws + "/monitors?cursor=garbage"); r.status != 422 || !strings.Contains(r.body, "starts from the first page") {
			t.Errorf("a bad cursor: %d", r.status)
		}

		// A monitor's page: its state and cause, the charts, the checks and
		// the history; a viewer may not change it.
		r = viewer.get(ws + "/monitors/" + db)
		if r.status != 200 {
			t.Fatalf("detail: %d %.600s", r.status, r.body)
		}
		for _, want := range []string{"<h1>Database</h1>", `data-state="DOWN"`, "connection refused (2)", `<svg class="chart"`, `role="img"`,
			"median between 42 ms and 42 ms", `<svg class="uptime"`, "<title>" + e.Clock.Now().UTC().Format("2006-01-02") + ":",
			"<caption>Response time by hour</caption>", "connection refused (0)", "HTTP 503", "after 2 consecutive failed checks",
			`<span class="badge s-down">down</span>`, "db.internal:5432", "Objective", "99.9 %", "over 30 days", "Error budget left"} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the detail lacks %q", want)
			}
		}
		if n := strings.Count(r.body, "<rect class="); n != 90 {
			t.Errorf("the uptime bar has %d days, want 90", n)
		}
		for _, bad := range []string{"/pause", "/resume", "/delete", "/edit", " style="} {
			if strings.Contains(r.body, bad) {
				t.Errorf("a viewer's detail has %q", bad)
			}
		}
		if r := viewer.post(ws+"/monitors/"+db+"/pause", form()); r.status != http.StatusForbidden {
			t.Errorf("a viewer pausing: %d", r.status)
		}
		if r := viewer.post(ws+"/monitors/"+db+"/delete", form()); r.status != http.StatusForbidden {
			t.Errorf("a viewer deleting: %d", r.status)
		}
		if r := viewer.get(ws + "/monitors/" + other); r.status != 404 {
			t.Errorf("another workspace's monitor: %d", r.status)
		}

		// An editor pauses, resumes and deletes.
		if r := editor.get(ws + "/monitors/" + db); !strings.Contains(r.body, `action="`+ws+`/monitors/`+db+`/pause"`) ||
			!strings.Contains(r.body, `href="`+ws+`/monitors/`+db+`/edit"`) || !strings.Contains(r.body, `/delete" data-confirm=`) {
			t.Errorf("an editor's detail lacks the forms: %.3000s", r.body)
		}
		ctx := context.Background()
		actor := app.Actor{WorkspaceID: e.WsA.ID, Role: account.RoleViewer}
		if r := editor.post(ws+"/monitors/"+db+"/pause", form()); r.status != 303 || r.header.Get("Location") != ws+"/monitors/"+db {
			t.Fatalf("pause: %d %q", r.status, r.header.Get("Location"))
		}
		if m, err := e.App.GetMonitor(ctx, actor, db); err != nil || !m.Paused || m.State != monitor.StatePaused {
			t.Fatalf("after pausing: %+v %v", m, err)
		}
		r = editor.get(ws + "/monitors/" + db)
		if !strings.Contains(r.body, `action="`+ws+`/monitors/`+db+`/resume"`) || !strings.Contains(r.body, `<span class="badge s-paused">paused</span>`) ||
			!strings.Contains(r.body, "The monitor is paused") {
			t.Errorf("a paused monitor's page: %.3000s", r.body)
		}
		if r := editor.post(ws+"/monitors/"+db+"/resume", form()); r.status != 303 {
			t.Fatalf("resume: %d", r.status)
		}
		if m, err := e.App.GetMonitor(ctx, actor, db); err != nil || m.Paused || m.State != monitor.StatePending {
			t.Fatalf("after resuming: %+v %v", m, err)
		}
		if r := editor.post(ws+"/monitors/"+other+"/pause", form()); r.status != 404 {
			t.Errorf("pausing another workspace's monitor: %d", r.status)
		}
		if r := editor.post(ws+"/monitors/"+db+"/delete", form()); r.status != 303 || r.header.Get("Location") != ws+"/monitors" {
			t.Fatalf("delete: %d %q", r.status, r.header.Get("Location"))
		}
		if r := editor.get(ws + "/monitors"); !strings.Contains(r.body, "The monitor is deleted.") || strings.Contains(r.body, db) {
			t.Errorf("the list after deleting: %.2000s", r.body)
		}
		if r := editor.get(ws + "/monitors/" + db); r.status != 404 {
			t.Errorf("a deleted monitor's page: %d", r.status)
		}
	})
}
