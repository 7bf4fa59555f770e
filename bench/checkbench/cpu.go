package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// On a two-CPU machine the engine, the target, PostgreSQL and anything else
// share the CPUs. cpuSample reads Linux's counters at both ends of a window
// to say who used them: PostgreSQL's part of storing an observation is
// spent in its own processes, and a busy neighbour would skew every figure.

// clockTick is Linux's USER_HZ, the unit of /proc's CPU times; it is 100
// on every architecture Go supports.
const clockTick = 10 * time.Millisecond

type cpuSample struct {
	all, busy, steal uint64 // all CPUs, from /proc/stat
	procs            map[int]procTime
}

type procTime struct {
	own, children uint64 // user+system time of the process, and of its reaped children
	start         uint64 // start time, telling a reused pid from the same process
	comm          string
}

// cpuShare is a window's CPU use: percentages of the whole machine, and
// PostgreSQL's CPU time.
type cpuShare struct {
	Busy, Child, Target, Postgres, Self, Other, Steal float64 // %
	PostgresTime                                      time.Duration
	TargetTime                                        time.Duration
}

func sampleCPU() cpuSample {
	var s cpuSample
	s.procs = map[int]procTime{}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return s
	}
	var v [8]uint64
	for i := range v {
		v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
	}
	// user nice system idle iowait irq softirq steal; steal is time the
	// hypervisor gave this VM's CPUs to someone else.
	s.busy = v[0] + v[1] + v[2] + v[5] + v[6]
	s.steal = v[7]
	s.all = s.busy + v[3] + v[4] + v[7]
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
	return s
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

// share attributes the CPU time between a and b to the measured child,
// the target server, the PostgreSQL processes in pg (the benchmark
// database's backends and the cluster's background writers; other
// databases on the server count as other), this process, and everything
// else. Linux charges interrupt time to whichever process was running, so
// the parts are close to, not exactly, what each caused.
func (a cpuSample) share(b cpuSample, childPID, targetPID int, pg map[int]bool) cpuShare {
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
	s := cpuShare{Busy: pct(delta(a.busy, b.busy)), Steal: pct(delta(a.steal, b.steal))}
	self := os.Getpid()
	var pgTime, target uint64
	for pid, t := range b.procs {
		before := a.procs[pid] // zero for a process started meanwhile
		if before.start != t.start {
			before = procTime{}
		}
		own := delta(before.own, t.own)
		switch {
		case pid == childPID:
			s.Child += pct(own)
		case pid == targetPID:
			target += own
		case pid == self:
			s.Self += pct(own)
		case pg[pid]:
			pgTime += own
		}
	}
	s.Postgres, s.Target = pct(pgTime), pct(target)
	// Everything else: what the machine was busy with beyond the parts
	// above (counting other processes one by one would miss those that
	// came and went, and overcount reaped children that started earlier).
	s.Other = max(s.Busy-s.Child-s.Target-s.Postgres-s.Self, 0)
	s.PostgresTime, s.TargetTime = time.Duration(pgTime)*clockTick, time.Duration(target)*clockTick
	return s
}
