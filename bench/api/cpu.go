package api

import (
	"os"

	"github.com/tocsin/tocsin/bench/internal/host"
)

// On a small machine the load generator, the server and PostgreSQL share
// the CPUs, and anything else running skews the numbers. cpuSample reads
// Linux's counters so each round can say who used the CPUs while it ran.

// cpuSample is cumulative CPU time in clock ticks.
type cpuSample struct {
	all, busy uint64 // all CPUs; busy counts steal too
	procs     map[int]host.Proc
}

// cpuShare is a round's CPU use, in percent of the whole machine.
type cpuShare struct {
	busy, self, server, pg, other float64
}

func sampleCPU() (s cpuSample, ok bool) {
	c, ok := host.ReadCPU()
	if !ok {
		return s, false
	}
	return cpuSample{all: c.All(), busy: c.Busy + c.Steal, procs: host.Procs()}, true
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
	delta := host.Delta
	s := cpuShare{busy: pct(delta(a.busy, b.busy))}
	self := os.Getpid()
	for pid, t := range b.procs {
		before := a.procs[pid] // zero for a process started meanwhile
		if before.Start != t.Start {
			before = host.Proc{}
		}
		own := pct(delta(before.Own, t.Own))
		switch {
		case pid == self:
			s.self += own
		case pid == serverPID:
			s.server += own
		case t.Comm == "postgres":
			s.pg += own
		default:
			s.other += own + pct(delta(before.Children, t.Children))
		}
	}
	return s
}
