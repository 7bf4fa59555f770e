package pingjournal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
)

// A journal batch is binary: it lives only until it is applied, seconds,
// and is written for every batch of pings, so it is made small and quick
// rather than readable (blocks, which stay, are JSON). After a version
// byte, each ping is: its heartbeat's seq, its id, its time in µs,
// signal, exit code + 1, then method, client, user agent, run id and key
// as length-prefixed strings, the body's length + 1 (0: no body) and
// bytes, and a flags byte (1: the body was cut). Integers are varints.

const journalVersion = 1

func appendJournalRec(dst []byte, seq int64, p *heartbeat.PingRecord) []byte {
	if len(dst) == 0 {
		dst = append(dst, journalVersion)
	}
	dst = binary.AppendUvarint(dst, uint64(seq))
	dst = binary.AppendUvarint(dst, uint64(p.ID))
	dst = binary.AppendVarint(dst, p.At.UnixMicro())
	dst = append(dst, byte(p.Signal))
	dst = binary.AppendUvarint(dst, uint64(p.ExitCode+1))
	for _, s := range [...]string{p.Method, p.Client, p.UserAgent, p.RunID, p.Key} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	if p.Body == nil {
		dst = append(dst, 0)
	} else {
		dst = binary.AppendUvarint(dst, uint64(len(p.Body))+1)
		dst = append(dst, p.Body...)
	}
	var flags byte
	if p.Truncated {
		flags |= 1
	}
	return append(dst, flags)
}

// journalEntry is one ping read back from the journal.
type journalEntry struct {
	seq int64
	rec heartbeat.PingRecord
}

var errJournal = errors.New("malformed ping journal batch")

func decodeJournal(b []byte) ([]journalEntry, error) {
	if len(b) == 0 || b[0] != journalVersion {
		return nil, fmt.Errorf("%w: unknown version", errJournal)
	}
	b = b[1:]
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	bytes := func(n uint64) []byte {
		if n > uint64(len(b)) {
			b = nil
			return nil
		}
		out := b[:n:n]
		b = b[n:]
		return out
	}
	var out []journalEntry
	for len(b) > 0 {
		var e journalEntry
		e.seq = int64(uv())
		e.rec.ID = int64(uv())
		at, n := binary.Varint(b)
		if n <= 0 {
			return nil, errJournal
		}
		b = b[n:]
		e.rec.At = time.UnixMicro(at).UTC()
		if len(b) == 0 {
			return nil, errJournal
		}
		e.rec.Signal, b = heartbeat.Signal(b[0]), b[1:]
		e.rec.ExitCode = int(uv()) - 1
		var strs [5]string
		for i := range strs {
			strs[i] = string(bytes(uv()))
		}
		e.rec.Method, e.rec.Client, e.rec.UserAgent, e.rec.RunID, e.rec.Key = strs[0], strs[1], strs[2], strs[3], strs[4]
		if n := uv(); n > 0 {
			e.rec.Body = append([]byte{}, bytes(n-1)...)
		}
		if len(b) == 0 {
			return nil, errJournal
		}
		e.rec.Truncated, b = b[0]&1 != 0, b[1:]
		e.rec.Duration = -1
		if _, ok := heartbeat.ParseSignal(e.rec.Signal.String()); !ok {
			return nil, fmt.Errorf("%w: signal %d", errJournal, e.rec.Signal)
		}
		out = append(out, e)
	}
	return out, nil
}
