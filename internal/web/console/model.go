package console

import (
	"time"

	"github.com/tocsin/tocsin/internal/account"
)

// The view models: one struct per page, each with the Shell every page
// shares. The handlers fill them; nothing here reads a clock, a request or
// the database. Times are shown in UTC ("2026-11-26 09:14 UTC"); a zero
// time means "never" or "not yet" wherever a field says so.

// Nav names the main navigation's item a page belongs to (marked
// aria-current="page").
type Nav string

// The navigation's items.
const (
	NavNone       Nav = ""
	NavHome       Nav = "home"       // /w/{id}/
	NavKeys       Nav = "keys"       // /w/{id}/keys
	NavMembers    Nav = "members"    // /w/{id}/members
	NavMonitors   Nav = "monitors"   // /w/{id}/monitors and below
	NavWorkspaces Nav = "workspaces" // /workspaces
	NavAccount    Nav = "account"    // /account and below
	NavChannels   Nav = "channels"   // /w/{id}/channels and below
	NavHeartbeats Nav = "heartbeats" // /w/{id}/heartbeats and below
)

// The navigation's items of the incident and maintenance pages.
const (
	NavIncidents   Nav = "incidents"   // /w/{id}/incidents and below
	NavMaintenance Nav = "maintenance" // /w/{id}/maintenance and below
)

// FlashKind is the kind of a flash message.
type FlashKind string

// The flash kinds.
const (
	FlashSuccess FlashKind = "success"
	FlashError   FlashKind = "error"
)

// Flash is a one-time message shown above a page's content, such as
// "API key revoked." after a redirect.
type Flash struct {
	// Kind is FlashSuccess or FlashError; an error is announced with
	// role="alert", a success with role="status".
	Kind FlashKind
	// Message is the text shown; an empty Message shows no flash.
	Message string
}

// WorkspaceChoice is one workspace of the person, as the workspace
// switcher and the workspace list show it.
type WorkspaceChoice struct {
	// ID is the workspace's id (ws_…): the switcher's option value and
	// the /w/{id}/ of its links.
	ID string
	// Name is the workspace's display name.
	Name string
	// Role is the person's role in it.
	Role account.Role
}

// Shell is what every page shares: who is signed in, where they are, and
// a message to show once.
type Shell struct {
	// Email is the signed-in person's e-mail, shown in the account menu.
	// Empty on the pages of people who are not signed in; those pages get
	// the minimal layout without navigation.
	Email string
	// Workspaces are the person's workspaces for the switcher (POST
	// /switch-workspace, field "workspace"), in the order to show them.
	Workspaces []WorkspaceChoice
	// WorkspaceID is the current workspace's id; "" when the person is in
	// none (then the navigation shows no workspace items).
	WorkspaceID string
	// WorkspaceName is the current workspace's display name.
	WorkspaceName string
	// Role is the person's role in the current workspace.
	Role account.Role
	// Active is the navigation item the page belongs to.
	Active Nav
	// Flash is a message shown once above the content; zero for none.
	Flash Flash
	// ForcedPassword is set while the person must replace a one-time
	// password before anything else: the header then offers only signing
	// out.
	ForcedPassword bool
	// BaseURL is the app's public origin without a trailing slash
	// ("https://tocsin.example.com"), for the examples that show full URLs.
	BaseURL string
	// Live is the path of the workspace's live stream ("/w/{ws}/live") on
	// pages whose monitors and heartbeats change state while open: the
	// script patches their rows ([data-monitor-id], [data-heartbeat-id])
	// from it. Empty: the page does not follow changes.
	Live string

	bare bool // the minimal layout, whoever is signed in
}

// FormErrors is what went wrong with a submitted form: a message per
// field and a summary for the top of the form. The zero value is no
// error.
type FormErrors struct {
	// Summary is the error summary shown at the top of the form
	// (role="alert"). When it is empty and Fields is not, the summary
	// says "Please correct the marked fields."; a form-wide error (such
	// as "Wrong e-mail or password.") is a Summary without Fields.
	Summary string
	// Fields maps a form field's name ("email", "name", "scope"…) to its
	// message, shown under the field and tied to it with
	// aria-describedby.
	Fields map[string]string
}

// Any reports whether there is an error to show.
func (e FormErrors) Any() bool { return e.Summary != "" || len(e.Fields) > 0 }

// Field is the message for one field, "" when it has none.
func (e FormErrors) Field(name string) string { return e.Fields[name] }

// SummaryText is the summary to show: Summary, or a generic sentence when
// only fields are wrong.
func (e FormErrors) SummaryText() string {
	if e.Summary != "" {
		return e.Summary
	}
	if len(e.Fields) > 0 {
		return "Please correct the marked fields."
	}
	return ""
}

