package app

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/secrets"
)

// Workspaces, their members and invitations. People manage them in the
// web app, acting as an Actor built by WebActor from their session: the
// same Actor, and the same Require, as an API key's. Managing members is
// the owners' and admins' (account.Role.ManagesKeys), never an API key's.

const (
	// InviteLife is how long an invitation link works.
	InviteLife = 7 * 24 * time.Hour
	// MaxWorkspaceNameLen bounds a workspace's name.
	MaxWorkspaceNameLen = 100
	// MaxPendingInvites bounds a workspace's open invitations.
	MaxPendingInvites = 100
)

var errMustChangePassword = &errs.Error{Kind: errs.KindForbidden, Message: "Set your own password first: the one you signed in with was for one use only."}

// WebActor is the person of ws acting in the workspace workspaceID, with
// their role there. A workspace they are not in is not found, as for a key.
func (a *App) WebActor(ctx context.Context, ws WebSession, workspaceID string) (Actor, error) {
	if ws.User.MustChangePassword {
		return Actor{}, errMustChangePassword
	}
	if !ids.Valid(ids.Workspace, workspaceID) {
		return Actor{}, errs.ErrNotFound
	}
	m, err := a.store.Membership(ctx, workspaceID, ws.User.ID)
	if err != nil {
		return Actor{}, err
	}
	if ws.Session.WorkspaceID != workspaceID {
		// Remember where the person works, for their next visit.
		if err := a.store.SetSessionWorkspace(ctx, ws.Session.ID, workspaceID); err != nil {
			return Actor{}, err
		}
	}
	return Actor{UserID: ws.User.ID, WorkspaceID: workspaceID, Role: m.Role}, nil
}

// Workspaces lists the person's workspaces with their role in each.
func (a *App) Workspaces(ctx context.Context, ws WebSession) ([]account.MemberOf, error) {
	return a.store.WorkspacesOf(ctx, ws.User.ID)
}

// HomeWorkspace is where the person lands after signing in: the workspace
// they last worked in, else their first; "" when they belong to none.
func (a *App) HomeWorkspace(ctx context.Context, ws WebSession) (string, error) {
	all, err := a.store.WorkspacesOf(ctx, ws.User.ID)
	if err != nil || len(all) == 0 {
		return "", err
	}
	for _, m := range all {
		if m.Workspace.ID == ws.Session.WorkspaceID {
			return m.Workspace.ID, nil
		}
	}
	return all[0].Workspace.ID, nil
}

// CreateWorkspace makes a workspace with the person as its owner.
func (a *App) CreateWorkspace(ctx context.Context, ws WebSession, name string) (account.Workspace, error) {
	if ws.User.MustChangePassword {
		return account.Workspace{}, errMustChangePassword
	}
	name = strings.TrimSpace(name)
	switch {
	case name == "" || !clean.Valid(name):
		return account.Workspace{}, fieldInvalid("/name", "must be a name of printable text")
	case utf8.RuneCountInString(name) > MaxWorkspaceNameLen:
		return account.Workspace{}, fieldInvalid("/name", fmt.Sprintf("must be at most %d characters", MaxWorkspaceNameLen))
	}
	base := slugify(name)
	if base == "" {
		base = "workspace"
	}
	base = clean.Truncate(base, 40)
	now := a.now()
	for i := 1; ; i++ {
		w := a.newWorkspace(name, base)
		if i > 1 {
			w.Slug = fmt.Sprintf("%s-%d", base, i)
		}
		if i > 5 {
			w.Slug = base + "-" + strings.ToLower(w.ID[len(w.ID)-6:])
		}
		err := a.store.CreateWorkspaceWithOwner(ctx, w, account.Membership{WorkspaceID: w.ID, UserID: ws.User.ID, Role: account.RoleOwner, CreatedAt: now})
		if errs.KindOf(err) == errs.KindConflict && i <= 5 {
			continue // the slug is taken
		}
		return w, err
	}
}

func fieldInvalid(pointer, msg string) error {
	return invalid([]errs.FieldError{{Pointer: pointer, Message: msg}})
}

var errNotManager = &errs.Error{Kind: errs.KindForbidden, Message: "Only the workspace's owners and admins manage its members."}

// manages reports whether the actor may manage members: an owner or
// admin, in person (never through an API key).
func manages(actor Actor) error {
	if actor.KeyID != "" {
		return &errs.Error{Kind: errs.KindForbidden, Message: "API keys cannot manage members or keys"}
	}
	if !actor.Role.ManagesKeys() {
		return errNotManager
	}
	return nil
}

