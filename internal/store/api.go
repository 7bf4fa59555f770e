package store

import (
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// This file lists the records the store keeps besides domain monitors. Every
// method returns an error wrapping errs.ErrNotFound when a row is missing
// (or belongs to another workspace), and ErrConflict on a unique violation.

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

// KeyGrant is what one authenticated request needs, read in one query: the
// key, and its creator's role in the workspace the request acts in.
type KeyGrant struct {
	Key         APIKey
	WorkspaceID string       // the workspace the request acts in
	Role        monitor.Role // "" when the creator is not a member of it
}

// IdempotencyScope names one Idempotency-Key of one API key in one workspace.
type IdempotencyScope struct {
	WorkspaceID string
	KeyID       string
	Key         string
}

// IdempotencyRecord is the stored outcome of a request made with an
// Idempotency-Key. Done is false while the first request still runs.
type IdempotencyRecord struct {
	Fingerprint []byte
	Done        bool
	Status      int
	Header      []byte // JSON object of the response headers worth replaying
	Body        []byte
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// RateDecision is the outcome of taking one token from a GCRA bucket.
type RateDecision struct {
	Allowed bool
	// TAT is the bucket's theoretical arrival time after this request (when
	// allowed) or as it stands (when refused).
	TAT time.Time
}
