package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// The contract every engine must meet: the same assertions on each.
func TestStore(t *testing.T) {
	tests := []struct {
		name string
		fn   func(*testing.T, storetest.Engine)
	}{
		{"Migrate", testMigrate},
		{"MigrateConcurrent", testMigrateConcurrent},
		{"Users", testUsers},
		{"Bootstrap", testBootstrap},
		{"BootstrapConcurrent", testBootstrapConcurrent},
		{"Workspaces", testWorkspaces},
		{"Memberships", testMemberships},
		{"Keys", testKeys},
		{"Monitors", testMonitors},
		{"MonitorPages", testMonitorPages},
		{"MonitorQuota", testMonitorQuota},
		{"QuotaOverride", testQuotaOverride},
		{"MonitorQuotaTwoNodes", testMonitorQuotaTwoNodes},
		{"Idempotency", testIdempotency},
		{"IdempotencyConcurrent", testIdempotencyConcurrent},
	}
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) { tt.fn(t, e) })
			}
		})
	}
}

var (
	ctx = context.Background()
	// t0 has microsecond precision, as stored.
	t0 = storetest.T0
)

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantKind(t *testing.T, err error, sentinel *errs.Error) {
	t.Helper()
	if !errors.Is(err, sentinel) || errs.KindOf(err) != sentinel.Kind {
		t.Fatalf("error = %v, want %q (kind %d)", err, sentinel.Message, sentinel.Kind)
	}
}

func equal[T any](t *testing.T, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func newUser(email string) account.User {
	return account.User{ID: ids.New(ids.User, t0), Email: email, PasswordHash: "$argon2id$v=19$x", CreatedAt: t0}
}

func newWorkspace(slug string) account.Workspace {
	return account.Workspace{ID: ids.New(ids.Workspace, t0), Name: "WS " + slug, Slug: slug, CreatedAt: t0}
}

func testMigrate(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	if db.Engine() != e.Name {
		t.Fatalf("Engine() = %q, want %q", db.Engine(), e.Name)
	}
	check(t, db.Ping(ctx))
	for range 2 {
		n, err := db.Migrate(ctx)
		check(t, err)
		if n != 0 {
			t.Fatalf("second Migrate applied %d migrations, want 0", n)
		}
	}
}

// Several processes starting at once on an empty database all migrate; each
// migration must be applied exactly once.
func testMigrateConcurrent(t *testing.T, e storetest.Engine) {
	url := storetest.EmptyURL(t, e)
	const n = 4
	var (
		wg       sync.WaitGroup
		applied  [n]int
		problems [n]error
	)
	for i := range n {
		wg.Go(func() {
			db, err := store.Open(ctx, url)
			if err != nil {
				problems[i] = err
				return
			}
			defer db.Close()
			applied[i], problems[i] = db.Migrate(ctx)
		})
	}
	wg.Wait()
	total := 0
	for i := range n {
		check(t, problems[i])
		total += applied[i]
	}
	db, err := store.Open(ctx, url)
	check(t, err)
	defer db.Close()
	again, err := db.Migrate(ctx)
	check(t, err)
	if total == 0 || again != 0 {
		t.Fatalf("concurrent Migrate applied %d in total, then %d more; want >0 and 0", total, again)
	}
	// Applying one migration twice would have failed above, so the total is
	// the number of migrations; the schema must be usable.
	_, err = db.CountUsers(ctx)
	check(t, err)
}

func testUsers(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	u := newUser("First@Example.com")
	check(t, db.CreateUser(ctx, u))
	u.Email = "first@example.com"

	dup := newUser("FIRST@example.COM")
	wantKind(t, db.CreateUser(ctx, dup), store.ErrConflict)

	got, err := db.UserByEmail(ctx, "fIrSt@EXAMPLE.com")
	check(t, err)
	equal(t, got, u)
	got, err = db.UserByID(ctx, u.ID)
	check(t, err)
	equal(t, got, u)

	_, err = db.UserByEmail(ctx, "second@example.com")
	wantKind(t, err, errs.ErrNotFound)
	_, err = db.UserByID(ctx, "usr_missing")
	wantKind(t, err, errs.ErrNotFound)

	check(t, db.SetPassword(ctx, u.ID, "$argon2id$new", true))
	got, err = db.UserByID(ctx, u.ID)
	check(t, err)
	if got.PasswordHash != "$argon2id$new" || !got.MustChangePassword {
		t.Fatalf("after SetPassword: %+v", got)
	}
	wantKind(t, db.SetPassword(ctx, "usr_missing", "x", false), errs.ErrNotFound)

	n, err := db.CountUsers(ctx)
	check(t, err)
	if n != 1 {
		t.Fatalf("CountUsers = %d, want 1", n)
	}
}

func bootstrapArgs(i int) (account.User, account.Workspace, account.Membership) {
	u := newUser(fmt.Sprintf("owner%d@example.com", i))
	w := newWorkspace(fmt.Sprintf("default-%d", i))
	return u, w, account.Membership{WorkspaceID: w.ID, UserID: u.ID, Role: account.RoleOwner, CreatedAt: t0}
}

func testBootstrap(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	u, w, m := bootstrapArgs(1)
	created, err := db.Bootstrap(ctx, u, w, m)
	check(t, err)
	if !created {
		t.Fatal("first Bootstrap created nothing")
	}
	gotM, err := db.Membership(ctx, w.ID, u.ID)
	check(t, err)
	equal(t, gotM, m)

	u2, w2, m2 := bootstrapArgs(2)
	created, err = db.Bootstrap(ctx, u2, w2, m2)
	check(t, err)
	if created {
		t.Fatal("second Bootstrap created again")
	}
	if _, err := db.Workspace(ctx, w2.ID); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("second Bootstrap's workspace: %v, want not found", err)
	}
}

