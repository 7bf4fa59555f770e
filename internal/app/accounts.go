package app

import (
	"context"
	"fmt"
	"net/mail"
	"slices"
	"strings"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/secrets"
)

// Bootstrapped tells the operator how to sign in after the first start.
type Bootstrapped struct {
	Email       string
	Password    string // one-time: must be changed at first sign-in
	WorkspaceID string
}

// BootstrapEmail is the owner account made on an empty database.
const BootstrapEmail = "owner@localhost"

// Bootstrap creates the owner and a default workspace when the database has
// no users. It returns nil when there was nothing to do. The password is
// random and one-time; there is never a fixed default.
func (a *App) Bootstrap(ctx context.Context) (*Bootstrapped, error) {
	n, err := a.store.CountUsers(ctx)
	if err != nil || n > 0 {
		return nil, err
	}
	pw := secrets.GeneratePassword()
	hash, err := secrets.HashPassword(pw)
	if err != nil {
		return nil, err
	}
	now := a.now()
	u := account.User{ID: ids.New(ids.User, now), Email: BootstrapEmail, PasswordHash: hash, MustChangePassword: true, CreatedAt: now}
	w := a.newWorkspace("Default", "default")
	created, err := a.store.Bootstrap(ctx, u, w, account.Membership{WorkspaceID: w.ID, UserID: u.ID, Role: account.RoleOwner, CreatedAt: now})
	if err != nil || !created {
		return nil, err
	}
	return &Bootstrapped{Email: u.Email, Password: pw, WorkspaceID: w.ID}, nil
}

func (a *App) newWorkspace(name, slug string) account.Workspace {
	now := a.now()
	return account.Workspace{
		ID: ids.New(ids.Workspace, now), Name: name, Slug: slug, CreatedAt: now,
	}
}

// UserRequest is what the operator's `user create` command asks for.
type UserRequest struct {
	Email     string
	Password  string // "" → a one-time password is generated
	Workspace string // id or slug; created (slug = this value) when missing
	Role      account.Role
}

// CreatedUser reports a new user, or an existing one (Existing) newly made
// a member of the workspace; GeneratedPassword is set when one was made.
type CreatedUser struct {
	User              account.User
	Workspace         account.Workspace
	Existing          bool
	GeneratedPassword string
}

// CreateUser is an operator action (it runs with direct database access): it
// adds a user and makes them a member of a workspace. For an e-mail that
// already has an account it only adds the membership, and refuses one the
// person already has.
func (a *App) CreateUser(ctx context.Context, req UserRequest) (CreatedUser, error) {
	var fields []errs.FieldError
	addr, err := mail.ParseAddress(req.Email)
	if err != nil || addr.Address != strings.TrimSpace(req.Email) {
		fields = append(fields, errs.FieldError{Pointer: "email", Message: "must be an e-mail address"})
	}
	if _, ok := account.ParseRole(string(req.Role)); !ok {
		fields = append(fields, errs.FieldError{Pointer: "role", Message: "must be one of owner, admin, editor, viewer"})
	}
	if req.Password != "" && len(req.Password) < 12 {
		fields = append(fields, errs.FieldError{Pointer: "password", Message: "must be at least 12 characters"})
	}
	if strings.TrimSpace(req.Workspace) == "" {
		fields = append(fields, errs.FieldError{Pointer: "workspace", Message: "is required"})
	}
	if len(fields) > 0 {
		return CreatedUser{}, invalid(fields)
	}
	email := strings.ToLower(addr.Address)
	existing, err := a.store.UserByEmail(ctx, email)
	switch {
	case err == nil:
		if req.Password != "" {
			return CreatedUser{}, fmt.Errorf("%s already has an account; a password is set only for a new one (use user reset-password)", email)
		}
	case errs.KindOf(err) != errs.KindNotFound:
		return CreatedUser{}, err
	}
	ws, err := a.store.Workspace(ctx, req.Workspace)
	if errs.KindOf(err) == errs.KindNotFound {
		ws = a.newWorkspace(req.Workspace, slugify(req.Workspace))
		err = a.store.CreateWorkspace(ctx, ws)
	}
	if err != nil {
		return CreatedUser{}, err
	}
	now := a.now()
	out := CreatedUser{User: existing, Workspace: ws, Existing: existing.ID != ""}
	if out.Existing {
		m, err := a.store.Membership(ctx, ws.ID, existing.ID)
		if err == nil {
			return CreatedUser{}, &errs.Error{Kind: errs.KindConflict,
				Message: fmt.Sprintf("%s is already a member of %s (role %s)", email, ws.Slug, m.Role)}
		}
		if errs.KindOf(err) != errs.KindNotFound {
			return CreatedUser{}, err
		}
	} else {
		pw := req.Password
		if pw == "" {
			pw = secrets.GeneratePassword()
			out.GeneratedPassword = pw
		}
		hash, err := secrets.HashPassword(pw)
		if err != nil {
			return CreatedUser{}, err
		}
		out.User = account.User{ID: ids.New(ids.User, now), Email: email, PasswordHash: hash,
			MustChangePassword: out.GeneratedPassword != "", CreatedAt: now}
		if err := a.store.CreateUser(ctx, out.User); err != nil {
			if errs.KindOf(err) == errs.KindConflict {
				return CreatedUser{}, fmt.Errorf("%s already has an account (made just now by someone else); try again", email)
			}
			return CreatedUser{}, err
		}
	}
	if err := a.store.PutMembership(ctx, account.Membership{WorkspaceID: ws.ID, UserID: out.User.ID, Role: req.Role, CreatedAt: now}); err != nil {
		return CreatedUser{}, err
	}
	return out, nil
}

