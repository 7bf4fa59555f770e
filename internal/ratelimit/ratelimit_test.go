package ratelimit

import (
	"testing"
	"time"
)

func TestTakeBurstThenRefill(t *testing.T) {
	m := New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		if ok, _ := m.Take("a", t0, 60, 10); !ok {
			t.Fatalf("request %d of a burst of 10 refused", i+1)
		}
	}
	ok, retry := m.Take("a", t0, 60, 10)
	if ok || retry != time.Second {
		t.Fatalf("11th: ok %v, retry %v; want refused for 1s", ok, retry)
	}
	if blocked, wait := m.Blocked("a", t0, 60, 10); !blocked || wait != time.Second {
		t.Fatalf("Blocked: %v %v", blocked, wait)
	}
	if ok, _ := m.Take("b", t0, 60, 10); !ok {
		t.Fatal("another bucket was refused")
	}
	if ok, _ := m.Take("a", t0.Add(time.Second), 60, 10); !ok {
		t.Fatal("a token refilled after a second was refused")
	}
	if blocked, _ := m.Blocked("c", t0, 60, 10); blocked {
		t.Fatal("a bucket never used is blocked")
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
	if left, reset := m.Remaining("a", t0, 60, 10); left != 10 || reset != 0 {
		t.Fatalf("unused bucket: %d left, reset %v", left, reset)
	}
	for range 3 {
		m.Take("a", t0, 60, 10)
	}
	if left, reset := m.Remaining("a", t0, 60, 10); left != 7 || reset != 3*time.Second {
		t.Fatalf("after 3: %d left, reset %v; want 7, 3s", left, reset)
	}
	if left, _ := m.Remaining("a", t0.Add(time.Second), 60, 10); left != 8 {
		t.Fatalf("a second later: %d left, want 8", left)
	}
	for range 10 {
		m.Take("a", t0, 60, 10)
	}
	if left, _ := m.Remaining("a", t0, 60, 10); left != 0 {
		t.Fatalf("exhausted: %d left", left)
	}
}
