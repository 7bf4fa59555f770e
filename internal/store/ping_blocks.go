package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
)

// Pings are stored in blocks: one row per heartbeat per write, holding
// that heartbeat's pings of the write as a JSON array, oldest first. A
// heartbeat that pings often costs one row per write, not one per ping,
// and a listing reads a few rows instead of many; the JSON stays readable
// from SQL (json_each, jsonb_array_elements).
//
// Ping ids grow with every write, and a heartbeat's blocks never overlap
// in ids: a block's pings get their ids while their heartbeat's runtime
// row is locked (PostgreSQL) or the one writer holds the database
// (SQLite). A heartbeat's pings are therefore listed by id, newest first,
// seeking to a block by (heartbeat_seq, first_id).

// pingJSON is a ping as a block stores it. Absent fields are their zero
// value, except exitCode and durationUs, whose absence is -1.
type pingJSON struct {
	ID         int64   `json:"id"`
	At         int64   `json:"at"` // µs since the epoch
	Signal     string  `json:"signal"`
	ExitCode   *int    `json:"exitCode"`
	RunID      string  `json:"runId"`
	DurationUs *int64  `json:"durationUs"`
	Method     string  `json:"method"`
	Client     string  `json:"client"`
	UserAgent  string  `json:"userAgent"`
	Key        string  `json:"key"`
	Body       *string `json:"body"`       // a body that is valid UTF-8
	BodyBase64 []byte  `json:"bodyBase64"` // any other body
	Truncated  bool    `json:"bodyTruncated"`
	Ignored    bool    `json:"ignored"`
}

// appendPing appends p to dst as a block's JSON object. It is written by
// hand: it runs for every ping, and this is about ten times quicker than
// encoding/json.
func appendPing(dst []byte, p *heartbeat.PingRecord) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, p.ID, 10)
	dst = append(dst, `,"at":`...)
	dst = strconv.AppendInt(dst, p.At.UnixMicro(), 10)
	dst = append(dst, `,"signal":"`...)
	dst = append(dst, p.Signal.String()...)
	dst = append(dst, '"')
	if p.ExitCode >= 0 {
		dst = append(dst, `,"exitCode":`...)
		dst = strconv.AppendInt(dst, int64(p.ExitCode), 10)
	}
	if p.Duration >= 0 {
		dst = append(dst, `,"durationUs":`...)
		dst = strconv.AppendInt(dst, p.Duration.Microseconds(), 10)
	}
	dst = appendField(dst, "runId", p.RunID)
	dst = appendField(dst, "method", p.Method)
	dst = appendField(dst, "client", p.Client)
	dst = appendField(dst, "userAgent", p.UserAgent)
	dst = appendField(dst, "key", p.Key)
	if p.Body != nil {
		if utf8.Valid(p.Body) {
			dst = append(dst, `,"body":`...)
			dst = appendJSONString(dst, p.Body)
		} else {
			dst = append(dst, `,"bodyBase64":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, p.Body)
			dst = append(dst, '"')
		}
	}
	if p.Truncated {
		dst = append(dst, `,"bodyTruncated":true`...)
	}
	if p.Ignored {
		dst = append(dst, `,"ignored":true`...)
	}
	return append(dst, '}')
}

func appendField(dst []byte, name, v string) []byte {
	if v == "" {
		return dst
	}
	dst = append(dst, `,"`...)
	dst = append(dst, name...)
	dst = append(dst, `":`...)
	return appendJSONString(dst, v)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD, as encoding/json does.
func appendJSONString[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// decodePings reads a block's JSON array.
func decodePings(text string) ([]heartbeat.PingRecord, error) {
	var raw []pingJSON
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, fmt.Errorf("a block of pings: %w", err)
	}
	out := make([]heartbeat.PingRecord, len(raw))
	for i := range raw {
		p, err := raw[i].record()
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

func (r *pingJSON) record() (heartbeat.PingRecord, error) {
	sig, ok := heartbeat.ParseSignal(r.Signal)
	if !ok {
		return heartbeat.PingRecord{}, fmt.Errorf("ping %d: unknown signal %q", r.ID, r.Signal)
	}
	p := heartbeat.PingRecord{ID: r.ID, At: fromMicros(r.At), Signal: sig, ExitCode: -1, RunID: r.RunID, Duration: -1,
		Method: r.Method, Client: r.Client, UserAgent: r.UserAgent, Key: r.Key, Truncated: r.Truncated, Ignored: r.Ignored}
	if r.ExitCode != nil {
		p.ExitCode = *r.ExitCode
	}
	if r.DurationUs != nil {
		p.Duration = time.Duration(*r.DurationUs) * time.Microsecond
	}
	switch {
	case r.Body != nil:
		p.Body = []byte(*r.Body)
	case r.BodyBase64 != nil:
		p.Body = r.BodyBase64
	}
	return p, nil
}

// pingBlock is one heartbeat's pings of one write, being built.
type pingBlock struct {
	seq             int64
	firstID, lastID int64
	firstAt, lastAt int64
	n               int
	text            []byte // the JSON objects, comma-separated, without the array's brackets
}

func (b *pingBlock) add(p *heartbeat.PingRecord) {
	at := p.At.UnixMicro()
	if b.n == 0 {
		b.firstID, b.firstAt, b.lastAt = p.ID, at, at
	} else {
		b.text = append(b.text, ',')
	}
	b.lastID = p.ID
	b.firstAt, b.lastAt = min(b.firstAt, at), max(b.lastAt, at)
	b.n++
	b.text = appendPing(b.text, p)
}

func (b *pingBlock) json() string { return "[" + string(b.text) + "]" }

// blockSet gathers the pings of one write into a block per heartbeat.
type blockSet struct {
	m    map[int64]*pingBlock
	size int // bytes of JSON
}

func (s *blockSet) add(seq int64, p *heartbeat.PingRecord) { s.addTo(s.block(seq), p) }

// block is the block of heartbeat seq, new if it has none yet.
func (s *blockSet) block(seq int64) *pingBlock {
	if s.m == nil {
		s.m = map[int64]*pingBlock{}
	}
	b := s.m[seq]
	if b == nil {
		b = &pingBlock{seq: seq}
		s.m[seq] = b
	}
	return b
}

// addTo adds p to b, one of this set's blocks.
func (s *blockSet) addTo(b *pingBlock, p *heartbeat.PingRecord) {
	before := len(b.text)
	b.add(p)
	s.size += len(b.text) - before
}

// blocks returns the blocks by heartbeat seq.
func (s *blockSet) blocks() []*pingBlock {
	out := make([]*pingBlock, 0, len(s.m))
	for _, b := range s.m {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *pingBlock) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

const pingBlockInsert = `INSERT INTO ping_blocks (heartbeat_seq, first_id, last_id, first_at, last_at, n, pings)
	VALUES ($1, $2, $3, $4, $5, $6, $7)`

// insertBlocks stores blocks: on PostgreSQL one statement over arrays, on
// SQLite one prepared statement per block.
func (db *DB) insertBlocks(ctx context.Context, tx *sql.Tx, blocks []*pingBlock) error {
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
		if _, err := st.ExecContext(ctx, b.seq, b.firstID, b.lastID, b.firstAt, b.lastAt, b.n, b.json()); err != nil {
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
		pings, err := decodePings(text)
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