// ResetPassword is an operator action: it gives the user a new one-time
// password, which they must change at their next sign-in, as with the
// first one. The old password stops working at once.
func (a *App) ResetPassword(ctx context.Context, email string) (string, error) {
	u, err := a.store.UserByEmail(ctx, email)
	if errs.KindOf(err) == errs.KindNotFound {
		return "", fmt.Errorf("no user with the e-mail %s", email)
	}
	if err != nil {
		return "", err
	}
	pw := secrets.GeneratePassword()
	hash, err := secrets.HashPassword(pw)
	if err != nil {
		return "", err
	}
	if err := a.store.SetPassword(ctx, u.ID, hash, true); err != nil {
		return "", err
	}
	return pw, nil
}

// OperatorKeyRequest is what the operator's `key create` command asks for.
type OperatorKeyRequest struct {
	Email       string
	Workspace   string // id or slug; required unless AccountWide
	AccountWide bool
	Scopes      []string
	Name        string
}

// CreateKeyForUser is an operator action: it makes an API key on behalf of
// a user. The key still never does more than that user's role allows.
//
// It follows the web app's rule: only scopes the user's role grants (in the
// workspace named, or for an account-wide key without one, their strongest
// role anywhere); the scope "all", alone, is every scope that role grants.
// Each request is still held to the role in the workspace it acts in.
func (a *App) CreateKeyForUser(ctx context.Context, req OperatorKeyRequest) (NewKey, error) {
	var fields []errs.FieldError
	var scopes []account.Scope
	all := slices.Contains(req.Scopes, ScopeAll)
	if all && len(req.Scopes) > 1 {
		fields = append(fields, errs.FieldError{Pointer: "scope", Message: `"all" stands alone: give it once and no other scope`})
	}
	for _, s := range req.Scopes {
		if s == ScopeAll {
			continue
		}
		sc, ok := account.ParseScope(s)
		if !ok {
			fields = append(fields, errs.FieldError{Pointer: "scope", Message: fmt.Sprintf("%q is not a scope", s)})
		}
		scopes = append(scopes, sc)
	}
	if len(req.Scopes) == 0 {
		fields = append(fields, errs.FieldError{Pointer: "scope", Message: "at least one is required (or all)"})
	}
	if !req.AccountWide && req.Workspace == "" {
		fields = append(fields, errs.FieldError{Pointer: "workspace", Message: "is required unless the key is account-wide"})
	}
	if len(fields) > 0 {
		return NewKey{}, invalid(fields)
	}
	u, err := a.store.UserByEmail(ctx, req.Email)
	if err != nil {
		return NewKey{}, fmt.Errorf("user %s: %w", req.Email, err)
	}
	kr := KeyRequest{Name: req.Name, Scopes: scopes}
	// The role that judges the scopes: the user's in the named workspace,
	// or, for an account-wide key without one, their strongest anywhere.
	var role account.Role
	if req.Workspace != "" {
		ws, err := a.store.Workspace(ctx, req.Workspace)
		if err != nil {
			return NewKey{}, fmt.Errorf("workspace %s: %w", req.Workspace, err)
		}
		m, err := a.store.Membership(ctx, ws.ID, u.ID)
		if err != nil {
			return NewKey{}, fmt.Errorf("%s is not a member of workspace %s: %w", req.Email, req.Workspace, err)
		}
		role = m.Role
		if !req.AccountWide {
			kr.WorkspaceID = ws.ID
		}
	} else {
		all, err := a.store.WorkspacesOf(ctx, u.ID)
		if err != nil {
			return NewKey{}, err
		}
		for _, m := range all {
			if role == "" || slices.Index(account.Roles, m.Role) < slices.Index(account.Roles, role) {
				role = m.Role
			}
		}
		if role == "" {
			return NewKey{}, fmt.Errorf("%s is not a member of any workspace", req.Email)
		}
	}
	if all {
		kr.Scopes = grantedScopes(role)
	}
	if err := checkKeyRequest(role, kr); err != nil {
		return NewKey{}, err
	}
	return a.createKey(ctx, u.ID, kr)
}

// ScopeAll asks `key create` for every scope the user's role grants.
const ScopeAll = "all"

func grantedScopes(r account.Role) []account.Scope {
	var out []account.Scope
	for _, s := range account.Scopes {
		if r.Grants(s) {
			out = append(out, s)
		}
	}
	return out
}

func slugify(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// KeysOf lists a user's API keys for the operator (never their secrets,
// which are not stored).
func (a *App) KeysOf(ctx context.Context, email string) ([]account.APIKey, error) {
	u, err := a.store.UserByEmail(ctx, email)
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", email, err)
	}
	return a.store.ListAPIKeys(ctx, u.ID)
}

// RevokeKey is an operator action: the key stops working on the next
// request, on every node.
func (a *App) RevokeKey(ctx context.Context, keyID string) error {
	return a.store.RevokeAPIKey(ctx, keyID, a.now())
}
