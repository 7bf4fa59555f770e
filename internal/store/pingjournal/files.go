package pingjournal

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The SQLite ping journal's files. A batch is acknowledged once it is
// written (write(2), as SQLite's WAL with synchronous=NORMAL: it survives
// the process, not the machine) to the current segment, a file beside the
// database named by the first batch id it may hold:
//
//	<db>-pings-00000000000000001234.journal
//
// Each record is a 16-byte header (the payload's length, uint32; a
// CRC-32C of the batch id and the payload, uint32; the batch id, uint64;
// all little-endian) and the payload (codec.go). When pending
// pings are set aside to be applied, the segment holding them is sealed
// and a new one begun; once the tables hold a batch (the watermark in
// ping_journal_applied), the segments at or below it are removed. A
// segment is read up to its first record that does not check out: the
// tail a failed write left, which was never acknowledged.

const journalHeader = 16

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type journalFiles struct {
	db      string   // the database's path
	cur     *os.File // the segment being written; nil before the next batch
	curPath string
	curLast int64 // the last batch written to cur
	sealed  []segment
}

// segment is a journal file no longer written to.
type segment struct {
	path string
	last int64 // its last batch; 0 if none
}

func segmentPath(db string, first int64) string {
	return fmt.Sprintf("%s-pings-%020d.journal", db, first)
}

// append writes batch bid, whose payload follows journalHeader bytes of
// room at the start of rec. A write that fails seals the segment, so the
// next batch starts a new one rather than following a torn record.
func (f *journalFiles) append(bid int64, rec []byte) error {
	payload := rec[journalHeader:]
	binary.LittleEndian.PutUint32(rec[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(rec[8:], uint64(bid))
	crc := crc32.Update(crc32.Checksum(rec[8:16], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(rec[4:], crc)
	if f.cur == nil {
		path := segmentPath(f.db, bid)
		cur, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("ping journal: %w", err)
		}
		f.cur, f.curPath, f.curLast = cur, path, 0
	}
	if _, err := f.cur.Write(rec); err != nil {
		f.seal()
		return fmt.Errorf("ping journal: %w", err)
	}
	f.curLast = bid
	return nil
}

// seal closes the current segment, if any: later batches go to a new one.
func (f *journalFiles) seal() {
	if f.cur == nil {
		return
	}
	f.cur.Close()
	f.sealed = append(f.sealed, segment{f.curPath, f.curLast})
	f.cur = nil
}

// drop removes the sealed segments whose batches are all at or below
// applied. One that cannot be removed is kept to try again; a restart
// skips its batches either way.
func (f *journalFiles) drop(applied int64) error {
	var errs []error
	f.sealed = slices.DeleteFunc(f.sealed, func(s segment) bool {
		if s.last > applied {
			return false
		}
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			return false
		}
		return true
	})
	return errors.Join(errs...)
}

// close closes the current segment without sealing it (Close seals
// through an apply first; a test's Abandon leaves it as a crash would).
func (f *journalFiles) close() {
	if f.cur != nil {
		f.cur.Close()
		f.cur = nil
	}
}

// readSegments reads every segment of the database at db, oldest first,
// and returns the batches in them above applied, in order, with the
// segments to remove once those are applied, each with its last batch or
// the first it was named for (the next segment's name must be new).
func readSegments(db string, applied int64) ([]Batch, []segment, error) {
	paths, err := filepath.Glob(globEscape(db) + "-pings-*.journal")
	if err != nil {
		return nil, nil, err
	}
	type named struct {
		path  string
		first int64
	}
	var segs []named
	for _, p := range paths {
		num := strings.TrimSuffix(strings.TrimPrefix(p, db+"-pings-"), ".journal")
		first, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			continue // not ours
		}
		segs = append(segs, named{p, first})
	}
	slices.SortFunc(segs, func(a, b named) int { return cmp.Compare(a.first, b.first) })
	var (
		out  []Batch
		done []segment
	)
	for _, s := range segs {
		b, err := os.ReadFile(s.path)
		if err != nil {
			return nil, nil, fmt.Errorf("ping journal: %w", err)
		}
		seg := segment{path: s.path, last: s.first}
		for len(b) >= journalHeader {
			n := int64(binary.LittleEndian.Uint32(b[0:]))
			if int64(len(b)-journalHeader) < n {
				break // a torn tail
			}
			rec := b[:journalHeader+n]
			crc := crc32.Update(crc32.Checksum(rec[8:16], castagnoli), castagnoli, rec[journalHeader:])
			if crc != binary.LittleEndian.Uint32(rec[4:]) {
				break
			}
			id := int64(binary.LittleEndian.Uint64(rec[8:]))
			if id > applied {
				out = append(out, Batch{id, rec[journalHeader:]})
			}
			seg.last = max(seg.last, id)
			b = b[len(rec):]
		}
		done = append(done, seg)
	}
	return out, done, nil
}

// globEscape quotes the glob metacharacters of a path.
func globEscape(p string) string {
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
