package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
)

// route is one authenticated API operation and what success looks like.
type route struct {
	method, path string // {id}: a monitor (or maintenance window) id is filled in
	scope        account.Scope
	body         any
	ok           int
}

// probeDraft is a check that answers at once: nothing listens on port 1.
var probeDraft = map[string]any{"type": "tcp", "name": "closed", "config": map[string]any{"host": "127.0.0.1", "port": 1, "timeoutSeconds": 2}}

func monitorRoutes() []route {
	create := map[string]any{"type": "tcp", "name": "db", "config": map[string]any{"host": "db.internal", "port": 5432}}
	return []route{
		{"GET", "/api/v1/monitors", account.ScopeMonitorsRead, nil, 200},
		{"POST", "/api/v1/monitors", account.ScopeMonitorsWrite, create, 201},
		{"GET", "/api/v1/monitors/{id}", account.ScopeMonitorsRead, nil, 200},
		{"PATCH", "/api/v1/monitors/{id}", account.ScopeMonitorsWrite, map[string]any{"name": "renamed"}, 200},
		{"POST", "/api/v1/monitors/{id}/pause", account.ScopeMonitorsWrite, nil, 200},
		{"POST", "/api/v1/monitors/{id}/resume", account.ScopeMonitorsWrite, nil, 200},
		{"GET", "/api/v1/monitors/{id}/checks", account.ScopeMonitorsRead, nil, 200},
		{"GET", "/api/v1/monitors/{id}/states", account.ScopeMonitorsRead, nil, 200},
		{"POST", "/api/v1/monitors/test", account.ScopeMonitorsWrite, probeDraft, 200},
		{"GET", "/api/v1/monitors/{id}/metrics", account.ScopeMetricsRead, nil, 200},
		{"GET", "/api/v1/metrics", account.ScopeMetricsRead, nil, 200},
		{"GET", "/api/v1/metrics/prometheus", account.ScopeMetricsRead, nil, 200},
		{"DELETE", "/api/v1/monitors/{id}", account.ScopeMonitorsWrite, nil, 204},
	}
}

// maintenanceRoutes are the maintenance-window routes; {id} is a window of
// the monitor monitorID.
func maintenanceRoutes(monitorID string) []route {
	create := map[string]any{"name": "upgrade", "monitorIds": []string{monitorID},
		"startsAt": time.Now().UTC().Format(time.RFC3339), "endsAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	return []route{
		{"GET", "/api/v1/maintenance-windows", account.ScopeMonitorsRead, nil, 200},
		{"POST", "/api/v1/maintenance-windows", account.ScopeMonitorsWrite, create, 201},
		{"GET", "/api/v1/maintenance-windows/{id}", account.ScopeMonitorsRead, nil, 200},
		{"PATCH", "/api/v1/maintenance-windows/{id}", account.ScopeMonitorsWrite, map[string]any{"name": "renamed"}, 200},
		{"DELETE", "/api/v1/maintenance-windows/{id}", account.ScopeMonitorsWrite, nil, 204},
	}
}

func heartbeatRoutes() []route {
	create := map[string]any{"name": "backup", "schedule": map[string]any{"cron": "30 2 * * *", "timezone": "Europe/Berlin"}}
	return []route{
		{"GET", "/api/v1/heartbeats", account.ScopeMonitorsRead, nil, 200},
		{"POST", "/api/v1/heartbeats", account.ScopeMonitorsWrite, create, 201},
		{"GET", "/api/v1/heartbeats/{id}", account.ScopeMonitorsRead, nil, 200},
		{"PATCH", "/api/v1/heartbeats/{id}", account.ScopeMonitorsWrite, map[string]any{"name": "renamed"}, 200},
		{"POST", "/api/v1/heartbeats/{id}/pause", account.ScopeMonitorsWrite, nil, 200},
		{"POST", "/api/v1/heartbeats/{id}/resume", account.ScopeMonitorsWrite, nil, 200},
		{"POST", "/api/v1/heartbeats/{id}/rotate-token", account.ScopeMonitorsWrite, nil, 200},
		{"GET", "/api/v1/heartbeats/{id}/pings", account.ScopeMonitorsRead, nil, 200},
		{"GET", "/api/v1/heartbeats/{id}/states", account.ScopeMonitorsRead, nil, 200},
		{"GET", "/api/v1/heartbeats/{id}/metrics", account.ScopeMetricsRead, nil, 200},
		{"DELETE", "/api/v1/heartbeats/{id}", account.ScopeMonitorsWrite, nil, 204},
	}
}

