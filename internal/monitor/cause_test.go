package monitor

import (
	"testing"
	"time"
)

func TestCauses(t *testing.T) {
	const slow = "slow: 812 ms, above the degraded threshold of 500 ms"
	for _, c := range []struct {
		name, got, want string
	}{
		{"down after two", DownCause("status 500 not in 200-299", 2), "status 500 not in 200-299 (after 2 consecutive failed checks)"},
		{"down after one", DownCause("connection refused to 127.0.0.1:9", 1), "connection refused to 127.0.0.1:9 (after 1 failed check)"},
		{"down, no reason", DownCause("", 3), "the check failed (after 3 consecutive failed checks)"},
		{"recovered", UpCause(StateDown, ResultUp, "", 1), "checks pass again (after 1 passing check)"},
		{"recovered after two", UpCause(StateDown, ResultUp, "", 2), "checks pass again (after 2 consecutive passing checks)"},
		{"recovered but slow", UpCause(StateDown, ResultDegraded, slow, 1), "checks pass again, but " + slow + " (after 1 passing check)"},
		{"degraded", UpCause(StateUp, ResultDegraded, slow, 1), slow},
		{"degraded, certificate", UpCause(StatePending, ResultDegraded, "TLS certificate expires in 10 days (2026-12-05 10:00 UTC)", 1),
			"TLS certificate expires in 10 days (2026-12-05 10:00 UTC)"},
		{"degraded, no reason", UpCause(StateUp, ResultDegraded, "", 1), "correct but slow"},
		{"fast again", UpCause(StateDegraded, ResultUp, "", 1), "no longer degraded: the check passed"},
		{"first check", UpCause(StatePending, ResultUp, "", 1), "the check passed"},
		{"known again", UpCause(StateUnknown, ResultUp, "", 1), "the check passed"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}

// The state machine gives its transitions these causes, with the reason
// of the check that made them and the streak behind it.
func TestObserveCauses(t *testing.T) {
	th := Thresholds{Confirmations: 3, Recoveries: 2}
	tr := NewTracker(t0, false)
	var got []string
	at := t0
	for _, step := range []struct {
		r      Result
		reason string
	}{
		{ResultUp, ""},
		{ResultDown, "status 502 not in 200-299"},
		{ResultDown, "connection refused to 127.0.0.1:9"},
		{ResultUnknown, "probe network broken"}, // neither breaks nor extends the streak
		{ResultDown, "status 500 not in 200-299"},
		{ResultDegraded, "slow: 900 ms, above the degraded threshold of 500 ms"},
		{ResultDegraded, "slow: 700 ms, above the degraded threshold of 500 ms"},
		{ResultUp, ""},
	} {
		at = at.Add(time.Minute)
		var trans *Transition
		tr, trans = tr.Observe(step.r, step.reason, at, th)
		if trans != nil {
			got = append(got, string(trans.To)+": "+trans.Cause)
		}
	}
	want := []string{
		"UP: the check passed",
		"DOWN: status 500 not in 200-299 (after 3 consecutive failed checks)",
		"DEGRADED: checks pass again, but slow: 700 ms, above the degraded threshold of 500 ms (after 2 consecutive passing checks)",
		"UP: no longer degraded: the check passed",
	}
	if len(got) != len(want) {
		t.Fatalf("transitions %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("transition %d: %q, want %q", i, got[i], want[i])
		}
	}
}
