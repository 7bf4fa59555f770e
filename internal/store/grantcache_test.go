package store_test

import (
	"bytes"
	"database/sql"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// TestGrantCache: on PostgreSQL key grants are cached per node and every
// change to keys or memberships, from any node or by hand, reaches every
// node's cache through LISTEN/NOTIFY.
func TestGrantCache(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			url := storetest.URL(t, e)
			open := func() *store.DB {
				db := storetest.Open(t, url)
				return db
			}
			node1, node2 := open(), open()
			if e.Name == store.EngineSQLite {
				if node1.CachesGrants() {
					t.Error("SQLite caches grants; the CLI's changes from another process would not reach it")
				}
				return
			}
			wait.For(t, 5*time.Second, "the change listener to connect", func() bool { return node1.CachesGrants() && node2.CachesGrants() })

			u, w := seed(t, node1, "cache")
			check(t, node1.PutMembership(ctx, account.Membership{WorkspaceID: w.ID, UserID: u.ID, Role: account.RoleEditor, CreatedAt: t0}))
			k := account.APIKey{ID: ids.New(ids.Key, t0), UserID: u.ID, WorkspaceID: w.ID, Hash: bytes.Repeat([]byte{9}, 32),
				Prefix: "tsk_c", Scopes: []account.Scope{account.ScopeMonitorsRead}, CreatedAt: t0}
			check(t, node1.CreateAPIKey(ctx, k))
			role := func(db *store.DB) account.Role {
				g, err := db.KeyGrantByHash(ctx, k.Hash, "")
				check(t, err)
				if !g.Key.RevokedAt.IsZero() {
					return "revoked"
				}
				return g.Role
			}
			equal(t, role(node1), account.RoleEditor)
			equal(t, role(node2), account.RoleEditor)

			// The notifications of the writes above reach each node later,
			// and each clears its cache when it comes; they come in order,
			// so a node that took one sent after them took them all.
			raw, err := sql.Open("pgx", url)
			check(t, err)
			defer raw.Close()
			_, err = raw.Exec(`SELECT pg_notify($1, 'settled')`, store.AuthChannel)
			check(t, err)
			wait.For(t, 5*time.Second, "node 1 to take the notifications", func() bool { return node1.HeardGrantNotice("settled") })
			equal(t, role(node1), account.RoleEditor)

			// The cache is really used: a change that notifies nobody is not seen.
			tx, err := raw.Begin()
			check(t, err)
			_, err = tx.Exec(`ALTER TABLE memberships DISABLE TRIGGER memberships_auth_changed`)
			check(t, err)
			_, err = tx.Exec(`UPDATE memberships SET role = 'owner' WHERE user_id = $1`, u.ID)
			check(t, err)
			_, err = tx.Exec(`ALTER TABLE memberships ENABLE TRIGGER memberships_auth_changed`)
			check(t, err)
			check(t, tx.Commit())
			equal(t, role(node1), account.RoleEditor)

			// A change by hand with the triggers on reaches both nodes.
			_, err = raw.Exec(`UPDATE memberships SET role = 'viewer' WHERE user_id = $1`, u.ID)
			check(t, err)
			wait.For(t, 5*time.Second, "node 1 to see the demotion", func() bool { return role(node1) == account.RoleViewer })
			wait.For(t, 5*time.Second, "node 2 to see the demotion", func() bool { return role(node2) == account.RoleViewer })

			// A node's own change is seen by that node at once…
			check(t, node1.PutMembership(ctx, account.Membership{WorkspaceID: w.ID, UserID: u.ID, Role: account.RoleAdmin, CreatedAt: t0}))
			equal(t, role(node1), account.RoleAdmin)
			// …and by the others as soon as the notification arrives.
			wait.For(t, 5*time.Second, "node 2 to see the promotion", func() bool { return role(node2) == account.RoleAdmin })

			check(t, node2.RevokeAPIKey(ctx, k.ID, t0))
			equal(t, role(node2), account.Role("revoked"))
			wait.For(t, 5*time.Second, "node 1 to see the revocation", func() bool { return role(node1) == "revoked" })

			check(t, node1.DeleteMembership(ctx, w.ID, u.ID))
			g, err := node2.KeyGrantByHash(ctx, k.Hash, "")
			check(t, err)
			wait.For(t, 5*time.Second, "node 2 to see the removal", func() bool {
				g, err = node2.KeyGrantByHash(ctx, k.Hash, "")
				return err == nil && g.Role == ""
			})
		})
	}
}