// SignIn is GET/POST /sign-in.
type SignIn struct {
	// Shell carries the flash; Email is ignored (the page is minimal).
	Shell Shell
	// Email re-fills the e-mail field after a failed attempt.
	Email string
	// Next is the local path to return to after signing in, sent back as
	// the hidden field "next"; "" for the default.
	Next string
	// Errors holds the handler's message, e.g. Summary "Wrong e-mail or
	// password." for both an unknown e-mail and a wrong password.
	Errors FormErrors
	// RetryAfter, when positive, says sign-in is rate limited: the page
	// says how long to wait (rounded up to seconds or minutes).
	RetryAfter time.Duration
}

// TwoFactor is GET/POST /sign-in/two-factor: the second step of signing
// in, field "code" (a TOTP code or a recovery code).
type TwoFactor struct {
	// Shell carries the flash; the page is minimal.
	Shell Shell
	// Errors holds a wrong code's message (field "code").
	Errors FormErrors
	// RetryAfter, when positive, says attempts are rate limited and how
	// long to wait.
	RetryAfter time.Duration
}

// Password is GET/POST /account/password: fields "current", "new",
// "confirm".
type Password struct {
	// Shell: with Shell.ForcedPassword the page explains that the
	// one-time password must be replaced first, and the header offers
	// only signing out.
	Shell Shell
	// Errors holds the fields' messages ("current", "new", "confirm").
	Errors FormErrors
}

// SessionRow is one signed-in browser of the person.
type SessionRow struct {
	// UserAgent is the browser's user agent as it sent it ("" shows
	// "unknown browser").
	UserAgent string
	// Address is the client address it signed in from.
	Address string
	// CreatedAt is when it signed in.
	CreatedAt time.Time
	// LastSeenAt is when it was last used.
	LastSeenAt time.Time
	// Current marks the session of the browser viewing the page.
	Current bool
}

// Account is GET /account.
type Account struct {
	// Shell: set Shell.Active to NavAccount.
	Shell Shell
	// Email is the person's e-mail address.
	Email string
	// TwoFactor says whether a second factor is on.
	TwoFactor bool
	// TwoFactorSince is when it was turned on (with TwoFactor).
	TwoFactorSince time.Time
	// RecoveryCodesLeft is how many unused recovery codes remain (with
	// TwoFactor).
	RecoveryCodesLeft int
	// DisableErrors holds the message of a failed POST
	// /account/two-factor/disable (field "password").
	DisableErrors FormErrors
	// Sessions are the person's signed-in browsers, newest first.
	Sessions []SessionRow
}

// TwoFactorSetup is GET/POST /account/two-factor/setup: the secret to
// enter in an authenticator app, and field "code" to confirm it.
type TwoFactorSetup struct {
	// Shell: set Shell.Active to NavAccount.
	Shell Shell
	// Secret is the TOTP secret in base32 (shown in groups of four).
	Secret string
	// URI is the otpauth:// URI of the secret, shown as text to copy.
	URI string
	// QRCode is the URI as a QR code (PNG) for the app's camera; nil
	// shows none.
	QRCode []byte
	// Pending is the sealed secret the form sends back (hidden field
	// "pending") with the first code.
	Pending string
	// Errors holds a wrong confirmation code's message (field "code").
	Errors FormErrors
}

// RecoveryCodes is the page after a second factor was confirmed: the
// recovery codes, shown once.
type RecoveryCodes struct {
	// Shell: set Shell.Active to NavAccount.
	Shell Shell
	// Codes are the recovery codes, each shown on its own line.
	Codes []string
}

// Workspaces is GET /workspaces (and the answer to a failed POST
// /workspaces, field "name").
type Workspaces struct {
	// Shell: set Shell.Active to NavWorkspaces.
	Shell Shell
	// List is the person's workspaces.
	List []WorkspaceChoice
	// Name re-fills the new workspace's name after an error.
	Name string
	// Errors holds the create form's messages (field "name").
	Errors FormErrors
}

// WorkspaceHome is GET /w/{id}/: the current workspace is the Shell's.
// What the role may do is worked out from Shell.Role.
type WorkspaceHome struct {
	// Shell: set Shell.Active to NavHome.
	Shell Shell
	// Members is how many people belong to the workspace.
	Members int
	// ActiveKeys is how many active API keys the person holds that work
	// in the workspace.
	ActiveKeys int
}

// KeyRow is one API key in a key list.
type KeyRow struct {
	// ID is the key's id, in /w/{id}/keys/{keyID}/revoke.
	ID string
	// Name is the name its creator gave it.
	Name string
	// Prefix is the first characters of the secret ("tsk_AbC123"); shown
	// followed by "…".
	Prefix string
	// Scopes are the key's scopes.
	Scopes []account.Scope
	// AccountWide is set for a key that works in every workspace of its
	// creator (sent with X-Workspace-Id); clear for a key bound to this
	// workspace.
	AccountWide bool
	// CreatorEmail is the e-mail of the person who created it.
	CreatorEmail string
	// CreatedAt is when it was created.
	CreatedAt time.Time
	// LastUsedAt is when it was last used; zero shows "never".
	LastUsedAt time.Time
	// RevokedAt is when it was revoked; zero for an active key (which
	// gets a revoke form, when the viewer may revoke it).
	RevokedAt time.Time
}

