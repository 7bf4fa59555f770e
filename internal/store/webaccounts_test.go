package store_test

import (
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// The web app's accounts on every engine. The store takes what app has
// already validated (a user agent of valid UTF-8 without NUL, trimmed, a
// role among account.Roles…): it checks none of it, so nothing here feeds
// it hostile input.
func TestWebAccounts(t *testing.T) {
	tests := []struct {
		name string
		fn   func(*testing.T, storetest.Engine)
	}{
		{"Sessions", testWebSessions},
		{"SessionSweep", testWebSessionSweep},
		{"ChangePassword", testWebChangePassword},
		{"TOTP", testWebTOTP},
		{"RecoveryCodeRace", testWebRecoveryCodeRace},
		{"SecondFactorInTx", testWebSecondFactorInTx},
		{"TOTPStepRace", testWebTOTPStepRace},
		{"Workspaces", testWebWorkspaces},
		{"LastOwner", testWebLastOwner},
		{"OwnersDemoteEachOther", testWebOwnersDemoteEachOther},
		{"Invites", testWebInvites},
		{"AcceptInvite", testWebAcceptInvite},
		{"AcceptInviteRace", testWebAcceptInviteRace},
		{"KeyListings", testWebKeyListings},
	}
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) { tt.fn(t, e) })
			}
		})
	}
}

