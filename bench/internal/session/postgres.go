// A database of its own on a PostgreSQL server for a phase, and what a
// report needs of the server: its version, and which of its processes
// work for the database.

package session

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
)

// createDB makes the empty database name on the server at serverURL (whose
// user may CREATE DATABASE) and returns its URL, and drop, which removes
// it unless keep is set (then it logs that it kept it).
func createDB(ctx context.Context, serverURL, name string, keep bool, logf func(format string, args ...any)) (dbURL string, drop func(), err error) {
	admin, err := sql.Open("pgx", serverURL)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("creating database %s: %w", name, err)
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop = func() {
		if keep {
			logf("kept PostgreSQL database %s", name)
			return
		}
		admin, err := sql.Open("pgx", serverURL)
		if err == nil {
			defer admin.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		}
		if err != nil {
			logf("dropping %s: %v", name, err)
		}
	}
	return u.String(), drop, nil
}

// processes lists the PostgreSQL processes that work for the benchmark's
// database, on db's connection to it: the backends connected to it (but
// the one asking) and the cluster's background processes, which work for
// it too. Their CPU time is what a benchmark charges to PostgreSQL.
func processes(ctx context.Context, db *sql.DB) (map[int]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT pid FROM pg_stat_activity
		WHERE (datname = current_database() AND pid <> pg_backend_pid())
		OR backend_type IN ('checkpointer', 'background writer', 'walwriter', 'autovacuum launcher')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	pids := map[int]bool{}
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return nil, err
		}
		pids[pid] = true
	}
	return pids, rows.Err()
}

// serverVersion is the version of the PostgreSQL server at serverURL; ""
// if it cannot be asked within 5 seconds.
func serverVersion(ctx context.Context, serverURL string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", serverURL)
	if err != nil {
		return ""
	}
	defer db.Close()
	var v string
	_ = db.QueryRowContext(ctx, "SHOW server_version").Scan(&v)
	return v
}
