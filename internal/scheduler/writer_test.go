package scheduler

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// batchApp records the batches the writer hands it; the first write
// blocks until release is closed.
type batchApp struct {
	App
	started chan struct{}
	release chan struct{}
	batches chan []int64
}

func (s *batchApp) RecordChecks(_ context.Context, _ string, batch []monitor.Completed) ([]monitor.StateChange, error) {
	select {
	case s.started <- struct{}{}:
		<-s.release
	default:
	}
	var seqs []int64
	for _, c := range batch {
		seqs = append(seqs, c.Seq)
	}
	s.batches <- seqs
	return nil, nil
}

func newBatchApp() *batchApp {
	return &batchApp{started: make(chan struct{}, 1), release: make(chan struct{}), batches: make(chan []int64, 100)}
}

func nextBatch(t *testing.T, s *batchApp) []int64 {
	t.Helper()
	select {
	case b := <-s.batches:
		return b
	case <-time.After(10 * time.Second):
		t.Fatal("no batch written")
		return nil
	}
}

// An observation that arrives while a batch is being written waits for
// others to join it, rather than being written on its own at once (which
// made batches of one or two under a steady stream).
func TestWriterLingersAfterAWrite(t *testing.T) {
	st := newBatchApp()
	w := newWriter(st, "node", slog.New(slog.DiscardHandler), NewMetrics(nil), 500*time.Millisecond)
	lingering := make(chan int64, 100)
	w.lingering = func(oldest int64) {
		select {
		case lingering <- oldest:
		default:
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); w.run() }()

	w.submit(monitor.Completed{Seq: 1})
	<-st.started // the first batch is being written, and blocks
	w.submit(monitor.Completed{Seq: 2})
	close(st.release)
	if b := nextBatch(t, st); !slices.Equal(b, []int64{1}) {
		t.Fatalf("first batch %v, want [1]", b)
	}
	// The writer waits for others to join 2, within the linger of its
	// arrival, when 3 comes.
	for oldest := int64(0); oldest != 2; {
		select {
		case oldest = <-lingering:
		case b := <-st.batches:
			t.Fatalf("batch %v written at once, without waiting for others to join it", b)
		case <-time.After(10 * time.Second):
			t.Fatal("the writer never waited for a batch with 2 to fill")
		}
	}
	w.submit(monitor.Completed{Seq: 3})
	w.close() // writes what is queued at once
	if b := nextBatch(t, st); !slices.Equal(b, []int64{2, 3}) {
		t.Fatalf("second batch %v, want [2 3]: the writer did not wait for 3 to join 2", b)
	}
	<-done
}

// A full batch is written without waiting for the linger.
func TestWriterWritesAFullBatchAtOnce(t *testing.T) {
	st := newBatchApp()
	close(st.release)
	w := newWriter(st, "node", slog.New(slog.DiscardHandler), NewMetrics(nil), time.Hour)
	w.max = 3
	done := make(chan struct{})
	go func() { defer close(done); w.run() }()
	for seq := range int64(4) {
		w.submit(monitor.Completed{Seq: seq})
	}
	if b := nextBatch(t, st); !slices.Equal(b, []int64{0, 1, 2}) {
		t.Fatalf("batch %v, want [0 1 2]", b)
	}
	w.close()
	if b := nextBatch(t, st); !slices.Equal(b, []int64{3}) {
		t.Fatalf("batch at close %v, want [3]", b)
	}
	<-done
}

// halves keeps every observation once, in order, and the first half cannot
// grow into the second.
func TestHalves(t *testing.T) {
	for _, n := range []int{2, 3, 1000} {
		batch := make([]monitor.Completed, n)
		for i := range batch {
			batch[i].Seq = int64(i)
		}
		h := halves(batch)
		if len(h[0]) == 0 || len(h[1]) == 0 || len(h[0])+len(h[1]) != n || len(h[1])-len(h[0]) > 1 {
			t.Fatalf("halves of %d: %d and %d", n, len(h[0]), len(h[1]))
		}
		joined := append(h[0], h[1]...)
		if !reflect.DeepEqual(joined, batch) || h[1][0].Seq != int64(len(h[0])) {
			t.Fatalf("halves of %d lost the order", n)
		}
	}
}

// What is stored in place of a refused observation keeps when and where
// the check ran, and none of what it carried.
func TestUnstorable(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := monitor.Completed{Seq: 7, Thresholds: monitor.Thresholds{Confirmations: 3},
		Observation: monitor.Observation{MonitorID: "mon_1", StartedAt: at, Due: at.Add(-time.Second), Result: monitor.ResultDown,
			Reason: "got ok\x00\xff", Latency: time.Second, Phases: monitor.Phases{DNS: time.Millisecond}, StatusCode: 70000,
			Probe: "node\x00", Region: "\xff" + strings.Repeat("é", 100), Assertions: []monitor.Outcome{{Kind: "json", Reason: "\x00"}}}}
	got := unstorable(c)
	want := monitor.Completed{Seq: 7, Thresholds: monitor.Thresholds{Confirmations: 3},
		Observation: monitor.Observation{MonitorID: "mon_1", StartedAt: at, Due: at.Add(-time.Second), Result: monitor.ResultUnknown,
			Reason: ReasonUnstorable, Latency: time.Second, Probe: "node\uFFFD", Region: "\uFFFD" + strings.Repeat("é", 48)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("unstorable =\n%+v\nwant\n%+v", got, want)
	}
}
