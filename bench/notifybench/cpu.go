package main

import (
	"os"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
)

// This process (the notifier or the bare sender), the receiver and
// PostgreSQL share the machine's CPUs. cpuSample reads Linux's counters
// at both ends of a window to say who used them, and how much CPU time a
// delivery cost each.

type cpuSample = host.Sample

// cpuShare is a window's CPU use: percentages of the whole machine (100%
// = all CPUs), and the CPU time of this process, the receiver and
// PostgreSQL.
type cpuShare struct {
	Busy, Self, Receiver, Postgres, IRQ, Other, Steal float64 // %
	SelfTime, ReceiverTime, PostgresTime              time.Duration
}

func sampleCPU() cpuSample { return host.TakeSample() }

// share attributes the CPU time between a and b to this process, the
// receiver, the PostgreSQL processes in pg, interrupts, and everything
// else.
func share(a, b cpuSample, receiverPID int, pg map[int]bool) cpuShare {
	ticks, busy, steal, irq := a.Window(b)
	if ticks == 0 {
		return cpuShare{}
	}
	s := cpuShare{Busy: busy, Steal: steal, IRQ: irq}
	self := os.Getpid()
	var mine, recv, pgTime uint64
	a.Each(b, func(pid int, own uint64) {
		switch {
		case pid == self:
			mine += own
		case pid == receiverPID:
			recv += own
		case pg[pid]:
			pgTime += own
		}
	})
	pct := func(x uint64) float64 { return 100 * float64(x) / ticks }
	s.Self, s.Receiver, s.Postgres = pct(mine), pct(recv), pct(pgTime)
	s.Other = max(s.Busy-s.Self-s.Receiver-s.Postgres-s.IRQ, 0)
	s.SelfTime = time.Duration(mine) * host.ClockTick
	s.ReceiverTime = time.Duration(recv) * host.ClockTick
	s.PostgresTime = time.Duration(pgTime) * host.ClockTick
	return s
}
