package metrics

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// randomDurations mixes a log-normal body, a long tail and a few zeros,
// like check latencies.
func randomDurations(r *rand.Rand, n int) []time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		switch r.IntN(50) {
		case 0:
			ds[i] = 0
		case 1:
			ds[i] = time.Duration(r.Int64N(int64(60 * time.Second)))
		default:
			ds[i] = time.Duration(math.Exp(r.NormFloat64()*1.5) * float64(50*time.Millisecond))
		}
	}
	return ds
}

func latencyOf(ds []time.Duration) *Latency {
	l := NewLatency()
	for _, d := range ds {
		l.Add(d)
	}
	return l
}

// exactQuantile is DDSketch's lower quantile: the value of rank ⌊q·(n−1)⌋.
func exactQuantile(sorted []time.Duration, q float64) float64 {
	return ms(sorted[int(math.Floor(q*float64(len(sorted)-1)))])
}

func TestLatencyQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		ds := randomDurations(r, 1+r.IntN(5000))
		l := latencyOf(ds)
		sorted := slices.Clone(ds)
		slices.Sort(sorted)
		s := l.Summary()
		for _, c := range []struct {
			q   float64
			got *float64
		}{{0.5, s.P50}, {0.9, s.P90}, {0.95, s.P95}, {0.99, s.P99}} {
			want := exactQuantile(sorted, c.q)
			if c.got == nil || math.Abs(*c.got-want) > RelativeAccuracy*want+1e-12 {
				t.Fatalf("#%d n=%d: p%v = %v, exact %v", i, len(ds), c.q*100, c.got, want)
			}
		}
		var sum float64
		for _, d := range ds {
			sum += float64(d)
		}
		if *s.Min != ms(sorted[0]) || *s.Max != ms(sorted[len(sorted)-1]) || math.Abs(*s.Mean-sum/float64(len(ds))/1e6) > 1e-9**s.Mean ||
			l.Count() != int64(len(ds)) {
			t.Fatalf("#%d: min %v max %v mean %v count %d", i, *s.Min, *s.Max, *s.Mean, l.Count())
		}
	}
}

func TestLatencyEmpty(t *testing.T) {
	var zero Latency
	if s := zero.Summary(); s != (LatencySummary{}) || zero.Count() != 0 {
		t.Fatalf("zero value: %+v", s)
	}
	l, err := DecodeLatency(zero.Encode())
	if err != nil || l.Count() != 0 || l.Summary() != (LatencySummary{}) {
		t.Fatalf("empty round trip: %v %v", l, err)
	}
	if err := zero.Merge(latencyOf([]time.Duration{time.Second})); err != nil || *zero.Summary().P99 != 1000 {
		t.Fatalf("merge into zero value: %v %+v", err, zero.Summary())
	}
	one := latencyOf([]time.Duration{-time.Second})
	if *one.Summary().Min != 0 {
		t.Errorf("negative duration counted as %v", *one.Summary().Min)
	}
}

func TestLatencyMergeAndRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 50 {
		ds := randomDurations(r, r.IntN(3000))
		all := latencyOf(ds)
		merged, mergedEncoded := NewLatency(), NewLatency()
		for rest := ds; len(rest) > 0; {
			k := 1 + r.IntN(len(rest))
			// Merge through the stored form, as rollups of rollups do:
			// decoded and merged, or merged from the bytes.
			enc := latencyOf(rest[:k]).Encode()
			part, err := DecodeLatency(enc)
			if err != nil {
				t.Fatal(err)
			}
			if err := merged.Merge(part); err != nil {
				t.Fatal(err)
			}
			if err := mergedEncoded.MergeEncoded(enc); err != nil {
				t.Fatal(err)
			}
			rest = rest[k:]
		}
		for _, m := range []*Latency{merged, mergedEncoded} {
			if m.Count() != all.Count() || m.min != all.min || m.max != all.max ||
				math.Abs(m.sum-all.sum) > 1e-9*all.sum || !sameSummary(m.Summary(), all.Summary()) {
				t.Fatalf("#%d: merged %+v, all %+v", i, m.Summary(), all.Summary())
			}
		}
		if !bytes.Equal(merged.Encode(), mergedEncoded.Encode()) {
			t.Fatalf("#%d: MergeEncoded differs from Merge(DecodeLatency)", i)
		}
		enc := all.Encode()
		back, err := DecodeLatency(enc)
		if err != nil {
			t.Fatalf("#%d: %v", i, err)
		}
		if !bytes.Equal(back.Encode(), enc) || !sameSummary(back.Summary(), all.Summary()) {
			t.Fatalf("#%d: round trip differs", i)
		}
	}
}