func testBootstrapConcurrent(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	const n = 8
	var (
		wg       sync.WaitGroup
		created  [n]bool
		problems [n]error
	)
	for i := range n {
		wg.Go(func() {
			u, w, m := bootstrapArgs(i)
			created[i], problems[i] = db.Bootstrap(ctx, u, w, m)
		})
	}
	wg.Wait()
	winners := 0
	for i := range n {
		check(t, problems[i])
		if created[i] {
			winners++
		}
	}
	users, err := db.CountUsers(ctx)
	check(t, err)
	if winners != 1 || users != 1 {
		t.Fatalf("%d Bootstraps created, %d users; want 1 and 1", winners, users)
	}
}

func testWorkspaces(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	w := newWorkspace("acme")
	w.MaxMonitors, w.MaxChannels = 50, 3
	check(t, db.CreateWorkspace(ctx, w))
	for _, key := range []string{w.ID, w.Slug} {
		got, err := db.Workspace(ctx, key)
		check(t, err)
		equal(t, got, w)
	}
	_, err := db.Workspace(ctx, "nope")
	wantKind(t, err, errs.ErrNotFound)

	dup := newWorkspace("acme")
	wantKind(t, db.CreateWorkspace(ctx, dup), store.ErrConflict)

	check(t, db.SetWorkspaceQuota(ctx, w.ID, 7, 60))
	got, err := db.Workspace(ctx, "acme")
	check(t, err)
	if got.MaxMonitors != 7 || got.MinIntervalSeconds != 60 {
		t.Fatalf("after SetWorkspaceQuota: %+v", got)
	}
	wantKind(t, db.SetWorkspaceQuota(ctx, "ws_missing", 1, 10), errs.ErrNotFound)

	// Every override round-trips; zero clears one (the default applies).
	all := account.Quotas{Monitors: 1001, Heartbeats: 2, MinIntervalSeconds: 45, MaintenanceWindows: 4, Channels: 5}
	check(t, db.SetWorkspaceQuotas(ctx, w.ID, all))
	got, err = db.Workspace(ctx, w.ID)
	check(t, err)
	equal(t, got.Overrides(), all)
	check(t, db.SetWorkspaceQuotas(ctx, w.ID, account.Quotas{Heartbeats: 2}))
	got, err = db.Workspace(ctx, w.ID)
	check(t, err)
	equal(t, got.Overrides(), account.Quotas{Heartbeats: 2})
	wantKind(t, db.SetWorkspaceQuotas(ctx, "ws_missing", all), errs.ErrNotFound)
}

