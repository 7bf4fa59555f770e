package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestStoppedServerIsUnknown: our own outages are UNKNOWN, never UP. A
// monitor is UP, serve stops for over two intervals, and serve starts
// again on the same data dir: the state history shows the span no node
// was checking as UNKNOWN, with its cause, from the first slot missed,
// until the first check after the restart that passed, then UP again;
// and no incident was opened for it.
func TestStoppedServerIsUnknown(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stops a server for over two intervals of 10 s; not in -short")
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer target.Close()
	env := map[string]string{"TOCSIN_DATA_DIR": t.TempDir()}
	s := startServe(t, env)
	key := ownerKey(t, env, "monitors:read", "monitors:write", "incidents:read", "metrics:read")
	const interval = 10 * time.Second // the shortest serve allows
	res := do(t, "POST", s.url+"/api/v1/monitors", key,
		`{"type":"http","name":"local","intervalSeconds":10,"config":{"url":"`+target.URL+`"}}`)
	var m struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil || res.StatusCode != 201 {
		t.Fatalf("create: %d %v", res.StatusCode, err)
	}
	type checkRow struct {
		StartedAt, DueAt time.Time
		Result, Reason   string
	}
	checks := func(base string) []checkRow {
		var list struct{ Data []checkRow }
		r, err := http.NewRequest("GET", base+"/api/v1/monitors/"+m.ID+"/checks", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		return list.Data
	}
	waitUntil := func(what string, logs *syncBuffer, cond func() bool) {
		t.Helper()
		// Generous: a loaded CI machine (browsers beside the race
		// detector) can keep a restarted server from its first round.
		waitFor(t, 2*time.Minute, what, cond, logs.String)
	}
	var first checkRow
	waitUntil("the first check", s.logs, func() bool {
		c := checks(s.url)
		if len(c) > 0 {
			first = c[0]
		}
		return len(c) > 0
	})
	if first.Result != "up" {
		t.Fatalf("first check %+v", first)
	}

	s.cancel()
	if err := <-s.done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	s.done <- nil // for the cleanup's wait
	stopped := time.Now()
	// The next slot is an interval after the first check's; a check
	// starting more than an interval after it ends a gap.
	missed := first.DueAt.Add(interval)
	time.Sleep(time.Until(missed.Add(interval + time.Second)))
	restarted := time.Now()
	s = startServe(t, env)

	type change struct {
		At              time.Time
		From, To, Cause string
	}
	var hist []change // newest first
	waitUntil("the gap in the state history", s.logs, func() bool {
		res := do(t, "GET", s.url+"/api/v1/monitors/"+m.ID+"/states", key, "")
		var list struct{ Data []change }
		if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		hist = list.Data
		return len(hist) >= 3
	})
	if len(hist) != 3 {
		t.Fatalf("state history %+v, want PENDING → UP → UNKNOWN → UP", hist)
	}
	into, out := hist[1], hist[0]
	const gapCause = "no Tocsin node was checking from "
	if into.From != "UP" || into.To != "UNKNOWN" || !strings.HasPrefix(into.Cause, gapCause) ||
		out.From != "UNKNOWN" || out.To != "UP" || out.Cause != "the check passed" {
		t.Fatalf("state history %+v, want UP → UNKNOWN (%s…) → UP (the check passed)", hist, gapCause)
	}
	// From the first slot missed, within an interval of the stop, to the
	// first check after the restart that passed: the check due at the
	// first slot missed found the gap, could not tell, and left it
	// UNKNOWN.
	if !into.At.Equal(missed) || into.At.After(stopped.Add(interval)) || out.At.Before(restarted) {
		t.Errorf("UNKNOWN from %v to %v; first slot missed %v, stopped at %v, restarted at %v",
			into.At, out.At, missed, stopped, restarted)
	}
	var found, passed bool
	for _, c := range checks(s.url) {
		if c.DueAt.Equal(missed) {
			want := gapCause + into.At.UTC().Format(time.RFC3339) + " to " + c.StartedAt.UTC().Format(time.RFC3339)
			found = c.Result == "unknown" && c.Reason == into.Cause && into.Cause == want && !c.StartedAt.After(out.At)
		}
		passed = passed || (c.StartedAt.Equal(out.At) && c.Result == "up")
	}
	if !found || !passed {
		t.Errorf("the check due at %v: want unknown, with the gap as its reason (found %v); a passing check at %v (%v); checks %+v",
			missed, found, out.At, passed, checks(s.url))
	}

	var incidents struct{ Data []json.RawMessage }
	res = do(t, "GET", s.url+"/api/v1/incidents", key, "")
	if err := json.NewDecoder(res.Body).Decode(&incidents); err != nil || len(incidents.Data) != 0 {
		t.Fatalf("incidents: %v %s", err, incidents.Data)
	}

	// In the metrics the gap is lost coverage, never downtime: the target
	// was up whenever it was checked, so availability stays 1.
	var fig struct {
		Availability, Coverage *float64
		Durations              struct{ Unknown, Down float64 }
	}
	res = do(t, "GET", s.url+"/api/v1/monitors/"+m.ID+"/metrics?window=1h", key, "")
	if err := json.NewDecoder(res.Body).Decode(&fig); err != nil {
		t.Fatal(err)
	}
	gap := out.At.Sub(into.At).Seconds()
	if fig.Availability == nil || *fig.Availability != 1 || fig.Coverage == nil || *fig.Coverage >= 1 ||
		fig.Durations.Down != 0 || fig.Durations.Unknown < gap {
		t.Errorf("metrics: availability %v coverage %v durations %+v; want 1, below 1, and at least %.0f s unknown",
			fig.Availability, fig.Coverage, fig.Durations, gap)
	}
}