// heartbeatIn creates a heartbeat in a workspace, as its owner would.
func (e *env) heartbeatIn(ws account.Workspace) string {
	e.t.Helper()
	owner := app.Actor{WorkspaceID: ws.ID, Role: account.RoleOwner}
	h, err := e.app.CreateHeartbeat(context.Background(), owner, heartbeat.Draft{Name: "seed",
		Schedule: heartbeat.Schedule{PeriodSeconds: 3600}})
	if err != nil {
		e.t.Fatal(err)
	}
	return h.ID
}

// windowIn creates a maintenance window over a monitor, as the workspace's
// owner would.
func (e *env) windowIn(ws account.Workspace, monitorID string) string {
	e.t.Helper()
	owner := app.Actor{WorkspaceID: ws.ID, Role: account.RoleOwner}
	now := time.Now()
	v, err := e.app.CreateMaintenanceWindow(context.Background(), owner, app.MaintenanceDraft{Name: "seed",
		StartsAt: now, EndsAt: now.Add(time.Hour), MonitorIDs: []string{monitorID}})
	if err != nil {
		e.t.Fatal(err)
	}
	return v.ID
}

// clearWindows deletes the workspace's maintenance windows, so tests that
// make many stay within the per-workspace limit.
func (e *env) clearWindows(ws account.Workspace) {
	e.t.Helper()
	ctx := context.Background()
	owner := app.Actor{WorkspaceID: ws.ID, Role: account.RoleOwner}
	for {
		p, err := e.app.ListMaintenanceWindows(ctx, owner, app.PageRequest{Limit: app.MaxPageLimit})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, w := range p.Items {
			if err := e.app.DeleteMaintenanceWindow(ctx, owner, w.ID); err != nil {
				e.t.Fatal(err)
			}
		}
		if p.NextCursor == "" {
			return
		}
	}
}

// allRoutes lists every authenticated route with the id each one's {id}
// takes, made afresh in workspace ws.
func (e *env) allRoutes(ws account.Workspace) (routes []route, targets []string) {
	e.t.Helper()
	e.clearWindows(ws)
	monitorID := e.monitorIn(ws)
	for _, r := range monitorRoutes() {
		routes, targets = append(routes, r), append(targets, r.target(monitorID))
	}
	subject := e.monitorIn(ws)
	windowID := e.windowIn(ws, subject)
	for _, r := range maintenanceRoutes(subject) {
		routes, targets = append(routes, r), append(targets, r.target(windowID))
	}
	e.clearStatusPages(ws)
	pageID := e.pageIn(ws, subject)
	for _, r := range statusPageRoutes(subject) {
		routes, targets = append(routes, r), append(targets, r.target(pageID))
	}
	heartbeatID := e.heartbeatIn(ws)
	for _, r := range heartbeatRoutes() {
		routes, targets = append(routes, r), append(targets, r.target(heartbeatID))
	}
	return routes, targets
}

// monitorIn creates a monitor in a workspace, as its owner would.
func (e *env) monitorIn(ws account.Workspace) string {
	e.t.Helper()
	owner := app.Actor{WorkspaceID: ws.ID, Role: account.RoleOwner}
	m, err := e.app.CreateMonitor(context.Background(), owner, monitor.Draft{Type: monitor.TypeTCP, Name: "seed",
		Config: monitor.Config{Host: "seed.internal", Port: 22}})
	if err != nil {
		e.t.Fatal(err)
	}
	return m.ID
}

func (r route) target(id string) string { return strings.Replace(r.path, "{id}", id, 1) }