func hashOf(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func newSession(userID, token string, at time.Time) account.Session {
	return account.Session{ID: ids.New(ids.Session, at), UserID: userID, TokenHash: hashOf(token),
		UserAgent: "Mozilla/5.0", ClientAddr: "192.0.2.1", CreatedAt: at, LastSeenAt: at}
}

// sessionIDs lists the ids of a user's sessions, newest first.
func sessionIDs(t *testing.T, db *store.DB, userID string) []string {
	t.Helper()
	ss, err := db.UserSessions(ctx, userID)
	check(t, err)
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

func testWebSessions(t *testing.T, e storetest.Engine) {
	url := storetest.URL(t, e)
	db := storetest.Open(t, url)
	u, w := seed(t, db, "acme")
	a := newSession(u.ID, "token-a", t0)
	a.SecondFactorPending = true
	check(t, db.CreateSession(ctx, a))
	got, err := db.SessionByTokenHash(ctx, hashOf("token-a"))
	check(t, err)
	equal(t, got, a)
	_, err = db.SessionByTokenHash(ctx, hashOf("token-x"))
	wantKind(t, err, errs.ErrNotFound)
	dup := newSession(u.ID, "token-a", t0)
	wantKind(t, db.CreateSession(ctx, dup), store.ErrConflict)
	wantKind(t, db.CreateSession(ctx, newSession("usr_missing", "token-m", t0)), errs.ErrNotFound)

	// Touching moves last_seen_at forwards only.
	check(t, db.TouchSession(ctx, a.ID, t0.Add(time.Minute)))
	check(t, db.TouchSession(ctx, a.ID, t0.Add(time.Second)))
	check(t, db.SetSessionWorkspace(ctx, a.ID, w.ID))
	check(t, db.FinishSecondFactor(ctx, a.ID))
	got, err = db.SessionByTokenHash(ctx, a.TokenHash)
	check(t, err)
	a.LastSeenAt, a.WorkspaceID, a.SecondFactorPending = t0.Add(time.Minute), w.ID, false
	equal(t, got, a)
	wantKind(t, db.TouchSession(ctx, "ses_missing", t0), errs.ErrNotFound)
	wantKind(t, db.SetSessionWorkspace(ctx, "ses_missing", w.ID), errs.ErrNotFound)
	wantKind(t, db.SetSessionWorkspace(ctx, a.ID, "ws_missing"), errs.ErrNotFound)
	wantKind(t, db.FinishSecondFactor(ctx, "ses_missing"), errs.ErrNotFound)

	// Sign out everywhere but here.
	b := newSession(u.ID, "token-b", t0.Add(time.Hour))
	c := newSession(u.ID, "token-c", t0.Add(2*time.Hour))
	other, _ := seed(t, db, "other")
	o := newSession(other.ID, "token-o", t0)
	for _, s := range []account.Session{b, c, o} {
		check(t, db.CreateSession(ctx, s))
	}
	equal(t, sessionIDs(t, db, u.ID), []string{c.ID, b.ID, a.ID})
	n, err := db.DeleteUserSessions(ctx, u.ID, b.ID)
	check(t, err)
	equal(t, n, 2)
	equal(t, sessionIDs(t, db, u.ID), []string{b.ID})
	equal(t, sessionIDs(t, db, other.ID), []string{o.ID})

	// Deleting its workspace leaves the session without one.
	w2 := newWorkspace("gone")
	check(t, db.CreateWorkspace(ctx, w2))
	check(t, db.SetSessionWorkspace(ctx, b.ID, w2.ID))
	_, err = rawDB(t, url).ExecContext(ctx, `DELETE FROM workspaces WHERE id = $1`, w2.ID)
	check(t, err)
	got, err = db.SessionByTokenHash(ctx, b.TokenHash)
	check(t, err)
	equal(t, got.WorkspaceID, "")

	check(t, db.DeleteSession(ctx, b.ID))
	check(t, db.DeleteSession(ctx, b.ID)) // already gone: no error
	_, err = db.SessionByTokenHash(ctx, b.TokenHash)
	wantKind(t, err, errs.ErrNotFound)
	n, err = db.DeleteUserSessions(ctx, other.ID, "")
	check(t, err)
	equal(t, n, 1)
	equal(t, sessionIDs(t, db, other.ID), nil)
}

func testWebSessionSweep(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	u, _ := seed(t, db, "acme")
	idle := newSession(u.ID, "idle", t0)               // last seen at t0
	old := newSession(u.ID, "old", t0.Add(-time.Hour)) // busy, but begun long ago
	old.LastSeenAt = t0.Add(10 * time.Hour)
	fresh := newSession(u.ID, "fresh", t0.Add(time.Hour))
	fresh.LastSeenAt = t0.Add(10 * time.Hour)
	edge := newSession(u.ID, "edge", t0.Add(time.Minute)) // exactly at both bounds: kept
	for _, s := range []account.Session{idle, old, fresh, edge} {
		check(t, db.CreateSession(ctx, s))
	}
	n, err := db.DeleteExpiredSessions(ctx, t0.Add(time.Minute), t0.Add(time.Minute))
	check(t, err)
	equal(t, n, 2)
	equal(t, sessionIDs(t, db, u.ID), []string{fresh.ID, edge.ID})
	n, err = db.DeleteExpiredSessions(ctx, t0, t0)
	check(t, err)
	equal(t, n, 0)
}

func testWebChangePassword(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	u, _ := seed(t, db, "acme")
	other, _ := seed(t, db, "other")
	check(t, db.SetPassword(ctx, u.ID, "$argon2id$old", true))
	s1, s2 := newSession(u.ID, "s1", t0), newSession(u.ID, "s2", t0)
	theirs := newSession(other.ID, "theirs", t0)
	for _, s := range []account.Session{s1, s2, theirs} {
		check(t, db.CreateSession(ctx, s))
	}

	// The fresh session cannot be stored (its token is another's): nothing
	// changes, not the password, not the sessions.
	clash := newSession(u.ID, "theirs", t0.Add(time.Minute))
	wantKind(t, db.ChangePassword(ctx, u.ID, "$argon2id$new", clash), store.ErrConflict)
	got, err := db.UserByID(ctx, u.ID)
	check(t, err)
	if got.PasswordHash != "$argon2id$old" || !got.MustChangePassword {
		t.Fatalf("after a failed ChangePassword: %+v", got)
	}
	equal(t, len(sessionIDs(t, db, u.ID)), 2)

	keep := newSession(u.ID, "keep", t0.Add(time.Minute))
	check(t, db.ChangePassword(ctx, u.ID, "$argon2id$new", keep))
	got, err = db.UserByID(ctx, u.ID)
	check(t, err)
	if got.PasswordHash != "$argon2id$new" || got.MustChangePassword {
		t.Fatalf("after ChangePassword: %+v", got)
	}
	equal(t, sessionIDs(t, db, u.ID), []string{keep.ID})
	equal(t, sessionIDs(t, db, other.ID), []string{theirs.ID})

	// Without a session to keep (a password set from the command line).
	check(t, db.ChangePassword(ctx, u.ID, "$argon2id$newer", account.Session{}))
	equal(t, sessionIDs(t, db, u.ID), nil)
	wantKind(t, db.ChangePassword(ctx, "usr_missing", "x", account.Session{}), errs.ErrNotFound)
}

func testWebTOTP(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	u, _ := seed(t, db, "acme")
	other, _ := seed(t, db, "other")
	got, err := db.UserByID(ctx, u.ID)
	check(t, err)
	if got.TOTPSecret != nil || !got.TOTPEnabledAt.IsZero() {
		t.Fatalf("a new user has two-factor on: %+v", got)
	}
	left := func(userID string, want int) {
		t.Helper()
		n, err := db.RecoveryCodesLeft(ctx, userID)
		check(t, err)
		equal(t, n, want)
	}

	check(t, db.EnableTOTP(ctx, u.ID, []byte("sealed-1"), t0, 1000, [][]byte{hashOf("a"), hashOf("b"), hashOf("c")}))
	check(t, db.EnableTOTP(ctx, other.ID, []byte("sealed-o"), t0, 1000, [][]byte{hashOf("a")}))
	got, err = db.UserByEmail(ctx, u.Email)
	check(t, err)
	equal(t, got.TOTPSecret, []byte("sealed-1"))
	equal(t, got.TOTPEnabledAt, t0)
	left(u.ID, 3)

	used, err := db.UseRecoveryCode(ctx, u.ID, hashOf("b"), t0.Add(time.Minute))
	check(t, err)
	equal(t, used, true)
	used, err = db.UseRecoveryCode(ctx, u.ID, hashOf("b"), t0.Add(2*time.Minute))
	check(t, err)
	equal(t, used, false) // single use
	used, err = db.UseRecoveryCode(ctx, u.ID, hashOf("z"), t0)
	check(t, err)
	equal(t, used, false) // not one of theirs
	left(u.ID, 2)
	left(other.ID, 1) // the same code of another person is theirs still

	// Enabling again (a new authenticator) replaces the codes, used or not.
	check(t, db.EnableTOTP(ctx, u.ID, []byte("sealed-2"), t0.Add(time.Hour), 1000, [][]byte{hashOf("b"), hashOf("d")}))
	got, err = db.UserByID(ctx, u.ID)
	check(t, err)
	equal(t, got.TOTPSecret, []byte("sealed-2"))
	equal(t, got.TOTPEnabledAt, t0.Add(time.Hour))
	left(u.ID, 2)
	used, err = db.UseRecoveryCode(ctx, u.ID, hashOf("a"), t0)
	check(t, err)
	equal(t, used, false)
	used, err = db.UseRecoveryCode(ctx, u.ID, hashOf("b"), t0)
	check(t, err)
	equal(t, used, true)

	check(t, db.DisableTOTP(ctx, u.ID))
	got, err = db.UserByID(ctx, u.ID)
	check(t, err)
	if got.TOTPSecret != nil || !got.TOTPEnabledAt.IsZero() {
		t.Fatalf("after DisableTOTP: %+v", got)
	}
	left(u.ID, 0)
	left(other.ID, 1)
	wantKind(t, db.EnableTOTP(ctx, "usr_missing", []byte("s"), t0, 1000, nil), errs.ErrNotFound)
	wantKind(t, db.DisableTOTP(ctx, "usr_missing"), errs.ErrNotFound)

	// A user created with two-factor on keeps it.
	withTOTP := newUser("totp@example.com")
	withTOTP.TOTPSecret, withTOTP.TOTPEnabledAt = []byte("sealed"), t0
	check(t, db.CreateUser(ctx, withTOTP))
	got, err = db.UserByID(ctx, withTOTP.ID)
	check(t, err)
	equal(t, got, withTOTP)
}

// Of several sign-ins racing with one recovery code, exactly one uses it.
func testWebRecoveryCodeRace(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	u, _ := seed(t, db, "acme")
	check(t, db.EnableTOTP(ctx, u.ID, []byte("sealed"), t0, 1000, [][]byte{hashOf("a"), hashOf("b")}))
	const n = 8
	var (
		wg    sync.WaitGroup
		used  [n]bool
		fails [n]error
	)
	for i := range n {
		wg.Go(func() { used[i], fails[i] = db.UseRecoveryCode(ctx, u.ID, hashOf("a"), t0) })
	}
	wg.Wait()
	check(t, errors.Join(fails[:]...))
	if got := countTrue(used[:]); got != 1 {
		t.Fatalf("%d of %d racing calls used the code, want 1", got, n)
	}
	left, err := db.RecoveryCodesLeft(ctx, u.ID)
	check(t, err)
	equal(t, left, 1)
}

// The primitives that finish a sign-in with a second factor: a TOTP step
// is used once and only after the last, a pending session ends once.
func testWebSecondFactorInTx(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	u, _ := seed(t, db, "acme")
	useStep := func(userID string, step int64) (used bool) {
		t.Helper()
		check(t, db.InTx(ctx, func(tx *store.Tx) (err error) {
			used, err = tx.UseTOTPStep(ctx, userID, step)
			return err
		}))
		return used
	}
	equal(t, useStep(u.ID, 5), false) // two-factor sign-in is off
	check(t, db.EnableTOTP(ctx, u.ID, []byte("sealed"), t0, 1000, nil))
	equal(t, useStep(u.ID, 1000), false) // the step that confirmed it
	equal(t, useStep(u.ID, 999), false)
	equal(t, useStep(u.ID, 1001), true)
	equal(t, useStep(u.ID, 1001), false) // once
	equal(t, useStep(u.ID, 1003), true)
	equal(t, useStep(u.ID, 1002), false) // never before the last
	equal(t, useStep(u.ID, 1000), false)
	equal(t, useStep("usr_missing", 2000), false)
	check(t, db.DisableTOTP(ctx, u.ID))
	equal(t, useStep(u.ID, 2000), false)
	check(t, db.EnableTOTP(ctx, u.ID, []byte("sealed-2"), t0, 10, nil)) // a new authenticator starts afresh
	equal(t, useStep(u.ID, 11), true)

	// A session ends once, and only while it waits for the second factor;
	// what the transaction did is undone when it fails.
	pending, full := newSession(u.ID, "token-p", t0), newSession(u.ID, "token-f", t0)
	pending.SecondFactorPending = true
	check(t, db.CreateSession(ctx, pending))
	check(t, db.CreateSession(ctx, full))
	next := newSession(u.ID, "token-n", t0)
	failed := errors.New("the code was used")
	err := db.InTx(ctx, func(tx *store.Tx) error {
		ended, err := tx.EndPendingSession(ctx, pending.ID)
		check(t, err)
		equal(t, ended, true)
		check(t, tx.CreateSession(ctx, next))
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("InTx: %v", err)
	}
	for _, s := range []account.Session{pending, full} {
		_, err := db.SessionByTokenHash(ctx, s.TokenHash)
		check(t, err)
	}
	_, err = db.SessionByTokenHash(ctx, next.TokenHash)
	wantKind(t, err, errs.ErrNotFound)
	for _, c := range []struct {
		id   string
		want bool
	}{{pending.ID, true}, {pending.ID, false}, {full.ID, false}, {"ses_missing", false}} {
		check(t, db.InTx(ctx, func(tx *store.Tx) error {
			ended, err := tx.EndPendingSession(ctx, c.id)
			equal(t, ended, c.want)
			return err
		}))
	}
	_, err = db.SessionByTokenHash(ctx, full.TokenHash)
	check(t, err)
}

// Of several sign-ins racing with one TOTP step, each in the transaction
// that replaces its own half-finished session, exactly one commits; the
// others leave their session waiting.
func testWebTOTPStepRace(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	u, _ := seed(t, db, "acme")
	check(t, db.EnableTOTP(ctx, u.ID, []byte("sealed"), t0, 1000, nil))
	const n = 8
	var (
		wg       sync.WaitGroup
		pending  [n]account.Session
		finished [n]bool
		fails    [n]error
	)
	errUsed := errors.New("used already")
	for i := range n {
		pending[i] = newSession(u.ID, fmt.Sprint("pending-", i), t0)
		pending[i].SecondFactorPending = true
		check(t, db.CreateSession(ctx, pending[i]))
	}
	for i := range n {
		wg.Go(func() {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if ended, err := tx.EndPendingSession(ctx, pending[i].ID); err != nil || !ended {
					return errors.Join(err, errors.New("the session had ended"))
				}
				used, err := tx.UseTOTPStep(ctx, u.ID, 1001)
				if err != nil {
					return err
				}
				if !used {
					return errUsed
				}
				return tx.CreateSession(ctx, newSession(u.ID, fmt.Sprint("full-", i), t0))
			})
			finished[i] = err == nil
			if err != nil && !errors.Is(err, errUsed) {
				fails[i] = err
			}
		})
	}
	wg.Wait()
	check(t, errors.Join(fails[:]...))
	if got := countTrue(finished[:]); got != 1 {
		t.Fatalf("%d of %d racing sign-ins used the step, want 1", got, n)
	}
	for i := range n {
		s, err := db.SessionByTokenHash(ctx, pending[i].TokenHash)
		if finished[i] {
			wantKind(t, err, errs.ErrNotFound)
		} else if check(t, err); !s.SecondFactorPending {
			t.Fatalf("sign-in %d lost its pending session: %+v", i, s)
		}
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func testWebWorkspaces(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	u := newUser("z-owner@example.com")
	third := newUser("a-member@example.com")
	check(t, db.CreateUser(ctx, u))
	check(t, db.CreateUser(ctx, third))
	beta := account.Workspace{ID: ids.New(ids.Workspace, t0), Name: "beta", Slug: "beta", MaxMonitors: 5, CreatedAt: t0}
	alpha := account.Workspace{ID: ids.New(ids.Workspace, t0), Name: "alpha", Slug: "alpha", CreatedAt: t0}
	check(t, db.CreateWorkspaceWithOwner(ctx, beta, account.Membership{UserID: u.ID, Role: account.RoleOwner, CreatedAt: t0}))
	check(t, db.CreateWorkspaceWithOwner(ctx, alpha, account.Membership{UserID: u.ID, Role: account.RoleOwner, CreatedAt: t0.Add(time.Hour)}))

	// The slug is taken: no workspace, no membership.
	taken := account.Workspace{ID: ids.New(ids.Workspace, t0), Name: "again", Slug: "beta", CreatedAt: t0}
	err := db.CreateWorkspaceWithOwner(ctx, taken, account.Membership{UserID: third.ID, Role: account.RoleOwner, CreatedAt: t0})
	wantKind(t, err, store.ErrConflict)
	_, err = db.Workspace(ctx, taken.ID)
	wantKind(t, err, errs.ErrNotFound)
	// An owner who does not exist: no workspace either.
	lost := newWorkspace("lost")
	err = db.CreateWorkspaceWithOwner(ctx, lost, account.Membership{UserID: "usr_missing", Role: account.RoleOwner, CreatedAt: t0})
	wantKind(t, err, errs.ErrNotFound)
	_, err = db.Workspace(ctx, lost.ID)
	wantKind(t, err, errs.ErrNotFound)

	check(t, db.PutMembership(ctx, account.Membership{WorkspaceID: beta.ID, UserID: third.ID, Role: account.RoleViewer, CreatedAt: t0}))
	got, err := db.WorkspacesOf(ctx, u.ID)
	check(t, err)
	equal(t, got, []account.MemberOf{
		{Workspace: alpha, Role: account.RoleOwner, JoinedAt: t0.Add(time.Hour)},
		{Workspace: beta, Role: account.RoleOwner, JoinedAt: t0},
	})
	got, err = db.WorkspacesOf(ctx, third.ID)
	check(t, err)
	equal(t, got, []account.MemberOf{{Workspace: beta, Role: account.RoleViewer, JoinedAt: t0}})
	got, err = db.WorkspacesOf(ctx, "usr_missing")
	check(t, err)
	equal(t, len(got), 0)

	members, err := db.MembersOf(ctx, beta.ID)
	check(t, err)
	equal(t, members, []account.Member{
		{UserID: third.ID, Email: "a-member@example.com", Role: account.RoleViewer, JoinedAt: t0},
		{UserID: u.ID, Email: "z-owner@example.com", Role: account.RoleOwner, JoinedAt: t0},
	})
}

// A workspace keeps at least one owner, whatever is changed or removed.
func testWebLastOwner(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	owner, w := seed(t, db, "acme")
	second := newUser("second@example.com")
	check(t, db.CreateUser(ctx, second))
	check(t, db.PutMembership(ctx, account.Membership{WorkspaceID: w.ID, UserID: second.ID, Role: account.RoleEditor, CreatedAt: t0}))
	role := func(userID string) account.Role {
		t.Helper()
		m, err := db.Membership(ctx, w.ID, userID)
		check(t, err)
		return m.Role
	}
	lastOwner := func(err error) {
		t.Helper()
		wantKind(t, err, store.ErrConflict)
		if !errors.Is(err, store.ErrLastOwner) {
			t.Fatalf("error = %v, want ErrLastOwner", err)
		}
		var e *errs.Error
		if !errors.As(err, &e) || e.Message != "a workspace keeps at least one owner" {
			t.Fatalf("error = %v, want its message to say why", err)
		}
	}

	lastOwner(db.ChangeRole(ctx, w.ID, owner.ID, account.RoleAdmin))
	lastOwner(db.RemoveMember(ctx, w.ID, owner.ID))
	equal(t, role(owner.ID), account.RoleOwner)
	check(t, db.ChangeRole(ctx, w.ID, owner.ID, account.RoleOwner)) // owner to owner leaves one

	check(t, db.ChangeRole(ctx, w.ID, second.ID, account.RoleViewer))
	equal(t, role(second.ID), account.RoleViewer)
	check(t, db.ChangeRole(ctx, w.ID, second.ID, account.RoleOwner))
	// Two owners: either may step down, not both.
	check(t, db.ChangeRole(ctx, w.ID, owner.ID, account.RoleAdmin))
	lastOwner(db.RemoveMember(ctx, w.ID, second.ID))
	check(t, db.RemoveMember(ctx, w.ID, owner.ID))
	_, err := db.Membership(ctx, w.ID, owner.ID)
	wantKind(t, err, errs.ErrNotFound)

	wantKind(t, db.ChangeRole(ctx, w.ID, owner.ID, account.RoleViewer), errs.ErrNotFound)
	wantKind(t, db.ChangeRole(ctx, w.ID, owner.ID, account.RoleOwner), errs.ErrNotFound)
	wantKind(t, db.RemoveMember(ctx, w.ID, owner.ID), errs.ErrNotFound)
	wantKind(t, db.RemoveMember(ctx, "ws_missing", second.ID), errs.ErrNotFound)
	// Another workspace's owners count for nothing here.
	other, w2 := seed(t, db, "other")
	check(t, db.PutMembership(ctx, account.Membership{WorkspaceID: w2.ID, UserID: second.ID, Role: account.RoleOwner, CreatedAt: t0}))
	lastOwner(db.ChangeRole(ctx, w.ID, second.ID, account.RoleAdmin))
	check(t, db.ChangeRole(ctx, w2.ID, other.ID, account.RoleAdmin))
}

// Two owners demote (or remove) each other at the same moment: one wins,
// and the workspace keeps an owner. On PostgreSQL both changes are held
// until both have begun, by a lock the test takes on the workspace's
// memberships; SQLite runs one writer at a time.
func testWebOwnersDemoteEachOther(t *testing.T, e storetest.Engine) {
	for _, tc := range []struct {
		name string
		act  func(db *store.DB, wsID, userID string) error
	}{
		{"demote", func(db *store.DB, wsID, userID string) error {
			return db.ChangeRole(ctx, wsID, userID, account.RoleEditor)
		}},
		{"remove", func(db *store.DB, wsID, userID string) error { return db.RemoveMember(ctx, wsID, userID) }},
		{"demote-remove", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := storetest.URL(t, e)
			db := storetest.Open(t, url)
			a, w := seed(t, db, "acme")
			b := newUser("b@example.com")
			check(t, db.CreateUser(ctx, b))
			check(t, db.PutMembership(ctx, account.Membership{WorkspaceID: w.ID, UserID: b.ID, Role: account.RoleOwner, CreatedAt: t0}))
			acts := [2]func() error{
				func() error { return tc.act(db, w.ID, b.ID) },
				func() error { return tc.act(db, w.ID, a.ID) },
			}
			if tc.act == nil {
				acts = [2]func() error{
					func() error { return db.ChangeRole(ctx, w.ID, b.ID, account.RoleViewer) },
					func() error { return db.RemoveMember(ctx, w.ID, a.ID) },
				}
			}

			var release func()
			if e.Name == store.EnginePostgres {
				release = holdMemberships(t, url, w.ID)
			}
			var (
				wg    sync.WaitGroup
				fails [2]error
			)
			for i := range acts {
				wg.Go(func() { fails[i] = acts[i]() })
			}
			if release != nil {
				release()
			}
			wg.Wait()
			won := 0
			for _, err := range fails {
				if err == nil {
					won++
				} else if !errors.Is(err, store.ErrLastOwner) {
					t.Fatalf("a racing change failed otherwise: %v", err)
				}
			}
			equal(t, won, 1)
			members, err := db.MembersOf(ctx, w.ID)
			check(t, err)
			owners := 0
			for _, m := range members {
				if m.Role == account.RoleOwner {
					owners++
				}
			}
			equal(t, owners, 1)
		})
	}
}

// holdMemberships locks every membership row of the workspace in a
// transaction of its own, then returns a function that waits until two
// other transactions wait for those locks, and releases them.
func holdMemberships(t *testing.T, url, wsID string) (release func()) {
	t.Helper()
	raw := rawDB(t, url)
	tx, err := raw.BeginTx(ctx, nil)
	check(t, err)
	rows, err := tx.QueryContext(ctx, `SELECT user_id FROM memberships WHERE workspace_id = $1 FOR UPDATE`, wsID)
	check(t, err)
	rows.Close()
	return func() {
		t.Helper()
		defer tx.Rollback()
		wait.For(t, time.Minute, "two transactions to wait for the memberships", func() bool {
			var waiting int
			check(t, raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting))
			return waiting >= 2
		})
	}
}

// rawDB opens the database at url beside the store, for what the store
// has no call for.
func rawDB(t *testing.T, url string) *sql.DB {
	t.Helper()
	driver, dsn := "pgx", url
	if path, ok := strings.CutPrefix(url, "sqlite:"); ok {
		driver, dsn = "sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	}
	raw, err := sql.Open(driver, dsn)
	check(t, err)
	t.Cleanup(func() { raw.Close() })
	return raw
}

func newInvite(wsID, createdBy, token string, role account.Role, at time.Time, ttl time.Duration) account.Invite {
	return account.Invite{ID: ids.New(ids.Invite, at), WorkspaceID: wsID, TokenHash: hashOf(token), Role: role,
		CreatedBy: createdBy, CreatedAt: at, ExpiresAt: at.Add(ttl)}
}

func inviteIDs(t *testing.T, db *store.DB, wsID string, now time.Time) []string {
	t.Helper()
	invs, err := db.PendingInvites(ctx, wsID, now)
	check(t, err)
	var out []string
	for _, inv := range invs {
		out = append(out, inv.ID)
	}
	return out
}

func testWebInvites(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	owner, w := seed(t, db, "acme")
	_, w2 := seed(t, db, "other")
	day := 24 * time.Hour
	a := newInvite(w.ID, owner.ID, "a", account.RoleEditor, t0, day)
	b := newInvite(w.ID, owner.ID, "b", account.RoleViewer, t0.Add(time.Hour), day)
	short := newInvite(w.ID, owner.ID, "short", account.RoleViewer, t0.Add(2*time.Hour), time.Hour)
	elsewhere := newInvite(w2.ID, owner.ID, "elsewhere", account.RoleViewer, t0, day)
	for _, inv := range []account.Invite{a, b, short, elsewhere} {
		check(t, db.CreateInvite(ctx, inv))
	}
	wantKind(t, db.CreateInvite(ctx, newInvite(w.ID, owner.ID, "a", account.RoleViewer, t0, day)), store.ErrConflict)
	wantKind(t, db.CreateInvite(ctx, newInvite("ws_missing", owner.ID, "m", account.RoleViewer, t0, day)), errs.ErrNotFound)

	got, err := db.InviteByTokenHash(ctx, hashOf("a"))
	check(t, err)
	equal(t, got, a)
	_, err = db.InviteByTokenHash(ctx, hashOf("nope"))
	wantKind(t, err, errs.ErrNotFound)

	equal(t, inviteIDs(t, db, w.ID, t0.Add(2*time.Hour)), []string{short.ID, b.ID, a.ID})
	equal(t, inviteIDs(t, db, w.ID, t0.Add(3*time.Hour)), []string{b.ID, a.ID}) // short expired
	equal(t, inviteIDs(t, db, w.ID, t0.Add(day)), []string{b.ID})

	// Only a pending invite of the workspace can be revoked.
	wantKind(t, db.RevokeInvite(ctx, w2.ID, a.ID, t0.Add(time.Minute)), errs.ErrNotFound)
	wantKind(t, db.RevokeInvite(ctx, w.ID, short.ID, t0.Add(3*time.Hour)), errs.ErrNotFound)
	check(t, db.RevokeInvite(ctx, w.ID, a.ID, t0.Add(time.Minute)))
	wantKind(t, db.RevokeInvite(ctx, w.ID, a.ID, t0.Add(2*time.Minute)), errs.ErrNotFound)
	got, err = db.InviteByTokenHash(ctx, hashOf("a"))
	check(t, err)
	equal(t, got.RevokedAt, t0.Add(time.Minute))
	equal(t, inviteIDs(t, db, w.ID, t0.Add(2*time.Hour)), []string{short.ID, b.ID})
	_, err = db.AcceptInvite(ctx, a.ID, nil, owner.ID, t0.Add(time.Hour))
	wantKind(t, err, errs.ErrNotFound)
}

func testWebAcceptInvite(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	owner, w := seed(t, db, "acme")
	second := newUser("second@example.com")
	check(t, db.CreateUser(ctx, second))
	day := 24 * time.Hour
	gone := func(err error) {
		t.Helper()
		wantKind(t, err, errs.ErrNotFound)
		var e *errs.Error
		if !errors.As(err, &e) || e.Message != "this invitation has expired or was already used" {
			t.Fatalf("error = %v, want its message to say why", err)
		}
	}
	conflict := func(err error, msg string) {
		t.Helper()
		wantKind(t, err, store.ErrConflict)
		var e *errs.Error
		if !errors.As(err, &e) || e.Message != msg {
			t.Fatalf("error = %v, want %q", err, msg)
		}
	}

	// A signed-in person accepts; the invite is used up.
	inv := newInvite(w.ID, owner.ID, "one", account.RoleEditor, t0, day)
	check(t, db.CreateInvite(ctx, inv))
	at := t0.Add(time.Hour)
	m, err := db.AcceptInvite(ctx, inv.ID, nil, second.ID, at)
	check(t, err)
	want := account.Membership{WorkspaceID: w.ID, UserID: second.ID, Role: account.RoleEditor, CreatedAt: at}
	equal(t, m, want)
	got, err := db.Membership(ctx, w.ID, second.ID)
	check(t, err)
	equal(t, got, want)
	used, err := db.InviteByTokenHash(ctx, inv.TokenHash)
	check(t, err)
	equal(t, used.AcceptedAt, at)
	equal(t, used.AcceptedBy, second.ID)
	equal(t, inviteIDs(t, db, w.ID, at), nil)

	// Used twice: the second fails, even for someone else.
	invitee := newUser("invitee@example.com")
	check(t, db.CreateUser(ctx, invitee))
	_, err = db.AcceptInvite(ctx, inv.ID, nil, invitee.ID, at)
	gone(err)
	_, err = db.Membership(ctx, w.ID, invitee.ID)
	wantKind(t, err, errs.ErrNotFound)

	// Expired: at its expiry it is no longer pending.
	late := newInvite(w.ID, owner.ID, "late", account.RoleViewer, t0, time.Hour)
	check(t, db.CreateInvite(ctx, late))
	_, err = db.AcceptInvite(ctx, late.ID, nil, invitee.ID, late.ExpiresAt)
	gone(err)
	_, err = db.AcceptInvite(ctx, "inv_missing", nil, invitee.ID, at)
	gone(err)

	// Already a member: refused, and the invite stays pending.
	again := newInvite(w.ID, owner.ID, "again", account.RoleAdmin, t0, day)
	check(t, db.CreateInvite(ctx, again))
	_, err = db.AcceptInvite(ctx, again.ID, nil, second.ID, at)
	conflict(err, "you are already a member of this workspace")
	equal(t, inviteIDs(t, db, w.ID, at), []string{again.ID})
	equal(t, mustRole(t, db, w.ID, second.ID), account.RoleEditor)

	// Signing up with the invite.
	joiner := newUser("Joiner@Example.com")
	m, err = db.AcceptInvite(ctx, again.ID, &joiner, "", at)
	check(t, err)
	equal(t, m, account.Membership{WorkspaceID: w.ID, UserID: joiner.ID, Role: account.RoleAdmin, CreatedAt: at})
	u, err := db.UserByEmail(ctx, "joiner@example.com")
	check(t, err)
	equal(t, u.ID, joiner.ID)

	// Signing up under an e-mail that has an account: nothing is stored.
	third := newInvite(w.ID, owner.ID, "third", account.RoleViewer, t0, day)
	check(t, db.CreateInvite(ctx, third))
	dup := newUser("SECOND@example.com")
	_, err = db.AcceptInvite(ctx, third.ID, &dup, "", at)
	conflict(err, "an account with this e-mail exists; sign in to accept")
	_, err = db.UserByID(ctx, dup.ID)
	wantKind(t, err, errs.ErrNotFound)
	equal(t, inviteIDs(t, db, w.ID, at), []string{third.ID})

	// Signing up with a used invite: the new user is rolled back.
	latecomer := newUser("latecomer@example.com")
	_, err = db.AcceptInvite(ctx, inv.ID, &latecomer, "", at)
	gone(err)
	_, err = db.UserByEmail(ctx, "latecomer@example.com")
	wantKind(t, err, errs.ErrNotFound)
}

func mustRole(t *testing.T, db *store.DB, wsID, userID string) account.Role {
	t.Helper()
	m, err := db.Membership(ctx, wsID, userID)
	check(t, err)
	return m.Role
}

// Several people accepting one invite at once: one gets in.
func testWebAcceptInviteRace(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	owner, w := seed(t, db, "acme")
	inv := newInvite(w.ID, owner.ID, "one", account.RoleViewer, t0, time.Hour)
	check(t, db.CreateInvite(ctx, inv))
	const n = 6
	var users [n]account.User
	for i := range n {
		users[i] = newUser(string(rune('a'+i)) + "@example.com")
		if i%2 == 0 { // half sign in, half sign up
			check(t, db.CreateUser(ctx, users[i]))
		}
	}
	var (
		wg    sync.WaitGroup
		fails [n]error
	)
	for i := range n {
		wg.Go(func() {
			if i%2 == 0 {
				_, fails[i] = db.AcceptInvite(ctx, inv.ID, nil, users[i].ID, t0.Add(time.Minute))
			} else {
				_, fails[i] = db.AcceptInvite(ctx, inv.ID, &users[i], "", t0.Add(time.Minute))
			}
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range fails {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("both %d and %d accepted one invite", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrInviteGone):
			t.Fatalf("accept %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no one accepted the invite")
	}
	members, err := db.MembersOf(ctx, w.ID)
	check(t, err)
	var got []string
	for _, m := range members {
		got = append(got, m.UserID)
	}
	slices.Sort(got)
	want := []string{owner.ID, users[winner].ID}
	slices.Sort(want)
	equal(t, got, want)
	// The losers who signed up have no account.
	for i := 1; i < n; i += 2 {
		_, err := db.UserByID(ctx, users[i].ID)
		if i == winner {
			check(t, err)
		} else {
			wantKind(t, err, errs.ErrNotFound)
		}
	}
}

func testWebKeyListings(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	third, w := seed(t, db, "acme")
	_, w2 := seed(t, db, "other")
	second := newUser("second@example.com")
	check(t, db.CreateUser(ctx, second))
	key := func(userID, wsID, name string, at time.Time) account.APIKey {
		k := account.APIKey{ID: ids.New(ids.Key, at), UserID: userID, WorkspaceID: wsID, Name: name,
			Hash: hashOf(name), Prefix: "tsk_" + name, Scopes: []account.Scope{account.ScopeMonitorsRead}, CreatedAt: at}
		check(t, db.CreateAPIKey(ctx, k))
		return k
	}
	thirdOld := key(third.ID, w.ID, "third-old", t0)
	secondKey := key(second.ID, w.ID, "second", t0.Add(time.Hour))
	thirdWide := key(third.ID, "", "third-wide", t0.Add(2*time.Hour))
	thirdOther := key(third.ID, w2.ID, "third-other", t0.Add(3*time.Hour))
	check(t, db.RevokeAPIKey(ctx, thirdOld.ID, t0.Add(4*time.Hour)))
	thirdOld.RevokedAt = t0.Add(4 * time.Hour)

	got, err := db.APIKeyByID(ctx, thirdOld.ID)
	check(t, err)
	equal(t, got, thirdOld)
	_, err = db.APIKeyByID(ctx, "key_missing")
	wantKind(t, err, errs.ErrNotFound)

	ws, err := db.WorkspaceKeys(ctx, w.ID)
	check(t, err)
	equal(t, ws, []account.KeyListing{{Key: secondKey, CreatorEmail: "second@example.com"}, {Key: thirdOld, CreatorEmail: third.Email}})
	mine, err := db.UserKeys(ctx, third.ID)
	check(t, err)
	equal(t, mine, []account.KeyListing{{Key: thirdOther, CreatorEmail: third.Email}, {Key: thirdWide, CreatorEmail: third.Email},
		{Key: thirdOld, CreatorEmail: third.Email}})
	none, err := db.UserKeys(ctx, "usr_missing")
	check(t, err)
	equal(t, len(none), 0)
}
