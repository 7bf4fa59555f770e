package pingjournal

import (
	"reflect"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
)

// A journal batch reads back as the pings written into it; a cut or
// garbled batch is an error, never a wrong ping.
func TestJournalCodec(t *testing.T) {
	at := time.Date(2026, 11, 25, 3, 4, 5, 678901000, time.UTC)
	in := []journalEntry{
		{7, heartbeat.PingRecord{ID: 1 << 16, At: at, Signal: heartbeat.SignalSuccess, ExitCode: -1, Duration: -1, Method: "GET", Client: "127.0.0.1"}},
		{1 << 40, heartbeat.PingRecord{ID: 1<<16 + 1, At: at.Add(-time.Hour), Signal: heartbeat.SignalFail, ExitCode: 255, RunID: "r\x001",
			Duration: -1, Method: "POST", Client: "::1", UserAgent: "ua é", Key: "k", Body: []byte{0, 0xff}, Truncated: true}},
		{8, heartbeat.PingRecord{ID: 1<<16 + 2, At: at, Signal: heartbeat.SignalStart, ExitCode: 0, Duration: -1, Method: "GET",
			Client: "c", Body: []byte{}}},
	}
	var b []byte
	for _, e := range in {
		b = appendJournalRec(b, e.seq, &e.rec)
	}
	got, err := decodeJournal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("decoded\n %+v\nwant\n %+v", got, in)
	}
	for n := 1; n < len(b); n++ {
		if got, err := decodeJournal(b[:n]); err == nil && len(got) == len(in) {
			t.Errorf("a batch cut at %d of %d bytes decoded whole: %+v", n, len(b), got)
		}
	}
	if _, err := decodeJournal(append([]byte{9}, b[1:]...)); err == nil {
		t.Error("an unknown version decoded")
	}
}