// testQuotaOverride: a workspace's override, read in the create's
// transaction, wins over the default the caller passes, either way; the
// refusal names the limit and how to raise it.
func testQuotaOverride(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	check(t, db.CreateMonitor(ctx, fullMonitor(w.ID), store.Sealed{}, 1))
	err := db.CreateMonitor(ctx, fullMonitor(w.ID), store.Sealed{}, 1)
	wantKind(t, err, store.ErrQuota)
	var me *errs.Error
	if errors.As(err, &me); !strings.Contains(me.Message, "at most 1 monitors") || !strings.Contains(me.Message, "tocsin workspace set-quota --monitors") {
		t.Fatalf("quota error %q does not name the limit and the remedy", me.Message)
	}
	check(t, db.SetWorkspaceQuotas(ctx, w.ID, account.Quotas{Monitors: 3}))
	check(t, db.CreateMonitor(ctx, fullMonitor(w.ID), store.Sealed{}, 1))
	check(t, db.CreateMonitor(ctx, fullMonitor(w.ID), store.Sealed{}, 1))
	wantKind(t, db.CreateMonitor(ctx, fullMonitor(w.ID), store.Sealed{}, 100), store.ErrQuota)
	check(t, db.SetWorkspaceQuotas(ctx, w.ID, account.Quotas{}))
	check(t, db.CreateMonitor(ctx, fullMonitor(w.ID), store.Sealed{}, 100))
	u, err := db.WorkspaceUsage(ctx, w.ID)
	check(t, err)
	equal(t, u, account.Quotas{Monitors: 4, MinIntervalSeconds: fullMonitor(w.ID).IntervalSeconds})
}

func testMemberships(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	u := newUser("second@example.com")
	check(t, db.CreateUser(ctx, u))

	_, err := db.Membership(ctx, w.ID, u.ID)
	wantKind(t, err, errs.ErrNotFound)

	m := account.Membership{WorkspaceID: w.ID, UserID: u.ID, Role: account.RoleViewer, CreatedAt: t0}
	check(t, db.PutMembership(ctx, m))
	// A role change keeps the original CreatedAt.
	check(t, db.PutMembership(ctx, account.Membership{WorkspaceID: w.ID, UserID: u.ID, Role: account.RoleAdmin, CreatedAt: t0.Add(time.Hour)}))
	got, err := db.Membership(ctx, w.ID, u.ID)
	check(t, err)
	m.Role = account.RoleAdmin
	equal(t, got, m)

	wantKind(t, db.PutMembership(ctx, account.Membership{WorkspaceID: w.ID, UserID: "usr_missing", Role: account.RoleViewer, CreatedAt: t0}), errs.ErrNotFound)

	check(t, db.DeleteMembership(ctx, w.ID, u.ID))
	_, err = db.Membership(ctx, w.ID, u.ID)
	wantKind(t, err, errs.ErrNotFound)
	wantKind(t, db.DeleteMembership(ctx, w.ID, u.ID), errs.ErrNotFound)
}

func testKeys(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	u, w1 := seed(t, db, "one")
	w2 := newWorkspace("two")
	check(t, db.CreateWorkspace(ctx, w2))
	check(t, db.PutMembership(ctx, account.Membership{WorkspaceID: w1.ID, UserID: u.ID, Role: account.RoleEditor, CreatedAt: t0}))

	bound := account.APIKey{ID: ids.New(ids.Key, t0), UserID: u.ID, WorkspaceID: w1.ID, Name: "ci",
		Hash: bytes.Repeat([]byte{1}, 32), Prefix: "tsk_abc", CreatedAt: t0,
		Scopes: []account.Scope{account.ScopeMonitorsRead, account.ScopeMonitorsWrite}}
	wide := account.APIKey{ID: ids.New(ids.Key, t0), UserID: u.ID, Name: "laptop",
		Hash: bytes.Repeat([]byte{2}, 32), Prefix: "tsk_def", CreatedAt: t0,
		Scopes: []account.Scope{account.ScopeMetricsRead}}
	check(t, db.CreateAPIKey(ctx, bound))
	check(t, db.CreateAPIKey(ctx, wide))
	dup := wide
	dup.ID = ids.New(ids.Key, t0)
	wantKind(t, db.CreateAPIKey(ctx, dup), store.ErrConflict)

	for _, tc := range []struct {
		name   string
		key    account.APIKey
		ws     string
		wantWS string
		role   account.Role
	}{
		{"bound key, own workspace", bound, "", w1.ID, account.RoleEditor},
		{"bound key, named workspace", bound, w1.ID, w1.ID, account.RoleEditor},
		{"bound key, another workspace", bound, w2.ID, w2.ID, ""},
		{"account-wide key, no workspace", wide, "", "", ""},
		{"account-wide key, member", wide, w1.ID, w1.ID, account.RoleEditor},
		{"account-wide key, non-member", wide, w2.ID, w2.ID, ""},
	} {
		g, err := db.KeyGrantByHash(ctx, tc.key.Hash, tc.ws)
		check(t, err)
		equal(t, g, store.KeyGrant{Key: tc.key, WorkspaceID: tc.wantWS, Role: tc.role})
	}

	_, err := db.KeyGrantByHash(ctx, bytes.Repeat([]byte{3}, 32), "")
	wantKind(t, err, errs.ErrNotFound)

	// Touch never moves backwards.
	check(t, db.TouchAPIKey(ctx, bound.ID, t0.Add(time.Minute)))
	check(t, db.TouchAPIKey(ctx, bound.ID, t0.Add(time.Second)))
	wantKind(t, db.TouchAPIKey(ctx, "key_missing", t0), errs.ErrNotFound)

	// Revoked keys are still returned, with the first revocation time.
	check(t, db.RevokeAPIKey(ctx, bound.ID, t0.Add(time.Hour)))
	check(t, db.RevokeAPIKey(ctx, bound.ID, t0.Add(2*time.Hour)))
	wantKind(t, db.RevokeAPIKey(ctx, "key_missing", t0), errs.ErrNotFound)
	g, err := db.KeyGrantByHash(ctx, bound.Hash, "")
	check(t, err)
	bound.LastUsedAt, bound.RevokedAt = t0.Add(time.Minute), t0.Add(time.Hour)
	equal(t, g, store.KeyGrant{Key: bound, WorkspaceID: w1.ID, Role: account.RoleEditor})

	// The operator's list: the user's keys, oldest first, revoked included.
	keys, err := db.ListAPIKeys(ctx, u.ID)
	check(t, err)
	equal(t, keys, []account.APIKey{bound, wide})
	keys, err = db.ListAPIKeys(ctx, "usr_nobody")
	check(t, err)
	equal(t, len(keys), 0)
}

