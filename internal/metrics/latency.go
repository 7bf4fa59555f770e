package metrics

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	enc "github.com/DataDog/sketches-go/ddsketch/encoding"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// RelativeAccuracy of latency quantiles: a reported quantile is within 1%
// of a value of the exact rank.
const RelativeAccuracy = 0.01

// Every duration from a nanosecond to the longest time.Duration falls in
// a bin between minIndex and maxIndex (some 2,200 bins at 1%), so a sketch
// stays small and exact to its accuracy: nothing ever collapses.
var minIndex, maxIndex = latencyMapping.Index(ms(1)) - 1, latencyMapping.Index(ms(math.MaxInt64)) + 1

// boundedStore is a dense store that refuses bins outside [minIndex,
// maxIndex] by panicking, which DecodeLatency recovers: the library's own
// stores would allocate, or collapse into a state that later panics, for
// whatever indexes hostile bytes name.
type boundedStore struct{ *store.DenseStore }

func newStore() store.Store { return boundedStore{store.NewDenseStore()} }

func (s boundedStore) Add(index int)        { s.AddWithCount(index, 1) }
func (s boundedStore) AddBin(bin store.Bin) { s.AddWithCount(bin.Index(), bin.Count()) }
func (s boundedStore) AddWithCount(index int, count float64) {
	if index < minIndex || index > maxIndex {
		panic(fmt.Sprintf("bin %d outside [%d, %d]", index, minIndex, maxIndex))
	}
	s.DenseStore.AddWithCount(index, count)
}
func (s boundedStore) DecodeAndMergeWith(b *[]byte, mode enc.SubFlag) error {
	return store.DecodeAndMergeWith(s, b, mode)
}

// encodingVersion is the first byte of Encode's output.
const encodingVersion = 1

// Latency summarises a set of durations (check latencies, heartbeat run
// durations): exact count, sum, min and max, and a DDSketch of the values in
// milliseconds for quantiles. Latencies merge, so rollups of rollups stay
// exact in count and within RelativeAccuracy in quantiles. The zero value is
// an empty Latency ready to use; NewLatency is its pointer.
type Latency struct {
	count    int64
	sum      float64 // nanoseconds
	min, max time.Duration
	sketch   *ddsketch.DDSketch
}

var latencyMapping = func() mapping.IndexMapping {
	m, err := mapping.NewLogarithmicMapping(RelativeAccuracy)
	if err != nil {
		panic(err)
	}
	return m
}()

func newSketch() *ddsketch.DDSketch {
	return ddsketch.NewDDSketch(latencyMapping, newStore(), newStore())
}

// NewLatency returns an empty Latency.
func NewLatency() *Latency { return &Latency{} }

// Add records one duration; a negative one (a clock step) counts as 0.
func (l *Latency) Add(d time.Duration) {
	d = max(d, 0)
	if l.sketch == nil {
		l.sketch = newSketch()
	}
	if l.count == 0 || d < l.min {
		l.min = d
	}
	if l.count == 0 || d > l.max {
		l.max = d
	}
	l.count++
	l.sum += float64(d)
	// Add fails only for values the mapping cannot index (negative, NaN,
	// beyond 1e308): a millisecond count is never one.
	_ = l.sketch.Add(ms(d))
}

// Merge adds o's durations to l.
func (l *Latency) Merge(o *Latency) error {
	if o == nil || o.count == 0 {
		return nil
	}
	if l.sketch == nil {
		l.sketch = newSketch()
	}
	if err := l.sketch.MergeWith(o.sketch); err != nil {
		return fmt.Errorf("metrics: merge latency: %w", err)
	}
	if l.count == 0 || o.min < l.min {
		l.min = o.min
	}
	if l.count == 0 || o.max > l.max {
		l.max = o.max
	}
	l.count += o.count
	l.sum += o.sum
	return nil
}

// Count is the number of durations added.
func (l *Latency) Count() int64 { return l.count }

// Encode is the compact form the rollup tables store: a version byte, the
// count, min and max (uvarints, nanoseconds), the sum (float64 nanoseconds)
// and the sketch's own encoding without its index mapping (always ours).
func (l *Latency) Encode() []byte {
	b := []byte{encodingVersion}
	b = binary.AppendUvarint(b, uint64(l.count))
	if l.count == 0 {
		return b
	}
	b = binary.AppendUvarint(b, uint64(l.min))
	b = binary.AppendUvarint(b, uint64(l.max))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.sum))
	l.sketch.Encode(&b, true)
	return b
}

var errBadLatency = errors.New("metrics: invalid latency encoding")

// DecodeLatency reads what Encode wrote. Any other bytes give an error,
// never a panic: the sketch library trusts its input, so its decoder runs
// under recover, and what it decoded must agree with the exact count.
func DecodeLatency(b []byte) (*Latency, error) { return decodeLatency(b, newSketch()) }

// scratch holds emptied sketches for MergeEncoded to decode into.
var scratch = sync.Pool{New: func() any { return newSketch() }}

