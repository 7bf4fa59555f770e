package main

import (
	"os"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
)

// On a small machine the load generator, the server and PostgreSQL share
// the CPUs. cpuSample reads Linux's counters at both ends of a window to
// say who used them, and how much CPU time a ping cost the server and
// PostgreSQL.

type cpuSample = host.Sample

// cpuShare is a window's CPU use: percentages of the whole machine (100%
// = all CPUs), and the server's and PostgreSQL's CPU time. IRQ is time in
// interrupts, which Linux charges to no process: at tens of thousands of
// requests a second over loopback, the network's softirqs are a large
// part of the machine.
type cpuShare struct {
	Busy, Server, Postgres, Self, IRQ, Other, Steal float64 // %
	ServerTime, PostgresTime                        time.Duration
}

func sampleCPU() cpuSample { return host.TakeSample() }

// share attributes the CPU time between a and b to the server, the
// PostgreSQL processes in pg, this process (the load), interrupts, and
// everything else.
func share(a, b cpuSample, serverPID int, pg map[int]bool) cpuShare {
	ticks, busy, steal, irq := a.Window(b)
	if ticks == 0 {
		return cpuShare{}
	}
	s := cpuShare{Busy: busy, Steal: steal, IRQ: irq}
	self := os.Getpid()
	var server, mine, pgTime uint64
	a.Each(b, func(pid int, own uint64) {
		switch {
		case pid == serverPID:
			server += own
		case pid == self:
			mine += own
		case pg[pid]:
			pgTime += own
		}
	})
	pct := func(x uint64) float64 { return 100 * float64(x) / ticks }
	s.Server, s.Postgres, s.Self = pct(server), pct(pgTime), pct(mine)
	s.Other = max(s.Busy-s.Server-s.Postgres-s.Self-s.IRQ, 0)
	s.ServerTime, s.PostgresTime = time.Duration(server)*host.ClockTick, time.Duration(pgTime)*host.ClockTick
	return s
}