// Members lists the workspace's members; every member may see who else is.
func (a *App) Members(ctx context.Context, actor Actor) ([]account.Member, error) {
	if actor.KeyID != "" {
		return nil, &errs.Error{Kind: errs.KindForbidden, Message: "API keys cannot list members"}
	}
	return a.store.MembersOf(ctx, actor.WorkspaceID)
}

// mayGrant reports whether the actor may give (or take away) role: only
// owners deal in the owner role.
func mayGrant(actor Actor, role account.Role) error {
	if role == account.RoleOwner && actor.Role != account.RoleOwner {
		return &errs.Error{Kind: errs.KindForbidden, Message: "Only owners make or unmake owners."}
	}
	return nil
}

func parseRoleField(s string) (account.Role, error) {
	r, ok := account.ParseRole(s)
	if !ok {
		return "", fieldInvalid("/role", "must be one of owner, admin, editor, viewer")
	}
	return r, nil
}

// ChangeRole gives a member another role. Owners and admins change roles;
// only owners touch the owner role; the last owner stays an owner. The
// member's keys follow at once: on the next request they hold no more
// than the new role grants.
func (a *App) ChangeRole(ctx context.Context, actor Actor, userID, role string) error {
	if err := manages(actor); err != nil {
		return err
	}
	r, err := parseRoleField(role)
	if err != nil {
		return err
	}
	if !ids.Valid(ids.User, userID) {
		return errs.ErrNotFound
	}
	m, err := a.store.Membership(ctx, actor.WorkspaceID, userID)
	if err != nil {
		return err
	}
	if err := mayGrant(actor, m.Role); err != nil {
		return err
	}
	if err := mayGrant(actor, r); err != nil {
		return err
	}
	if m.Role == r {
		return nil
	}
	return a.store.ChangeRole(ctx, actor.WorkspaceID, userID, r)
}

// RemoveMember takes a person out of the workspace; anyone may leave, and
// owners and admins may remove others (only owners remove owners). The
// last owner stays. Their keys lose all power here at once.
func (a *App) RemoveMember(ctx context.Context, actor Actor, userID string) error {
	if actor.KeyID != "" {
		return &errs.Error{Kind: errs.KindForbidden, Message: "API keys cannot manage members"}
	}
	if userID != actor.UserID {
		if err := manages(actor); err != nil {
			return err
		}
	}
	if !ids.Valid(ids.User, userID) {
		return errs.ErrNotFound
	}
	m, err := a.store.Membership(ctx, actor.WorkspaceID, userID)
	if err != nil {
		return err
	}
	if userID != actor.UserID {
		if err := mayGrant(actor, m.Role); err != nil {
			return err
		}
	}
	return a.store.RemoveMember(ctx, actor.WorkspaceID, userID)
}

// NewInvite is a fresh invitation; Token goes in the link, shown once.
type NewInvite struct {
	Invite account.Invite
	Token  string
}

// Invite makes a single-use link that adds its user with role.
func (a *App) Invite(ctx context.Context, actor Actor, role string) (NewInvite, error) {
	if err := manages(actor); err != nil {
		return NewInvite{}, err
	}
	r, err := parseRoleField(role)
	if err != nil {
		return NewInvite{}, err
	}
	if err := mayGrant(actor, r); err != nil {
		return NewInvite{}, err
	}
	now := a.now()
	open, err := a.store.PendingInvites(ctx, actor.WorkspaceID, now)
	if err != nil {
		return NewInvite{}, err
	}
	if len(open) >= MaxPendingInvites {
		return NewInvite{}, &errs.Error{Kind: errs.KindQuota, Message: fmt.Sprintf("A workspace has at most %d open invitations; withdraw some first.", MaxPendingInvites)}
	}
	token, hash := newToken()
	inv := account.Invite{ID: ids.New(ids.Invite, now), WorkspaceID: actor.WorkspaceID, TokenHash: hash, Role: r,
		CreatedBy: actor.UserID, CreatedAt: now, ExpiresAt: now.Add(InviteLife)}
	if err := a.store.CreateInvite(ctx, inv); err != nil {
		return NewInvite{}, err
	}
	return NewInvite{Invite: inv, Token: token}, nil
}

