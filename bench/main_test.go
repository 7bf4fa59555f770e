package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/racedetector"
)

// TestMain lets the test binary serve as the benchmark's children (bare
// handlers, receivers), which the smoke tests start by re-executing it
// with an area's name and a child flag.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && strings.HasPrefix(os.Args[2], "-") && !strings.HasPrefix(os.Args[1], "-") {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSmokeTiming runs areas end to end at tiny sizes against a tocsin
// binary each builds, on SQLite (and PostgreSQL where the case says so),
// and looks for lines of the report. It measures servers, and seeds in
// its own process, which the race detector slows to minutes.
func TestSmokeTiming(t *testing.T) {
	racedetector.Skip(t, "runs servers and measures them")
	if testing.Short() {
		t.Skip("builds tocsin and runs servers")
	}
	pg := os.Getenv("TOCSIN_TEST_POSTGRES_URL")
	webEngines := "sqlite"
	if pg != "" {
		webEngines += ",postgres"
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"pings", []string{"pings", "-engines", "sqlite", "-duration", "1s", "-warmup", "300ms",
			"-heartbeats", "200", "-clients", "4", "-burst", "400", "-burst-conns", "40", "-rate", "300", "-rate-conns", "20"},
			[]string{
				"| SQLite against the bare handler |",
				"| sqlite: a burst is queued and answered, none dropped | 400 of 400 acknowledged | 400 | met |",
				"| sqlite: every acknowledged ping stored |",
				"| sqlite | 300 | 300 | **300** | 0 | 300 |",
			}},
		{"deliveries", []string{"deliveries", "-engines", "sqlite", "-rounds", "1", "-deliveries", "50", "-monitors", "3",
			"-confirmations", "1", "-timeout", "1m"},
			[]string{
				"| bare | **",
				"| sqlite | **",
				"| 50 | 0 | 0 | 0 |", // delivered, duplicates, bad signatures, held
				"| sqlite: every DOWN change delivered | 3 | 3 | met |",
				"| sqlite: from the confirming check to the webhook, p99 | < 2.00 s |",
			}},
		{"web", []string{"web", "-engines", webEngines, "-pg-url", pg, "-monitors", "20", "-interval", "30s",
			"-requests", "5", "-warmup-requests", "2", "-settle", "2s"},
			webWants(webEngines)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // as separate packages would: the areas share no state
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			var out, errb bytes.Buffer
			if err := run(ctx, c.args, strings.NewReader(""), &out, &errb); err != nil {
				t.Fatalf("%v\n%s", err, errb.String())
			}
			for _, want := range c.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("report lacks %q:\n%s\n%s", want, out.String(), errb.String())
				}
			}
			for _, bad := range []string{"every acknowledged ping stored | 0 |", "every delivery made once"} {
				if strings.Contains(out.String(), bad) {
					t.Errorf("report has %q:\n%s", bad, out.String())
				}
			}
		})
	}
}

func webWants(engines string) []string {
	var want []string
	for _, e := range strings.Split(engines, ",") {
		want = append(want,
			"| "+e+" | monitors list | 5 |",
			"| "+e+" | bare handler, the list's bytes | 5 |",
			"| "+e+" | a monitor's page | 5 |",
		)
	}
	return want
}