// fullMonitor sets every kind of config field, so a round trip proves the
// JSON encoding loses nothing.
func fullMonitor(wsID string) monitor.Monitor {
	follow := false
	return monitor.Monitor{
		ID: ids.New(ids.Monitor, t0), WorkspaceID: wsID, Type: monitor.TypeHTTP, Name: "API health",
		Config: monitor.Config{
			URL: "https://example.com/health", Method: "POST",
			HeadersSet: []string{"Accept", "X-Trace"},
			Body:       `{"ping":true}`, FollowRedirects: &follow,
			ExpectedStatusCodes: []monitor.StatusRange{{From: 200, To: 299}, {From: 304, To: 304}},
			KeywordAssertions:   []monitor.KeywordAssertion{{Keyword: "ok", Present: true, CaseSensitive: true}},
			JSONAssertions: []monitor.JSONAssertion{
				{Path: "$.status", Operator: monitor.OpEquals, Value: []byte(`"ok"`)},
				{Path: "$.n", Operator: monitor.OpGT, Value: []byte(`3`)},
			},
			DegradedLatencyMs: 800,
			AuthSet:           &monitor.AuthPresence{Type: monitor.AuthBearer, TokenSet: true},
			TimeoutSeconds:    5,
		},
		IntervalSeconds: 30, State: monitor.StatePending, StateSince: t0, CreatedAt: t0, UpdatedAt: t0,
	}
}

