package monitor

import (
	"fmt"
	"time"
)

// The causes of a monitor's state changes are what a person reads in the
// state history, the incident and every notification: what the checks
// found, and how many of them, so the reader can act without opening the
// observations. Heartbeats phrase theirs the same way (internal/heartbeat).

// DownCause is the cause of a confirmed DOWN: the reason of the check that
// confirmed it and the streak of failed checks behind it, as in
// "status 500 not in 200-299 (after 2 consecutive failed checks)".
func DownCause(reason string, downs int) string {
	if reason == "" {
		reason = "the check failed"
	}
	return reason + " (after " + streak(downs, "failed") + ")"
}

// UpCause is the cause of a move to UP or DEGRADED (r) from the state
// from: for DEGRADED the check's reason ("slow: 812 ms, above the degraded
// threshold of 500 ms"); leaving DOWN, that the checks pass again and how
// many did ("checks pass again (after 1 passing check)").
func UpCause(from State, r Result, reason string, ups int) string {
	if r == ResultDegraded && reason == "" {
		reason = "correct but slow"
	}
	switch {
	case from == StateDown && r == ResultDegraded:
		return "checks pass again, but " + reason + " (after " + streak(ups, "passing") + ")"
	case from == StateDown:
		return "checks pass again (after " + streak(ups, "passing") + ")"
	case r == ResultDegraded:
		return reason
	case from == StateDegraded:
		return "no longer degraded: the check passed"
	}
	return "the check passed"
}

// streak is "1 failed check" or "3 consecutive failed checks".
func streak(n int, what string) string {
	if n <= 1 {
		return "1 " + what + " check"
	}
	return fmt.Sprintf("%d consecutive %s checks", n, what)
}

// GapCause is the cause of a move to UNKNOWN for a span in which no node
// ran the monitor's checks (the process was stopped or crashed, or its
// scheduler fell behind by more than an interval): our outage, not the
// target's, as in "no Tocsin node was checking from 2026-11-26T02:55:00Z
// to 2026-11-26T02:55:33Z". It is also the reason of the check that was
// due at from and found the gap.
func GapCause(from, to time.Time) string {
	return GapCausePrefix + " from " + stamp(from) + " to " + stamp(to)
}

// GapCausePrefix begins every GapCause, to tell a gap's missed check from
// other unknown results.
const GapCausePrefix = "no Tocsin node was checking"

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
