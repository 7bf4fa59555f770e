package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/store"
)

// KeyPrefix starts every API key secret, so leaked keys are easy to scan for.
const KeyPrefix = "tsk_"

// Actor is who acts, in which workspace, with which powers. Build it with
// Authenticate (API keys) or, later, from a web session; check it with
// Require.
type Actor struct {
	UserID      string
	KeyID       string // "" for a web session
	WorkspaceID string
	Role        account.Role
	// Scopes the key carries; ignored for web sessions, which act with their
	// role's full grant.
	Scopes []account.Scope
}

// Require reports whether the actor may act with scope s right now: the key
// must carry the scope, and its creator's current role must grant it.
func (a Actor) Require(s account.Scope) error {
	if a.KeyID != "" && !slices.Contains(a.Scopes, s) {
		return &errs.Error{Kind: errs.KindInsufficientScope, Message: fmt.Sprintf("this API key lacks the scope %s", s)}
	}
	if !a.Role.Grants(s) {
		return &errs.Error{Kind: errs.KindForbidden, Message: fmt.Sprintf("the role %s in this workspace does not allow %s", a.Role, s)}
	}
	return nil
}

// Principal is an identified API key, before any workspace rule is applied.
type Principal struct {
	grant store.KeyGrant
}

// KeyID identifies the key; it names the key's rate-limit bucket.
func (p Principal) KeyID() string { return p.grant.Key.ID }

var errBadKey = &errs.Error{Kind: errs.KindUnauthenticated, Message: "missing or invalid API key"}

// Authenticate identifies an API key. It fails only with KindUnauthenticated;
// workspace and role rules are applied by Principal.Actor, after the caller
// had a chance to count the request against the key's rate limit.
func (a *App) Authenticate(ctx context.Context, secret, workspaceID string) (Principal, error) {
	if !strings.HasPrefix(secret, KeyPrefix) || len(secret) < len(KeyPrefix)+32 || len(secret) > 128 {
		return Principal{}, errBadKey
	}
	sum := sha256.Sum256([]byte(secret))
	g, err := a.store.KeyGrantByHash(ctx, sum[:], workspaceID)
	if err != nil {
		if errs.KindOf(err) == errs.KindNotFound {
			return Principal{}, errBadKey
		}
		return Principal{}, err
	}
	if !g.Key.RevokedAt.IsZero() {
		return Principal{}, errBadKey
	}
	a.touchKey(ctx, g.Key.ID)
	return Principal{grant: g}, nil
}

// Actor applies the workspace rules of DESIGN §3 to an identified key.
func (p Principal) Actor(workspaceHeader string) (Actor, error) {
	k := p.grant.Key
	switch {
	case k.WorkspaceID != "" && workspaceHeader != "" && workspaceHeader != k.WorkspaceID:
		return Actor{}, &errs.Error{Kind: errs.KindForbidden, Message: "this API key is bound to another workspace"}
	case k.WorkspaceID == "" && workspaceHeader == "":
		return Actor{}, &errs.Error{Kind: errs.KindWorkspaceRequired, Message: "an account-wide API key must send X-Workspace-Id"}
	case p.grant.Role == "":
		return Actor{}, &errs.Error{Kind: errs.KindForbidden, Message: "the key's owner is not a member of this workspace"}
	}
	return Actor{
		UserID:      k.UserID,
		KeyID:       k.ID,
		WorkspaceID: p.grant.WorkspaceID,
		Role:        p.grant.Role,
		Scopes:      k.Scopes,
	}, nil
}

func (a *App) touchKey(ctx context.Context, keyID string) {
	now := a.now()
	if last, ok := a.touched.Load(keyID); ok && now.Sub(last.(time.Time)) < time.Minute {
		return
	}
	a.touched.Store(keyID, now)
	if err := a.store.TouchAPIKey(ctx, keyID, now); err != nil && !errors.Is(err, context.Canceled) {
		a.log.WarnContext(ctx, "recording key use failed", "key", keyID, "err", err)
	}
}

// NewKey is a freshly created API key; Secret is shown once and never again.
type NewKey struct {
	Key    account.APIKey
	Secret string
}

// KeyRequest describes a key to create.
type KeyRequest struct {
	Name        string
	WorkspaceID string // "" for account-wide
	Scopes      []account.Scope
}

// MaxKeyNameLen bounds an API key's name.
const MaxKeyNameLen = 100

// CreateKey makes an API key for the acting person. Every member makes
// keys for themselves, with scopes their role in the actor's workspace
// grants: asking for more is refused, naming the scope. The key is bound to
// that workspace or, with req.WorkspaceID "", account-wide. Either way, on
// every request it does no more than its creator's role there and then
// grants.
func (a *App) CreateKey(ctx context.Context, creator Actor, req KeyRequest) (NewKey, error) {
	if creator.KeyID != "" {
		return NewKey{}, &errs.Error{Kind: errs.KindForbidden, Message: "API keys cannot create API keys"}
	}
	if req.WorkspaceID != "" && req.WorkspaceID != creator.WorkspaceID {
		return NewKey{}, &errs.Error{Kind: errs.KindForbidden, Message: "a key is bound to the workspace it is made in"}
	}
	if err := checkKeyRequest(creator.Role, req); err != nil {
		return NewKey{}, err
	}
	return a.createKey(ctx, creator.UserID, req)
}