func testMonitors(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	_, other := seed(t, db, "other")

	m := fullMonitor(w.ID)
	sealed := store.Sealed{Auth: []byte("sealed-credential"), Headers: []byte("sealed-headers")}
	keepAll := store.Keep{Auth: true, Headers: true}
	check(t, db.CreateMonitor(ctx, m, sealed, 10))
	wantKind(t, db.CreateMonitor(ctx, m, store.Sealed{}, 10), store.ErrConflict)
	orphan := fullMonitor("ws_missing")
	wantKind(t, db.CreateMonitor(ctx, orphan, store.Sealed{}, 10), errs.ErrNotFound)

	got, err := db.GetMonitor(ctx, w.ID, m.ID)
	check(t, err)
	equal(t, got, m)
	auth, err := db.MonitorAuth(ctx, w.ID, m.ID)
	check(t, err)
	equal(t, auth, sealed.Auth)
	headers, err := db.MonitorHeaders(ctx, w.ID, m.ID)
	check(t, err)
	equal(t, headers, sealed.Headers)

	// Another workspace cannot tell the monitor exists.
	_, err = db.GetMonitor(ctx, other.ID, m.ID)
	wantKind(t, err, errs.ErrNotFound)
	_, err = db.MonitorAuth(ctx, other.ID, m.ID)
	wantKind(t, err, errs.ErrNotFound)
	_, err = db.MonitorHeaders(ctx, other.ID, m.ID)
	wantKind(t, err, errs.ErrNotFound)
	wantKind(t, deleteMonitor(db, other.ID, m.ID), errs.ErrNotFound)
	moved := m
	moved.WorkspaceID = other.ID
	wantKind(t, db.UpdateMonitor(ctx, moved, store.Sealed{}, keepAll, m.UpdatedAt), errs.ErrNotFound)

	// Update what a user edits but keep the credential; state stays.
	prev := m.UpdatedAt
	m.Name = "Shop health"
	m.Config = monitor.Config{URL: "https://shop.example/v2", TimeoutSeconds: 3}
	m.IntervalSeconds, m.UpdatedAt = 120, t0.Add(time.Minute)
	check(t, db.UpdateMonitor(ctx, m, store.Sealed{}, keepAll, prev))
	got, err = db.GetMonitor(ctx, w.ID, m.ID)
	check(t, err)
	equal(t, got, m)
	auth, err = db.MonitorAuth(ctx, w.ID, m.ID)
	check(t, err)
	equal(t, auth, sealed.Auth)
	headers, err = db.MonitorHeaders(ctx, w.ID, m.ID)
	check(t, err)
	equal(t, headers, sealed.Headers)

	// A writer holding the old version loses: optimistic concurrency.
	stale := m
	stale.Name = "lost update"
	wantKind(t, db.UpdateMonitor(ctx, stale, store.Sealed{}, keepAll, prev), store.ErrStale)

	check(t, db.UpdateMonitor(ctx, m, store.Sealed{Auth: []byte("resealed")}, store.Keep{Headers: true}, m.UpdatedAt))
	auth, err = db.MonitorAuth(ctx, w.ID, m.ID)
	check(t, err)
	equal(t, auth, []byte("resealed"))
	check(t, db.UpdateMonitor(ctx, m, store.Sealed{}, store.Keep{Headers: true}, m.UpdatedAt))
	auth, err = db.MonitorAuth(ctx, w.ID, m.ID)
	check(t, err)
	if auth != nil {
		t.Fatalf("MonitorAuth after clearing = %q, want nil", auth)
	}
	// The headers are kept or replaced apart from the credential.
	headers, err = db.MonitorHeaders(ctx, w.ID, m.ID)
	check(t, err)
	equal(t, headers, sealed.Headers)
	check(t, db.UpdateMonitor(ctx, m, store.Sealed{Headers: []byte("resealed-headers")}, store.Keep{Auth: true}, m.UpdatedAt))
	headers, err = db.MonitorHeaders(ctx, w.ID, m.ID)
	check(t, err)
	equal(t, headers, []byte("resealed-headers"))
	check(t, db.UpdateMonitor(ctx, m, store.Sealed{}, store.Keep{Auth: true}, m.UpdatedAt))
	if headers, err = db.MonitorHeaders(ctx, w.ID, m.ID); err != nil || headers != nil {
		t.Fatalf("MonitorHeaders after clearing = %q, %v; want nil", headers, err)
	}

	// Pause and resume set the state with them, once.
	at := t0.Add(2 * time.Minute)
	check(t, setPaused(db, w.ID, m.ID, true, at))
	check(t, setPaused(db, w.ID, m.ID, true, at.Add(time.Minute)))
	got, err = db.GetMonitor(ctx, w.ID, m.ID)
	check(t, err)
	m.Paused, m.State, m.StateSince, m.UpdatedAt = true, monitor.StatePaused, at, at
	equal(t, got, m)
	wantKind(t, setPaused(db, other.ID, m.ID, false, at), errs.ErrNotFound)

	n, err := db.CountMonitors(ctx, w.ID)
	check(t, err)
	if n != 1 {
		t.Fatalf("CountMonitors = %d, want 1", n)
	}
	check(t, deleteMonitor(db, w.ID, m.ID))
	_, err = db.GetMonitor(ctx, w.ID, m.ID)
	wantKind(t, err, errs.ErrNotFound)
	wantKind(t, deleteMonitor(db, w.ID, m.ID), errs.ErrNotFound)
	wantKind(t, db.UpdateMonitor(ctx, m, store.Sealed{}, keepAll, m.UpdatedAt), errs.ErrNotFound)
}

