package app

import (
	"sort"
	"time"

	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/store"
)

// Where a span's check counts and latencies come from. Whole UTC days that
// the daily rollup has written are read from it, whole hours the hourly
// rollup has written from that, and the rest (a window's ragged edges and
// the time not rolled up yet) from the raw rows, so within the raw
// retention every answer equals the raw computation, and a year costs a
// few hundred rows.

// source is where a segment is read from.
type source int

const (
	fromRaw source = iota
	fromHours
	fromDays
)

// segment is a span read from one source.
type segment struct {
	start, end time.Time
	src        source
}

// plan splits [from, to) into segments: days up to daysDone, hours up to
// hoursDone, raw elsewhere; adjacent raw segments are merged.
func plan(from, to, hoursDone, daysDone time.Time) []segment {
	var out []segment
	add := func(s, e time.Time, src source) {
		if !e.After(s) {
			return
		}
		if n := len(out); n > 0 && src == fromRaw && out[n-1].src == fromRaw && out[n-1].end.Equal(s) {
			out[n-1].end = e
			return
		}
		out = append(out, segment{s, e, src})
	}
	// hours covers [s, e) with whole rolled-up hours and raw edges.
	hours := func(s, e time.Time) {
		hs := ceilTo(s, time.Hour)
		he := earliest(e.Truncate(time.Hour), hoursDone)
		if !he.After(hs) {
			add(s, e, fromRaw)
			return
		}
		add(s, hs, fromRaw)
		add(hs, he, fromHours)
		add(he, e, fromRaw)
	}
	ds := ceilTo(from, 24*time.Hour)
	de := earliest(to.Truncate(24*time.Hour), daysDone)
	if !de.After(ds) {
		hours(from, to)
		return out
	}
	hours(from, ds)
	add(ds, de, fromDays)
	hours(de, to)
	return out
}

// runs plans each of spans (in order and adjacent: a window, or the
// buckets of a series) and joins the segments of one source that follow
// each other, across spans too, so a series of 2,160 hours is read in a
// query or two, not one a bucket. Every row a run reads starts in one
// segment and lies within it (rollup rows are whole hours or days of it),
// so the span it starts in (spanOf) is the one it counts for.
func runs(spans []metrics.Bucket, hoursDone, daysDone time.Time) []segment {
	var out []segment
	for _, sp := range spans {
		for _, seg := range plan(sp.Start, sp.End, hoursDone, daysDone) {
			if n := len(out); n > 0 && out[n-1].src == seg.src && out[n-1].end.Equal(seg.start) {
				out[n-1].end = seg.end
				continue
			}
			out = append(out, seg)
		}
	}
	return out
}

// spanOf is the index of the span of spans (in order and adjacent) that
// holds at.
func spanOf(spans []metrics.Bucket, at time.Time) int {
	return sort.Search(len(spans)-1, func(i int) bool { return at.Before(spans[i].End) })
}

// ceilTo rounds t up to a multiple of d since the Unix epoch (UTC days
// and hours).
func ceilTo(t time.Time, d time.Duration) time.Time {
	f := t.Truncate(d)
	if f.Equal(t) {
		return t
	}
	return f.Add(d)
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// tierOf is the rollup tier a source reads.
func tierOf(src source) int {
	if src == fromDays {
		return store.TierDay
	}
	return store.TierHour
}