// PendingInvites lists the workspace's open invitations, for its managers.
func (a *App) PendingInvites(ctx context.Context, actor Actor) ([]account.Invite, error) {
	if err := manages(actor); err != nil {
		return nil, err
	}
	return a.store.PendingInvites(ctx, actor.WorkspaceID, a.now())
}

// RevokeInvite withdraws an open invitation.
func (a *App) RevokeInvite(ctx context.Context, actor Actor, inviteID string) error {
	if err := manages(actor); err != nil {
		return err
	}
	if !ids.Valid(ids.Invite, inviteID) {
		return errs.ErrNotFound
	}
	return a.store.RevokeInvite(ctx, actor.WorkspaceID, inviteID, a.now())
}

// InviteView is what an invitation link shows before it is accepted.
type InviteView struct {
	Invite    account.Invite
	Workspace account.Workspace
}

var errBadInvite = &errs.Error{Kind: errs.KindNotFound, Message: "This invitation has expired or was already used."}

// OpenInvite finds the open invitation a link's token names.
func (a *App) OpenInvite(ctx context.Context, token string) (InviteView, error) {
	hash, ok := tokenHash(token)
	if !ok {
		return InviteView{}, errBadInvite
	}
	inv, err := a.store.InviteByTokenHash(ctx, hash)
	if errs.KindOf(err) == errs.KindNotFound {
		return InviteView{}, errBadInvite
	}
	if err != nil {
		return InviteView{}, err
	}
	if !inv.AcceptedAt.IsZero() || !inv.RevokedAt.IsZero() || !a.now().Before(inv.ExpiresAt) {
		return InviteView{}, errBadInvite
	}
	w, err := a.store.Workspace(ctx, inv.WorkspaceID)
	if err != nil {
		return InviteView{}, err
	}
	return InviteView{Invite: inv, Workspace: w}, nil
}

// AcceptInvite makes the signed-in person a member through an invitation.
func (a *App) AcceptInvite(ctx context.Context, ws WebSession, token string) (account.Membership, error) {
	if ws.User.MustChangePassword {
		return account.Membership{}, errMustChangePassword
	}
	v, err := a.OpenInvite(ctx, token)
	if err != nil {
		return account.Membership{}, err
	}
	return a.store.AcceptInvite(ctx, v.Invite.ID, nil, ws.User.ID, a.now())
}

// SignUp is what the invitation's sign-up form sends.
type SignUp struct {
	Token, Email, Password, Confirm string
	ClientAddr, UserAgent           string
}

// SignUpWithInvite makes an account through an invitation, makes it a
// member, and signs it in. Only an invitation makes new accounts.
func (a *App) SignUpWithInvite(ctx context.Context, req SignUp) (SignedIn, account.Membership, error) {
	if retry, err := a.limitSignIn(ctx, "signup|"+req.ClientAddr, "addr|"+req.ClientAddr); err != nil || retry > 0 {
		return SignedIn{RetryAfter: retry}, account.Membership{}, err
	}
	v, err := a.OpenInvite(ctx, req.Token)
	if err != nil {
		return SignedIn{}, account.Membership{}, err
	}
	var fields []errs.FieldError
	email, ok := parseEmail(req.Email)
	if !ok {
		fields = append(fields, errs.FieldError{Pointer: "/email", Message: "must be an e-mail address"})
	}
	for _, f := range checkNewPassword(req.Password, req.Confirm, email) {
		if f.Pointer == "/new" {
			f.Pointer = "/password"
		}
		fields = append(fields, f)
	}
	if len(fields) > 0 {
		return SignedIn{}, account.Membership{}, &errs.Error{Kind: errs.KindInvalid, Message: "The account was not made.", Fields: fields}
	}
	hash, err := secrets.HashPassword(req.Password)
	if err != nil {
		return SignedIn{}, account.Membership{}, err
	}
	now := a.now()
	u := account.User{ID: ids.New(ids.User, now), Email: email, PasswordHash: hash, CreatedAt: now}
	m, err := a.store.AcceptInvite(ctx, v.Invite.ID, &u, u.ID, now)
	if err != nil {
		return SignedIn{}, account.Membership{}, err
	}
	token, s, err := a.startSession(ctx, u.ID, false, req.ClientAddr, req.UserAgent)
	if err != nil {
		return SignedIn{}, account.Membership{}, err
	}
	if err := a.store.SetSessionWorkspace(ctx, s.ID, m.WorkspaceID); err != nil {
		return SignedIn{}, account.Membership{}, err
	}
	return SignedIn{Token: token}, m, nil
}
