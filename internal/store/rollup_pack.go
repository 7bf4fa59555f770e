package store

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
)

// Packed hours, on PostgreSQL. An hourly rollup row costs its header and
// an index entry whatever it holds (there about 140 of its 240 bytes), and
// hourly rows are kept for months. So once a UTC day is rolled up into its
// daily row, a subject's 24 hourly rows of that day are packed into one
// row of tierPacked (bucket: the day), which PostgreSQL also compresses,
// and the hourly rows go. SQLite keeps the hourly rows: it stores one in
// 137 bytes, and a packed day would not fit a page of its WITHOUT ROWID
// table, spilling into overflow pages of its own (192 bytes an hour). Readers of the
// hourly tier see both, the same: a packed day is unpacked into its hours,
// and wins over any hourly row of that day a late writer left behind.

// tierPacked is the tier of a day's packed hourly rollups.
const tierPacked = 3

const oneDay = 24 * time.Hour

// rollupTable names a rollup table's columns.
type rollupTable struct {
	name, seq, blob string
	counts          []string // at most 4
}

var (
	observationRollups = rollupTable{"observation_rollups", "monitor_seq", "latency", []string{"up", "degraded", "down", "unknown"}}
	pingRollups        = rollupTable{"ping_rollups", "heartbeat_seq", "runs", []string{"success", "start", "fail"}}
)

// rollupRow is a row of either table.
type rollupRow struct {
	seq, bucket int64 // bucket: unix µs
	counts      [4]int64
	blob        []byte
}

func (t rollupTable) columns() string {
	return t.seq + ", bucket, " + strings.Join(t.counts, ", ") + ", " + t.blob
}

func (t rollupTable) scan(r rowScanner) (rollupRow, error) {
	var row rollupRow
	dst := []any{&row.seq, &row.bucket}
	for i := range t.counts {
		dst = append(dst, &row.counts[i])
	}
	err := r.Scan(append(dst, &row.blob)...)
	return row, err
}

// putRollups writes rows of tier to t, writeChunk to a statement,
// replacing any row of the same subject, tier and bucket.
func putRollups(ctx context.Context, c txConn, t rollupTable, tier int, rows []rollupRow) error {
	cols := 4 + len(t.counts)
	set := make([]string, 0, len(t.counts)+1)
	for _, col := range append(slices.Clone(t.counts), t.blob) {
		set = append(set, col+" = excluded."+col)
	}
	for start := 0; start < len(rows); start += writeChunk {
		part := rows[start:min(start+writeChunk, len(rows))]
		args := make([]any, 0, cols*len(part))
		values := make([]string, len(part))
		for i, r := range part {
			values[i] = "(" + placeholders(i*cols+1, cols) + ")"
			args = append(args, r.seq, tier, r.bucket)
			for k := range t.counts {
				args = append(args, r.counts[k])
			}
			args = append(args, r.blob)
		}
		if _, err := c.ExecContext(ctx, `INSERT INTO `+t.name+` (`+t.seq+`, tier, bucket, `+strings.Join(t.counts, ", ")+`, `+t.blob+`)
			VALUES `+strings.Join(values, ", ")+` ON CONFLICT (`+t.seq+`, tier, bucket) DO UPDATE SET `+strings.Join(set, ", "),
			args...); err != nil {
			return err
		}
	}
	return nil
}

