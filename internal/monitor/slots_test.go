package monitor

import (
	"fmt"
	"testing"
	"time"
)

func TestNextSlot(t *testing.T) {
	iv := 30 * time.Second
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i := range 200 {
		id := fmt.Sprintf("mon_%03d", i)
		s := NextSlot(id, iv, base)
		if !s.After(base) || s.Sub(base) > iv {
			t.Fatalf("%s: slot %v not within (base, base+interval]", id, s)
		}
		// The slot after a slot is exactly one interval later.
		if n := NextSlot(id, iv, s); n.Sub(s) != iv {
			t.Fatalf("%s: next slot after %v is %v", id, s, n)
		}
		// Just before a slot, the slot itself is next.
		if n := NextSlot(id, iv, s.Add(-time.Microsecond)); !n.Equal(s) {
			t.Fatalf("%s: slot before %v is %v", id, s, n)
		}
	}
}

func TestPhasesSpread(t *testing.T) {
	// 1000 monitors over a 60 s interval: no one-second bucket holds more
	// than a few times the even share, so a start-up does not herd.
	iv := time.Minute
	var buckets [60]int
	for i := range 1000 {
		buckets[Phase(fmt.Sprintf("mon_01JD%06d", i), iv)/time.Second]++
	}
	for sec, n := range buckets {
		if n > 50 {
			t.Fatalf("second %d holds %d of 1000 first checks", sec, n)
		}
	}
}