// TestAuthorizationMatrix: every route × every single scope and all scopes
// × every role × bound and account-wide keys. A key lacking the route's
// scope gets insufficient_scope; a role that does not grant it, forbidden.
// TestAuthorizationMatrix runs every API route for every role, scope set
// and kind of key. A person may only make keys with scopes their role
// grants: asking for more is refused, naming the scope. What a key may do
// is its scopes ∩ its creator's role now, so the keys that carry more than
// the role grants are made while their creator is an owner, who is then
// demoted to the role: every request must hold them to it.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		scopeSets := [][]account.Scope{account.Scopes}
		for _, s := range account.Scopes {
			scopeSets = append(scopeSets, []account.Scope{s})
		}
		type kind struct {
			name        string
			accountWide bool
			header      bool
		}
		kinds := []kind{{"bound", false, false}, {"bound+header", false, true}, {"account-wide", true, true}}
		n := 0
		for _, role := range account.Roles {
			// demoted holds keys made while an owner; they are demoted below.
			demoted := "demoted-" + string(role) + "@a.test"
			if _, err := e.app.CreateUser(ctx, app.UserRequest{Email: demoted, Workspace: e.wsA.ID, Role: account.RoleOwner}); err != nil {
				t.Fatal(err)
			}
			keys := map[string]string{}
			for i, scopes := range scopeSets {
				grants := !slices.ContainsFunc(scopes, func(s account.Scope) bool { return !role.Grants(s) })
				for _, k := range kinds {
					var s []string
					for _, sc := range scopes {
						s = append(s, string(sc))
					}
					_, err := e.app.CreateKeyForUser(ctx, app.OperatorKeyRequest{Email: e.members[role], Workspace: e.wsA.ID,
						AccountWide: k.accountWide, Scopes: s})
					switch {
					case grants && err != nil:
						t.Errorf("%s making a key with %v: %v", role, scopes, err)
					case !grants && (errs.KindOf(err) != errs.KindForbidden || !strings.Contains(err.Error(), "does not grant")):
						t.Errorf("%s making a key with %v: %v, want refused as forbidden with the reason", role, scopes, err)
					}
					keys[fmt.Sprint(i, k.name)] = e.key(demoted, e.wsA.ID, k.accountWide, scopes...)
				}
			}
			u, err := e.db.UserByEmail(ctx, demoted)
			if err != nil {
				t.Fatal(err)
			}
			if role != account.RoleOwner {
				if err := e.app.ChangeRole(ctx, app.Actor{UserID: "usr_test", WorkspaceID: e.wsA.ID, Role: account.RoleOwner}, u.ID, string(role)); err != nil {
					t.Fatal(err)
				}
			}
			for i, scopes := range scopeSets {
				for _, k := range kinds {
					key := keys[fmt.Sprint(i, k.name)]
					var hdr []string
					if k.header {
						hdr = []string{"X-Workspace-Id", e.wsA.ID}
					}
					// One monitor (and one window) serves every route of this
					// combination; the deletes come last.
					routes, targets := e.allRoutes(e.wsA)
					for i, r := range routes {
						want, wantCode := r.ok, ""
						switch {
						case !slices.Contains(scopes, r.scope):
							want, wantCode = 403, "insufficient_scope"
						case !role.Grants(r.scope):
							want, wantCode = 403, "forbidden"
						}
						res := e.req(r.method, targets[i], key, r.body, hdr...)
						n++
						name := fmt.Sprintf("%s %s as %s with %v (%s)", r.method, r.path, role, scopes, k.name)
						if res.status != want {
							t.Errorf("%s: status %d, want %d: %s", name, res.status, want, res.body)
							continue
						}
						if wantCode != "" && res.code(t) != wantCode {
							t.Errorf("%s: code %s, want %s", name, res.code(t), wantCode)
						}
						if res.header.Get("X-RateLimit-Limit") != "600" || res.header.Get("X-RateLimit-Remaining") == "" || res.header.Get("X-RateLimit-Reset") == "" {
							t.Errorf("%s: rate-limit headers missing: %v", name, res.header)
						}
					}
				}
			}
		}
		t.Logf("%d requests checked", n)
	})
}

