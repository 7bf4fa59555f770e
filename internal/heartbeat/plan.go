package heartbeat

import (
	"errors"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/recur"
)

// Plan is a compiled, valid schedule. The zero Plan expects nothing.
type Plan struct {
	period time.Duration // zero for a cron plan
	rule   recur.Rule
	grace  time.Duration
}

// Compile builds the Plan of a schedule that Normalize has accepted; an
// invalid schedule is an error naming every failing field.
func (s Schedule) Compile() (Plan, error) {
	v := &validator{}
	p := s.compile(v)
	if len(v.problems) > 0 {
		msgs := make([]string, len(v.problems))
		for i, e := range v.problems {
			msgs[i] = e.Pointer + ": " + e.Message
		}
		return Plan{}, errors.New("invalid heartbeat schedule: " + strings.Join(msgs, "; "))
	}
	return p, nil
}

// Expectation is when the run after some instant is expected, and when its
// absence becomes late.
type Expectation struct {
	Expected time.Time // the earliest instant the next run is expected
	Deadline time.Time // the latest plausible instant of that run plus grace
}

// Next returns the expectation of the first run strictly after t; false
// when a cron schedule never fires again. The package comment explains the
// allowance on daylight-saving nights.
func (p Plan) Next(t time.Time) (e Expectation, ok bool) {
	if p.period > 0 {
		exp := t.Add(p.period)
		return Expectation{Expected: exp, Deadline: exp.Add(p.grace)}, true
	}
	exp, ok := p.rule.Next(t)
	if !ok {
		return Expectation{}, false
	}
	return Expectation{Expected: exp, Deadline: latest(exp, p.rule.Location).Add(p.grace)}, true
}

// listenFrom is where the span begins in which a ping would have kept the
// run expected at expected from being late, for a heartbeat listening
// since windowStart (its last ping, or the last deadline it judged). On a
// period schedule any ping in the span moves the deadline. On a cron
// schedule a ping before the expected instant counts for that same run
// (Next of it is the run), so only the span from the expected instant on
// can hide the ping that mattered.
func (p Plan) listenFrom(windowStart, expected time.Time) time.Time {
	if p.period == 0 && expected.After(windowStart) {
		return expected
	}
	return windowStart
}

// foldSteps are the lengths of the repeated hours of fall-back nights,
// largest first (30 minutes on Lord Howe Island, 2 hours in Antarctica/Troll).
var foldSteps = []time.Duration{2 * time.Hour, time.Hour, 30 * time.Minute}

// latest is the last instant a cron daemon could run the occurrence recur
// puts at at: the second reading of a repeated wall time, or the end of
// the skipped hour when at is the first instant after a spring-forward gap.
func latest(at time.Time, loc *time.Location) time.Time {
	wall := wallClock(at.In(loc))
	for _, d := range foldSteps {
		if wallClock(at.Add(d).In(loc)) == wall {
			return at.Add(d)
		}
	}
	_, before := at.Add(-time.Nanosecond).In(loc).Zone()
	_, after := at.In(loc).Zone()
	if after > before {
		return at.Add(seconds(after - before))
	}
	return at
}

// wallClock is what a clock showing t reads, to the second, as a
// comparable value.
func wallClock(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, 0, time.UTC)
}
