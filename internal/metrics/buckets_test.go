package metrics

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func lengths(bs []Bucket) []time.Duration {
	var ls []time.Duration
	for _, b := range bs {
		ls = append(ls, b.End.Sub(b.Start))
	}
	return ls
}

func TestBucketsBerlinDST(t *testing.T) {
	loc := berlin(t)
	for _, c := range []struct {
		name string
		from time.Time
		want []time.Duration
	}{
		{"spring forward", time.Date(2026, 3, 28, 0, 0, 0, 0, loc), []time.Duration{24 * time.Hour, 23 * time.Hour, 24 * time.Hour}},
		{"fall back", time.Date(2026, 10, 24, 0, 0, 0, 0, loc), []time.Duration{24 * time.Hour, 25 * time.Hour, 24 * time.Hour}},
	} {
		to := time.Date(c.from.Year(), c.from.Month(), c.from.Day()+3, 0, 0, 0, 0, loc)
		bs, err := Buckets(c.from, to, Day, loc)
		if err != nil {
			t.Fatal(err)
		}
		if got := lengths(bs); !equal(got, c.want) {
			t.Errorf("%s: day lengths %v, want %v", c.name, got, c.want)
		}
		for _, b := range bs {
			if l := b.Start.In(loc); l.Hour() != 0 || l.Minute() != 0 {
				t.Errorf("%s: bucket starts at %v, not local midnight", c.name, l)
			}
		}
	}
	// The fall-back day in hours: 25 buckets of one hour each.
	from := time.Date(2026, 10, 25, 0, 0, 0, 0, loc)
	bs, err := Buckets(from, time.Date(2026, 10, 26, 0, 0, 0, 0, loc), Hour, loc)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 25 {
		t.Fatalf("%d hour buckets on the fall-back day, want 25", len(bs))
	}
	for _, l := range lengths(bs) {
		if l != time.Hour {
			t.Fatalf("hour bucket of %v", l)
		}
	}
}

func TestBucketsPartialAndZones(t *testing.T) {
	from := time.Date(2026, 5, 1, 10, 20, 0, 0, time.UTC)
	to := time.Date(2026, 5, 1, 12, 10, 0, 0, time.UTC)
	bs, err := Buckets(from, to, Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Bucket{
		{from, time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC)},
		{time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC), time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)},
		{time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), to},
	}
	if len(bs) != len(want) {
		t.Fatalf("got %v, want %v", bs, want)
	}
	for i := range bs {
		if !bs[i].Start.Equal(want[i].Start) || !bs[i].End.Equal(want[i].End) {
			t.Errorf("bucket %d: %v, want %v", i, bs[i], want[i])
		}
	}
	// Hours of a half-hour zone fall at :30 UTC.
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	bs, err = Buckets(from, to, Hour, kolkata)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 3 || !bs[0].End.Equal(time.Date(2026, 5, 1, 10, 30, 0, 0, time.UTC)) || !bs[1].End.Equal(time.Date(2026, 5, 1, 11, 30, 0, 0, time.UTC)) {
		t.Errorf("Kolkata hours: %v", bs)
	}
	// A local day in UTC+05:30 starts at 18:30 UTC.
	bs, err = Buckets(from, from.Add(48*time.Hour), Day, kolkata)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 3 || !bs[0].End.Equal(time.Date(2026, 5, 1, 18, 30, 0, 0, time.UTC)) {
		t.Errorf("Kolkata days: %v", bs)
	}
	if bs, err := Buckets(from, from, Day, nil); err != nil || len(bs) != 0 {
		t.Errorf("empty span: %v %v", bs, err)
	}
}

// Random spans in Berlin: buckets are contiguous, cover the span exactly,
// and each but the first and last is a whole local hour or day.
func TestBucketsRandom(t *testing.T) {
	loc := berlin(t)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		from := t0.Add(time.Duration(r.Int64N(int64(365 * 24 * time.Hour))))
		to := from.Add(time.Duration(r.Int64N(int64(60 * 24 * time.Hour))))
		res := []Resolution{Hour, Day}[r.IntN(2)]
		bs, err := Buckets(from, to, res, loc)
		if err != nil {
			t.Fatal(err)
		}
		at := from
		for j, b := range bs {
			if !b.Start.Equal(at) || !b.End.After(b.Start) {
				t.Fatalf("#%d: bucket %d %v does not follow %v", i, j, b, at)
			}
			if j > 0 && j < len(bs)-1 {
				s, e := b.Start.In(loc), b.End.In(loc)
				if s.Minute() != 0 || e.Minute() != 0 || (res == Day && (s.Hour() != 0 || e.Hour() != 0)) || (res == Hour && b.End.Sub(b.Start) != time.Hour) {
					t.Fatalf("#%d: inner %s bucket %v–%v", i, res, s, e)
				}
			}
			at = b.End
		}
		if len(bs) > 0 && !at.Equal(to) {
			t.Fatalf("#%d: buckets end at %v, want %v", i, at, to)
		}
	}
}

func TestBucketsErrors(t *testing.T) {
	from := t0
	if _, err := Buckets(from, from.Add(MaxBuckets*time.Hour), Hour, nil); err != nil {
		t.Errorf("exactly MaxBuckets: %v", err)
	}
	for _, c := range []struct {
		name  string
		to    time.Time
		res   Resolution
		field string
	}{
		{"too many", from.Add((MaxBuckets + 1) * time.Hour), Hour, "resolution"},
		{"unknown resolution", from.Add(time.Hour), "week", "resolution"},
		{"inverted", from.Add(-time.Hour), Day, "to"},
	} {
		_, err := Buckets(from, c.to, c.res, nil)
		var se *SpanError
		if !errors.As(err, &se) || se.Field != c.field || se.Message == "" {
			t.Errorf("%s: got %v, want a SpanError on %s", c.name, err, c.field)
		}
	}
}

func equal(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