func testMonitorPages(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	_, other := seed(t, db, "other")
	var want []string
	for i := range 7 {
		m := fullMonitor(w.ID)
		m.Name = fmt.Sprintf("m%d", i)
		check(t, db.CreateMonitor(ctx, m, store.Sealed{}, 100))
		want = append(want, m.ID)
		check(t, db.CreateMonitor(ctx, fullMonitor(other.ID), store.Sealed{}, 100))
	}

	var got []string
	after := ""
	for page := 0; ; page++ {
		ms, err := db.ListMonitors(ctx, w.ID, store.MonitorQuery{AfterID: after, Limit: 3})
		check(t, err)
		if len(ms) == 0 {
			break
		}
		for _, m := range ms {
			if m.WorkspaceID != w.ID {
				t.Fatalf("page %d holds %s of workspace %s", page, m.ID, m.WorkspaceID)
			}
			got = append(got, m.ID)
		}
		after = ms[len(ms)-1].ID
		if page == 0 {
			// A monitor created mid-listing sorts after every existing one:
			// it shows up once, at the end, and nothing repeats.
			m := fullMonitor(w.ID)
			check(t, db.CreateMonitor(ctx, m, store.Sealed{}, 100))
			want = append(want, m.ID)
		}
	}
	equal(t, got, want)
}

func testMonitorQuota(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	_, w := seed(t, db, "acme")
	const max, n = 5, 20
	problems := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { problems[i] = db.CreateMonitor(ctx, fullMonitor(w.ID), store.Sealed{}, max) })
	}
	wg.Wait()
	ok := 0
	for _, err := range problems {
		if err == nil {
			ok++
			continue
		}
		wantKind(t, err, store.ErrQuota)
		var me *errs.Error
		if errors.As(err, &me); !strings.Contains(me.Message, "5") {
			t.Fatalf("quota error %q does not name the limit", me.Message)
		}
	}
	count, err := db.CountMonitors(ctx, w.ID)
	check(t, err)
	if ok != max || count != max {
		t.Fatalf("%d creates succeeded, %d stored; want %d", ok, count, max)
	}
}

// Two processes on one database (PostgreSQL nodes, or a CLI beside a
// SQLite server) still never exceed the quota together.
func testMonitorQuotaTwoNodes(t *testing.T, e storetest.Engine) {
	url := storetest.URL(t, e)
	var nodes [2]*store.DB
	for i := range nodes {
		db, err := store.Open(ctx, url)
		check(t, err)
		defer db.Close()
		nodes[i] = db
	}
	_, w := seed(t, nodes[0], "acme")
	const max, n = 3, 12
	var wg sync.WaitGroup
	problems := make([]error, n)
	for i := range n {
		wg.Go(func() { problems[i] = nodes[i%2].CreateMonitor(ctx, fullMonitor(w.ID), store.Sealed{}, max) })
	}
	wg.Wait()
	ok := 0
	for _, err := range problems {
		if err == nil {
			ok++
		} else {
			wantKind(t, err, store.ErrQuota)
		}
	}
	count, err := nodes[1].CountMonitors(ctx, w.ID)
	check(t, err)
	if ok != max || count != max {
		t.Fatalf("%d creates succeeded, %d stored; want %d", ok, count, max)
	}
}

const (
	ttl     = 24 * time.Hour
	lockTTL = time.Minute
)

