package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/store/pingblock"
)

// Pings are stored in blocks of JSON (package pingblock): here they are
// written and listed.

const pingBlockInsert = `INSERT INTO ping_blocks (heartbeat_seq, first_id, last_id, first_at, last_at, n, pings)
	VALUES ($1, $2, $3, $4, $5, $6, $7)`

// insertBlocks stores blocks: on PostgreSQL one statement over arrays, on
// SQLite one prepared statement per block.
func (db *DB) insertBlocks(ctx context.Context, tx *sql.Tx, blocks []*pingblock.Block) error {
	if len(blocks) == 0 {
		return nil
	}
	if db.d.arrayBatches {
		_, err := tx.ExecContext(ctx, pgInsertBlocks, blockArrays(blocks)...)
		return err
	}
	st, err := db.txStmt(ctx, tx, pingBlockInsert)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, b := range blocks {
		if _, err := st.ExecContext(ctx, b.Seq, b.FirstID, b.LastID, b.FirstAt, b.LastAt, b.N, b.JSON()); err != nil {
			return err
		}
	}
	return nil
}

// PingQuery selects a heartbeat's pings, newest first: at in [From, To)
// (zero: unbounded), with ids below BeforeID (0: any), at most Limit.
type PingQuery struct {
	From, To time.Time
	BeforeID int64
	Limit    int
}

// ListPings returns a heartbeat's pings, newest first.
func (db *DB) ListPings(ctx context.Context, wsID, id string, q PingQuery) (out []heartbeat.PingRecord, err error) {
	defer errs.Wrap(&err, "store.ListPings(%s)", id)
	if err := db.flushPings(ctx); err != nil {
		return nil, err
	}
	var seq int64
	if err := db.r.QueryRowContext(ctx, `SELECT r.seq`+heartbeatFrom+` WHERE h.workspace_id = $1 AND h.id = $2`,
		wsID, id).Scan(&seq); err != nil {
		return nil, classify(err)
	}
	where := []string{"heartbeat_seq = $1"}
	args := []any{seq}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.BeforeID > 0 {
		where = append(where, "first_id < "+arg(q.BeforeID))
	}
	if !q.From.IsZero() {
		where = append(where, "last_at >= "+arg(micros(q.From)))
	}
	if !q.To.IsZero() {
		where = append(where, "first_at < "+arg(micros(q.To)))
	}
	rows, err := db.r.QueryContext(ctx, `SELECT pings FROM ping_blocks WHERE `+strings.Join(where, " AND ")+`
		ORDER BY first_id DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() && len(out) < q.Limit {
		var text string
		if err := rows.Scan(&text); err != nil {
			return nil, err
		}
		pings, err := pingblock.Decode(text)
		if err != nil {
			return nil, err
		}
		for i := len(pings) - 1; i >= 0 && len(out) < q.Limit; i-- {
			p := pings[i]
			switch {
			case q.BeforeID > 0 && p.ID >= q.BeforeID:
			case !q.From.IsZero() && p.At.Before(q.From):
			case !q.To.IsZero() && !p.At.Before(q.To):
			default:
				out = append(out, p)
			}
		}
	}
	return out, rows.Err()
}

// CountPings returns how many pings are stored, for benchmarks and tests
// that compare it with the pings acknowledged.
func (db *DB) CountPings(ctx context.Context) (n int64, err error) {
	defer errs.Wrap(&err, "store.CountPings")
	if err := db.flushPings(ctx); err != nil {
		return 0, err
	}
	err = db.r.QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM ping_blocks`).Scan(&n)
	return n, err
}
