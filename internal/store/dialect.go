package store

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"modernc.org/sqlite"
)

// dialect holds the places where the engines' SQL differs. Code outside
// this file asks it for a clause or a capability, never which engine runs.
type dialect struct {
	name string
	// multiNode says several nodes may serve from one database at once.
	multiNode bool
	// forUpdate locks the selected row until the transaction ends. SQLite has
	// no row locks; its BEGIN IMMEDIATE already serializes every writer.
	forUpdate string
	// skipLocked locks the selected rows and passes over rows another
	// transaction holds, so that nodes share a queue without waiting on
	// each other; forKeyShare only keeps the rows from being deleted or
	// their keys changed. Empty on SQLite, as forUpdate.
	skipLocked  string
	forKeyShare string
	// migrateLock and bootstrapLock run first in transactions that must not
	// interleave across processes; empty on SQLite for the same reason.
	migrateLock   string
	bootstrapLock string
	// greatest names the function of the larger of two values (SQLite's
	// MAX takes several arguments as PostgreSQL's GREATEST does).
	greatest string
	// lower folds text to lower case for a search that ignores case.
	// SQLite's lower folds ASCII letters only; foldSQLite (registered
	// with the driver) folds every letter, as PostgreSQL's does.
	lower string
	// position names the function of where a substring begins (0: absent).
	position string
	// arrayBatches says a batch of rows is written by one statement over
	// arrays (unnest): PostgreSQL is a round trip away, and a round trip
	// per row cost more than the rest of the batch. SQLite, in process,
	// runs one prepared statement per row instead.
	arrayBatches bool
	// snapshot is the isolation that gives every statement of a read-only
	// transaction one snapshot (inSnapshot): REPEATABLE READ on
	// PostgreSQL, where READ COMMITTED gives each statement its own;
	// SQLite's transactions have one already.
	snapshot sql.IsolationLevel
	// claimForm builds a lease claim's statement (claim, below); claims
	// holds the three the store makes, built once.
	claimForm func(d dialect, c claim) string
	claims    struct{ checks, sweeps, deliveries string }
}

// foldSQLite is the SQLite function that folds text to lower case as
// strings.ToLower does, for every letter.
const foldSQLite = "tocsin_lower"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(foldSQLite, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return strings.ToLower(v), nil
		case []byte:
			return strings.ToLower(string(v)), nil
		}
		return args[0], nil
	})
	for _, d := range []*dialect{&sqliteDialect, &postgresDialect} {
		d.claims.checks, d.claims.sweeps, d.claims.deliveries = d.claim(claimChecks), d.claim(claimSweeps), d.claim(claimDeliveries)
	}
}

// advisory-lock key for migrations: any constant that no other code uses.
const migrateLockKey = 7_281_946_355_100_001

var (
	sqliteDialect = dialect{
		name:      EngineSQLite,
		greatest:  "MAX",
		lower:     foldSQLite,
		position:  "instr",
		claimForm: claimIn,
	}
	postgresDialect = dialect{
		name:          EnginePostgres,
		multiNode:     true,
		forUpdate:     " FOR UPDATE",
		skipLocked:    " FOR UPDATE SKIP LOCKED",
		forKeyShare:   " FOR KEY SHARE",
		migrateLock:   fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrateLockKey),
		bootstrapLock: "LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE",
		greatest:      "GREATEST",
		lower:         "lower",
		position:      "strpos",
		arrayBatches:  true,
		snapshot:      sql.LevelRepeatableRead,
		claimForm:     claimWith,
	}
)

// contains is the condition that column's text holds needle (a
// placeholder for text already folded to lower case), ignoring case.
// A position, unlike LIKE, gives no character of needle a meaning.
func (d dialect) contains(column, needle string) string {
	return d.position + "(" + d.lower + "(" + column + "), " + needle + ") > 0"
}

// locksRows reports whether a transaction takes row locks: where it does
// not (SQLite), the transaction itself already excludes every writer.
func (d dialect) locksRows() bool { return d.forUpdate != "" }

