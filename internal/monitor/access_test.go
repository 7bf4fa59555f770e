package monitor_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/monitor"
)

// TestRoleGrants checks every role against every scope: the table of
// DESIGN §3 written out in full, so a change to the rules has to change it.
func TestRoleGrants(t *testing.T) {
	const (
		y = true
		n = false
	)
	//                      m:r m:w i:r i:w met s:r s:w n:r n:w
	want := map[monitor.Role][9]bool{
		monitor.RoleOwner:  {y, y, y, y, y, y, y, y, y},
		monitor.RoleAdmin:  {y, y, y, y, y, y, y, y, y},
		monitor.RoleEditor: {y, y, y, y, y, y, n, y, n},
		monitor.RoleViewer: {y, n, y, n, y, y, n, y, n},
		"":                 {n, n, n, n, n, n, n, n, n}, // not a member
		"superuser":        {n, n, n, n, n, n, n, n, n}, // unknown role
		"Owner":            {n, n, n, n, n, n, n, n, n}, // roles are case-sensitive
	}
	order := []monitor.Scope{
		monitor.ScopeMonitorsRead, monitor.ScopeMonitorsWrite,
		monitor.ScopeIncidentsRead, monitor.ScopeIncidentsWrite,
		monitor.ScopeMetricsRead,
		monitor.ScopeStatusPagesRead, monitor.ScopeStatusPagesWrite,
		monitor.ScopeNotificationsRead, monitor.ScopeNotificationsWrite,
	}
	if len(order) != len(monitor.Scopes) {
		t.Fatalf("the table covers %d scopes, monitor.Scopes has %d", len(order), len(monitor.Scopes))
	}
	for _, r := range monitor.Roles {
		if _, ok := want[r]; !ok {
			t.Errorf("role %q is missing from the table", r)
		}
	}
	for role, row := range want {
		for i, s := range order {
			if got := role.Grants(s); got != row[i] {
				t.Errorf("Role(%q).Grants(%q) = %v, want %v", role, s, got, row[i])
			}
		}
	}
}

func TestRoleManagesKeys(t *testing.T) {
	cases := []struct {
		role monitor.Role
		want bool
	}{
		{monitor.RoleOwner, true},
		{monitor.RoleAdmin, true},
		{monitor.RoleEditor, false},
		{monitor.RoleViewer, false},
		{"", false},
		{"ADMIN", false},
	}
	for _, c := range cases {
		if got := c.role.ManagesKeys(); got != c.want {
			t.Errorf("Role(%q).ManagesKeys() = %v, want %v", c.role, got, c.want)
		}
	}
}

func TestScopeIsRead(t *testing.T) {
	for _, s := range monitor.Scopes {
		want := s == monitor.ScopeMonitorsRead || s == monitor.ScopeIncidentsRead || s == monitor.ScopeMetricsRead ||
			s == monitor.ScopeStatusPagesRead || s == monitor.ScopeNotificationsRead
		if got := s.IsRead(); got != want {
			t.Errorf("Scope(%q).IsRead() = %v, want %v", s, got, want)
		}
	}
	for _, s := range []monitor.Scope{"", ":read", "read", "monitors:reader"} {
		if s.IsRead() {
			t.Errorf("Scope(%q).IsRead() = true, want false", s)
		}
	}
}

func TestParseScope(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"monitors:read", true},
		{"monitors:write", true},
		{"incidents:read", true},
		{"incidents:write", true},
		{"metrics:read", true},
		{"status_pages:read", true},
		{"status_pages:write", true},
		{"notifications:read", true},
		{"notifications:write", true},

		{"Monitors:Read", false},
		{"MONITORS:READ", false},
		{"monitors:Read", false},
		{" monitors:read", false},
		{"monitors:read ", false},
		{"monitors", false},
		{"monitors:", false},
		{"monitors:admin", false},
		{"metrics:write", false},
		{"status-pages:read", false},
		{"statuspages:read", false},
		{"monitors.read", false},
		{"monitors:read,incidents:read", false},
		{"*", false},
		{"", false},
	}
	for _, c := range cases {
		got, ok := monitor.ParseScope(c.in)
		if ok != c.ok {
			t.Errorf("ParseScope(%q) ok = %v, want %v", c.in, ok, c.ok)
		}
		if ok && string(got) != c.in {
			t.Errorf("ParseScope(%q) = %q", c.in, got)
		}
	}
	for _, s := range monitor.Scopes {
		if _, ok := monitor.ParseScope(string(s)); !ok {
			t.Errorf("ParseScope rejects the listed scope %q", s)
		}
	}
}

func TestParseRole(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"owner", true},
		{"admin", true},
		{"editor", true},
		{"viewer", true},
		{"Owner", false},
		{"ADMIN", false},
		{" editor", false},
		{"viewer\n", false},
		{"member", false},
		{"superuser", false},
		{"", false},
	}
	for _, c := range cases {
		got, ok := monitor.ParseRole(c.in)
		if ok != c.ok {
			t.Errorf("ParseRole(%q) ok = %v, want %v", c.in, ok, c.ok)
		}
		if ok && string(got) != c.in {
			t.Errorf("ParseRole(%q) = %q", c.in, got)
		}
	}
}
