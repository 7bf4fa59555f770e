package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/mail"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
)

// People sign in to the web app with their e-mail and password, and, when
// they turned it on, a code from their authenticator app. A signed-in
// browser holds a random token in a cookie; the database keeps only its
// SHA-256, in a session row every node can read, so signing out (here or
// everywhere) and a password change end sessions on every node at once.

const (
	// SessionIdle ends a session nobody used for this long.
	SessionIdle = 7 * 24 * time.Hour
	// SessionLife ends a session this long after sign-in, however busy.
	SessionLife = 30 * 24 * time.Hour
	// secondFactorTime bounds the step between a right password and the
	// second factor.
	secondFactorTime = 10 * time.Minute
	// sessionTouch is how stale a session's last-seen time may grow before
	// a request writes it: a busy browser costs a write a minute.
	sessionTouch = time.Minute

	// MinPasswordLen and MaxPasswordLen bound passwords (in characters and
	// bytes). The upper bound keeps argon2id's input small.
	MinPasswordLen = 12
	MaxPasswordLen = 256
	// MaxEmailLen is RFC 5321's limit on an address.
	MaxEmailLen  = 254
	maxUserAgent = 200
)

// errWrongCredentials is the one answer for an unknown e-mail and a wrong
// password, so the sign-in form tells nobody who has an account.
var errWrongCredentials = &errs.Error{Kind: errs.KindUnauthenticated, Message: "Wrong e-mail or password."}

// ErrNoSession: the token names no live session.
var ErrNoSession = &errs.Error{Kind: errs.KindUnauthenticated, Message: "not signed in"}

// SignInRequest is what the sign-in form sends, and where from.
type SignInRequest struct {
	Email, Password string
	ClientAddr      string // as clientaddr resolved it
	UserAgent       string
}

// SignedIn is the outcome of a step of signing in.
type SignedIn struct {
	// Token goes in the session cookie; only its hash is stored.
	Token string
	// NeedsSecondFactor: the session may only finish signing in with
	// SecondFactor.
	NeedsSecondFactor bool
	// MustChangePassword: the password was one-time; the person must set
	// their own before anything else.
	MustChangePassword bool
	// RetryAfter says how long to wait when the attempt was refused for
	// coming too fast.
	RetryAfter time.Duration
}

// WebSession is a signed-in person, as their browser's token names them.
type WebSession struct {
	Session account.Session
	User    account.User
}

// SignIn checks an e-mail and password and starts a session: a full one,
// or one that still needs the second factor. Wrong e-mail and wrong
// password are one error, which takes as long either way. Attempts are
// limited per address and per account (signin_limits.go).
func (a *App) SignIn(ctx context.Context, req SignInRequest) (SignedIn, error) {
	email := strings.ToLower(strings.TrimSpace(req.Email))
	// The account's buckets are named by a hash: the e-mail is whatever
	// was typed, and bucket names are stored.
	sum := sha256.Sum256([]byte(email))
	charge, retry, err := a.admitSignIn(ctx, hex.EncodeToString(sum[:16]), req.ClientAddr)
	if err != nil || retry > 0 {
		return SignedIn{RetryAfter: retry}, err
	}
	u, ok, err := a.checkCredentials(ctx, email, req.Password)
	if err != nil {
		return SignedIn{}, err
	}
	if !ok {
		if err := a.failed(ctx, charge); err != nil {
			return SignedIn{}, err
		}
		return SignedIn{}, errWrongCredentials
	}
	if err := a.succeeded(ctx, charge); err != nil {
		return SignedIn{}, err
	}
	pending := len(u.TOTPSecret) > 0
	token, _, err := a.startSession(ctx, u.ID, pending, req.ClientAddr, req.UserAgent)
	if err != nil {
		return SignedIn{}, err
	}
	return SignedIn{Token: token, NeedsSecondFactor: pending, MustChangePassword: u.MustChangePassword && !pending}, nil
}

// checkCredentials finds the user with this e-mail and checks their
// password. A malformed e-mail or password, an unknown e-mail and a wrong
// password all cost one password check and answer !ok.
func (a *App) checkCredentials(ctx context.Context, email, password string) (account.User, bool, error) {
	if email == "" || len(email) > MaxEmailLen || !clean.Valid(email) || password == "" || len(password) > MaxPasswordLen {
		burnPasswordCheck()
		return account.User{}, false, nil
	}
	u, err := a.store.UserByEmail(ctx, email)
	if errs.KindOf(err) == errs.KindNotFound {
		burnPasswordCheck()
		return account.User{}, false, nil
	}
	if err != nil {
		return account.User{}, false, err
	}
	ok, err := secrets.VerifyPassword(u.PasswordHash, password)
	if err != nil {
		return account.User{}, false, fmt.Errorf("user %s: %w", u.ID, err)
	}
	return u, ok, nil
}

var dummyHash = sync.OnceValue(func() string {
	h, _ := secrets.HashPassword(secrets.GeneratePassword())
	return h
})

