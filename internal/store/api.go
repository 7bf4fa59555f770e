package store

import (
	"time"

	"github.com/tocsin/tocsin/internal/account"
)

// This file lists the records the store keeps besides the domain's
// (monitors, accounts, maintenance windows). Every method returns an error
// wrapping errs.ErrNotFound when a row is missing (or belongs to another
// workspace), and ErrConflict on a unique violation.

// KeyGrant is what one authenticated request needs, read in one query: the
// key, and its creator's role in the workspace the request acts in.
type KeyGrant struct {
	Key         account.APIKey
	WorkspaceID string       // the workspace the request acts in
	Role        account.Role // "" when the creator is not a member of it
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