// checkKeyRequest holds a key to the rules the web app and `key create`
// share: a name of printable text, at least one scope, and only scopes
// the role grants.
func checkKeyRequest(role account.Role, req KeyRequest) error {
	var fields []errs.FieldError
	if !clean.Valid(req.Name) || utf8.RuneCountInString(req.Name) > MaxKeyNameLen {
		fields = append(fields, errs.FieldError{Pointer: "/name", Message: fmt.Sprintf("must be printable text of at most %d characters", MaxKeyNameLen)})
	}
	if len(req.Scopes) == 0 {
		fields = append(fields, errs.FieldError{Pointer: "/scopes", Message: "must not be empty"})
	}
	var refused []string
	for i, s := range req.Scopes {
		if _, ok := account.ParseScope(string(s)); !ok {
			fields = append(fields, errs.FieldError{Pointer: fmt.Sprintf("/scopes/%d", i), Message: "is not a scope"})
		} else if !role.Grants(s) {
			refused = append(refused, string(s))
		}
	}
	if len(fields) > 0 {
		return invalid(fields)
	}
	if len(refused) > 0 {
		return &errs.Error{Kind: errs.KindForbidden, Message: fmt.Sprintf("your role (%s) does not grant %s, so no key of yours can carry it",
			role, strings.Join(refused, ", "))}
	}
	return nil
}

// Keys is what a person sees of a workspace's keys: their own (bound to it
// or account-wide) and, for owners and admins, the other members' keys
// bound to it.
type Keys struct {
	Mine, Others []account.KeyListing
}

// ListKeys lists the keys the actor may see in their workspace.
func (a *App) ListKeys(ctx context.Context, actor Actor) (Keys, error) {
	if actor.KeyID != "" {
		return Keys{}, &errs.Error{Kind: errs.KindForbidden, Message: "API keys cannot list API keys"}
	}
	mine, err := a.store.UserKeys(ctx, actor.UserID)
	if err != nil {
		return Keys{}, err
	}
	var out Keys
	for _, k := range mine {
		if k.Key.WorkspaceID == "" || k.Key.WorkspaceID == actor.WorkspaceID {
			out.Mine = append(out.Mine, k)
		}
	}
	if !actor.Role.ManagesKeys() {
		return out, nil
	}
	all, err := a.store.WorkspaceKeys(ctx, actor.WorkspaceID)
	if err != nil {
		return Keys{}, err
	}
	for _, k := range all {
		if k.Key.UserID != actor.UserID {
			out.Others = append(out.Others, k)
		}
	}
	return out, nil
}

// RevokeKeyAs revokes a key the actor may see: their own, or, for owners
// and admins, another member's key bound to the workspace. It stops
// working on the next request, on every node. Revoking twice is no error.
func (a *App) RevokeKeyAs(ctx context.Context, actor Actor, keyID string) error {
	if actor.KeyID != "" {
		return &errs.Error{Kind: errs.KindForbidden, Message: "API keys cannot revoke API keys"}
	}
	if !ids.Valid(ids.Key, keyID) {
		return errs.ErrNotFound
	}
	k, err := a.store.APIKeyByID(ctx, keyID)
	if err != nil {
		return err
	}
	own := k.UserID == actor.UserID && (k.WorkspaceID == "" || k.WorkspaceID == actor.WorkspaceID)
	other := actor.Role.ManagesKeys() && k.WorkspaceID == actor.WorkspaceID
	if !own && !other {
		return errs.ErrNotFound
	}
	if !k.RevokedAt.IsZero() {
		return nil
	}
	return a.store.RevokeAPIKey(ctx, keyID, a.now())
}

func (a *App) createKey(ctx context.Context, userID string, req KeyRequest) (NewKey, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return NewKey{}, err
	}
	secret := KeyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	sum := sha256.Sum256([]byte(secret))
	scopes := slices.Clone(req.Scopes)
	slices.Sort(scopes)
	scopes = slices.Compact(scopes)
	k := account.APIKey{
		ID:          ids.New(ids.Key, a.now()),
		UserID:      userID,
		WorkspaceID: req.WorkspaceID,
		Name:        req.Name,
		Hash:        sum[:],
		Prefix:      secret[:len(KeyPrefix)+6],
		Scopes:      scopes,
		CreatedAt:   a.now(),
	}
	if err := a.store.CreateAPIKey(ctx, k); err != nil {
		return NewKey{}, err
	}
	return NewKey{Key: k, Secret: secret}, nil
}
