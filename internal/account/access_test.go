package account_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/account"
)

// TestRoleGrants checks every role against every scope: the table of
// DESIGN §3 written out in full, so a change to the rules has to change it.
func TestRoleGrants(t *testing.T) {
	const (
		y = true
		n = false
	)
	//                      m:r m:w i:r i:w met s:r s:w n:r n:w
	want := map[account.Role][9]bool{
		account.RoleOwner:  {y, y, y, y, y, y, y, y, y},
		account.RoleAdmin:  {y, y, y, y, y, y, y, y, y},
		account.RoleEditor: {y, y, y, y, y, y, n, y, n},
		account.RoleViewer: {y, n, y, n, y, y, n, y, n},
		"":                 {n, n, n, n, n, n, n, n, n}, // not a member
		"superuser":        {n, n, n, n, n, n, n, n, n}, // unknown role
		"Owner":            {n, n, n, n, n, n, n, n, n}, // roles are case-sensitive
	}
	order := []account.Scope{
		account.ScopeMonitorsRead, account.ScopeMonitorsWrite,
		account.ScopeIncidentsRead, account.ScopeIncidentsWrite,
		account.ScopeMetricsRead,
		account.ScopeStatusPagesRead, account.ScopeStatusPagesWrite,
		account.ScopeNotificationsRead, account.ScopeNotificationsWrite,
	}
	if len(order) != len(account.Scopes) {
		t.Fatalf("the table covers %d scopes, account.Scopes has %d", len(order), len(account.Scopes))
	}
	for _, r := range account.Roles {
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
		role account.Role
		want bool
	}{
		{account.RoleOwner, true},
		{account.RoleAdmin, true},
		{account.RoleEditor, false},
		{account.RoleViewer, false},
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
	for _, s := range account.Scopes {
		want := s == account.ScopeMonitorsRead || s == account.ScopeIncidentsRead || s == account.ScopeMetricsRead ||
			s == account.ScopeStatusPagesRead || s == account.ScopeNotificationsRead
		if got := s.IsRead(); got != want {
			t.Errorf("Scope(%q).IsRead() = %v, want %v", s, got, want)
		}
	}
	for _, s := range []account.Scope{"", ":read", "read", "monitors:reader"} {
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
		got, ok := account.ParseScope(c.in)
		if ok != c.ok {
			t.Errorf("ParseScope(%q) ok = %v, want %v", c.in, ok, c.ok)
		}
		if ok && string(got) != c.in {
			t.Errorf("ParseScope(%q) = %q", c.in, got)
		}
	}
	for _, s := range account.Scopes {
		if _, ok := account.ParseScope(string(s)); !ok {
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
		got, ok := account.ParseRole(c.in)
		if ok != c.ok {
			t.Errorf("ParseRole(%q) ok = %v, want %v", c.in, ok, c.ok)
		}
		if ok && string(got) != c.in {
			t.Errorf("ParseRole(%q) = %q", c.in, got)
		}
	}
}
