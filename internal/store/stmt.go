package store

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps prepared statements for the queries every request runs.
// SQLite's driver otherwise parses and plans the SQL text on every call,
// which measured as the largest single cost of an authenticated read
// (docs/benchmarks.md). database/sql re-prepares a statement on each pool
// connection as needed, so one *sql.Stmt serves the whole pool.
type stmtCache struct {
	mu sync.Mutex
	m  map[*sql.DB]map[string]*sql.Stmt
}

// queryRow runs a single-row query through a cached prepared statement.
func (db *DB) queryRow(ctx context.Context, pool *sql.DB, query string, args ...any) *sql.Row {
	st, err := db.stmts.get(ctx, pool, query)
	if err != nil {
		// Preparing failed (e.g. the database is gone): run it unprepared so
		// the caller gets the real error from the query itself.
		return pool.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// get returns the cached statement of query on pool, preparing it first
// if need be. It prepares without holding the lock: preparing waits for a
// connection of the pool, and SQLite's write pool has one, which a
// transaction may hold while it asks for a cached statement (txStmt).
func (c *stmtCache) get(ctx context.Context, pool *sql.DB, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	st := c.m[pool][query]
	c.mu.Unlock()
	if st != nil {
		return st, nil
	}
	st, err := pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if have := c.m[pool][query]; have != nil { // prepared meanwhile by another caller
		st.Close()
		return have, nil
	}
	if c.m == nil {
		c.m = map[*sql.DB]map[string]*sql.Stmt{}
	}
	if c.m[pool] == nil {
		c.m[pool] = map[string]*sql.Stmt{}
	}
	c.m[pool][query] = st
	return st, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, byQuery := range c.m {
		for _, st := range byQuery {
			st.Close()
		}
	}
	c.m = nil
}

// txStmt returns query as a statement of tx: the cached prepared one if
// prepareWrites made it, else one prepared for this transaction alone.
// (Preparing a cached statement inside a transaction could deadlock:
// SQLite's write pool has one connection, and tx holds it.)
func (db *DB) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	db.stmts.mu.Lock()
	st := db.stmts.m[db.w][query]
	db.stmts.mu.Unlock()
	if st == nil {
		return tx.PrepareContext(ctx, query)
	}
	return tx.StmtContext(ctx, st), nil
}

// prepareWrites caches prepared statements of the write pool for a hot
// transaction to come; call it outside any transaction.
func (db *DB) prepareWrites(ctx context.Context, queries ...string) error {
	for _, q := range queries {
		if _, err := db.stmts.get(ctx, db.w, q); err != nil {
			return err
		}
	}
	return nil
}