// MergeEncoded adds to l the durations of what Encode wrote, as
// Merge(DecodeLatency(b)) would, without making a sketch for each: a long
// window merges hundreds of rollup rows. The same bytes are refused.
func (l *Latency) MergeEncoded(b []byte) error {
	sk := scratch.Get().(*ddsketch.DDSketch)
	defer scratch.Put(sk)
	sk.Clear()
	o, err := decodeLatency(b, sk)
	if err != nil {
		return err
	}
	return l.Merge(o)
}

// decodeLatency decodes b with sk, empty, as its sketch.
func decodeLatency(b []byte, sk *ddsketch.DDSketch) (l *Latency, err error) {
	defer func() {
		if r := recover(); r != nil {
			l, err = nil, fmt.Errorf("%w: %v", errBadLatency, r)
		}
	}()
	if len(b) == 0 || b[0] != encodingVersion {
		return nil, fmt.Errorf("%w: unknown version", errBadLatency)
	}
	b = b[1:]
	var head [3]uint64 // count, min, max
	for i := range head {
		v, k := binary.Uvarint(b)
		if k <= 0 || v > math.MaxInt64 {
			return nil, fmt.Errorf("%w: header", errBadLatency)
		}
		head[i], b = v, b[k:]
		if i == 0 && v == 0 {
			if len(b) != 0 {
				return nil, fmt.Errorf("%w: data after an empty latency", errBadLatency)
			}
			return &Latency{}, nil
		}
	}
	if len(b) < 8 {
		return nil, fmt.Errorf("%w: sum", errBadLatency)
	}
	l = &Latency{count: int64(head[0]), min: time.Duration(head[1]), max: time.Duration(head[2])}
	l.sum = math.Float64frombits(binary.LittleEndian.Uint64(b))
	if l.min > l.max || math.IsNaN(l.sum) || math.IsInf(l.sum, 0) ||
		l.sum < float64(l.min)*float64(l.count)*(1-1e-9) || l.sum > float64(l.max)*float64(l.count)*(1+1e-9) {
		return nil, fmt.Errorf("%w: inconsistent header", errBadLatency)
	}
	if err := sk.DecodeAndMergeWith(b[8:]); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadLatency, err)
	}
	// The library ignores some errors of its bin decoder; the exact count
	// catches what they left behind, and no bin may hold a negative,
	// fractional or infinite count, nor a value outside the exact min and
	// max (give or take the accuracy); durations are never negative.
	var total float64
	lo, hi := ms(l.min)/(1+2*RelativeAccuracy), ms(l.max)*(1+2*RelativeAccuracy)
	z := sk.GetZeroCount()
	bad := z < 0 || z != math.Trunc(z) || (z > 0 && l.min != 0) || !sk.GetNegativeValueStore().IsEmpty()
	sk.ForEach(func(v, c float64) bool {
		bad = bad || !(c > 0) || c != math.Trunc(c) || math.IsInf(c, 0) || (v != 0 && (v < lo || v > hi))
		total += c
		return bad
	})
	if bad || total != float64(l.count) || sk.GetCount() != float64(l.count) {
		return nil, fmt.Errorf("%w: sketch does not match count", errBadLatency)
	}
	l.sketch = sk
	return l, nil
}

// LatencySummary is what a response shows of a Latency, in milliseconds;
// every field is nil when nothing was counted.
type LatencySummary struct {
	P50  *float64 `json:"p50" doc:"Median in milliseconds, within the stated relative accuracy; null without data."`
	P90  *float64 `json:"p90" doc:"90th percentile in milliseconds; null without data."`
	P95  *float64 `json:"p95" doc:"95th percentile in milliseconds; null without data."`
	P99  *float64 `json:"p99" doc:"99th percentile in milliseconds; null without data."`
	Min  *float64 `json:"min" doc:"Exact minimum in milliseconds; null without data."`
	Max  *float64 `json:"max" doc:"Exact maximum in milliseconds; null without data."`
	Mean *float64 `json:"mean" doc:"Exact mean in milliseconds; null without data."`
}

// Summary reads the quantiles (DDSketch's lower quantile: the value of rank
// ⌊q·(n−1)⌋ in sorted order, within RelativeAccuracy), clamped to the exact
// min and max, which only brings them closer.
func (l *Latency) Summary() LatencySummary {
	if l.count == 0 {
		return LatencySummary{}
	}
	lo, hi := ms(l.min), ms(l.max)
	q := func(p float64) *float64 {
		v, err := l.sketch.GetValueAtQuantile(p)
		if err != nil {
			return nil
		}
		v = min(max(v, lo), hi)
		return &v
	}
	mean := l.sum / float64(l.count) / float64(time.Millisecond)
	return LatencySummary{P50: q(0.5), P90: q(0.9), P95: q(0.95), P99: q(0.99), Min: &lo, Max: &hi, Mean: &mean}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
