package main

import (
	"testing"
	"time"
)

func TestParseTraces(t *testing.T) {
	out := `File: checkbench
Type: cpu
Duration: 20s, Total samples = 1.27s ( 6.34%)
-----------+-------------------------------------------------------
      20ms   internal/runtime/syscall/linux.Syscall6
             syscall.Syscall
             net.(*netFD).connect
             net.(*Dialer).DialContext
             net/http.(*Transport).dialConn
             github.com/tocsin/tocsin/internal/probe.(*checkRun).http
             github.com/tocsin/tocsin/internal/engine.(*Engine).start
             github.com/tocsin/tocsin/internal/engine.(*Engine).claim.func1
-----------+-------------------------------------------------------
      10ms   modernc.org/sqlite/lib._sqlite3VdbeExec
             github.com/tocsin/tocsin/internal/store.(*DB).ClaimDue
             github.com/tocsin/tocsin/internal/engine.(*Engine).claim
             github.com/tocsin/tocsin/internal/engine.(*Engine).Run
-----------+-------------------------------------------------------
     1.20s   runtime.memmove
             github.com/tocsin/tocsin/internal/store.(*DB).ApplyObservations
             github.com/tocsin/tocsin/internal/engine.(*writer).write
             github.com/tocsin/tocsin/internal/engine.(*writer).run
-----------+-------------------------------------------------------
      30ms   runtime.scanobject
             runtime.gcBgMarkWorker
-----------+-------------------------------------------------------
      40ms   runtime.futex
             runtime.gopreempt_m (inline)
             runtime.mcall
-----------+-------------------------------------------------------
      50ms   main.serveBare.func3
-----------+-------------------------------------------------------
`
	p := parseTraces([]byte(out))
	want := map[string]time.Duration{
		"checking (probe, HTTP client, timers)": 70 * time.Millisecond,
		"claiming due checks":                   10 * time.Millisecond,
		"storing (observation writer)":          1200 * time.Millisecond,
		"GC (background workers)":               30 * time.Millisecond,
		"Go scheduler and other runtime":        40 * time.Millisecond,
	}
	got := map[string]time.Duration{}
	for _, pp := range p.Parts {
		got[pp.Name] = pp.Time
	}
	if len(got) != len(want) {
		t.Errorf("parts = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
	if p.Total != 1350*time.Millisecond {
		t.Errorf("total = %s", p.Total)
	}
}
