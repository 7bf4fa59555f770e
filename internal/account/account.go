// Package account holds who may act in Tocsin: users, the workspaces they
// belong to and with what role, and the API keys they act through. These
// are records, kept by the store and judged by app, beside the rules of
// what each may do: roles and the scopes they grant (access.go). It is
// pure: no clock, no I/O.
package account

import "time"

// User is an account that signs in to the web app and owns API keys.
type User struct {
	ID                 string
	Email              string // stored lower-cased; unique
	PasswordHash       string // argon2id, PHC string format
	MustChangePassword bool   // set for one-time passwords
	// TOTPSecret is the sealed (secrets.Keyring) RFC 6238 secret; nil
	// when two-factor sign-in is off. TOTPEnabledAt is when it was
	// turned on.
	TOTPSecret    []byte
	TOTPEnabledAt time.Time
	CreatedAt     time.Time
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
	Role        Role
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
	Scopes      []Scope
	CreatedAt   time.Time
	LastUsedAt  time.Time // zero when never used
	RevokedAt   time.Time // zero when active
}

// MaxQuota is the largest count quota an operator may set.
const MaxQuota = 10_000_000

// Session is a signed-in browser of the web app. The cookie holds a random
// token; only its SHA-256 is stored, so a copy of the database signs nobody
// in. A session ends when it has been idle too long, when it is too old
// whatever its use, when its person signs out (here or everywhere) or
// changes their password.
type Session struct {
	ID          string // ses_…, names the session in lists; never the token
	UserID      string
	TokenHash   []byte // SHA-256 of the cookie's token, unique
	WorkspaceID string // the workspace the person last worked in; "" for none yet
	// SecondFactorPending is set between a right password and a right
	// second factor: such a session may only finish signing in.
	SecondFactorPending bool
	UserAgent           string // as the browser sent it, trimmed, for "where am I signed in"
	ClientAddr          string
	CreatedAt           time.Time
	LastSeenAt          time.Time
}

// Invite is a single-use, expiring link that makes whoever opens it (signed
// in, or signing up with it) a member of a workspace with a role. Only the
// token's SHA-256 is stored: the link is shown once, to its maker.
type Invite struct {
	ID          string // inv_…
	WorkspaceID string
	TokenHash   []byte
	Role        Role
	CreatedBy   string // user id
	CreatedAt   time.Time
	ExpiresAt   time.Time
	AcceptedAt  time.Time // zero until used
	AcceptedBy  string    // user id, "" until used
	RevokedAt   time.Time // zero unless withdrawn
}

// Member is a person in a workspace, as its member list shows them.
type Member struct {
	UserID   string
	Email    string
	Role     Role
	JoinedAt time.Time
}

// MemberOf is a workspace a person belongs to, with their role there.
type MemberOf struct {
	Workspace Workspace
	Role      Role
	JoinedAt  time.Time
}

// KeyListing is an API key with its creator's e-mail, for the key lists.
type KeyListing struct {
	Key          APIKey
	CreatorEmail string
}