// TestWorkspaceIsolation: another workspace's monitors do not exist for a
// key, and keys act only where their owner is a member.
func TestWorkspaceIsolation(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		owner := e.members[account.RoleOwner]
		bound := e.key(owner, e.wsA.ID, false, account.Scopes...)
		wide := e.key(owner, e.wsA.ID, true, account.Scopes...)
		routes, _ := e.allRoutes(e.wsA)
		for i, r := range routes {
			_, others := e.allRoutes(e.wsB)
			if strings.Contains(r.path, "{id}") {
				res := e.req(r.method, others[i], bound, r.body)
				if res.status != 404 || res.code(t) != "not_found" {
					t.Errorf("%s %s on workspace B's resource: %d %s, want 404 not_found", r.method, r.path, res.status, res.body)
				}
			}
			cases := []struct {
				name string
				key  string
				hdr  []string
				want int
				code string
			}{
				{"bound key naming another workspace", bound, []string{"X-Workspace-Id", e.wsB.ID}, 403, "forbidden"},
				{"account-wide key without X-Workspace-Id", wide, nil, 400, "workspace_required"},
				{"account-wide key in a workspace its owner is not in", wide, []string{"X-Workspace-Id", e.wsB.ID}, 403, "forbidden"},
				{"account-wide key in an unknown workspace", wide, []string{"X-Workspace-Id", "ws_nope"}, 403, "forbidden"},
				{"no key", "", nil, 401, "unauthorized"},
				{"unknown key", "tsk_" + strings.Repeat("A", 43), nil, 401, "unauthorized"},
				{"not a key", "hello", nil, 401, "unauthorized"},
			}
			// Every case fails before acting, so one set of resources serves them all.
			_, targets := e.allRoutes(e.wsA)
			for _, c := range cases {
				res := e.req(r.method, targets[i], c.key, r.body, c.hdr...)
				if res.status != c.want || res.code(t) != c.code {
					t.Errorf("%s %s, %s: %d %s, want %d %s", r.method, r.path, c.name, res.status, res.body, c.want, c.code)
				}
				if c.want == 401 && !strings.HasPrefix(res.header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("401 without WWW-Authenticate: %v", res.header)
				}
			}
		}
		// Workspace B's owner still sees their monitor.
		bKey := e.key(e.ownerB, e.wsB.ID, false, account.ScopeMonitorsRead)
		if res := e.req("GET", "/api/v1/monitors", bKey, nil); res.status != 200 || strings.Contains(string(res.body), e.wsA.ID) {
			t.Errorf("B's list: %d %s", res.status, res.body)
		}
		// A wrong scheme is not a bearer key.
		if res := e.req("GET", "/api/v1/monitors", "", nil, "Authorization", "Basic "+bound); res.status != 401 {
			t.Errorf("Basic scheme accepted: %d", res.status)
		}
	})
}

// TestKeyFollowsCreatorRole: a key never does more than its creator's role
// allows now: demotion and removal bite at once, revocation too.
func TestKeyFollowsCreatorRole(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		email := e.members[account.RoleEditor]
		key := e.key(email, e.wsA.ID, false, account.ScopeMonitorsRead, account.ScopeMonitorsWrite)
		create := monitorRoutes()[1]
		if res := e.req("POST", create.path, key, create.body); res.status != 201 {
			t.Fatalf("editor create: %d %s", res.status, res.body)
		}
		u, err := e.db.UserByEmail(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.db.PutMembership(ctx, account.Membership{WorkspaceID: e.wsA.ID, UserID: u.ID, Role: account.RoleViewer}); err != nil {
			t.Fatal(err)
		}
		if res := e.req("POST", create.path, key, create.body); res.status != 403 || res.code(t) != "forbidden" {
			t.Errorf("after demotion to viewer: %d %s, want 403 forbidden", res.status, res.body)
		}
		if res := e.req("GET", "/api/v1/monitors", key, nil); res.status != 200 {
			t.Errorf("viewer read: %d %s", res.status, res.body)
		}
		if err := e.db.DeleteMembership(ctx, e.wsA.ID, u.ID); err != nil {
			t.Fatal(err)
		}
		if res := e.req("GET", "/api/v1/monitors", key, nil); res.status != 403 || res.code(t) != "forbidden" {
			t.Errorf("after removal: %d %s, want 403 forbidden", res.status, res.body)
		}

		owner := e.ownerKey()
		p, err := e.app.Authenticate(ctx, owner, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := e.db.RevokeAPIKey(ctx, p.KeyID(), e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if res := e.req("GET", "/api/v1/monitors", owner, nil); res.status != 401 || res.code(t) != "unauthorized" {
			t.Errorf("revoked key: %d %s, want 401", res.status, res.body)
		}
	})
}

// TestPublicDocument: the OpenAPI document needs no key.
func TestPublicDocument(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *env) {
		res := e.req("GET", "/api/v1/openapi.json", "", nil)
		if res.status != http.StatusOK || !strings.Contains(string(res.body), `"openapi":"3.1.0"`) {
			t.Fatalf("openapi.json: %d %.200s", res.status, res.body)
		}
	})
}
