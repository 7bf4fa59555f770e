package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The engine and the bare loop each run in a child process, so that their
// CPU time and peak memory are their own. The parent drives a child
// through its stdin, one word a line:
//
//	start   the measured window begins: sample CPU time (and profile)
//	end     the window ends: sample again; keep running, so that the
//	        checks due in the window can finish
//	stop    stop, and print the report
//
// The child prints JSON lines on stdout: {"ready":true} once it runs, and
// its childReport last. EOF on stdin (the parent died) also stops it.

type childOptions struct {
	dbURL       string
	targets     string
	concurrency int
	interval    time.Duration
	timeout     time.Duration
	profile     string
	writerPace  time.Duration
	claimDelay  time.Duration
}

// usage is what the child process used up to one moment.
type usage struct {
	At       time.Time
	User     time.Duration
	Sys      time.Duration
	NumGC    uint32
	GCPause  time.Duration
	TotalMem uint64 // bytes allocated
	Mallocs  uint64
}

func sampleUsage() usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return usage{At: time.Now(), User: time.Duration(ru.Utime.Nano()), Sys: time.Duration(ru.Stime.Nano()),
		NumGC: ms.NumGC, GCPause: time.Duration(ms.PauseTotalNs), TotalMem: ms.TotalAlloc, Mallocs: ms.Mallocs}
}

// childReport is what a child measured over the window [Start.At, End.At).
type childReport struct {
	Kind       string
	Start, End usage
	// VmHWM is the process's peak resident set (warm-up included), VmRSS
	// its resident set at the end of the window; bytes.
	VmHWM, VmRSS int64
	HeapInuse    uint64
	Goroutines   int

	// The engine's own counters over the window.
	Checks       map[string]float64 `json:",omitempty"` // tocsin_checks_total by result
	Missed       float64            // tocsin_checks_missed_total
	Written      float64            // tocsin_observations_written_total
	WriteErrors  float64
	Batches      float64 // tocsin_observation_batch_seconds count
	BatchSeconds float64 // and sum
	MaxQueued    float64 // tocsin_observations_queued, highest seen once a second
	MaxInFlight  float64 // tocsin_checks_in_flight, likewise
	// Claims are the durations of the engine's ClaimDue calls.
	Claims lagStats

	// The bare loop's own figures (the engine's come from the database).
	Bare *windowStats `json:",omitempty"`
}

func (r childReport) cpu() time.Duration {
	return r.End.User - r.Start.User + r.End.Sys - r.Start.Sys
}

func (r childReport) window() time.Duration { return r.End.At.Sub(r.Start.At) }

// readStatus returns VmHWM and VmRSS of this process in bytes.
func readStatus() (hwm, rss int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64) // kB
		switch k {
		case "VmHWM":
			hwm = n << 10
		case "VmRSS":
			rss = n << 10
		}
	}
	return hwm, rss
}

// commands delivers the parent's words; the channel closes at EOF.
func commands(stdin io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		s := bufio.NewScanner(stdin)
		for s.Scan() {
			ch <- strings.TrimSpace(s.Text())
		}
	}()
	return ch
}

// profiler profiles this process's CPU over the window when path is set.
type profiler struct {
	path string
	f    *os.File
}

func (p *profiler) start() error {
	if p.path == "" {
		return nil
	}
	f, err := os.Create(p.path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	p.f = f
	return nil
}

func (p *profiler) stop() {
	if p.f != nil {
		pprof.StopCPUProfile()
		p.f.Close()
		p.f = nil
	}
}

// drive runs the protocol: it calls start and end at the parent's words
// and returns at stop (or EOF, or ctx).
func drive(ctx context.Context, stdin io.Reader, stdout io.Writer, start, end func()) error {
	if err := json.NewEncoder(stdout).Encode(map[string]bool{"ready": true}); err != nil {
		return err
	}
	cmds := commands(stdin)
	for {
		select {
		case <-ctx.Done():
			return nil
		case c, ok := <-cmds:
			switch {
			case !ok || c == "stop":
				return nil
			case c == "start":
				start()
			case c == "end":
				end()
			default:
				return fmt.Errorf("unknown command %q", c)
			}
		}
	}
}

// endWindow samples the end of the window.
func (r *childReport) endWindow() {
	r.End = sampleUsage()
	r.VmHWM, r.VmRSS = readStatus()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.HeapInuse = ms.HeapInuse
	r.Goroutines = runtime.NumGoroutine()
}

func (r *childReport) print(stdout io.Writer) error {
	if r.End.At.IsZero() {
		return fmt.Errorf("stopped before the window ended")
	}
	return json.NewEncoder(stdout).Encode(r)
}
