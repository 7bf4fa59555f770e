package console_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/wait"
	"github.com/tocsin/tocsin/internal/web/public"
)

// heartbeat creates a heartbeat in the workspace of key with the schedule
// given, and returns its id and ping URL.
func (e *env) heartbeat(key, name string, schedule map[string]any) (id, pingURL string) {
	e.T.Helper()
	h := e.API("POST", "/api/v1/heartbeats", key, map[string]any{"name": name, "schedule": schedule}, 201)
	return h["id"].(string), h["pingUrl"].(string)
}

// ping calls a ping URL (with a suffix) from Go and wants 200.
func (e *env) ping(u, body string) {
	e.T.Helper()
	method := "GET"
	if body != "" {
		method = "POST"
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		e.T.Fatal(err)
	}
	if r := e.Do(req); r.Status != 200 {
		e.T.Fatalf("ping %s: %d %s", u, r.Status, r.Body)
	}
}

// hbState is the heartbeat's state as the app reads it.
func (e *env) hbState(id string) monitor.State {
	e.T.Helper()
	h, err := e.App.GetHeartbeat(context.Background(), app.Actor{WorkspaceID: e.WsA.ID, Role: account.RoleViewer}, id)
	if err != nil {
		e.T.Fatal(err)
	}
	return h.State()
}

// TestWebAppHeartbeatsMatrix: every role, every heartbeat action of the
// web app, over HTTP: a viewer may see the list and a heartbeat, but not
// create, edit, pause, resume, delete or give a new ping URL; an editor,
// an admin and an owner may. What a refused role tried changed nothing.
func TestWebAppHeartbeatsMatrix(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		ws := "/w/" + e.WsA.ID
		owner := app.Actor{WorkspaceID: e.WsA.ID, Role: account.RoleOwner}
		n := 0
		for _, role := range account.Roles {
			p := e.member(string(role)+"@a.test", role)
			hb, _ := e.heartbeat(e.KeyA, "watched by "+string(role), map[string]any{"periodSeconds": 3600})
			before, err := e.App.GetHeartbeat(ctx, owner, hb)
			if err != nil {
				t.Fatal(err)
			}
			writer := role.Grants(account.ScopeMonitorsWrite)
			path := ws + "/heartbeats/" + hb
			edit := form("name", "renamed by "+string(role), "kind", "cron", "cron", "0 3 * * *", "timezone", "Europe/Berlin", "grace", "600")
			actions := []action{
				{"see the heartbeats", "GET", ws + "/heartbeats", nil, true, 200},
				{"see a heartbeat", "GET", path, nil, true, 200},
				{"open the new heartbeat form", "GET", ws + "/heartbeats/new", nil, writer, 200},
				{"create a heartbeat", "POST", ws + "/heartbeats", form("name", "made by "+string(role), "kind", "period", "period", "600"), writer, 303},
				{"open the edit form", "GET", path + "/edit", nil, writer, 200},
				{"edit a heartbeat", "POST", path + "/edit", edit, writer, 303},
				{"pause a heartbeat", "POST", path + "/pause", form(), writer, 303},
				{"resume a heartbeat", "POST", path + "/resume", form(), writer, 303},
				{"give a heartbeat a new ping URL", "POST", path + "/rotate", form(), writer, 303},
				{"delete a heartbeat", "POST", path + "/delete", form(), writer, 303},
			}
			n += judge(t, role, p, actions)
			if writer {
				if _, err := e.App.GetHeartbeat(ctx, owner, hb); err == nil {
					t.Errorf("%s deleted a heartbeat that is still there", role)
				}
				continue
			}
			after, err := e.App.GetHeartbeat(ctx, owner, hb)
			if err != nil {
				t.Fatalf("%s: the heartbeat is gone: %v", role, err)
			}
			if after.Name != before.Name || after.Token != before.Token || after.Paused || after.Schedule != before.Schedule {
				t.Errorf("%s changed a heartbeat it may not: %+v", role, after)
			}
			list, err := e.App.ListHeartbeats(ctx, owner, app.HeartbeatFilter{Name: "made by " + string(role)}, app.PageRequest{})
			if err != nil || len(list.Items) != 0 {
				t.Errorf("%s created a heartbeat: %v %v", role, list.Items, err)
			}
		}
		t.Logf("%d requests checked", n)
	})
}

