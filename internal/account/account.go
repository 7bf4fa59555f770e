// Package account holds who may act in Tocsin: users, the workspaces they
// belong to and with what role, and the API keys they act through. These
// are records, kept by the store and judged by app; roles and scopes, the
// rules of what each may do, are in package monitor. It is pure: no clock,
// no I/O.
package account

import (
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// User is an account that signs in to the web app and owns API keys.
type User struct {
	ID                 string
	Email              string // stored lower-cased; unique
	PasswordHash       string // argon2id, PHC string format
	MustChangePassword bool   // set for one-time passwords
	CreatedAt          time.Time
}

// Workspace groups monitors and members. The quota fields are the
// operator's overrides of the server's defaults; zero is no override.
type Workspace struct {
	ID                    string
	Name                  string
	Slug                  string // unique, url-safe
	MaxMonitors           int
	MaxHeartbeats         int
	MinIntervalSeconds    int
	MaxMaintenanceWindows int
	MaxChannels           int
	CreatedAt             time.Time
}

// Quotas bound what a workspace's members may create: counts of monitors,
// heartbeats, maintenance windows and notification channels, and the
// shortest check interval. As overrides, a zero field is none.
type Quotas struct {
	Monitors           int
	Heartbeats         int
	MinIntervalSeconds int
	MaintenanceWindows int
	Channels           int
}

// Overrides are the workspace's own quotas, zero where the default applies.
func (w Workspace) Overrides() Quotas {
	return Quotas{Monitors: w.MaxMonitors, Heartbeats: w.MaxHeartbeats, MinIntervalSeconds: w.MinIntervalSeconds,
		MaintenanceWindows: w.MaxMaintenanceWindows, Channels: w.MaxChannels}
}

// Over is q with the defaults where q has no override.
func (q Quotas) Over(defaults Quotas) Quotas {
	pick := func(o, d int) int {
		if o != 0 {
			return o
		}
		return d
	}
	return Quotas{Monitors: pick(q.Monitors, defaults.Monitors), Heartbeats: pick(q.Heartbeats, defaults.Heartbeats),
		MinIntervalSeconds: pick(q.MinIntervalSeconds, defaults.MinIntervalSeconds),
		MaintenanceWindows: pick(q.MaintenanceWindows, defaults.MaintenanceWindows), Channels: pick(q.Channels, defaults.Channels)}
}

// Membership gives a user a role in a workspace.
type Membership struct {
	WorkspaceID string
	UserID      string
	Role        monitor.Role
	CreatedAt   time.Time
}

// APIKey is stored hashed; the secret itself is shown once and never kept.
type APIKey struct {
	ID          string
	UserID      string // the creator; the key never exceeds this user's role
	WorkspaceID string // "" for an account-wide key
	Name        string
	Hash        []byte // SHA-256 of the secret, unique
	Prefix      string // first characters of the secret, for display
	Scopes      []monitor.Scope
	CreatedAt   time.Time
	LastUsedAt  time.Time // zero when never used
	RevokedAt   time.Time // zero when active
}

// MaxQuota is the largest count quota an operator may set.
const MaxQuota = 10_000_000
