package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// On a small machine the load generator, the server and PostgreSQL share
// the CPUs, and anything else running skews the numbers. cpuSample reads
// Linux's counters so each round can say who used the CPUs while it ran.

// cpuSample is cumulative CPU time in clock ticks.
type cpuSample struct {
	all, busy uint64 // all CPUs, from /proc/stat
	procs     map[int]procTime
}

type procTime struct {
	own, children uint64 // user+system time of the process, and of its reaped children
	start         uint64 // start time, telling a reused pid from the same process
	comm          string
}

// cpuShare is a round's CPU use, in percent of the whole machine.
type cpuShare struct {
	busy, self, server, pg, other float64
}

func sampleCPU() (s cpuSample, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return s, false
	}
	var v [8]uint64
	for i := range v {
		v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
	}
	// user nice system idle iowait irq softirq steal
	s.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
	s.all = s.busy + v[3] + v[4]
	s.procs = map[int]procTime{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		if t, ok := readProcTime(p); ok {
			s.procs[pid] = t
		}
	}
	return s, true
}

func readProcTime(path string) (procTime, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procTime{}, false
	}
	open, end := strings.IndexByte(string(b), '('), strings.LastIndexByte(string(b), ')')
	if open < 0 || end < open {
		return procTime{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 {
		return procTime{}, false
	}
	// After the command: state(0) … utime(11) stime(12) cutime(13) cstime(14) … starttime(19).
	var n [4]uint64
	for i := range n {
		n[i], _ = strconv.ParseUint(f[11+i], 10, 64)
	}
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procTime{own: n[0] + n[1], children: n[2] + n[3], start: start, comm: string(b[open+1 : end])}, true
}

// share attributes the CPU time between a and b to this process, the
// target's server, PostgreSQL, and every other process (with the children
// they reaped meanwhile). Linux charges interrupt time to whichever process
// was running, and rounds differently per process and machine-wide, so the
// parts may add up to a little more or less than busy.
func (a cpuSample) share(b cpuSample, serverPID int) cpuShare {
	d := float64(b.all - a.all)
	if d <= 0 {
		return cpuShare{}
	}
	pct := func(x uint64) float64 { return 100 * float64(x) / d }
	delta := func(x, y uint64) uint64 {
		if y < x {
			return 0
		}
		return y - x
	}
	s := cpuShare{busy: pct(delta(a.busy, b.busy))}
	self := os.Getpid()
	for pid, t := range b.procs {
		before := a.procs[pid] // zero for a process started meanwhile
		if before.start != t.start {
			before = procTime{}
		}
		own := pct(delta(before.own, t.own))
		switch {
		case pid == self:
			s.self += own
		case pid == serverPID:
			s.server += own
		case t.comm == "postgres":
			s.pg += own
		default:
			s.other += own + pct(delta(before.children, t.children))
		}
	}
	return s
}