// TestWebAppHeartbeats: the list and a heartbeat's page show what the
// pings did, the filters narrow the list, the form creates and edits
// with every mistake at its field, and hostile bytes are answered with a
// field's message.
func TestWebAppHeartbeats(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.WsA.ID
		viewer := e.member("viewer@a.test", account.RoleViewer)
		editor := e.member("editor@a.test", account.RoleEditor)

		if r := viewer.get(ws + "/heartbeats"); r.status != 200 || !strings.Contains(r.body, "No heartbeats yet") ||
			strings.Contains(r.body, ws+"/heartbeats/new") || !strings.Contains(r.body, `aria-current="page">Heartbeats</a>`) {
			t.Fatalf("a viewer's empty list: %d %.3000s", r.status, r.body)
		}
		if r := editor.get(ws + "/heartbeats"); r.status != 200 || !strings.Contains(r.body, `href="`+ws+`/heartbeats/new">New heartbeat</a>`) {
			t.Fatalf("an editor's empty list offers no new heartbeat: %d", r.status)
		}

		backup, backupURL := e.heartbeat(e.KeyA, "Nightly backup", map[string]any{"cron": "30 2 * * *", "timezone": "Europe/Berlin", "graceSeconds": 600})
		sync, syncURL := e.heartbeat(e.KeyA, "Sync <job>", map[string]any{"periodSeconds": 300})
		other, _ := e.heartbeat(e.KeyB, "Theirs", map[string]any{"periodSeconds": 300})
		e.ping(backupURL+"/start", "")
		long := "<script>alert(1)</script> " + strings.Repeat("copied ", 30) + "\nthe last line"
		e.ping(backupURL+"/0", long)
		e.ping(syncURL+"/fail", "disk full")
		wait.For(t, 20*time.Second, "the pings' states", func() bool { return e.hbState(backup) == monitor.StateUp && e.hbState(sync) == monitor.StateDown })

		r := viewer.get(ws + "/heartbeats")
		if r.status != 200 {
			t.Fatalf("list: %d %.600s", r.status, r.body)
		}
		if w := row(t, r.body, "data-heartbeat-id", backup); !strings.Contains(w, `data-state="UP"`) || !strings.Contains(w, ">up</span></span>") ||
			!strings.Contains(w, `href="`+ws+`/heartbeats/`+backup+`"`) || !strings.Contains(w, "cron 30 2 * * * (Europe/Berlin)") ||
			!strings.Contains(w, "10 min") || !strings.Contains(w, "<time datetime=") {
			t.Errorf("the backup's row: %s", w)
		}
		if w := row(t, r.body, "data-heartbeat-id", sync); !strings.Contains(w, `data-state="DOWN"`) || !strings.Contains(w, "every 5 min") ||
			!strings.Contains(w, "Sync &lt;job&gt;") || !strings.Contains(w, `data-name="Sync &lt;job&gt;"`) {
			t.Errorf("the sync's row: %s", w)
		}
		if strings.Contains(r.body, other) || strings.Contains(r.body, "Theirs") {
			t.Error("the list shows another workspace's heartbeat")
		}
		for _, want := range []string{`<span class="badge s-up">up</span> <span class="count">1</span>`,
			`<span class="badge s-down">down</span> <span class="count">1</span>`, "2 heartbeats.", `data-live="` + ws + `/live"`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the list lacks %q", want)
			}
		}
		wantFiltered(t, viewer, ws+"/heartbeats", "data-heartbeat-id", []filtered{
			{"?state=down", []string{sync}, []string{backup}},
			{"?state=up", []string{backup}, []string{sync}},
			{"?q=BACK", []string{backup}, []string{sync}},
			{"?q=%3Cjob", []string{sync}, []string{backup}},
			{"?q=nothing+like+it", nil, []string{backup, sync}},
		})
		if r := viewer.get(ws + "/heartbeats?state=sideways"); r.status != 422 || !strings.Contains(r.body, `id="err-state"`) {
			t.Errorf("a bad state filter: %d %.600s", r.status, r.body)
		}
		for _, bad := range []string{"nul\x00byte", "bad \xff utf-8", strings.Repeat("long ", 60)} {
			for _, k := range []string{"q", "state"} {
				r := viewer.get(ws + "/heartbeats?" + url.Values{k: {bad}}.Encode())
				if r.status != 422 || !strings.Contains(r.body, `id="err-`+k+`"`) {
					t.Errorf("%s=%q: %d %.300s", k, bad, r.status, r.body)
				}
			}
			if r := viewer.get(ws + "/heartbeats?" + url.Values{"cursor": {bad}}.Encode()); r.status != 422 {
				t.Errorf("cursor=%q: %d", bad, r.status)
			}
			if r := viewer.get(ws + "/heartbeats/" + url.PathEscape(bad)); r.status != 404 {
				t.Errorf("heartbeat %q: %d", bad, r.status)
			}
			if r := editor.post(ws+"/heartbeats/"+url.PathEscape(bad)+"/rotate", form()); r.status != 404 {
				t.Errorf("rotating heartbeat %q: %d", bad, r.status)
			}
		}

		// A heartbeat's page: state, ping URL and snippets, pings with
		// their bodies escaped, the history with causes.
		r = viewer.get(ws + "/heartbeats/" + backup)
		if r.status != 200 {
			t.Fatalf("detail: %d %.600s", r.status, r.body)
		}
		for _, want := range []string{"<h1>Nightly backup</h1>", `data-heartbeat-id="` + backup + `"`, `data-state="UP"`,
			`<code id="ping-url" class="secret uri">` + backupURL + `</code>`, "cron 30 2 * * * (Europe/Berlin)", "success, exit code 0, took",
			`<span class="badge sig-start">start</span>`, `<span class="badge sig-success">success</span> <span class="muted">exit 0</span>`,
			"&lt;script&gt;alert(1)&lt;/script&gt;", "<details><summary>", "the last line</pre>", "127.0.0.1",
			`<svg class="uptime"`, "pending", `id="snippet-curl"`, `id="snippet-crontab"`, `id="snippet-systemd"`, `id="snippet-powershell"`,
			"CRON_TZ=Europe/Berlin\n30 2 * * * curl", "OnCalendar=*-*-* 02:30:00 Europe/Berlin", "Invoke-RestMethod"} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the detail lacks %q", want)
			}
		}
		if strings.Contains(r.body, "<script>alert") {
			t.Error("a ping's body is not escaped")
		}
		if n := strings.Count(r.body, "<rect class="); n != 90 {
			t.Errorf("the uptime bar has %d days, want 90", n)
		}
		for _, bad := range []string{"/pause", "/resume", "/delete", "/edit", "/rotate", " style="} {
			if strings.Contains(r.body, bad) {
				t.Errorf("a viewer's detail has %q", bad)
			}
		}
		if r := viewer.get(ws + "/heartbeats/" + sync); !strings.Contains(r.body, "Cause:</span> failure") || !strings.Contains(r.body, "disk full") {
			t.Errorf("a failed heartbeat's page lacks its cause: %.4000s", r.body)
		}
		if r := viewer.get(ws + "/heartbeats/" + other); r.status != 404 {
			t.Errorf("another workspace's heartbeat: %d", r.status)
		}

		// The form: several mistakes at once, each at its field.
		if r := editor.get(ws + "/heartbeats/new"); r.status != 200 || !strings.Contains(r.body, `name="period" type="text" value="3600"`) {
			t.Errorf("the new form: %d %.600s", r.status, r.body)
		}
		r = editor.post(ws+"/heartbeats", form("name", " ", "kind", "period", "period", "30", "grace", "soon", "max-runtime", "-5",
			"slo-target", "120", "slo-period", "30"))
		if r.status != 422 {
			t.Fatalf("a form with mistakes: %d %.600s", r.status, r.body)
		}
		for id, want := range map[string]string{"err-name": "Name must not be empty.", "err-period": "Period must be between 60 and 31536000.",
			"err-grace": "Grace must be a whole number.", "err-max-runtime": "Maximum run time must be between 0 and 604800",
			"err-slo-target": "SLO target "} {
			if !regexp.MustCompile(`id="` + id + `">` + regexp.QuoteMeta(html.EscapeString(want))).MatchString(r.body) {
				t.Errorf("%s lacks %q", id, want)
			}
		}
		r = editor.post(ws+"/heartbeats", form("name", "Cron job", "kind", "cron", "cron", "61 * * * *", "timezone", "Mars/Olympus", "period", "ignored"))
		if r.status != 422 || !strings.Contains(r.body, `id="err-cron"`) || !strings.Contains(r.body, `id="err-timezone">Time zone must be an IANA`) ||
			strings.Contains(r.body, `id="err-period"`) {
			t.Errorf("a bad cron schedule: %d %.3000s", r.status, r.body)
		}
		r = editor.post(ws+"/heartbeats", form("name", "Cron job", "kind", "cron"))
		if r.status != 422 || !strings.Contains(r.body, `id="err-cron">Cron expression must not be empty.`) {
			t.Errorf("an empty cron: %d %.3000s", r.status, r.body)
		}
		for _, bad := range []string{"nul\x00byte", "bad \xff utf-8"} {
			for _, field := range []string{"name", "kind", "period", "grace", "cron", "timezone", "max-runtime", "slo-target", "slo-period"} {
				f := form("name", "Hostile", "kind", "period", "period", "600")
				if field == "cron" || field == "timezone" {
					f.Set("kind", "cron")
					f.Set("cron", "0 3 * * *")
				}
				f.Set(field, bad)
				r := editor.post(ws+"/heartbeats", f)
				if r.status != 422 || !strings.Contains(r.body, `id="err-`+field+`"`) {
					t.Errorf("%s %q: %d %.600s", field, bad, r.status, r.body)
				}
			}
		}
		list, err := e.App.ListHeartbeats(context.Background(), app.Actor{WorkspaceID: e.WsA.ID, Role: account.RoleViewer}, app.HeartbeatFilter{}, app.PageRequest{})
		if err != nil || list.Total != 2 {
			t.Fatalf("the mistakes made heartbeats: %d %v", list.Total, err)
		}

		// Created, it lands on its page; edited, the form shows what is
		// stored.
		r = editor.post(ws+"/heartbeats", form("name", "Reports", "kind", "period", "period", "86400", "grace", "", "max-runtime", "900",
			"slo-target", "99.5", "slo-period", "30"))
		if r.status != 303 || !strings.HasPrefix(r.header.Get("Location"), ws+"/heartbeats/hb_") {
			t.Fatalf("create: %d %q %.600s", r.status, r.header.Get("Location"), r.body)
		}
		reports := strings.TrimSuffix(strings.TrimPrefix(r.header.Get("Location"), ws+"/heartbeats/"), "#url-h")
		r = editor.get(ws + "/heartbeats/" + reports)
		for _, want := range []string{"The heartbeat is created", "every 24 h", "5 min", "15 min", "Objective", "99.5 %"} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the new heartbeat's page lacks %q", want)
			}
		}
		r = editor.get(ws + "/heartbeats/" + reports + "/edit")
		for _, want := range []string{`value="Reports"`, `value="86400"`, `value="300"`, `value="900"`, `value="99.5"`, `id="kind-period" name="kind" value="period" checked`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("the edit form lacks %q", want)
			}
		}
		if r := editor.post(ws+"/heartbeats/"+reports+"/edit", form("name", "Reports", "kind", "cron", "cron", "0 6 * * 1", "timezone", "")); r.status != 303 {
			t.Fatalf("edit: %d %.600s", r.status, r.body)
		}
		h, err := e.App.GetHeartbeat(context.Background(), app.Actor{WorkspaceID: e.WsA.ID, Role: account.RoleViewer}, reports)
		if err != nil || h.Schedule.Cron != "0 6 * * 1" || h.Schedule.Timezone != "UTC" || h.Schedule.PeriodSeconds != 0 || h.MaxRuntimeSeconds != 0 || h.SLO != nil {
			t.Errorf("after the edit: %+v %v", h, err)
		}
		if r := editor.post(ws+"/heartbeats/"+other+"/edit", form("name", "mine now", "kind", "period", "period", "600")); r.status != 404 {
			t.Errorf("editing another workspace's heartbeat: %d", r.status)
		}

		// Pause, resume, a new ping URL, delete.
		if r := editor.post(ws+"/heartbeats/"+sync+"/pause", form()); r.status != 303 || e.hbState(sync) != monitor.StatePaused {
			t.Fatalf("pause: %d %s", r.status, e.hbState(sync))
		}
		if r := editor.get(ws + "/heartbeats/" + sync); !strings.Contains(r.body, `/resume"`) || !strings.Contains(r.body, "The heartbeat is paused") {
			t.Errorf("a paused heartbeat's page: %.3000s", r.body)
		}
		if r := editor.post(ws+"/heartbeats/"+sync+"/resume", form()); r.status != 303 || e.hbState(sync) == monitor.StatePaused {
			t.Fatalf("resume: %d %s", r.status, e.hbState(sync))
		}
		if r := editor.post(ws+"/heartbeats/"+sync+"/rotate", form()); r.status != 303 {
			t.Fatalf("rotate: %d", r.status)
		}
		r = editor.get(ws + "/heartbeats/" + sync)
		if !strings.Contains(r.body, "a new ping URL") || strings.Contains(r.body, syncURL+"<") || !strings.Contains(r.body, `<code id="ping-url" class="secret uri">`+e.Srv.URL+"/ping/") {
			t.Errorf("after the rotation the page shows the old URL or none: %.3000s", r.body)
		}
		if res := e.Get(strings.TrimPrefix(syncURL, e.Srv.URL)); res.Status != 404 {
			t.Errorf("the old ping URL: %d", res.Status)
		}
		if r := editor.post(ws+"/heartbeats/"+sync+"/delete", form()); r.status != 303 || r.header.Get("Location") != ws+"/heartbeats" {
			t.Fatalf("delete: %d %q", r.status, r.header.Get("Location"))
		}
		if r := editor.get(ws + "/heartbeats"); !strings.Contains(r.body, "The heartbeat is deleted") || strings.Contains(r.body, sync) {
			t.Errorf("the list after deleting: %.2000s", r.body)
		}
	})
}

