package ratelimit

import (
	"testing"
	"time"
)

func TestTakeBurstThenRefill(t *testing.T) {
	m := New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		if !m.Take("a", t0, 60, 10).OK {
			t.Fatalf("request %d of a burst of 10 refused", i+1)
		}
	}
	if st := m.Take("a", t0, 60, 10); st.OK || st.Retry != time.Second || st.Left != 0 {
		t.Fatalf("11th: %+v; want refused for 1s", st)
	}
	if st := m.Peek("a", t0, 60, 10); st.OK || st.Retry != time.Second {
		t.Fatalf("Peek: %+v", st)
	}
	if !m.Take("b", t0, 60, 10).OK {
		t.Fatal("another bucket was refused")
	}
	if st := m.Take("a", t0.Add(time.Second), 60, 10); !st.OK || st.Left != 0 || st.Retry != time.Second {
		t.Fatalf("a token refilled after a second: %+v; want allowed, none left, the next in 1s", st)
	}
	if st := m.Peek("c", t0, 60, 10); !st.OK || st.Left != 10 {
		t.Fatalf("a bucket never used: %+v", st)
	}
}

func TestPurgeForgetsFullBuckets(t *testing.T) {
	m := New()
	now := int64(1_000_000)
	m.TakeMicros("a", now, 1000, 5000)
	m.TakeMicros("b", now+10_000, 1000, 5000)
	if n := m.Purge(now + 5000); n != 1 {
		t.Fatalf("purged %d, want the one full bucket", n)
	}
	// b is still counted: its next token comes after its TAT.
	if ok, tat := m.TakeMicros("b", now+10_000, 1000, 1000); ok || tat != now+11_000 {
		t.Fatalf("b after purge: %v %d", ok, tat)
	}
}

func TestRemainingCountsDown(t *testing.T) {
	m := New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if st := m.Peek("a", t0, 60, 10); st.Left != 10 || st.Reset != 0 {
		t.Fatalf("unused bucket: %+v", st)
	}
	for range 2 {
		m.Take("a", t0, 60, 10)
	}
	if st := m.Take("a", t0, 60, 10); st.Left != 7 || st.Reset != 3*time.Second {
		t.Fatalf("the 3rd take: %+v; want 7 left, reset 3s", st)
	}
	if st := m.Peek("a", t0, 60, 10); st.Left != 7 || st.Reset != 3*time.Second {
		t.Fatalf("after 3: %+v; want 7 left, reset 3s", st)
	}
	if st := m.Peek("a", t0.Add(time.Second), 60, 10); st.Left != 8 {
		t.Fatalf("a second later: %+v, want 8 left", st)
	}
	for range 10 {
		m.Take("a", t0, 60, 10)
	}
	if st := m.Peek("a", t0, 60, 10); st.Left != 0 || st.OK {
		t.Fatalf("exhausted: %+v", st)
	}
}