func testIdempotency(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	s := store.IdempotencyScope{WorkspaceID: "ws_1", KeyID: "key_1", Key: "create-1"}
	fp := []byte("fingerprint-1")

	rec, ok, err := db.BeginIdempotent(ctx, s, fp, t0, ttl, lockTTL)
	check(t, err)
	if !ok {
		t.Fatal("first Begin did not acquire")
	}
	equal(t, rec, store.IdempotencyRecord{Fingerprint: fp, CreatedAt: t0, ExpiresAt: t0.Add(ttl)})

	// Still running: the second request sees it in progress.
	rec, ok, err = db.BeginIdempotent(ctx, s, []byte("other body"), t0.Add(time.Second), ttl, lockTTL)
	check(t, err)
	if ok || rec.Done || !bytes.Equal(rec.Fingerprint, fp) {
		t.Fatalf("Begin during the first request: acquired=%v %+v", ok, rec)
	}

	header, body := []byte(`{"Location":["/x"]}`), []byte(`{"id":"mon_1"}`)
	check(t, db.FinishIdempotent(ctx, s, 201, header, body))
	// The first response stored wins.
	wantKind(t, db.FinishIdempotent(ctx, s, 200, nil, nil), errs.ErrNotFound)
	// A done record is replayed, long after lockTTL.
	rec, ok, err = db.BeginIdempotent(ctx, s, fp, t0.Add(time.Hour), ttl, lockTTL)
	check(t, err)
	if ok {
		t.Fatal("Begin after Finish acquired")
	}
	equal(t, rec, store.IdempotencyRecord{Fingerprint: fp, Done: true, Status: 201, Header: header, Body: body, CreatedAt: t0, ExpiresAt: t0.Add(ttl)})
	wantKind(t, db.AbandonIdempotent(ctx, s), errs.ErrNotFound)

	// Expired: the key is free again.
	fp2 := []byte("fingerprint-2")
	rec, ok, err = db.BeginIdempotent(ctx, s, fp2, t0.Add(ttl), ttl, lockTTL)
	check(t, err)
	if !ok || rec.Done || !bytes.Equal(rec.Fingerprint, fp2) {
		t.Fatalf("Begin after expiry: acquired=%v %+v", ok, rec)
	}
	check(t, db.FinishIdempotent(ctx, s, 200, nil, body))

	// An in-progress record older than lockTTL was left by a crash.
	s2 := store.IdempotencyScope{WorkspaceID: "ws_1", KeyID: "key_1", Key: "create-2"}
	_, ok, err = db.BeginIdempotent(ctx, s2, fp, t0, ttl, lockTTL)
	check(t, err)
	_, ok2, err := db.BeginIdempotent(ctx, s2, fp, t0.Add(lockTTL-time.Microsecond), ttl, lockTTL)
	check(t, err)
	_, ok3, err := db.BeginIdempotent(ctx, s2, fp, t0.Add(lockTTL), ttl, lockTTL)
	check(t, err)
	if !ok || ok2 || !ok3 {
		t.Fatalf("lockTTL takeover: acquired %v, %v, %v; want true, false, true", ok, ok2, ok3)
	}

	// Abandoned (5xx): a retry runs again.
	check(t, db.AbandonIdempotent(ctx, s2))
	_, ok, err = db.BeginIdempotent(ctx, s2, fp, t0.Add(lockTTL), ttl, lockTTL)
	check(t, err)
	if !ok {
		t.Fatal("Begin after Abandon did not acquire")
	}
	// Scopes are separate per workspace and per key.
	for _, other := range []store.IdempotencyScope{
		{WorkspaceID: "ws_2", KeyID: "key_1", Key: "create-2"},
		{WorkspaceID: "ws_1", KeyID: "key_2", Key: "create-2"},
	} {
		_, ok, err = db.BeginIdempotent(ctx, other, fp, t0.Add(lockTTL), ttl, lockTTL)
		check(t, err)
		if !ok {
			t.Fatalf("scope %+v collided with %+v", other, s2)
		}
	}

	// s expires at t0+2·ttl, s2 and the two others at t0+lockTTL+ttl.
	n, err := db.PurgeIdempotency(ctx, t0.Add(ttl+lockTTL))
	check(t, err)
	if n != 3 {
		t.Fatalf("PurgeIdempotency removed %d records, want 3", n)
	}
	rec, ok, err = db.BeginIdempotent(ctx, s, fp, t0.Add(ttl+lockTTL), ttl, lockTTL)
	check(t, err)
	if ok || !rec.Done || rec.Status != 200 || rec.Header != nil {
		t.Fatalf("after Purge, the live record: acquired=%v %+v", ok, rec)
	}
}

