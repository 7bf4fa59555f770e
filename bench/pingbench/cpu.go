package main

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
)

// On a small machine the load generator, the server and PostgreSQL share
// the CPUs. cpuSample reads Linux's counters at both ends of a window to
// say who used them, and how much CPU time a ping cost the server and
// PostgreSQL.

type cpuSample struct {
	all, busy, steal uint64 // all CPUs; busy counts neither idle nor steal
	irq              uint64 // of busy, serving interrupts
	procs            map[int]host.Proc
}

// cpuShare is a window's CPU use: percentages of the whole machine (100%
// = all CPUs), and the server's and PostgreSQL's CPU time. IRQ is time in
// interrupts, which Linux charges to no process: at tens of thousands of
// requests a second over loopback, the network's softirqs are a large
// part of the machine.
type cpuShare struct {
	Busy, Server, Postgres, Self, IRQ, Other, Steal float64 // %
	ServerTime, PostgresTime                        time.Duration
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

// share attributes the CPU time between a and b to the server, the
// PostgreSQL processes in pg, this process (the load), interrupts, and
// everything else.
func (a cpuSample) share(b cpuSample, serverPID int, pg map[int]bool) cpuShare {
	d := float64(b.all - a.all)
	if d <= 0 {
		return cpuShare{}
	}
	pct := func(x uint64) float64 { return 100 * float64(x) / d }
	s := cpuShare{Busy: pct(host.Delta(a.busy, b.busy)), Steal: pct(host.Delta(a.steal, b.steal)), IRQ: pct(host.Delta(a.irq, b.irq))}
	self := os.Getpid()
	var server, pgTime uint64
	for pid, t := range b.procs {
		before := a.procs[pid] // zero for a process started meanwhile
		if before.Start != t.Start {
			before = host.Proc{}
		}
		own := host.Delta(before.Own, t.Own)
		switch {
		case pid == serverPID:
			server += own
		case pid == self:
			s.Self += pct(own)
		case pg[pid]:
			pgTime += own
		}
	}
	s.Server, s.Postgres = pct(server), pct(pgTime)
	s.Other = max(s.Busy-s.Server-s.Postgres-s.Self-s.IRQ, 0)
	s.ServerTime, s.PostgresTime = time.Duration(server)*host.ClockTick, time.Duration(pgTime)*host.ClockTick
	return s
}
