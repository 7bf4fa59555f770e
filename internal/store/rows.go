package store

import (
	"context"
	"database/sql"
)

// The small interfaces the SQL helpers take, so one helper serves the
// pools, a *sql.Tx and (for scanning) pgx rows alike, and the two helpers
// that read rows. txConn (open.go) joins rowQueryer with execer.

// rowScanner is a row to scan: a *sql.Row, *sql.Rows or pgx.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

type rowQueryer interface {
	queryer
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// collect reads one value per row with scan and closes the rows. It takes
// QueryContext's two results as they are, so a read is the query and
// `return collect(rows, err, scanThing)`. The rows are closed before it
// returns, which matters inside a transaction on SQLite's one connection,
// where the next statement waits for them.
func collect[T any](rows *sql.Rows, err error, scan func(rowScanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// each calls fn on every row and closes the rows, for reads that fold
// rows into something other than a slice (a map, the parents they belong
// to, a tally). It stops at fn's first error.
func each(rows *sql.Rows, err error, fn func(rowScanner) error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// scanValue reads a row of one column.
func scanValue[T any](r rowScanner) (T, error) {
	var v T
	err := r.Scan(&v)
	return v, err
}
