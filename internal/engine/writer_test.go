package engine

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/store"
)

// batchStore records the batches the writer hands it; the first write
// blocks until release is closed.
type batchStore struct {
	Store
	started chan struct{}
	release chan struct{}
	batches chan []int64
}

func (s *batchStore) ApplyObservations(_ context.Context, _ string, batch []store.Completed) ([]store.StateChange, error) {
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

func newBatchStore() *batchStore {
	return &batchStore{started: make(chan struct{}, 1), release: make(chan struct{}), batches: make(chan []int64, 100)}
}

func nextBatch(t *testing.T, s *batchStore) []int64 {
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
	st := newBatchStore()
	w := newWriter(st, "node", slog.New(slog.DiscardHandler), NewMetrics(nil), 500*time.Millisecond)
	done := make(chan struct{})
	go func() { defer close(done); w.run() }()

	w.submit(store.Completed{Seq: 1})
	<-st.started // the first batch is being written, and blocks
	w.submit(store.Completed{Seq: 2})
	close(st.release)
	if b := nextBatch(t, st); !slices.Equal(b, []int64{1}) {
		t.Fatalf("first batch %v, want [1]", b)
	}
	time.Sleep(20 * time.Millisecond) // well within the linger of 2's arrival
	w.submit(store.Completed{Seq: 3})
	w.close() // writes what is queued at once
	if b := nextBatch(t, st); !slices.Equal(b, []int64{2, 3}) {
		t.Fatalf("second batch %v, want [2 3]: the writer did not wait for 3 to join 2", b)
	}
	<-done
}

// A full batch is written without waiting for the linger.
func TestWriterWritesAFullBatchAtOnce(t *testing.T) {
	st := newBatchStore()
	close(st.release)
	w := newWriter(st, "node", slog.New(slog.DiscardHandler), NewMetrics(nil), time.Hour)
	w.max = 3
	done := make(chan struct{})
	go func() { defer close(done); w.run() }()
	for seq := range int64(4) {
		w.submit(store.Completed{Seq: seq})
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