func sameSummary(a, b LatencySummary) bool {
	eq := func(x, y *float64) bool {
		return (x == nil) == (y == nil) && (x == nil || *x == *y || math.Abs(*x-*y) <= 1e-9*math.Abs(*y))
	}
	return eq(a.P50, b.P50) && eq(a.P90, b.P90) && eq(a.P95, b.P95) && eq(a.P99, b.P99) && eq(a.Min, b.Min) && eq(a.Max, b.Max) && eq(a.Mean, b.Mean)
}

func TestDecodeLatencyGarbage(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	enc := latencyOf(randomDurations(r, 500)).Encode()
	var inputs [][]byte
	inputs = append(inputs, nil, []byte{}, []byte{0}, []byte{2, 0}, []byte{1, 0, 0}, []byte{1, 0xff})
	for k := range len(enc) { // every truncation
		inputs = append(inputs, enc[:k])
	}
	for range 2000 {
		b := make([]byte, r.IntN(64))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		if len(b) > 0 && r.IntN(2) == 0 {
			b[0] = encodingVersion
		}
		inputs = append(inputs, b)
	}
	good := latencyOf(randomDurations(r, 50))
	want := good.Encode()
	for _, b := range inputs {
		// Refused bytes leave what MergeEncoded was adding to as it was.
		_, derr := DecodeLatency(b)
		if merr := good.MergeEncoded(b); (merr == nil) != (derr == nil) {
			t.Errorf("%x: MergeEncoded %v, DecodeLatency %v", b, merr, derr)
		} else if merr != nil && !bytes.Equal(good.Encode(), want) {
			t.Fatalf("%x: a refused MergeEncoded changed the latency", b)
		} else if merr == nil {
			want = good.Encode()
		}
		l, err := DecodeLatency(b)
		if err == nil && l.Count() == 0 && !bytes.Equal(b, []byte{encodingVersion, 0}) {
			t.Errorf("decoded %x as an empty latency", b)
		}
		if err != nil && !errors.Is(err, errBadLatency) {
			t.Errorf("%x: error %v does not wrap errBadLatency", b, err)
		}
	}
	for k := range len(enc) {
		if _, err := DecodeLatency(enc[:k]); err == nil {
			t.Errorf("truncated at %d of %d: no error", k, len(enc))
		}
	}
	// Flipped bytes must not panic; a decoded result must agree with itself.
	for range 2000 {
		b := slices.Clone(enc)
		b[r.IntN(len(b))] ^= byte(1 + r.UintN(255))
		if l, err := DecodeLatency(b); err == nil {
			checkDecoded(t, l)
		}
	}
}

// checkDecoded holds what DecodeLatency promises of anything it accepts.
func checkDecoded(t *testing.T, l *Latency) {
	t.Helper()
	s := l.Summary()
	if l.Count() == 0 {
		if s != (LatencySummary{}) {
			t.Fatalf("empty latency with summary %+v", s)
		}
		return
	}
	for _, p := range []*float64{s.P50, s.P90, s.P95, s.P99, s.Mean} {
		if p == nil || *p < *s.Min*(1-1e-9) || *p > *s.Max*(1+1e-9) {
			t.Fatalf("summary %+v outside min and max", s)
		}
	}
	if _, err := DecodeLatency(l.Encode()); err != nil {
		t.Fatalf("re-encoding a decoded latency: %v", err)
	}
}

func FuzzDecodeLatency(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 1))
	f.Add([]byte{})
	f.Add(NewLatency().Encode())
	f.Add(latencyOf([]time.Duration{time.Millisecond}).Encode())
	f.Add(latencyOf(randomDurations(r, 100)).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if l, err := DecodeLatency(b); err == nil {
			checkDecoded(t, l)
		}
	})
}