// eachRollup calls fn for the rows of tier of the subjects seqs whose
// bucket starts in [from, to); the hourly tier includes the packed days'
// hours.
func (db *DB) eachRollup(ctx context.Context, t rollupTable, tier int, seqs []int64, from, to time.Time, fn func(rollupRow) error) error {
	for part := range chunks(seqs) {
		in := placeholders(4, len(part))
		packed := map[[2]int64]bool{} // seq, day: hours come from the packed row
		if tier == TierHour {
			rows, err := db.r.QueryContext(ctx, `SELECT `+t.columns()+` FROM `+t.name+` WHERE `+t.seq+` IN (`+in+`)
				AND tier = $1 AND bucket >= $2 AND bucket < $3`,
				append([]any{tierPacked, micros(from.Truncate(oneDay)), micros(to)}, part...)...)
			err = each(rows, err, func(r rowScanner) error {
				p, err := t.scan(r)
				if err != nil {
					return err
				}
				packed[[2]int64{p.seq, p.bucket}] = true
				return eachPackedHour(t, p, func(h rollupRow) error {
					if h.bucket < micros(from) || h.bucket >= micros(to) {
						return nil
					}
					return fn(h)
				})
			})
			if err != nil {
				return err
			}
		}
		rows, err := db.r.QueryContext(ctx, `SELECT `+t.columns()+` FROM `+t.name+` WHERE `+t.seq+` IN (`+in+`)
			AND tier = $1 AND bucket >= $2 AND bucket < $3 ORDER BY `+t.seq+`, bucket`,
			append([]any{tier, micros(from), micros(to)}, part...)...)
		err = each(rows, err, func(r rowScanner) error {
			row, err := t.scan(r)
			if err != nil || packed[[2]int64{row.seq, micros(fromMicros(row.bucket).Truncate(oneDay))}] {
				return err
			}
			return fn(row)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// A packed row's blob is its hours in order, each: the hour of the day
// (one byte), the counts (uvarints, as many as the table has), and the
// hour's own blob (a uvarint length, then the bytes). Its counts columns
// hold the day's sums.

var errPacked = errors.New("store: invalid packed hourly rollups")

func appendPackedHour(dst []byte, t rollupTable, hour int, row rollupRow) []byte {
	dst = append(dst, byte(hour))
	for i := range t.counts {
		dst = binary.AppendUvarint(dst, uint64(max(row.counts[i], 0)))
	}
	dst = binary.AppendUvarint(dst, uint64(len(row.blob)))
	return append(dst, row.blob...)
}

// eachPackedHour calls fn for each hour of the packed row p of t.
func eachPackedHour(t rollupTable, p rollupRow, fn func(rollupRow) error) error {
	b, n := p.blob, len(t.counts)
	for len(b) > 0 {
		hour := int(b[0])
		if hour > 23 {
			return errPacked
		}
		b = b[1:]
		h := rollupRow{seq: p.seq, bucket: p.bucket + int64(hour)*time.Hour.Microseconds()}
		for i := range n + 1 {
			v, k := binary.Uvarint(b)
			if k <= 0 || v > 1<<62 {
				return errPacked
			}
			b = b[k:]
			if i < n {
				h.counts[i] = int64(v)
			} else if v > uint64(len(b)) {
				return errPacked
			} else {
				h.blob, b = b[:v:v], b[v:]
			}
		}
		if err := fn(h); err != nil {
			return err
		}
	}
	return nil
}

// PackHours packs the hourly rollups of [day, day+24h) of the monitors
// seqs (heartbeats: of their pings) into one row each, and deletes the
// hourly rows, in one transaction; on SQLite it does nothing. Packing a day again merges what it
// finds, an hourly row over the packed hour it replaces.
func (db *DB) PackHours(ctx context.Context, heartbeats bool, seqs []int64, dayStart time.Time) (err error) {
	defer errs.Wrap(&err, "store.PackHours(%d)", len(seqs))
	if db.Engine() == EngineSQLite {
		return nil
	}
	t := observationRollups
	if heartbeats {
		t = pingRollups
	}
	from, to := micros(dayStart), micros(dayStart.Add(oneDay))
	for part := range chunks(seqs) {
		err := db.InTx(ctx, func(tx *Tx) error {
			return packWith(ctx, tx.c, t, part, from, to)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func packWith(ctx context.Context, c txConn, t rollupTable, part []any, from, to int64) error {
	in := placeholders(4, len(part))
	hours := map[int64]*[24]*rollupRow{}
	add := func(h rollupRow) {
		hs := hours[h.seq]
		if hs == nil {
			hs = &[24]*rollupRow{}
			hours[h.seq] = hs
		}
		hs[(h.bucket-from)/time.Hour.Microseconds()] = &h
	}
	for _, tier := range []int{tierPacked, TierHour} { // hourly rows win, read last
		rows, err := c.QueryContext(ctx, `SELECT `+t.columns()+` FROM `+t.name+` WHERE `+t.seq+` IN (`+in+`)
			AND tier = $1 AND bucket >= $2 AND bucket < $3`, append([]any{tier, from, to}, part...)...)
		err = each(rows, err, func(r rowScanner) error {
			row, err := t.scan(r)
			if err != nil {
				return err
			}
			if tier == TierHour {
				add(row)
				return nil
			}
			return eachPackedHour(t, row, func(h rollupRow) error { add(h); return nil })
		})
		if err != nil {
			return err
		}
	}
	packed := make([]rollupRow, 0, len(hours))
	for seq, hs := range hours {
		p := rollupRow{seq: seq, bucket: from}
		for hour, h := range hs {
			if h == nil {
				continue
			}
			p.blob = appendPackedHour(p.blob, t, hour, *h)
			for i := range t.counts {
				p.counts[i] += h.counts[i]
			}
		}
		packed = append(packed, p)
	}
	if err := putRollups(ctx, c, t, tierPacked, packed); err != nil {
		return err
	}
	_, err := c.ExecContext(ctx, `DELETE FROM `+t.name+` WHERE `+t.seq+` IN (`+in+`) AND tier = $1 AND bucket >= $2 AND bucket < $3`,
		append([]any{TierHour, from, to}, part...)...)
	return err
}
