// Package racedetector tells a test whether it runs under the race
// detector, and skips the tests that must not: the ones that drive a
// browser (the DevTools driver races itself) and the ones that measure
// time (the detector slows code five- to tenfold, unevenly). CI runs the
// whole suite with -race, then those tests in a step of their own
// without it:
//
//	go test -p 1 -count=1 -run 'InBrowser|Timing' ./...
//
// A test of either kind has a name that ends in InBrowser or Timing (or
// holds it), so that command finds it.
package racedetector

import "testing"

// Command runs the tests this package skips under the race detector.
const Command = "go test -p 1 -count=1 -run 'InBrowser|Timing' ./..."

// Skip skips t when the race detector is on, saying why and how to run
// it. why says what the test does ("drives a browser", "measures
// latency").
func Skip(t testing.TB, why string) {
	t.Helper()
	if Enabled {
		t.Skipf("this test %s and runs without the race detector: %s", why, Command)
	}
}