// Binding values of the key form's "binding" radio.
const (
	BindingWorkspace = "workspace" // only this workspace
	BindingAccount   = "account"   // every workspace of the creator
)

// KeyForm is what the create-key form shows (and re-fills).
type KeyForm struct {
	// Name re-fills field "name".
	Name string
	// Binding re-fills radio "binding": BindingWorkspace (the default
	// when empty) or BindingAccount.
	Binding string
	// Scopes re-fills the checked "scope" boxes.
	Scopes []account.Scope
}

// Keys is GET /w/{id}/keys and the answer to a failed POST /w/{id}/keys.
type Keys struct {
	// Shell: set Shell.Active to NavKeys; Shell.Role decides which scopes
	// may be chosen and whether Others is shown.
	Shell Shell
	// Mine are the person's own keys that work in this workspace.
	Mine []KeyRow
	// Others are other members' keys in this workspace, shown only to
	// owners and admins (who may revoke them).
	Others []KeyRow
	// Form re-fills the create form.
	Form KeyForm
	// Errors holds the create form's messages ("name", "binding",
	// "scope").
	Errors FormErrors
}

// KeyCreated is the answer to a successful POST /w/{id}/keys: the secret,
// shown only now.
type KeyCreated struct {
	// Shell: set Shell.Active to NavKeys; Shell.BaseURL and
	// Shell.WorkspaceID go into the curl example.
	Shell Shell
	// Name is the new key's name.
	Name string
	// Secret is the key's secret (tsk_…), shown once.
	Secret string
	// Scopes are its scopes.
	Scopes []account.Scope
	// AccountWide is set for an account-wide key: the example then sends
	// X-Workspace-Id.
	AccountWide bool
}

// MemberRow is one member of the workspace.
type MemberRow struct {
	// UserID is the member's user id, in /w/{id}/members/{userID}/….
	UserID string
	// Email is the member's e-mail.
	Email string
	// Role is their role.
	Role account.Role
	// JoinedAt is when they joined.
	JoinedAt time.Time
	// You marks the person viewing the page.
	You bool
}

// InviteRow is one pending invitation.
type InviteRow struct {
	// ID is the invitation's id, in /w/{id}/members/invites/{inviteID}/revoke.
	ID string
	// Role is the role it grants.
	Role account.Role
	// CreatedAt is when it was made.
	CreatedAt time.Time
	// ExpiresAt is when it stops working.
	ExpiresAt time.Time
	// CreatedBy is the e-mail of who made it.
	CreatedBy string
}

// Members is GET /w/{id}/members and the answer to a failed POST there.
type Members struct {
	// Shell: set Shell.Active to NavMembers; owners and admins
	// (Shell.Role) get the forms to change roles, remove people and
	// invite.
	Shell Shell
	// Members are the workspace's members.
	Members []MemberRow
	// Invites are the pending invitations (shown to owners and admins).
	Invites []InviteRow
	// InviteRole re-fills the invite form's field "role" (default viewer).
	InviteRole account.Role
	// Errors holds the invite form's messages (field "role").
	Errors FormErrors
}

// InviteCreated is the answer to a successful POST
// /w/{id}/members/invites: the link, shown once.
type InviteCreated struct {
	// Shell: set Shell.Active to NavMembers.
	Shell Shell
	// Link is the invitation's full URL (BaseURL + "/invite/" + token).
	Link string
	// Role is the role it grants.
	Role account.Role
	// ExpiresAt is when it stops working.
	ExpiresAt time.Time
}

// Invite is GET/POST /invite/{token}. Signed in (Shell.Email set), it
// offers to join; signed out, a sign-up form (fields "email",
// "password", "confirm") and a link to sign in first.
type Invite struct {
	// Shell: Shell.Email says whether the visitor is signed in.
	Shell Shell
	// Token is the invitation's token, in the form's action
	// /invite/{token}.
	Token string
	// WorkspaceName is the workspace it joins.
	WorkspaceName string
	// Role is the role it grants.
	Role account.Role
	// Email re-fills the sign-up form's e-mail after an error.
	Email string
	// Errors holds the form's messages.
	Errors FormErrors
}

// InviteInvalid is GET/POST /invite/{token} for an unknown, used,
// revoked or expired invitation.
type InviteInvalid struct {
	// Shell: signed in or not.
	Shell Shell
}

// Error is an error page.
type Error struct {
	// Shell: signed in or not.
	Shell Shell
	// Status is the HTTP status (403, 404, 429, 500…).
	Status int
	// Title is the page's heading; empty for the status's default.
	Title string
	// Message is one sentence of explanation; empty for the status's
	// default.
	Message string
}

// NavStatusPages is /w/{id}/status-pages and below.
const NavStatusPages Nav = "status-pages"