// burnPasswordCheck spends what checking a password costs, so an unknown
// e-mail answers as slowly as a wrong password.
func burnPasswordCheck() { _, _ = secrets.VerifyPassword(dummyHash(), "not the password") }

// newToken makes a 256-bit random token and its SHA-256.
func newToken() (string, []byte) {
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // never fails since Go 1.24
	t := base64.RawURLEncoding.EncodeToString(raw[:])
	sum := sha256.Sum256([]byte(t))
	return t, sum[:]
}

// tokenHash hashes a token from outside, or reports it malformed.
func tokenHash(token string) ([]byte, bool) {
	if len(token) != 43 {
		return nil, false
	}
	if _, err := base64.RawURLEncoding.DecodeString(token); err != nil {
		return nil, false
	}
	sum := sha256.Sum256([]byte(token))
	return sum[:], true
}

func (a *App) startSession(ctx context.Context, userID string, pending bool, addr, ua string) (string, account.Session, error) {
	s, token := a.newSession(userID, pending, addr, ua)
	if err := a.store.CreateSession(ctx, s); err != nil {
		return "", account.Session{}, err
	}
	return token, s, nil
}

func (a *App) newSession(userID string, pending bool, addr, ua string) (account.Session, string) {
	token, hash := newToken()
	now := a.now()
	return account.Session{ID: ids.New(ids.Session, now), UserID: userID, TokenHash: hash, SecondFactorPending: pending,
		UserAgent: clean.Text(ua, maxUserAgent), ClientAddr: clean.Text(addr, 64), CreatedAt: now, LastSeenAt: now}, token
}

// expired reports whether s has ended by idleness or age.
func (a *App) expired(s account.Session) bool {
	now := a.now()
	if s.SecondFactorPending && now.Sub(s.CreatedAt) >= secondFactorTime {
		return true
	}
	return now.Sub(s.LastSeenAt) >= SessionIdle || now.Sub(s.CreatedAt) >= SessionLife
}

// session finds the live session a token names.
func (a *App) session(ctx context.Context, token string) (account.Session, error) {
	hash, ok := tokenHash(token)
	if !ok {
		return account.Session{}, ErrNoSession
	}
	s, err := a.store.SessionByTokenHash(ctx, hash)
	if errs.KindOf(err) == errs.KindNotFound {
		return account.Session{}, ErrNoSession
	}
	if err != nil {
		return account.Session{}, err
	}
	if a.expired(s) {
		if err := a.store.DeleteSession(ctx, s.ID); err != nil {
			return account.Session{}, err
		}
		return account.Session{}, ErrNoSession
	}
	return s, nil
}

// WebSession is the signed-in person a browser's token names; it fails
// with KindUnauthenticated for a missing, ended or half-finished session
// (see PendingSecondFactor).
func (a *App) WebSession(ctx context.Context, token string) (WebSession, error) {
	s, err := a.session(ctx, token)
	if err != nil {
		return WebSession{}, err
	}
	if s.SecondFactorPending {
		return WebSession{}, ErrNoSession
	}
	u, err := a.store.UserByID(ctx, s.UserID)
	if err != nil {
		return WebSession{}, err
	}
	if now := a.now(); now.Sub(s.LastSeenAt) >= sessionTouch {
		if err := a.store.TouchSession(ctx, s.ID, now); err != nil {
			return WebSession{}, err
		}
		s.LastSeenAt = now
	}
	return WebSession{Session: s, User: u}, nil
}

// PendingSecondFactor reports whether token names a session that has
// passed the password and waits for the second factor.
func (a *App) PendingSecondFactor(ctx context.Context, token string) bool {
	s, err := a.session(ctx, token)
	return err == nil && s.SecondFactorPending
}

// SecondFactor finishes signing in with a code from the authenticator app
// or an unused recovery code. The half-finished session is replaced by a
// new one, under a new token, in the transaction that uses the code up:
// of two sign-ins with one code, one succeeds.
func (a *App) SecondFactor(ctx context.Context, token, code, addr, ua string) (SignedIn, error) {
	s, err := a.session(ctx, token)
	if err != nil || !s.SecondFactorPending {
		return SignedIn{}, ErrNoSession
	}
	if retry, err := a.limitSignIn(ctx, "2fa|"+s.UserID, "addr|"+addr); err != nil || retry > 0 {
		return SignedIn{RetryAfter: retry}, err
	}
	u, err := a.store.UserByID(ctx, s.UserID)
	if err != nil {
		return SignedIn{}, err
	}
	f, ok, err := a.checkSecondFactor(u, code)
	if err != nil {
		return SignedIn{}, err
	}
	if !ok {
		return SignedIn{}, errWrongCode
	}
	next, nextToken := a.newSession(u.ID, false, addr, ua)
	err = a.store.InTx(ctx, func(tx *store.Tx) error {
		ended, err := tx.EndPendingSession(ctx, s.ID)
		if err != nil {
			return err
		}
		if !ended {
			return ErrNoSession
		}
		used, err := a.useSecondFactor(ctx, tx, u.ID, f)
		if err != nil {
			return err
		}
		if !used {
			return errWrongCode
		}
		return tx.CreateSession(ctx, next)
	})
	if err != nil {
		return SignedIn{}, err
	}
	return SignedIn{Token: nextToken, MustChangePassword: u.MustChangePassword}, nil
}

