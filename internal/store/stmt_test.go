package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestStmtCacheWhileATransactionHoldsTheWriter: SQLite's write pool has
// one connection. A transaction holding it asks the cache for a statement
// (txStmt) while another caller is preparing one on that pool and waits
// for the connection: the cache must not hold its lock while it waits, or
// neither ever goes on (a server hung so, with the heartbeat sweep in the
// transaction and a delivery's writes preparing).
func TestStmtCacheWhileATransactionHoldsTheWriter(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	inTx, release := make(chan struct{}), make(chan struct{})
	txDone := make(chan error, 1)
	go func() {
		txDone <- db.inTx(ctx, func(tx *sql.Tx) error {
			close(inTx)
			<-release // the other caller now waits for the connection in get
			st, err := db.txStmt(ctx, tx, `SELECT 1`)
			if err != nil {
				return err
			}
			return st.Close()
		})
	}()
	<-inTx
	prepared := make(chan error, 1)
	go func() {
		_, err := db.stmts.get(ctx, db.w, `SELECT 2`)
		prepared <- err
	}()
	time.Sleep(50 * time.Millisecond) // let get reach the pool; a longer wait only slows the test
	close(release)
	for _, ch := range []chan error{txDone, prepared} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the transaction and the cache wait for each other") // db is not closed: Close would wait too
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