var snippetRE = regexp.MustCompile(`(?s)<code id="(snippet-[a-z]+)">(.*?)</code>`)

// snippets are the snippets of a heartbeat's page by id, as text.
func snippets(t *testing.T, body string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range snippetRE.FindAllStringSubmatch(body, -1) {
		out[m[1]] = html.UnescapeString(m[2])
	}
	if len(out) != 4 {
		t.Fatalf("snippets %v in %.3000s", out, body)
	}
	return out
}

// TestHeartbeatSnippets: every snippet calls the heartbeat's real ping
// URL, and the curl snippet, run as it is shown, turns the heartbeat UP on
// its page.
func TestHeartbeatSnippets(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		ws := "/w/" + e.WsA.ID
		viewer := e.member("viewer@a.test", account.RoleViewer)
		id, pingURL := e.heartbeat(e.KeyA, "Every hour", map[string]any{"periodSeconds": 3600})
		page := viewer.get(ws + "/heartbeats/" + id)
		if !strings.Contains(page.body, `data-state="PENDING"`) {
			t.Fatalf("a new heartbeat is not pending: %.2000s", page.body)
		}
		s := snippets(t, page.body)
		for name, want := range map[string][]string{
			"snippet-curl":       {"curl -fsS -m 10 --retry 5 -o /dev/null " + pingURL},
			"snippet-crontab":    {"0 * * * * curl -fsS -m 10 --retry 5 -o /dev/null " + pingURL + "/start; /usr/local/bin/job; curl -fsS -m 10 --retry 5 -o /dev/null " + pingURL + "/$?"},
			"snippet-systemd":    {"ExecStartPre=-/usr/bin/curl -fsS -m 10 --retry 5 -o /dev/null " + pingURL + "/start", "ExecStartPost=-/usr/bin/curl -fsS -m 10 --retry 5 -o /dev/null " + pingURL + "\n", "OnFailure=job-failed.service", pingURL + "/fail", "OnUnitActiveSec=3600s"},
			"snippet-powershell": {`$url = "` + pingURL + `"`, `Invoke-RestMethod -Uri "$url/start"`, `Invoke-RestMethod -Uri "$url/$code"`},
		} {
			for _, w := range want {
				if !strings.Contains(s[name], w) {
					t.Errorf("%s %q lacks %q", name, s[name], w)
				}
			}
		}
		// The curl snippet, run by a shell as it is shown; without curl, the
		// same request from Go to the URL the snippet names.
		if _, err := exec.LookPath("curl"); err == nil {
			if out, err := exec.Command("sh", "-c", s["snippet-curl"]).CombinedOutput(); err != nil {
				t.Fatalf("the curl snippet: %v: %s", err, out)
			}
		} else {
			fields := strings.Fields(s["snippet-curl"])
			e.ping(fields[len(fields)-1], "")
		}
		wait.For(t, 20*time.Second, "the heartbeat's page to show it up", func() bool {
			return strings.Contains(viewer.get(ws+"/heartbeats/"+id).body, `data-state="UP"`)
		})
		if r := viewer.get(ws + "/heartbeats/" + id); !strings.Contains(r.body, `<span class="badge sig-success">success</span>`) {
			t.Errorf("the page lists no ping: %.3000s", r.body)
		}
	})
}