// errWrongCode answers a second factor that is not right, or was used
// already (a TOTP code within its time step, a recovery code).
var errWrongCode = &errs.Error{Kind: errs.KindUnauthenticated, Message: "That code is not right, or was used already. Try the next code, or a recovery code."}

// SignOut ends the session token names, if any.
func (a *App) SignOut(ctx context.Context, token string) error {
	s, err := a.session(ctx, token)
	if err != nil {
		if errs.KindOf(err) == errs.KindUnauthenticated {
			return nil
		}
		return err
	}
	return a.store.DeleteSession(ctx, s.ID)
}

// SignOutEverywhere ends every session of the person, this one included.
func (a *App) SignOutEverywhere(ctx context.Context, ws WebSession) (int, error) {
	return a.store.DeleteUserSessions(ctx, ws.User.ID, "")
}

// Sessions lists where the person is signed in, newest first.
func (a *App) Sessions(ctx context.Context, ws WebSession) ([]account.Session, error) {
	all, err := a.store.UserSessions(ctx, ws.User.ID)
	if err != nil {
		return nil, err
	}
	live := all[:0]
	for _, s := range all {
		if !a.expired(s) && !s.SecondFactorPending {
			live = append(live, s)
		}
	}
	return live, nil
}

// PasswordChange is what the change-password form sends.
type PasswordChange struct {
	Current, New, Confirm string
	ClientAddr, UserAgent string
}

// ChangePassword sets a new password. Every session of the person ends,
// this one too; the browser that changed it gets a new session, whose
// token is returned.
func (a *App) ChangePassword(ctx context.Context, ws WebSession, req PasswordChange) (string, error) {
	if retry, err := a.limitSignIn(ctx, "password|"+ws.User.ID, "addr|"+req.ClientAddr); err != nil {
		return "", err
	} else if retry > 0 {
		return "", &errs.Error{Kind: errs.KindRateLimited, Message: fmt.Sprintf("Too many attempts. Try again in %s.", roundUp(retry))}
	}
	var fields []errs.FieldError
	ok, err := len(req.Current) <= MaxPasswordLen, error(nil)
	if ok {
		ok, err = secrets.VerifyPassword(ws.User.PasswordHash, req.Current)
		if err != nil {
			return "", err
		}
	}
	if !ok {
		fields = append(fields, errs.FieldError{Pointer: "/current", Message: "is not your current password"})
	}
	fields = append(fields, checkNewPassword(req.New, req.Confirm, ws.User.Email)...)
	if ok && req.New == req.Current {
		fields = append(fields, errs.FieldError{Pointer: "/new", Message: "must differ from the current password"})
	}
	if len(fields) > 0 {
		return "", &errs.Error{Kind: errs.KindInvalid, Message: "The password was not changed.", Fields: fields}
	}
	hash, err := secrets.HashPassword(req.New)
	if err != nil {
		return "", err
	}
	keep, token := a.newSession(ws.User.ID, false, req.ClientAddr, req.UserAgent)
	keep.WorkspaceID = ws.Session.WorkspaceID
	if err := a.store.ChangePassword(ctx, ws.User.ID, hash, keep); err != nil {
		return "", err
	}
	return token, nil
}

// checkNewPassword holds a new password to the rules: long enough, not
// too long, the same twice, not the e-mail.
func checkNewPassword(pw, confirm, email string) []errs.FieldError {
	var fields []errs.FieldError
	switch n := utf8.RuneCountInString(pw); {
	case !clean.Valid(pw):
		fields = append(fields, errs.FieldError{Pointer: "/new", Message: "must be text without control characters"})
	case n < MinPasswordLen:
		fields = append(fields, errs.FieldError{Pointer: "/new", Message: fmt.Sprintf("must be at least %d characters", MinPasswordLen)})
	case len(pw) > MaxPasswordLen:
		fields = append(fields, errs.FieldError{Pointer: "/new", Message: fmt.Sprintf("must be at most %d bytes", MaxPasswordLen)})
	case strings.EqualFold(pw, email):
		fields = append(fields, errs.FieldError{Pointer: "/new", Message: "must not be your e-mail address"})
	}
	if pw != confirm {
		fields = append(fields, errs.FieldError{Pointer: "/confirm", Message: "does not match the new password"})
	}
	return fields
}

// parseEmail accepts a bare address, lower-cased.
func parseEmail(s string) (string, bool) {
	s = strings.TrimSpace(s)
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s || len(s) > MaxEmailLen || !clean.Valid(s) {
		return "", false
	}
	return strings.ToLower(s), true
}

// roundUp says a wait in whole seconds or minutes.
func roundUp(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%d seconds", int((d+time.Second-1)/time.Second))
	}
	return fmt.Sprintf("%d minutes", int((d+time.Minute-1)/time.Minute))
}
