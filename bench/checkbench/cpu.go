package main

import (
	"os"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
)

// On a two-CPU machine the engine, the target, PostgreSQL and anything else
// share the CPUs. cpuSample reads Linux's counters at both ends of a window
// to say who used them: PostgreSQL's part of storing an observation is
// spent in its own processes, and a busy neighbour would skew every figure.

type cpuSample struct {
	all, busy, steal uint64 // all CPUs; busy counts neither idle nor steal
	procs            map[int]host.Proc
}

// cpuShare is a window's CPU use: percentages of the whole machine, and
// PostgreSQL's CPU time.
type cpuShare struct {
	Busy, Child, Target, Postgres, Self, Other, Steal float64 // %
	PostgresTime                                      time.Duration
	TargetTime                                        time.Duration
}

func sampleCPU() cpuSample {
	c, _ := host.ReadCPU()
	return cpuSample{all: c.All(), busy: c.Busy, steal: c.Steal, procs: host.Procs()}
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
	delta := host.Delta
	s := cpuShare{Busy: pct(delta(a.busy, b.busy)), Steal: pct(delta(a.steal, b.steal))}
	self := os.Getpid()
	var pgTime, target uint64
	for pid, t := range b.procs {
		before := a.procs[pid] // zero for a process started meanwhile
		if before.Start != t.Start {
			before = host.Proc{}
		}
		own := delta(before.Own, t.Own)
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
	s.PostgresTime, s.TargetTime = time.Duration(pgTime)*host.ClockTick, time.Duration(target)*host.ClockTick
	return s
}
