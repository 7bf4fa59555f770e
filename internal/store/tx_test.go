package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/store/storetest"
)

// TestPanicInTransaction: a panic inside a write transaction rolls it
// back, so what it wrote is gone and the next write is not held up (on
// SQLite a transaction left open would keep the one writer connection's
// lock for the life of the process).
func TestPanicInTransaction(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := storetest.OpenDB(t, e)
			write := func(tx *sql.Tx, name string) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, slug, created_at)
					 VALUES ($1, $2, $2, $3)`, "ws_"+name, name, time.Now().UnixMicro())
				return err
			}
			func() {
				defer func() {
					if p := recover(); p != "boom" {
						t.Fatalf("recovered %v, want the panic to go on to the caller", p)
					}
				}()
				_ = db.InSQLTx(ctx, func(tx *sql.Tx) error {
					if err := write(tx, "panicked"); err != nil {
						t.Fatal(err)
					}
					panic("boom")
				})
			}()
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := db.InSQLTx(c, func(tx *sql.Tx) error { return write(tx, "after") }); err != nil {
				t.Fatalf("a write after the panic: %v", err)
			}
			var n int
			if err := db.InSQLTx(ctx, func(tx *sql.Tx) error {
				return tx.QueryRowContext(ctx, `SELECT count(*) FROM workspaces WHERE id IN ('ws_panicked', 'ws_after')`).Scan(&n)
			}); err != nil || n != 1 {
				t.Fatalf("%d of the two rows stored (%v); want only the one written after the panic", n, err)
			}
		})
	}
}
