package session

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// Sample is the machine's CPU counters and every process's CPU time at
// one moment; two of them say who used the CPUs in between.
type Sample struct {
	All, Busy, Steal uint64 // all CPUs; Busy counts neither idle nor steal
	IRQ              uint64 // of Busy, serving interrupts (irq and softirq)
	Procs            map[int]Proc
}

// TakeSample reads the counters now.
func TakeSample() Sample {
	c, _ := ReadCPU()
	return Sample{All: c.All(), Busy: c.Busy, Steal: c.Steal, IRQ: readIRQ(), Procs: Procs()}
}

// Window is the time from a to b: its length in clock ticks (0 when the
// counters did not move) and the shares of the whole machine, in percent
// (100% = all CPUs), that were busy, stolen and in interrupts.
func (a Sample) Window(b Sample) (ticks float64, busy, steal, irq float64) {
	ticks = float64(b.All - a.All)
	if ticks <= 0 {
		return 0, 0, 0, 0
	}
	pct := func(x uint64) float64 { return 100 * float64(x) / ticks }
	return ticks, pct(Delta(a.Busy, b.Busy)), pct(Delta(a.Steal, b.Steal)), pct(Delta(a.IRQ, b.IRQ))
}

// Each calls f with every process's own CPU ticks from a to b (a process
// started meanwhile counts from zero).
func (a Sample) Each(b Sample, f func(pid int, ticks uint64)) {
	for pid, t := range b.Procs {
		before := a.Procs[pid]
		if before.Start != t.Start {
			before = Proc{}
		}
		f(pid, Delta(before.Own, t.Own))
	}
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

// Share is the CPU time of a window split between the server, its
// PostgreSQL processes, the benchmark process (the load), interrupts and
// everything else, in percent of all CPUs, with the server's and
// PostgreSQL's time.
type Share struct {
	Busy, Server, Postgres, Self, IRQ, Other, Steal float64 // %
	ServerTime, PostgresTime                        time.Duration
}

// Split attributes the CPU time between a and b to the process serverPID,
// the PostgreSQL processes in pg, this process, interrupts, and the rest.
func Split(a, b Sample, serverPID int, pg map[int]bool) Share {
	ticks, busy, steal, irq := a.Window(b)
	if ticks == 0 {
		return Share{}
	}
	s := Share{Busy: busy, Steal: steal, IRQ: irq}
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
	s.ServerTime, s.PostgresTime = time.Duration(server)*ClockTick, time.Duration(pgTime)*ClockTick
	return s
}
