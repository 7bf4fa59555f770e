package account

import "slices"

// Scope is a permission an API key may carry (spec §5, exact values).
type Scope string

const (
	ScopeMonitorsRead       Scope = "monitors:read"
	ScopeMonitorsWrite      Scope = "monitors:write"
	ScopeIncidentsRead      Scope = "incidents:read"
	ScopeIncidentsWrite     Scope = "incidents:write"
	ScopeMetricsRead        Scope = "metrics:read"
	ScopeStatusPagesRead    Scope = "status_pages:read"
	ScopeStatusPagesWrite   Scope = "status_pages:write"
	ScopeNotificationsRead  Scope = "notifications:read"
	ScopeNotificationsWrite Scope = "notifications:write"
)

// Scopes lists every scope in the spec's order.
var Scopes = []Scope{
	ScopeMonitorsRead, ScopeMonitorsWrite,
	ScopeIncidentsRead, ScopeIncidentsWrite,
	ScopeMetricsRead,
	ScopeStatusPagesRead, ScopeStatusPagesWrite,
	ScopeNotificationsRead, ScopeNotificationsWrite,
}

// ParseScope accepts exactly the spec's spellings.
func ParseScope(s string) (Scope, bool) {
	sc := Scope(s)
	return sc, slices.Contains(Scopes, sc)
}

// Role is a user's standing in a workspace.
type Role string

const (
	RoleOwner  Role = "owner"
	RoleAdmin  Role = "admin"
	RoleEditor Role = "editor"
	RoleViewer Role = "viewer"
)

// Roles lists the roles from most to least powerful.
var Roles = []Role{RoleOwner, RoleAdmin, RoleEditor, RoleViewer}

func ParseRole(s string) (Role, bool) {
	r := Role(s)
	return r, slices.Contains(Roles, r)
}

// Grants reports whether the role allows the scope (DESIGN §3): viewers read
// everything, editors also write monitors and incidents, admins and owners
// do everything.
func (r Role) Grants(s Scope) bool {
	switch r {
	case RoleOwner, RoleAdmin:
		return true
	case RoleEditor:
		return s.IsRead() || s == ScopeMonitorsWrite || s == ScopeIncidentsWrite
	case RoleViewer:
		return s.IsRead()
	}
	return false
}

// ManagesKeys reports whether the role may create keys and manage members.
func (r Role) ManagesKeys() bool { return r == RoleOwner || r == RoleAdmin }

// IsRead reports whether the scope only reads.
func (s Scope) IsRead() bool {
	return len(s) > 5 && s[len(s)-5:] == ":read"
}
