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

// Workspace groups monitors and members. The quota fields bound what its
// members may create.
type Workspace struct {
	ID                 string
	Name               string
	Slug               string // unique, url-safe
	MaxMonitors        int
	MinIntervalSeconds int
	CreatedAt          time.Time
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
