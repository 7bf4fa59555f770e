package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/tocsin/tocsin/internal/errs"
)

// Versions before the headers_sealed column kept a monitor's header values
// in plaintext in its config. Sealing them needs the keyring, which SQL
// does not have, so app does it after the migrations with these two
// primitives, a bounded batch at a time.

// PlainHeaders is a monitor whose stored config may still hold header
// values in plaintext, with what is already sealed.
type PlainHeaders struct {
	ID            string
	Config        string // the config column as stored
	SealedHeaders []byte
}

// plainHeadersFilter matches a config whose JSON has a "headers" key (the
// current format has only "headersSet"). It is textual: a string value
// such as a JSON assertion's can match too, so the caller parses to be sure.
const plainHeadersFilter = `config LIKE '%"headers":%'`

// PlainHeaderConfigs returns up to limit monitors with ids after afterID
// whose config may hold header values in plaintext, by id.
func (db *DB) PlainHeaderConfigs(ctx context.Context, afterID string, limit int) (out []PlainHeaders, err error) {
	defer errs.Wrap(&err, "store.PlainHeaderConfigs")
	if limit <= 0 {
		return nil, errors.New("limit must be positive")
	}
	rows, err := db.w.QueryContext(ctx, `SELECT id, config, headers_sealed FROM monitors
		WHERE id > $1 AND `+plainHeadersFilter+` ORDER BY id LIMIT $2`, afterID, limit)
	return collect(rows, err, func(r rowScanner) (p PlainHeaders, err error) {
		err = r.Scan(&p.ID, &p.Config, &p.SealedHeaders)
		return p, err
	})
}

// HeadersSealing moves one monitor's header values out of its plaintext
// config: Config replaces Was, and Sealed holds every value.
type HeadersSealing struct {
	ID, Was, Config string
	Sealed          []byte
}

// SealPlainHeaders writes a batch in one transaction and returns how many
// monitors it changed. A monitor whose config is no longer Was (another
// node sealed it, or it was edited or deleted) is left alone. updated_at
// moves on by a microsecond, so an edit read before the change starts over
// instead of writing the old config back.
func (db *DB) SealPlainHeaders(ctx context.Context, batch []HeadersSealing) (n int, err error) {
	defer errs.Wrap(&err, "store.SealPlainHeaders")
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		n = 0
		for _, s := range batch {
			res, err := tx.ExecContext(ctx, `UPDATE monitors SET config = $2, headers_sealed = $3, updated_at = updated_at + 1
				WHERE id = $1 AND config = $4`, s.ID, s.Config, nullBytes(s.Sealed), s.Was)
			if err != nil {
				return err
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += int(k)
		}
		return nil
	})
	return n, err
}
