package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
)

// Each engine has its own folder of numbered SQL files (NNNN_name.sql),
// applied in order, each once. A migration never changes after release;
// later changes come as new files.
//
//go:embed migrations
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

func migrations(engine string) ([]migration, error) {
	dir := path.Join("migrations", engine)
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s/%s: name must start with a positive number", dir, e.Name())
		}
		body, err := fs.ReadFile(migrationFS, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(body)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", ms[i-1].name, ms[i].name, ms[i].version)
		}
	}
	return ms, nil
}

// goSteps run after a migration's SQL, in its transaction: changes to data
// that SQL alone cannot make alike on both engines.
var goSteps = map[string]map[int]func(context.Context, *DB, *sql.Tx) error{
	EngineSQLite:   {5: convertPingRows},
	EnginePostgres: {8: convertPingRows},
}

// Migrate applies the pending migrations and reports how many it applied.
// Each runs in its own transaction together with its schema_migrations row.
// Several processes may migrate at once: on PostgreSQL every transaction
// first takes an advisory lock and re-checks the version under it; on
// SQLite, BEGIN IMMEDIATE does the same job. It first looks, read-only,
// whether anything is pending: a database that is up to date is not
// written to, so commands beside a busy server do not wait for its lock.
// A SQLite database that another process serves is not migrated under it
// (see mayMigrate).
func (db *DB) Migrate(ctx context.Context) (applied int, err error) {
	return db.migrate(ctx, math.MaxInt)
}

// HasSchema reports whether the database has been migrated at least once
// (holds Tocsin's tables), reading only.
func (db *DB) HasSchema(ctx context.Context) (has bool, err error) {
	defer errs.Wrap(&err, "store.HasSchema")
	q := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`
	if db.d.name == EnginePostgres {
		q = `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_migrations'`
	}
	var n int
	if err := db.r.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// migrate applies the pending migrations up to version upTo.
func (db *DB) migrate(ctx context.Context, upTo int) (applied int, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("store.Migrate(%s): %w", db.d.name, err)
		}
	}()
	ms, err := migrations(db.d.name)
	if err != nil {
		return 0, err
	}
	ms = db.pending(ctx, ms, upTo)
	if len(ms) == 0 {
		return 0, nil
	}
	if err := db.mayMigrate(ms); err != nil {
		return 0, err
	}
	err = db.migrateTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER NOT NULL PRIMARY KEY,
			applied_at BIGINT  NOT NULL
		)`)
		return err
	})
	if err != nil {
		return 0, err
	}
	for _, m := range ms {
		if m.version > upTo {
			break
		}
		var done bool
		err := db.migrateTx(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`, m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			if step := goSteps[db.d.name][m.version]; step != nil {
				if err := step(ctx, db, tx); err != nil {
					return err
				}
			}
			done = true
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`, m.version, micros(time.Now()))
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("%s: %w", m.name, err)
		}
		if done {
			applied++
		}
	}
	return applied, nil
}

func (db *DB) migrateTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if db.d.migrateLock != "" {
			if _, err := tx.ExecContext(ctx, db.d.migrateLock); err != nil {
				return err
			}
		}
		return fn(tx)
	})
}

// pending returns the migrations up to upTo that the database has not
// had, as read outside any write transaction. If it cannot tell (no
// schema_migrations yet, or the read failed) it returns them all: the
// write path checks each again under its lock and reports real errors.
func (db *DB) pending(ctx context.Context, ms []migration, upTo int) []migration {
	ms = slices.DeleteFunc(slices.Clone(ms), func(m migration) bool { return m.version > upTo })
	rows, err := db.r.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return ms
	}
	defer rows.Close()
	done := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return ms
		}
		done[v] = true
	}
	if rows.Err() != nil {
		return ms
	}
	return slices.DeleteFunc(ms, func(m migration) bool { return done[m.version] })
}

// mayMigrate refuses to change a SQLite database's schema under a server
// that another process runs on it: that server's statements and its
// pending pings, held in its memory, assume the schema it started with
// (a migration has converted ping rows before). The operator stops it
// first; the new serve migrates when it starts. Several PostgreSQL nodes
// are upgraded one by one, so there a migration runs beside them.
func (db *DB) mayMigrate(ms []migration) error {
	if db.locks == nil {
		return nil
	}
	holder, err := db.locks.Holder()
	if err != nil || holder == "" {
		return err
	}
	return fmt.Errorf("the SQLite database %s needs %d migration(s) (from %s) and is in use by %s: "+
		"stop that server if it is an older version, then migrate (a new serve migrates when it starts); if it is starting, try again once it listens",
		db.locks.Path(), len(ms), ms[0].name, holder)
}
