package heartbeat

import (
	"testing"
	"time"
)

// TestSpanCoverage: a stretch is covered when service spans run through it
// without a gap; otherwise the first gap is named, cut to the stretch.
func TestSpanCoverage(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	spans := [][2]time.Time{{at(0), at(10)}, {at(5), at(20)}, {at(30), at(40)}}
	tests := []struct {
		from, to       int
		covered        bool
		gapFrom, gapTo int
	}{
		{0, 20, true, 0, 0},     // two overlapping spans
		{2, 8, true, 0, 0},      // inside one
		{15, 35, false, 20, 30}, // the gap between them
		{25, 28, false, 25, 28}, // wholly in the gap
		{35, 50, false, 40, 50}, // past the last span
		{-5, 5, false, -5, 0},   // before the first
	}
	cover := SpanCoverage(spans)
	for _, tt := range tests {
		ok, gf, gt := cover(at(tt.from), at(tt.to))
		if ok != tt.covered || (!ok && (!gf.Equal(at(tt.gapFrom)) || !gt.Equal(at(tt.gapTo)))) {
			t.Errorf("[%d, %d]: covered %v, gap %v–%v; want %v, %d–%d", tt.from, tt.to, ok,
				gf.Sub(t0), gt.Sub(t0), tt.covered, tt.gapFrom, tt.gapTo)
		}
	}
	if ok, _, _ := SpanCoverage(nil)(at(0), at(1)); ok {
		t.Error("no spans covered a stretch")
	}
}
