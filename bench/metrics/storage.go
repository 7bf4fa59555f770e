package metrics

import (
	"context"
	"database/sql"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"

	"github.com/tocsin/tocsin/bench/internal/pgfresh"
	_ "github.com/tocsin/tocsin/internal/store" // driver "sqlite"
)

// rawDB reads the database around the store: the bytes of a table, rows
// counted, the rollups' progress while the server runs, and which
// PostgreSQL processes serve it.
type rawDB struct {
	engine string
	db     *sql.DB
	url    string
}

func openRaw(engine, dbURL string) (*rawDB, error) {
	if engine == "sqlite" {
		path := strings.TrimPrefix(dbURL, "sqlite:")
		db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_query_only=1")
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		return &rawDB{engine: engine, db: db, url: dbURL}, nil
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one backend of ours, left out of PostgreSQL's CPU
	return &rawDB{engine: engine, db: db, url: dbURL}, nil
}

func (r *rawDB) Close() error { return r.db.Close() }

// compact rewrites table without the room its deleted rows left (SQLite:
// the whole file), which a running database reuses for new rows: what is
// measured after it is what the rows live in.
func (r *rawDB) compact(ctx context.Context, table string) error {
	if r.engine != "sqlite" {
		_, err := r.db.ExecContext(ctx, `VACUUM FULL `+table)
		return err
	}
	db, err := sql.Open("sqlite", strings.TrimPrefix(r.url, "sqlite:")+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `VACUUM`)
	return err
}

// tableBytes is what a table takes on disk with its indexes, and its rows.
// PostgreSQL: pg_total_relation_size (heap, indexes, TOAST, free space
// and visibility maps). SQLite: the pages of the table's b-trees and its
// indexes', from the dbstat virtual table.
func (r *rawDB) tableBytes(ctx context.Context, table string) (bytes, rows int64, err error) {
	q := `SELECT pg_total_relation_size($1::regclass)`
	if r.engine == "sqlite" {
		q = `SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_schema WHERE tbl_name = $1)`
	}
	if err := r.db.QueryRowContext(ctx, q, table).Scan(&bytes); err != nil {
		return 0, 0, err
	}
	err = r.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&rows)
	return bytes, rows, err
}

// sketchBytes is the mean size of the encoded latency summary of each
// tier's rollup rows.
func (r *rawDB) sketchBytes(ctx context.Context, tier int) (mean float64, err error) {
	err = r.db.QueryRowContext(ctx, `SELECT COALESCE(AVG(length(latency)), 0) FROM observation_rollups WHERE tier = $1`, tier).Scan(&mean)
	return mean, err
}

// countObservations counts the observations that started in [from, to).
func (r *rawDB) countObservations(ctx context.Context, from, to time.Time) (n int64, err error) {
	err = r.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM observations WHERE at >= $1 AND at < $2`,
		from.UnixMicro(), to.UnixMicro()).Scan(&n)
	return n, err
}

// progress is how far each rollup has gone, as the store records it.
func (r *rawDB) progress(ctx context.Context) (map[string]time.Time, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT name, done_until FROM rollup_progress`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var (
			name string
			at   int64
		)
		if err := rows.Scan(&name, &at); err != nil {
			return nil, err
		}
		out[name] = time.UnixMicro(at).UTC()
	}
	return out, rows.Err()
}

// pgProcesses lists the backends of the benchmark's database (but ours)
// and the cluster's background writers; nil on SQLite.
func (r *rawDB) pgProcesses(ctx context.Context) (map[int]bool, error) {
	if r.engine != "postgres" {
		return nil, nil
	}
	return pgfresh.Processes(ctx, r.db)
}
