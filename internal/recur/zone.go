package recur

import "time"

// Wall times are represented as time.Time values in UTC whose fields read
// as the local clock would: 02:30 in Berlin is 02:30 UTC here. UTC has no
// daylight saving, so cron and RRULE arithmetic on these values is plain
// calendar arithmetic; this file maps the results back to instants.

// wallSeq is a recurrence over wall times.
type wallSeq interface {
	// after returns the first wall time strictly after w.
	after(w time.Time) (time.Time, bool)
	// atOrBefore returns the last wall time at or before w.
	atOrBefore(w time.Time) (time.Time, bool)
}

// MaxZoneLen bounds an IANA time zone name as schedules take it (the
// longest name is about 30 characters).
const MaxZoneLen = 64

// Searches walk at most this many zone periods (about two a year in a zone
// with daylight saving). The longest gap between two occurrences of a rule
// that fires at all is about 40 years ("0 0 29 2 */7": February 29th on a
// Sunday), so this is generous and still bounds the work.
const maxPeriods = 1000

// period is a stretch of instants [start, end) over which a location keeps
// one UTC offset. A zero start means since ever, a zero end for ever.
type period struct {
	start, end time.Time
	off        time.Duration // the offset inside the period
	prevOff    time.Duration // the offset just before start
}

func periodAt(t time.Time, loc *time.Location) period {
	lt := t.In(loc)
	_, off := lt.Zone()
	start, end := lt.ZoneBounds()
	// Past the end of its transition table Go derives zone bounds from the
	// zone's rule year by year, and in leap years (2040, 2044…) it reports
	// the year's end one day early, at an instant not after t (Go 1.26).
	// Nothing changes there; look a day further for the real end.
	for probe := t; !end.IsZero() && !end.After(t) && probe.Sub(t) < 72*time.Hour; {
		probe = probe.Add(24 * time.Hour)
		ns, ne := probe.In(loc).ZoneBounds()
		if ns.After(t) {
			end = ns
		} else {
			end = ne
		}
	}
	p := period{start: start, end: end, off: seconds(off), prevOff: seconds(off)}
	if !start.IsZero() {
		_, prev := start.Add(-time.Nanosecond).In(loc).Zone()
		p.prevOff = seconds(prev)
	}
	return p
}

func seconds(s int) time.Duration { return time.Duration(s) * time.Second }

// wallOf is the wall time of instant t under offset off.
func wallOf(t time.Time, off time.Duration) time.Time { return t.UTC().Add(off) }

// wallRange is the half-open range of wall times that p answers for; zero
// bounds are open. Under fixed-time rules the ranges of consecutive periods
// tile the wall clock: a spring-forward gap belongs to the period after it
// (and maps to its first instant), a repeated fall-back hour to the period
// before it (its first occurrence). Under real-time rules each period owns
// exactly the wall times its own instants show, so gaps belong to nobody
// and repeated hours to both periods.
func (p period) wallRange(fixed bool) (lo, hi time.Time) {
	if !p.start.IsZero() {
		if fixed {
			lo = wallOf(p.start, p.prevOff)
		} else {
			lo = wallOf(p.start, p.off)
		}
	}
	if !p.end.IsZero() {
		hi = wallOf(p.end, p.off)
	}
	return lo, hi
}

// instant maps a wall time of p's range back to its instant; a wall time in
// the gap before p becomes p's first instant.
func (p period) instant(w time.Time) time.Time {
	t := w.Add(-p.off)
	if !p.start.IsZero() && t.Before(p.start) {
		return p.start
	}
	return t
}

// nextInstant returns the first occurrence of seq strictly after instant
// after, in loc.
func nextInstant(seq wallSeq, fixed bool, loc *time.Location, after time.Time) (time.Time, bool) {
	m := &memo{seq: seq}
	p := periodAt(after, loc)
	for range maxPeriods {
		lo, hi := p.wallRange(fixed)
		var from time.Time // the search is for wall times strictly after this
		switch {
		case !p.start.IsZero() && after.Before(p.start):
			// A later period: every wall time it owns maps after `after`.
			from = lo.Add(-time.Nanosecond)
		default:
			from = wallOf(after, p.off)
			if !lo.IsZero() && from.Before(lo) {
				from = lo.Add(-time.Nanosecond)
			}
		}
		w, ok := m.after(from)
		if !ok {
			return time.Time{}, false
		}
		if hi.IsZero() || w.Before(hi) {
			return p.instant(w).In(loc), true
		}
		p = periodAt(p.end, loc)
	}
	return time.Time{}, false
}

// prevInstant returns the last occurrence of seq at or before instant t, in
// loc.
func prevInstant(seq wallSeq, fixed bool, loc *time.Location, t time.Time) (time.Time, bool) {
	m := &memo{seq: seq}
	p := periodAt(t, loc)
	upTo := wallOf(t, p.off) // the search is for wall times at or before this
	for range maxPeriods {
		lo, _ := p.wallRange(fixed)
		w, ok := m.atOrBefore(upTo)
		if !ok {
			return time.Time{}, false
		}
		if lo.IsZero() || !w.Before(lo) {
			return p.instant(w).In(loc), true
		}
		prevEnd := p.start
		p = periodAt(prevEnd.Add(-time.Nanosecond), loc)
		_, hi := p.wallRange(fixed)
		upTo = hi.Add(-time.Nanosecond)
	}
	return time.Time{}, false
}

// memo remembers the last answer of each direction: walking period by
// period towards a far occurrence asks the same question many times.
type memo struct {
	seq wallSeq
	// after(x) == nextW for every x in [nextFrom, nextW).
	nextFrom, nextW time.Time
	nextOK          bool
	// atOrBefore(x) == prevW for every x in [prevW, prevUpTo].
	prevW, prevUpTo time.Time
	prevOK          bool
}

func (m *memo) after(x time.Time) (time.Time, bool) {
	if m.nextOK && !x.Before(m.nextFrom) && x.Before(m.nextW) {
		return m.nextW, true
	}
	w, ok := m.seq.after(x)
	if ok && !w.After(x) {
		ok = false // a misbehaving sequence must not stall the walk
	}
	m.nextFrom, m.nextW, m.nextOK = x, w, ok
	return w, ok
}

func (m *memo) atOrBefore(x time.Time) (time.Time, bool) {
	if m.prevOK && !x.Before(m.prevW) && !x.After(m.prevUpTo) {
		return m.prevW, true
	}
	w, ok := m.seq.atOrBefore(x)
	if ok && w.After(x) {
		ok = false
	}
	m.prevW, m.prevUpTo, m.prevOK = w, x, ok
	return w, ok
}