// forUpdateOf locks the rows of alias alone among the tables a SELECT
// joins.
func (d dialect) forUpdateOf(alias string) string {
	if !d.locksRows() {
		return ""
	}
	return d.forUpdate + " OF " + alias
}

// claim is a lease claim: up to limit rows that are due, in order, are
// leased in one statement, which returns them. Rows another node is
// claiming at the same moment are passed over, never waited for. Checks,
// heartbeat sweeps and deliveries are each leased so (claimChecks,
// claimSweeps, claimDeliveries).
type claim struct {
	// table holds the rows; as is the name the claim gives it in the
	// UPDATE where it must qualify its columns ("" for the table's own).
	table, as string
	// due selects the seq of the rows due, ordered; limit is the
	// placeholder of how many to take.
	due, limit string
	// set is the SET list; row prefixes the leased row's columns where
	// they must be qualified ("" where they need not be).
	set func(d dialect, row string) string
	// returning lists the returned columns of the leased rows.
	returning []string
}

// claim builds c's statement for d.
func (d dialect) claim(c claim) string { return d.claimForm(d, c) }

// claimWith is PostgreSQL's claim: the rows due are locked in a CTE,
// skipping those another transaction holds, then leased.
func claimWith(d dialect, c claim) string {
	target, row := c.table, c.table+"."
	if c.as != "" {
		target, row = c.table+" "+c.as, c.as+"."
	}
	return "WITH due AS (" + c.due + " LIMIT " + c.limit + d.skipLocked + ")\n" +
		"UPDATE " + target + " SET " + c.set(d, row) + " FROM due WHERE " + row + "seq = due.seq\n" +
		"RETURNING " + qualified(row, c.returning)
}

// claimIn is SQLite's claim: one writer at a time, so the rows due need
// no lock between being chosen and leased.
func claimIn(d dialect, c claim) string {
	return "UPDATE " + c.table + " SET " + c.set(d, "") + "\n" +
		"WHERE seq IN (" + c.due + " LIMIT " + c.limit + ")\n" +
		"RETURNING " + qualified("", c.returning)
}

func qualified(row string, cols []string) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row + c)
	}
	return b.String()
}

var (
	// claimChecks (ClaimDue): $1 owner, $2 horizon, $3 now, $4 lease (µs),
	// $5 limit. A check leased early holds its lease from its due time.
	claimChecks = claim{
		table: "monitor_runtime", as: "r",
		due:   `SELECT seq FROM monitor_runtime WHERE next_due_at <= $2 AND lease_until < $3 ORDER BY next_due_at`,
		limit: "$5",
		set: func(d dialect, row string) string {
			return "lease_owner = $1, lease_until = " + d.greatest + "(" + row + "next_due_at, $3) + $4"
		},
		returning: []string{"seq", "monitor_id", "next_due_at", "lease_until"},
	}
	// claimSweeps (SweepHeartbeats): $1 owner, $2 now, $3 lease end,
	// $4 limit.
	claimSweeps = claim{
		table: "heartbeat_runtime", as: "r",
		due:       `SELECT seq FROM heartbeat_runtime WHERE wake_at <= $2 AND sweep_until < $2 ORDER BY wake_at`,
		limit:     "$4",
		set:       func(dialect, string) string { return "sweep_owner = $1, sweep_until = $3" },
		returning: []string{"seq"},
	}
	// claimDeliveries (ClaimDeliveries): $1 now, $2 owner, $3 lease end,
	// $4 limit.
	claimDeliveries = claim{
		table:     "deliveries",
		due:       `SELECT d.seq FROM deliveries d WHERE ` + deliveryDue + ` ORDER BY d.next_attempt_at, d.seq`,
		limit:     "$4",
		set:       func(dialect, string) string { return "lease_owner = $2, lease_until = $3" },
		returning: []string{"id"},
	}
)
