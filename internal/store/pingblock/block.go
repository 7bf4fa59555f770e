// Package pingblock is the stored form of heartbeat pings, shared by the
// store's two ping paths (PostgreSQL's direct writes and the SQLite
// journal's applies) and its listing: a ping's record, its key and
// acknowledgement, and the blocks of JSON pings are kept in.
package pingblock

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

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

// Decode reads a block's JSON array.
func Decode(text string) ([]heartbeat.PingRecord, error) {
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
	p := heartbeat.PingRecord{ID: r.ID, At: time.UnixMicro(r.At).UTC(), Signal: sig, ExitCode: -1, RunID: r.RunID, Duration: -1,
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

// Block is one heartbeat's pings of one write, being built: the row of
// ping_blocks it becomes.
type Block struct {
	Seq             int64 // the heartbeat's
	FirstID, LastID int64
	FirstAt, LastAt int64 // µs since the epoch
	N               int
	text            []byte // the JSON objects, comma-separated, without the array's brackets
}

// Add appends p, the block's newest ping.
func (b *Block) Add(p *heartbeat.PingRecord) {
	at := p.At.UnixMicro()
	if b.N == 0 {
		b.FirstID, b.FirstAt, b.LastAt = p.ID, at, at
	} else {
		b.text = append(b.text, ',')
	}
	b.LastID = p.ID
	b.FirstAt, b.LastAt = min(b.FirstAt, at), max(b.LastAt, at)
	b.N++
	b.text = appendPing(b.text, p)
}

// JSON is the block's pings as the JSON array it stores.
func (b *Block) JSON() string { return "[" + string(b.text) + "]" }

// Set gathers the pings of one write into a block per heartbeat.
type Set struct {
	m    map[int64]*Block
	size int // bytes of JSON
}

// Add adds p to the block of heartbeat seq.
func (s *Set) Add(seq int64, p *heartbeat.PingRecord) { s.AddTo(s.Block(seq), p) }

// Block is the block of heartbeat seq, new if it has none yet.
func (s *Set) Block(seq int64) *Block {
	if s.m == nil {
		s.m = map[int64]*Block{}
	}
	b := s.m[seq]
	if b == nil {
		b = &Block{Seq: seq}
		s.m[seq] = b
	}
	return b
}

// AddTo adds p to b, one of this set's blocks.
func (s *Set) AddTo(b *Block, p *heartbeat.PingRecord) {
	before := len(b.text)
	b.Add(p)
	s.size += len(b.text) - before
}

// Size is the bytes of JSON the set's blocks hold.
func (s *Set) Size() int { return s.size }

// Blocks returns the blocks by heartbeat seq.
func (s *Set) Blocks() []*Block {
	out := make([]*Block, 0, len(s.m))
	for _, b := range s.m {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *Block) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}
