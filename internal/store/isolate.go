package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// No batch hostage: a writer that stores the rows of many subjects in one
// transaction (the SQLite ping journal's apply, the heartbeat sweep) must
// not let one row the database refuses for what it carries stop the
// others, or retry it forever. It writes the batch as usual; only when the
// transaction fails with a data error (IsDataError) does it write the
// batch again with each subject's rows in a savepoint, so that a refused
// subject is rolled back alone and reported (RefusedError) while the
// others commit. The usual path costs nothing more.

// RefusedError lists what a writer set aside because the database refused
// it for its content; everything else of the batch was written. It
// unwraps to the database's errors, so IsDataError holds for it.
type RefusedError struct{ Rows []error }

func (e *RefusedError) Error() string {
	msgs := make([]string, len(e.Rows))
	for i, err := range e.Rows {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("%d refused by the database and set aside: %s", len(e.Rows), strings.Join(msgs, "; "))
}

func (e *RefusedError) Unwrap() []error { return e.Rows }

// isolation writes the rows of one transaction: straight, or isolating
// each subject in a savepoint.
type isolation struct {
	tx      *sql.Tx
	on      bool
	refused []error
}

// subject writes one subject's rows with write. Isolating, a data error
// rolls them back alone and is noted; it reports whether they were
// written.
func (w *isolation) subject(ctx context.Context, what string, write func() error) (bool, error) {
	if !w.on {
		return true, write()
	}
	if _, err := w.tx.ExecContext(ctx, `SAVEPOINT subject`); err != nil {
		return false, err
	}
	err := write()
	if err == nil {
		_, err = w.tx.ExecContext(ctx, `RELEASE SAVEPOINT subject`)
		return err == nil, err
	}
	if !IsDataError(err) {
		return false, err
	}
	if _, rerr := w.tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT subject`); rerr != nil {
		return false, rerr
	}
	if _, rerr := w.tx.ExecContext(ctx, `RELEASE SAVEPOINT subject`); rerr != nil {
		return false, rerr
	}
	w.refused = append(w.refused, fmt.Errorf("%s: %w", what, err))
	return false, nil
}

// isolating runs write in a transaction; if the database refuses it for
// what a row carries, it runs write again in a new transaction with each
// subject isolated. It returns the subjects refused then (a
// *RefusedError; nil for none) apart from an error that stopped the
// batch as a whole.
func (db *DB) isolating(ctx context.Context, write func(w *isolation) error) (refused, err error) {
	err = db.inTx(ctx, func(tx *sql.Tx) error { return write(&isolation{tx: tx}) })
	if !IsDataError(err) {
		return nil, err
	}
	var w *isolation
	if err := db.inTx(ctx, func(tx *sql.Tx) error {
		w = &isolation{tx: tx, on: true}
		return write(w)
	}); err != nil {
		return nil, err
	}
	if len(w.refused) == 0 {
		return nil, nil
	}
	return &RefusedError{Rows: w.refused}, nil
}
