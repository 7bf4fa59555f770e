package checks

import (
	"os"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
)

// On a two-CPU machine the server, the target, PostgreSQL and anything
// else share the CPUs. cpuSample reads Linux's counters at both ends of a
// window to say who used them: PostgreSQL's part of storing an
// observation is spent in its own processes, and a busy neighbour would
// skew every figure.

type cpuSample = host.Sample

func sampleCPU() cpuSample { return host.TakeSample() }

// cpuShare is a window's CPU use: percentages of the whole machine, and
// the CPU time of the measured process (tocsin serve or the bare loop),
// the target and PostgreSQL.
type cpuShare struct {
	Busy, Child, Target, Postgres, Self, Other, Steal float64 // %
	ChildTime, TargetTime, PostgresTime               time.Duration
}

// share attributes the CPU time between a and b to the measured process,
// the target server, the PostgreSQL processes in pg (the benchmark
// database's backends and the cluster's background writers; other
// databases on the server count as other), this process, and everything
// else. Linux charges interrupt time to whichever process was running, so
// the parts are close to, not exactly, what each caused.
func share(a, b cpuSample, childPID, targetPID int, pg map[int]bool) cpuShare {
	ticks, busy, steal, _ := a.Window(b)
	if ticks == 0 {
		return cpuShare{}
	}
	s := cpuShare{Busy: busy, Steal: steal}
	self := os.Getpid()
	var child, target, pgTime, mine uint64
	a.Each(b, func(pid int, own uint64) {
		switch {
		case pid == childPID:
			child += own
		case pid == targetPID:
			target += own
		case pid == self:
			mine += own
		case pg[pid]:
			pgTime += own
		}
	})
	pct := func(x uint64) float64 { return 100 * float64(x) / ticks }
	s.Child, s.Target, s.Postgres, s.Self = pct(child), pct(target), pct(pgTime), pct(mine)
	// Everything else: what the machine was busy with beyond the parts
	// above (counting other processes one by one would miss those that
	// came and went).
	s.Other = max(s.Busy-s.Child-s.Target-s.Postgres-s.Self, 0)
	s.ChildTime = time.Duration(child) * host.ClockTick
	s.TargetTime = time.Duration(target) * host.ClockTick
	s.PostgresTime = time.Duration(pgTime) * host.ClockTick
	return s
}
