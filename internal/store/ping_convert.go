package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/store/pingblock"
	"github.com/tocsin/tocsin/internal/store/pingjournal"
)

// convertPingRows is the Go step of the migration to ping blocks: it
// moves every row of the old pings table into blocks of up to
// convertBlock pings of one heartbeat, keeping their ids, makes new ids
// start above them, and drops the old table.
func convertPingRows(ctx context.Context, db *DB, tx *sql.Tx) error {
	const convertBlock = 256
	rows, err := tx.QueryContext(ctx, `SELECT heartbeat_seq, id, at, signal, COALESCE(exit_code, -1), COALESCE(run_id, ''),
		COALESCE(duration_us, -1), method, client, COALESCE(user_agent, ''), COALESCE(idem_key, ''), body,
		body_truncated, ignored FROM pings ORDER BY heartbeat_seq, id`)
	var (
		blocks []*pingblock.Block
		cur    *pingblock.Block
		maxID  int64
	)
	err = each(rows, err, func(r rowScanner) error {
		var (
			seq, at, dur int64
			signal       int
			p            heartbeat.PingRecord
		)
		if err := r.Scan(&seq, &p.ID, &at, &signal, &p.ExitCode, &p.RunID, &dur, &p.Method, &p.Client, &p.UserAgent,
			&p.Key, &p.Body, &p.Truncated, &p.Ignored); err != nil {
			return err
		}
		p.At, p.Signal = fromMicros(at), heartbeat.Signal(signal)
		p.Duration = time.Duration(dur) * time.Microsecond
		if dur < 0 {
			p.Duration = -1
		}
		if cur == nil || cur.Seq != seq || cur.N == convertBlock {
			cur = &pingblock.Block{Seq: seq}
			blocks = append(blocks, cur)
		}
		cur.Add(&p)
		maxID = max(maxID, p.ID)
		return nil
	})
	if err != nil {
		return err
	}
	for len(blocks) > 0 {
		n := min(len(blocks), 1000)
		if err := db.insertBlocks(ctx, tx, blocks[:n]); err != nil {
			return err
		}
		blocks = blocks[n:]
	}
	// New ids come from the journal where there is one (SQLite), else
	// from the ping_ids sequence.
	if db.journal != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq) VALUES ('ping_journal', $1)`,
			maxID>>pingjournal.IDShift+1); err != nil {
			return err
		}
	} else if _, err := tx.ExecContext(ctx, `SELECT setval('ping_ids', $1)`, maxID+1); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DROP TABLE pings`)
	return err
}
