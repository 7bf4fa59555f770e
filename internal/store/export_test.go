package store

import "context"

// MigrateUpTo applies the migrations up to version v, for tests of a
// migration's conversion of existing data.
func (db *DB) MigrateUpTo(ctx context.Context, v int) (int, error) { return db.migrate(ctx, v) }

// Abandon closes the database as a killed process would leave it: pings
// still in the journal are not applied.
func (db *DB) Abandon() {
	if j := db.journal; j != nil {
		unlock := j.lockAll()
		j.files.close()
		if j.lock != nil {
			j.lock.Close()
		}
		unlock()
	}
	db.stmts.close()
	db.w.Close()
	db.r.Close()
}

// PendingPings is how many acknowledged pings wait in the journal.
func (db *DB) PendingPings() int {
	if db.journal == nil {
		return 0
	}
	db.journal.mu.Lock()
	defer db.journal.mu.Unlock()
	n := db.journal.pending.n
	for _, p := range db.journal.frozen {
		n += p.n
	}
	return n
}
