package store

import (
	"database/sql"
	"regexp"
	"strings"
	"testing"
)

// TestClaimStatements: the one claim builder writes, for each lease claim
// on each engine, the statement that call site wrote out by hand before
// it (copied here verbatim), but for spacing.
func TestClaimStatements(t *testing.T) {
	tests := []struct {
		name   string
		d      dialect
		c      claim
		before string
	}{
		{"checks/postgres", postgresDialect, claimChecks, `WITH due AS (
			SELECT seq FROM monitor_runtime
			WHERE next_due_at <= $2 AND lease_until < $3
			ORDER BY next_due_at LIMIT $5
			FOR UPDATE SKIP LOCKED)
		UPDATE monitor_runtime r SET lease_owner = $1, lease_until = GREATEST(r.next_due_at, $3) + $4
		FROM due WHERE r.seq = due.seq
		RETURNING r.seq, r.monitor_id, r.next_due_at, r.lease_until`},
		{"checks/sqlite", sqliteDialect, claimChecks, `UPDATE monitor_runtime SET lease_owner = $1, lease_until = MAX(next_due_at, $3) + $4
		WHERE seq IN (SELECT seq FROM monitor_runtime
			WHERE next_due_at <= $2 AND lease_until < $3
			ORDER BY next_due_at LIMIT $5)
		RETURNING seq, monitor_id, next_due_at, lease_until`},
		{"sweeps/postgres", postgresDialect, claimSweeps, `WITH due AS (
			SELECT seq FROM heartbeat_runtime WHERE wake_at <= $2 AND sweep_until < $2
			ORDER BY wake_at LIMIT $4 FOR UPDATE SKIP LOCKED)
		UPDATE heartbeat_runtime r SET sweep_owner = $1, sweep_until = $3 FROM due WHERE r.seq = due.seq RETURNING r.seq`},
		{"sweeps/sqlite", sqliteDialect, claimSweeps, `UPDATE heartbeat_runtime SET sweep_owner = $1, sweep_until = $3
		WHERE seq IN (SELECT seq FROM heartbeat_runtime WHERE wake_at <= $2 AND sweep_until < $2 ORDER BY wake_at LIMIT $4)
		RETURNING seq`},
		{"deliveries/postgres", postgresDialect, claimDeliveries, `WITH due AS (SELECT d.seq FROM deliveries d WHERE ` + deliveryDue + `
			ORDER BY d.next_attempt_at, d.seq LIMIT $4 FOR UPDATE SKIP LOCKED)
		UPDATE deliveries SET lease_owner = $2, lease_until = $3 FROM due WHERE deliveries.seq = due.seq
		RETURNING deliveries.id`},
		{"deliveries/sqlite", sqliteDialect, claimDeliveries, `UPDATE deliveries SET lease_owner = $2, lease_until = $3 WHERE seq IN (
			SELECT d.seq FROM deliveries d WHERE ` + deliveryDue + ` ORDER BY d.next_attempt_at, d.seq LIMIT $4)
		RETURNING id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := spacing(tt.d.claim(tt.c)), spacing(tt.before)
			if got != want {
				t.Fatalf("claim statement\n got  %s\n want %s", got, want)
			}
		})
	}
	// The statements the store runs are these, built once.
	for _, d := range []dialect{sqliteDialect, postgresDialect} {
		if d.claims.checks != d.claim(claimChecks) || d.claims.sweeps != d.claim(claimSweeps) || d.claims.deliveries != d.claim(claimDeliveries) {
			t.Errorf("%s: the prebuilt claims differ from the claims built", d.name)
		}
	}
}

// spacing folds runs of white space to one space and drops it inside
// parentheses' edges, which changes no token of a statement.
func spacing(q string) string {
	q = regexp.MustCompile(`\s+`).ReplaceAllString(strings.TrimSpace(q), " ")
	return strings.NewReplacer("( ", "(", " )", ")").Replace(q)
}

// TestDialectClauses: the clauses the other engine branches used to write
// out, as each engine's dialect now gives them.
func TestDialectClauses(t *testing.T) {
	for _, tt := range []struct {
		d                                 dialect
		skip, lockOfR, keyShare, greatest string
		locks, arrays                     bool
		snapshot                          sql.IsolationLevel
	}{
		{postgresDialect, " FOR UPDATE SKIP LOCKED", " FOR UPDATE OF r", " FOR KEY SHARE", "GREATEST", true, true, sql.LevelRepeatableRead},
		{sqliteDialect, "", "", "", "MAX", false, false, sql.LevelDefault},
	} {
		t.Run(tt.d.name, func(t *testing.T) {
			d := tt.d
			if d.skipLocked != tt.skip || d.forUpdateOf("r") != tt.lockOfR || d.forKeyShare != tt.keyShare ||
				d.greatest != tt.greatest || d.locksRows() != tt.locks || d.arrayBatches != tt.arrays || d.snapshot != tt.snapshot {
				t.Fatalf("%s: skipLocked %q, forUpdateOf %q, forKeyShare %q, greatest %q, locksRows %v, arrayBatches %v, snapshot %v",
					d.name, d.skipLocked, d.forUpdateOf("r"), d.forKeyShare, d.greatest, d.locksRows(), d.arrayBatches, d.snapshot)
			}
		})
	}
}
