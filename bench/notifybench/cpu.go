package main

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
)

// This process (the notifier or the bare sender), the receiver and
// PostgreSQL share the machine's CPUs. cpuSample reads Linux's counters
// at both ends of a window to say who used them, and how much CPU time a
// delivery cost each.

type cpuSample struct {
	all, busy, steal uint64 // all CPUs; busy counts neither idle nor steal
	irq              uint64 // of busy, serving interrupts
	procs            map[int]host.Proc
}

// cpuShare is a window's CPU use: percentages of the whole machine (100%
// = all CPUs), and the CPU time of this process, the receiver and
// PostgreSQL.
type cpuShare struct {
	Busy, Self, Receiver, Postgres, IRQ, Other, Steal float64 // %
	SelfTime, ReceiverTime, PostgresTime              time.Duration
}

func sampleCPU() cpuSample {
	c, _ := host.ReadCPU()
	return cpuSample{all: c.All(), busy: c.Busy, steal: c.Steal, irq: readIRQ(), procs: host.Procs()}
}

// readIRQ is the machine's irq and softirq time from /proc/stat, in clock
// ticks; 0 when it cannot be read.
func readIRQ() uint64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0
	}
	irq, _ := strconv.ParseUint(f[6], 10, 64)
	soft, _ := strconv.ParseUint(f[7], 10, 64)
	return irq + soft
}

// share attributes the CPU time between a and b to this process, the
// receiver, the PostgreSQL processes in pg, interrupts, and everything
// else.
func (a cpuSample) share(b cpuSample, receiverPID int, pg map[int]bool) cpuShare {
	d := float64(b.all - a.all)
	if d <= 0 {
		return cpuShare{}
	}
	pct := func(x uint64) float64 { return 100 * float64(x) / d }
	s := cpuShare{Busy: pct(host.Delta(a.busy, b.busy)), Steal: pct(host.Delta(a.steal, b.steal)), IRQ: pct(host.Delta(a.irq, b.irq))}
	self := os.Getpid()
	var mine, recv, pgTime uint64
	for pid, t := range b.procs {
		before := a.procs[pid] // zero for a process started meanwhile
		if before.Start != t.Start {
			before = host.Proc{}
		}
		own := host.Delta(before.Own, t.Own)
		switch {
		case pid == self:
			mine += own
		case pid == receiverPID:
			recv += own
		case pg[pid]:
			pgTime += own
		}
	}
	s.Self, s.Receiver, s.Postgres = pct(mine), pct(recv), pct(pgTime)
	s.Other = max(s.Busy-s.Self-s.Receiver-s.Postgres-s.IRQ, 0)
	s.SelfTime = time.Duration(mine) * host.ClockTick
	s.ReceiverTime = time.Duration(recv) * host.ClockTick
	s.PostgresTime = time.Duration(pgTime) * host.ClockTick
	return s
}