func testIdempotencyConcurrent(t *testing.T, e storetest.Engine) {
	db := storetest.OpenDB(t, e)
	s := store.IdempotencyScope{WorkspaceID: "ws_1", KeyID: "key_1", Key: "race"}
	const n = 20
	var (
		wg       sync.WaitGroup
		acquired [n]bool
		problems [n]error
	)
	for i := range n {
		wg.Go(func() {
			_, acquired[i], problems[i] = db.BeginIdempotent(ctx, s, []byte("fp"), t0, ttl, lockTTL)
		})
	}
	wg.Wait()
	winners := 0
	for i := range n {
		check(t, problems[i])
		if acquired[i] {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d of %d concurrent callers acquired, want 1", winners, n)
	}
}

// TestObservationRetention: observations older than the cutoff go, newer
// ones and other monitors' stay.
func TestObservationRetention(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := storetest.OpenDB(t, e)
			_, w := seed(t, db, "ret")
			var seqs []int64
			for i := range 2 {
				m := monitor.Monitor{ID: ids.New(ids.Monitor, t0), WorkspaceID: w.ID, Type: monitor.TypeTCP, Name: fmt.Sprint("m", i),
					Config: monitor.Config{Host: "h", Port: 1}, IntervalSeconds: 60, State: monitor.StatePending,
					StateSince: t0, CreatedAt: t0, UpdatedAt: t0}
				check(t, db.CreateMonitor(ctx, m, store.Sealed{}, 10))
			}
			claimed, err := db.ClaimDue(ctx, "n", t0, t0.Add(time.Hour), time.Hour, 10)
			check(t, err)
			var batch []monitor.Completed
			for _, c := range claimed {
				seqs = append(seqs, c.Seq)
				for d := range 10 { // one a day
					at := t0.Add(time.Duration(d) * 24 * time.Hour)
					batch = append(batch, monitor.Completed{Seq: c.Seq, Observation: monitor.Observation{
						MonitorID: c.Monitor.ID, StartedAt: at, Due: at, Result: monitor.ResultUp, Probe: "p"}})
				}
			}
			_, err = recordChecks(db, "n", batch)
			check(t, err)
			n, err := db.DeleteObservationsBefore(ctx, t0.Add(7*24*time.Hour))
			check(t, err)
			if n != 14 || len(seqs) != 2 {
				t.Fatalf("deleted %d observations of %d monitors, want 14 of 2", n, len(seqs))
			}
			for _, c := range claimed {
				obs, err := db.ListObservations(ctx, w.ID, c.Monitor.ID, store.ObservationQuery{Limit: 100})
				check(t, err)
				if len(obs) != 3 || obs[2].StartedAt.Before(t0.Add(7*24*time.Hour)) {
					t.Fatalf("%s kept %d observations", c.Monitor.ID, len(obs))
				}
			}
		})
	}
}

// seedBeforeQuotas is seed on a schema migrated only up to a version
// before the quota overrides.
func seedBeforeQuotas(t testing.TB, db *store.DB, slug string) (account.User, account.Workspace) {
	t.Helper()
	u := newUser(slug + "@example.com")
	w := account.Workspace{ID: ids.New(ids.Workspace, t0), Name: slug, Slug: slug, CreatedAt: t0}
	check(t, db.CreateUser(ctx, u))
	check(t, db.CreateWorkspaceBeforeQuotas(ctx, w.ID, slug, 1000, 10, t0))
	check(t, db.PutMembership(ctx, account.Membership{WorkspaceID: w.ID, UserID: u.ID, Role: account.RoleOwner, CreatedAt: t0}))
	return u, w
}

// TestQuotaMigration: the quotas earlier versions copied into every
// workspace become overrides only where they differ from the defaults of
// the day; the monitor quota, which also bounded heartbeats, bounds both.
func TestQuotaMigration(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			before := map[string]int{store.EngineSQLite: 10, store.EnginePostgres: 12}[e.Name]
			db, err := openStore(ctx, storetest.EmptyURL(t, e))
			check(t, err)
			t.Cleanup(func() { db.Close() })
			_, err = db.MigrateUpTo(ctx, before)
			check(t, err)
			check(t, db.CreateWorkspaceBeforeQuotas(ctx, "ws_plain", "plain", 1000, 10, t0))
			check(t, db.CreateWorkspaceBeforeQuotas(ctx, "ws_set", "set", 7, 60, t0))
			_, err = db.Migrate(ctx)
			check(t, err)
			for id, want := range map[string]account.Quotas{"ws_plain": {}, "ws_set": {Monitors: 7, Heartbeats: 7, MinIntervalSeconds: 60}} {
				w, err := db.Workspace(ctx, id)
				check(t, err)
				equal(t, w.Overrides(), want)
			}
		})
	}
}

// newHeartbeatBeforeQuotas is newHeartbeat on such a schema.
func newHeartbeatBeforeQuotas(t testing.TB, db *store.DB, wsID string) heartbeat.Heartbeat {
	t.Helper()
	h := heartbeat.Heartbeat{ID: ids.New(ids.Heartbeat, t0), WorkspaceID: wsID, Name: "job",
		Schedule: heartbeat.Schedule{PeriodSeconds: 60, GraceSeconds: 10}, Token: heartbeat.NewToken(),
		Runtime: heartbeat.New(t0, false), CreatedAt: t0, UpdatedAt: t0}
	check(t, db.CreateHeartbeatBeforeQuotas(ctx, h, heartbeat.HashToken(h.Token), []byte("sealed")))
	return h
}
