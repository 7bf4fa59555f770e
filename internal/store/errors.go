package store

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/tocsin/tocsin/internal/errs"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrConflict is wrapped when an insert hits a unique constraint.
var ErrConflict = &errs.Error{Kind: errs.KindConflict, Message: "already exists"}

// ErrQuota is wrapped when a workspace quota would be exceeded; the wrapping
// message names the limit.
var ErrQuota = &errs.Error{Kind: errs.KindQuota, Message: "quota reached"}

// classify turns driver errors that callers must tell apart into the
// domain's sentinels, keeping the driver error in the chain for logs:
// no row → ErrNotFound, unique violation → ErrConflict, and a foreign key
// pointing at a missing row (a membership for an unknown user, …) →
// ErrNotFound.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return errs.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w (%w)", ErrConflict, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: a referenced row is missing (%w)", errs.ErrNotFound, err)
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%w (%w)", ErrConflict, err)
		case "23503": // foreign_key_violation
			return fmt.Errorf("%w: a referenced row is missing (%w)", errs.ErrNotFound, err)
		}
	}
	return err
}

// sqliteBusy tells whether err is SQLite's SQLITE_BUSY (any extended code).
func sqliteBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// lostRace tells whether PostgreSQL aborted a transaction to settle a
// race with another one (a deadlock, a serialization failure): the same
// work, tried again, can succeed.
func lostRace(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// againIfLost runs write, and again (up to three times in all) while
// PostgreSQL aborts it to settle a race with another transaction. Only
// for writes that are whole in themselves: a deletion, one statement.
func againIfLost(write func() error) error {
	var err error
	for range 3 {
		if err = write(); !lostRace(err) {
			return err
		}
	}
	return err
}

// oneRow reports ErrNotFound when an UPDATE or DELETE matched nothing.
func oneRow(res sql.Result, err error) error {
	if err != nil {
		return classify(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return errs.ErrNotFound
	}
	return nil
}

// refined is a sentinel with a more specific message: errors.As finds the
// specific *errs.Error first (so the edge shows, e.g., the limit), and
// errors.Is still matches the sentinel.
type refined struct {
	specific, sentinel *errs.Error
}

func refine(sentinel *errs.Error, format string, args ...any) error {
	return refined{specific: errs.Errorf(sentinel.Kind, format, args...), sentinel: sentinel}
}

func (e refined) Error() string   { return e.specific.Error() }
func (e refined) Unwrap() []error { return []error{e.specific, e.sentinel} }

// IsDataError reports whether the database refused a write for what it
// carries — bytes a column does not take, a constraint, a value out of
// range — rather than for its own state (connection lost, serialization
// failure, timeout, busy). Writing the same rows again fails the same way,
// so a batch writer isolates the row instead of retrying the batch.
func IsDataError(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_RANGE:
			return true
		}
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && len(pe.Code) == 5 {
		switch pe.Code[:2] {
		case "22", // data exception: invalid bytes, NUL, out of range, bad datetime…
			"23": // integrity constraint violation
			return true
		}
	}
	return false
}
